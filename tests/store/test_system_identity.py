"""A system's description is a fact of one round and division; nothing depends on ingest order.

* v5.1's HPE_Cray_XD670_H200_SXM_141GBx8_TRT exists in the closed and the open
  division with different descriptions: each result keeps its own division and
  system description, whichever division is ingested first.
* A local system described with 4 accelerators in 1.0 and 8 in 2.0 keeps both,
  whichever version is ingested first.
* A database in the schema before this change, holding the merged HPE system,
  is brought along by the migration.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from tracker.cli import cli
from tracker.records.results import SystemRecord
from tracker.store.facade import Store
from tracker.store.schema import head_revision, upgrade_schema

HPE = "HPE_Cray_XD670_H200_SXM_141GBx8_TRT"
FRAMEWORKS = {"closed": "TensorRT 10.11, CUDA 12.9", "open": "TensorRT 10.8, CUDA 12.8"}
BEFORE = "526312dea84e"  # the schema before system descriptions per round


def tracker(url: str, tmp_path: Path, *args: str) -> Any:
    env = {"TRACKER_CACHE_DIR": str(tmp_path / "cache")}
    return CliRunner().invoke(cli, ["--database-url", url, *args], env=env)


def exported(url: str, tmp_path: Path) -> list[dict[str, Any]]:
    result = tracker(url, tmp_path, "export", "--format", "json")
    assert result.exit_code == 0, result.output
    rows: list[dict[str, Any]] = json.loads(result.stdout)
    return rows


def _hpe_round(shared_data: Path, root: Path, division: str) -> Path:
    """One division of v5.1 HPE: its system JSON and its H200 results (read-only copies)."""
    source = shared_data / "mlperf-inference" / "v5.1" / division / "HPE"
    target = root / f"v5.1-{division}" / division / "HPE"
    (target / "systems").mkdir(parents=True)
    shutil.copy(source / "systems" / f"{HPE}.json", target / "systems")
    shutil.copytree(source / "results" / HPE, target / "results" / HPE)
    return root / f"v5.1-{division}"


@pytest.mark.parametrize("first", ["closed", "open"])
def test_hpe_closed_and_open_keep_their_own_division_and_description(
    database_url: str, shared_data: Path, tmp_path: Path, first: str
) -> None:
    second = "open" if first == "closed" else "closed"
    for division in (first, second):
        folder = _hpe_round(shared_data, tmp_path, division)
        args = ("ingest", str(folder), "--kind", "mlperf-inference", "--software-version", "v5.1")
        result = tracker(database_url, tmp_path, *args)
        assert result.exit_code == 0, result.output
    rows = [r for r in exported(database_url, tmp_path) if r["system"] == HPE]
    assert {r["location"].split("/", 1)[0] for r in rows} == {"closed", "open"}
    for row in rows:
        assert row["division"] == row["location"].split("/", 1)[0], row["location"]
    with Store.open(database_url) as store, store.engine.connect() as connection:
        described = connection.execute(
            text(
                "SELECT s.key, s.division, d.raw_json FROM system_description d "
                "JOIN system s ON s.id = d.system_id"
            )
        ).all()
        samples = {(s.system_key, s.division) for s in store.iter_analysis_samples()}
    assert sorted((key, division) for key, division, _raw in described) == [
        (f"HPE/{HPE}", "closed"),
        (f"HPE/{HPE} [open]", "open"),
    ]
    for _key, division, raw in described:
        description = json.loads(raw)
        assert description["division"] == division
        assert description["framework"] == FRAMEWORKS[division]
    assert samples == {(f"HPE/{HPE}", "closed"), (f"HPE/{HPE} [open]", "open")}


@pytest.mark.parametrize("order", [("1.0", "2.0"), ("2.0", "1.0")])
def test_each_version_keeps_its_own_system_description(
    database_url: str, shared_data: Path, tmp_path: Path, order: tuple[str, str]
) -> None:
    counts = {"1.0": "4", "2.0": "8"}
    run = shared_data / "loadgen-local" / "Offline"
    for version in order:
        result = tracker(
            database_url,
            tmp_path,
            "ingest",
            str(run),
            "--kind",
            "loadgen",
            "--software-version",
            version,
            "--system",
            "node-a",
            "--accelerators",
            counts[version],
            "--benchmark",
            "resnet50",
        )
        assert result.exit_code == 0, result.output
    rows = exported(database_url, tmp_path)
    assert {(r["software_version"], r["accelerators_total"]) for r in rows} == {
        ("1.0", 4),
        ("2.0", 8),
    }
    with Store.open(database_url) as store:
        found = {(s.version, s.accelerators_total) for s in store.iter_analysis_samples()}
    assert found == {("1.0", 4), ("2.0", 8)}


def test_the_platform_key_names_the_division_unless_closed() -> None:
    assert SystemRecord("n", submitter="S", division="closed").platform_key == "S/n"
    assert SystemRecord("n", submitter="S").platform_key == "S/n"
    assert SystemRecord("n", submitter="S", division="open").platform_key == "S/n [open]"
    assert SystemRecord("n", submitter="S", division="network").platform_key == "S/n [network]"
    # the sample key (what identifies a stored result) does not change with it
    assert SystemRecord("n", submitter="S", division="open").key == "S/n"


def _old_database(url: str) -> None:
    """The merged HPE system as the schema before this change stored it (last record won)."""
    store = Store.open(url, upgrade=False)
    try:
        upgrade_schema(store.engine, BEFORE)
        with store.engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO software_version (id, software, version, sort_key) "
                    "VALUES (1, 'mlperf-inference', 'v5.1', 'a'), "
                    "(2, 'mlperf-inference', 'v6.0', 'b')"
                )
            )
            connection.execute(
                text(
                    "INSERT INTO system (id, key, name, submitter, accelerator, nodes, "
                    "accelerators_total, division, raw_json) VALUES "
                    f"(1, 'HPE/{HPE}', '{HPE}', 'HPE', 'NVIDIA H200', 1, 8, 'open', "
                    '\'{"division": "open"}\'), '
                    "(2, 'Dell/box', 'box', 'Dell', 'acc', 1, 8, 'closed', NULL)"
                )
            )
            connection.execute(
                text(
                    "INSERT INTO source (id, kind, location, content_sha256, identity_sha256, "
                    "is_example, ingested_at) VALUES (1, 'mlperf-inference', 'r', 'c', 'i', "
                    "false, '2026-12-01 00:00:00')"
                )
            )
            connection.execute(
                text(
                    "INSERT INTO artifact (id, source_id, path, sha256, size_bytes) "
                    "VALUES (1, 1, 'log', 's', 1)"
                )
            )
            connection.execute(
                text("INSERT INTO benchmark (id, name, scenario) VALUES (1, 'm', 'Offline')")
            )
            connection.execute(
                text(
                    "INSERT INTO metric (id, name, unit, higher_is_better) "
                    "VALUES (1, 'tokens_per_s', 'tokens/s', true)"
                )
            )
            results = [
                (1, 1, 1, f"closed/HPE/results/{HPE}/m/Offline"),
                (2, 1, 1, f"closed/HPE/results/{HPE}/m/Server"),
                (3, 1, 1, f"open/HPE/results/{HPE}/deepseek-r1/Offline"),
                (4, 2, 1, "closed/Dell/results/box/m/Offline"),
                (5, 2, 2, "closed/Dell/results/box/m/Offline"),
            ]
            for result_id, system_id, version_id, location in results:
                connection.execute(
                    text(
                        "INSERT INTO result (id, sample_key, source_id, artifact_id, system_id, "
                        "software_version_id, benchmark_id, metric_id, workload, value, "
                        "is_valid, run_label, location, extra) VALUES (:id, :key, 1, 1, :system, "
                        ":version, 1, 1, '', 1.0, true, '', :location, '{}')"
                    ),
                    {
                        "id": result_id,
                        "key": f"k{result_id}",
                        "system": system_id,
                        "version": version_id,
                        "location": location,
                    },
                )
            if connection.dialect.name == "postgresql":  # ids were given: move the sequences on
                for table in ("software_version", "system", "source", "artifact", "result"):
                    connection.execute(
                        text(
                            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                            f"(SELECT max(id) FROM {table}))"
                        )
                    )
                connection.execute(
                    text(
                        "SELECT setval(pg_get_serial_sequence('benchmark', 'id'), 1), "
                        "setval(pg_get_serial_sequence('metric', 'id'), 1)"
                    )
                )
    finally:
        store.close()


def test_the_migration_splits_a_merged_system_and_describes_every_round(
    database_url: str,
) -> None:
    _old_database(database_url)
    with Store.open(database_url) as store:  # upgrades to head
        engine = store.engine
        with engine.connect() as connection:
            revision = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
            systems = connection.execute(
                text(
                    "SELECT r.id, s.key, s.division FROM result r "
                    "JOIN system s ON s.id = r.system_id ORDER BY r.id"
                )
            ).all()
            described = connection.execute(
                text(
                    "SELECT s.key, d.software_version_id, d.accelerator FROM system_description d "
                    "JOIN system s ON s.id = d.system_id ORDER BY s.key, d.software_version_id"
                )
            ).all()
        rows = list(store.iter_export_rows())
    assert revision == head_revision()
    assert [tuple(s) for s in systems] == [
        (1, f"HPE/{HPE}", "closed"),
        (2, f"HPE/{HPE}", "closed"),
        (3, f"HPE/{HPE} [open]", "open"),
        (4, "Dell/box", "closed"),
        (5, "Dell/box", "closed"),
    ]
    assert [tuple(d) for d in described] == [
        ("Dell/box", 1, "acc"),
        ("Dell/box", 2, "acc"),
        (f"HPE/{HPE}", 1, "NVIDIA H200"),
        (f"HPE/{HPE} [open]", 1, "NVIDIA H200"),
    ]
    assert [(r.division, r.accelerators_total) for r in rows] == [
        ("closed", 8),
        ("closed", 8),
        ("open", 8),
        ("closed", 8),
        ("closed", 8),
    ]


def _ingest_local(url: str, tmp_path: Path, run: Path, version: str, system: str) -> None:
    args = ("--kind", "loadgen", "--software-version", version, "--system", system)
    result = tracker(url, tmp_path, "ingest", str(run), *args, "--benchmark", "resnet50")
    assert result.exit_code == 0, result.output


def test_an_alias_links_a_renamed_system_across_versions(
    database_url: str, shared_data: Path, tmp_path: Path
) -> None:
    run = shared_data / "loadgen-local" / "Offline"
    _ingest_local(database_url, tmp_path, run, "1.0", "node-old")
    _ingest_local(database_url, tmp_path, run, "2.0", "node-new")
    result = tracker(database_url, tmp_path, "systems", "alias", "/node-old", "/node-new")
    assert result.exit_code == 0, result.output
    assert "/node-old is now an alias of /node-new: 1 results" in result.stdout
    _ingest_local(database_url, tmp_path, run, "3.0", "node-old")  # lands on node-new
    with Store.open(database_url) as store:
        keys = {(s.system_key, s.version) for s in store.iter_analysis_samples()}
        (summary,) = store.list_systems()
    assert keys == {("/node-new", "1.0"), ("/node-new", "2.0"), ("/node-new", "3.0")}
    assert (summary.key, summary.versions, summary.aliases) == (
        "/node-new",
        ("1.0", "2.0", "3.0"),
        ("/node-old",),
    )
    listed = tracker(database_url, tmp_path, "systems")
    assert listed.exit_code == 0 and "/node-old" in listed.stdout
    again = tracker(database_url, tmp_path, "systems", "alias", "/node-new", "/node-old")
    assert again.exit_code == 2 and "loop" in again.output
