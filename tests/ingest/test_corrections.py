"""A corrected MLPerf round: the disagreement is reported, replaced only on request (issue #21).

A published result is one sample per round and location, so a re-ingested round
whose value changed upstream finds its result stored. The ingest names the
disagreement and keeps the stored value (exit 0); ``--replace`` takes the new
value, validity and file, keeps the result's id and records the old value in
``extra["history"]``. The rounds are built in ``tmp_path`` from real v5.1 logs of
the shared data and edited there.
"""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlmodel import col

from tests.ingest.test_pull import REF, ROUND_PATH, Served, serve
from tests.support.cli_rows import export, tracker
from tracker.ingest.run import correction_note
from tracker.store.facade import Store
from tracker.store.models import Result as ResultRow
from tracker.store.write import Correction

GATE = "closed/GATEOverflow"
RTX = "rtx4090x2-nvidia-gpu-TensorRT-default_config"
RETINANET = f"{GATE}/results/{RTX}/retinanet/offline"
RESNET = f"{GATE}/results/{RTX}/resnet50/offline"
SUMMARY = "performance/run_1/mlperf_log_summary.txt"
PUBLISHED = b"Samples per second: 1766.71\n"
CORRECTED = b"Samples per second: 1800.5\n"
Row = dict[str, Any]


def exported(database_url: str, cache: Path) -> dict[str, Row]:
    return {row["location"]: row for row in export(database_url, cache)}


def result_ids(database_url: str) -> dict[str | None, int | None]:
    store = Store.open(database_url)
    try:
        with store.engine.connect() as connection:
            query = select(col(ResultRow.location), col(ResultRow.id))
            return {row[0]: row[1] for row in connection.execute(query)}
    finally:
        store.close()


def _copy(source: Path, target: Path) -> None:
    """A writable copy (the shared files are read-only)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())


def _add_run(shared: Path, target: Path, location: str) -> None:
    _copy(shared / location / SUMMARY, target / location / SUMMARY)


def _correct(round_folder: Path, old: bytes = PUBLISHED, new: bytes = CORRECTED) -> None:
    """What an upstream correction does: the summary log of retinanet Offline says another value."""
    log = round_folder / RETINANET / SUMMARY
    text = log.read_bytes()
    assert old in text
    log.write_bytes(text.replace(old, new))


@pytest.fixture
def v51(shared_data: Path, tmp_path: Path) -> Path:
    """v5.1, one edge system of GATEOverflow: retinanet Offline (a summary log only)."""
    shared = shared_data / "mlperf-inference" / "v5.1"
    target = tmp_path / "v5.1"
    _copy(shared / GATE / "systems" / f"{RTX}.json", target / GATE / "systems" / f"{RTX}.json")
    _add_run(shared, target, RETINANET)
    return target


def test_a_corrected_round_is_reported_kept_and_replaced_only_on_request(
    database_url: str, v51: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first = tracker(database_url, cache, "ingest", str(v51))
    assert first.exit_code == 0, first.output
    assert "1 result stored" in first.stdout
    (original_id,) = result_ids(database_url).values()

    _correct(v51)
    reported = tracker(database_url, cache, "ingest", str(v51))
    assert reported.exit_code == 0, reported.output
    note = (
        "note: 1 stored result differs from this source (an upstream correction?): "
        f"{RETINANET}: 1,766.71 → 1,800.5; run again with --replace to take the new values\n"
    )
    assert note in reported.stdout
    assert "replaced" not in reported.stdout
    row = exported(database_url, cache)[RETINANET]
    assert (row["value"], row["valid"]) == (1766.71, True)
    assert "history" not in row["extra"]

    again = tracker(database_url, cache, "ingest", str(v51))  # reported until it is replaced
    assert again.exit_code == 0, again.output
    assert note in again.stdout
    assert exported(database_url, cache)[RETINANET]["value"] == 1766.71

    replaced = tracker(database_url, cache, "ingest", "--replace", str(v51))
    assert replaced.exit_code == 0, replaced.output
    assert "1 result replaced" in replaced.stdout
    assert f"note: 1 stored result replaced by this source's values: {RETINANET}: " in (
        replaced.stdout
    )
    row = exported(database_url, cache)[RETINANET]
    assert (row["value"], row["valid"]) == (1800.5, True)
    assert row["line"] == 7 and row["extra"]["primary_metric_from"] == "summary log"
    (entry,) = row["extra"]["history"]
    assert {k: entry[k] for k in ("value", "valid", "source")} == {
        "value": 1766.71,
        "valid": True,
        "source": str(v51),
    }
    assert entry["replaced_at"].endswith("+00:00")
    assert result_ids(database_url) == {RETINANET: original_id}

    for cached in (cache, tmp_path / "no-snapshot"):  # recognised, or read and compared
        third = tracker(database_url, cached, "ingest", "--replace", str(v51))
        assert third.exit_code == 0, third.output
        assert "unchanged, already stored" in third.stdout
        assert "replaced" not in third.stdout and "differ" not in third.stdout
        assert exported(database_url, cache)[RETINANET] == row


def test_new_results_of_a_corrected_round_are_stored_and_a_second_correction_adds_history(
    database_url: str, v51: Path, shared_data: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    assert tracker(database_url, cache, "ingest", str(v51)).exit_code == 0
    _correct(v51)
    _add_run(shared_data / "mlperf-inference" / "v5.1", v51, RESNET)
    reported = tracker(database_url, cache, "ingest", str(v51))
    assert reported.exit_code == 0, reported.output
    assert "2 runs (mlperf-inference), 1 result stored, 1 already stored" in reported.stdout
    assert "1 stored result differs from this source" in reported.stdout
    rows = exported(database_url, cache)
    assert rows[RETINANET]["value"] == 1766.71 and RESNET in rows

    assert tracker(database_url, cache, "ingest", "--replace", str(v51)).exit_code == 0
    _correct(
        v51, CORRECTED + b"Result is : VALID", b"Samples per second: 1810.25\nResult is : INVALID"
    )
    second = tracker(database_url, cache, "ingest", "--replace", str(v51))
    assert second.exit_code == 0, second.output
    assert "2 runs (mlperf-inference), 0 results stored, 1 already stored, 1 result replaced" in (
        second.stdout
    )
    assert f"{RETINANET}: 1,800.5 (valid) → 1,810.25 (invalid)" in second.stdout
    row = exported(database_url, cache)[RETINANET]
    assert (row["value"], row["valid"]) == (1810.25, False)
    history = [(entry["value"], entry["valid"]) for entry in row["extra"]["history"]]
    assert history == [(1766.71, True), (1800.5, True)]


def test_a_pulled_round_corrected_upstream_is_reported_then_replaced(
    database_url: str, v51: Path, tmp_path: Path
) -> None:
    def archive() -> bytes:
        path = tmp_path / "round.tar.gz"
        with tarfile.open(path, "w:gz") as tar:
            tar.add(v51, arcname=f"inference_results_v5.1-{REF}")
        return path.read_bytes()

    cache = tmp_path / "cache"
    served = Served(archive=archive())
    with serve(served) as base_url:
        pull = ["pull", "mlperf-inference", "--round", "v5.1", "--ref", REF]
        pull += ["--base-url", base_url]
        assert tracker(database_url, cache, *pull).exit_code == 0
        _correct(v51)
        served.archive, served.etag = archive(), '"corrected"'
        reported = tracker(database_url, cache, *pull)
        assert reported.exit_code == 0, reported.output
        assert "1 stored result differs from this source" in reported.stdout
        assert exported(database_url, cache)[RETINANET]["value"] == 1766.71
        replaced = tracker(database_url, cache, *pull, "--replace")
        assert replaced.exit_code == 0, replaced.output
        assert "1 result replaced" in replaced.stdout
    row = exported(database_url, cache)[RETINANET]
    assert row["value"] == 1800.5
    assert row["extra"]["history"][0]["source"] == f"{base_url}{ROUND_PATH}"


def test_the_note_names_the_first_few_and_counts_the_rest() -> None:
    corrections = tuple(
        Correction(f"closed/X/results/s/m{n}/offline", 1000.0 + n, True, 2000.0, n != 0)
        for n in range(5)
    )
    note = correction_note(corrections, replaced=False)
    assert note == (
        "5 stored results differ from this source (an upstream correction?): "
        "closed/X/results/s/m0/offline: 1,000.0 (valid) → 2,000.0 (invalid), "
        "closed/X/results/s/m1/offline: 1,001.0 → 2,000.0, "
        "closed/X/results/s/m2/offline: 1,002.0 → 2,000.0, and 2 more; "
        "run again with --replace to take the new values"
    )
    assert correction_note(corrections[1:2], replaced=True) == (
        "1 stored result replaced by this source's values: "
        "closed/X/results/s/m1/offline: 1,001.0 → 2,000.0"
    )


def test_a_results_table_rounding_the_logs_is_no_correction(
    database_url: str, shared_data: Path, tmp_path: Path
) -> None:
    """v5.1's table rounds 7 values of its logs (33,244.25 → 33,244.3): the same values."""
    cache = tmp_path / "cache"
    folder = shared_data / "mlperf-inference" / "v5.1"
    logs = tracker(database_url, cache, "ingest", str(folder), "--kind", "mlperf-inference")
    assert logs.exit_code == 0, logs.output
    before = exported(database_url, cache)
    table = tracker(
        database_url, cache, "ingest", "--replace", str(folder / "summary_results.json")
    )
    assert table.exit_code == 0, table.output
    assert "82 runs (mlperf-table), 0 results stored, 82 already stored\n" in table.stdout
    assert "differ" not in table.stdout and "replaced" not in table.stdout
    after = exported(database_url, cache)
    assert [row["value"] for row in after.values()] == [row["value"] for row in before.values()]
