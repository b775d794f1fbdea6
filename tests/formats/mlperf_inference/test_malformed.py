"""Malformed rounds: every bad file is named, the rest is stored, --strict stores nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tracker.cli import cli
from tracker.store.facade import Store

SUBMITTER = "closed/Lenovo"
EDGE = "SE100_RTX2000E_Ada_16GBx1_TRT"
RESNET_OFFLINE = f"{SUBMITTER}/results/{EDGE}/resnet50/Offline"


def tracker(database_url: str, tmp_path: Path, *args: str) -> Result:
    env = {"TRACKER_CACHE_DIR": str(tmp_path / "cache")}
    return CliRunner().invoke(cli, ["--database-url", database_url, *args], env=env)


@pytest.fixture
def small_round(shared_data: Path, tmp_path: Path) -> Path:
    """Lenovo's part of v5.1 (two systems, 17 results) and its rows of the table."""
    source = shared_data / "mlperf-inference" / "v5.1"
    target = tmp_path / "v5.1"
    for part in ("systems", "results", "compliance"):
        shutil.copytree(source / SUBMITTER / part, target / SUBMITTER / part)
    rows = json.loads((source / "summary_results.json").read_text(encoding="utf-8"))
    lenovo = [row for row in rows if row["Submitter"] == "Lenovo"]
    (target / "summary_results.json").write_text(json.dumps(lenovo), encoding="utf-8")
    return target


def counts(database_url: str) -> dict[str, int]:
    with Store.open(database_url) as store:
        return store.count_rows()


def test_the_small_round_is_stored_whole(
    database_url: str, small_round: Path, tmp_path: Path
) -> None:
    result = tracker(database_url, tmp_path, "ingest", str(small_round))
    assert result.exit_code == 0, result.output
    assert "17 runs (mlperf-inference), 17 results stored" in result.stdout
    assert "note:" not in result.stdout


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def test_a_truncated_detail_log_is_named_and_strict_stores_nothing(
    database_url: str, small_round: Path, tmp_path: Path
) -> None:
    detail = small_round / RESNET_OFFLINE / "performance/run_1/mlperf_log_detail.txt"
    _truncate(detail)
    strict = tracker(database_url, tmp_path, "ingest", str(small_round), "--strict")
    assert strict.exit_code == 2
    assert strict.stderr.startswith(f"Error: {detail}")
    assert set(counts(database_url).values()) == {0}
    lenient = tracker(database_url, tmp_path, "ingest", str(small_round))
    assert lenient.exit_code == 2
    assert "17 runs (mlperf-inference), 16 results stored, 1 failed" in lenient.stdout
    assert f"Error: {detail}" in lenient.stderr


def test_a_cut_line_of_a_detail_log_is_named_with_its_line(
    database_url: str, small_round: Path, tmp_path: Path
) -> None:
    detail = small_round / RESNET_OFFLINE / "performance/run_1/mlperf_log_detail.txt"
    lines = detail.read_bytes().splitlines(keepends=True)
    number = next(n for n, line in enumerate(lines) if b'"result_validity"' in line)
    lines[number] = lines[number][:40] + b"\n"
    detail.write_bytes(b"".join(lines))
    result = tracker(database_url, tmp_path, "ingest", str(small_round))
    assert result.exit_code == 2
    assert f"Error: {detail}: line {number + 1}: event is not valid JSON" in result.stderr


def test_a_system_json_that_is_not_json_is_named_and_its_results_fail(
    database_url: str, small_round: Path, tmp_path: Path
) -> None:
    system = small_round / SUBMITTER / "systems" / f"{EDGE}.json"
    system.write_text("{ this is not JSON", encoding="utf-8")
    result = tracker(database_url, tmp_path, "ingest", str(small_round))
    assert result.exit_code == 2
    assert "17 runs (mlperf-inference), 5 results stored, 12 failed" in result.stdout
    assert f"Error: {system}: not a valid system description JSON" in result.stderr
    assert result.stderr.count("Error:") == 1
    strict = tracker(database_url, tmp_path, "ingest", str(small_round), "--strict")
    assert strict.exit_code == 2 and str(system) in strict.stderr


def test_a_results_folder_without_logs_is_named(
    database_url: str, small_round: Path, tmp_path: Path
) -> None:
    shutil.rmtree(small_round / RESNET_OFFLINE / "performance")
    result = tracker(database_url, tmp_path, "ingest", str(small_round), "--strict")
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"Error: {small_round / RESNET_OFFLINE}: no mlperf_log_summary.txt or "
        "mlperf_log_detail.txt in performance/run_1"
    )
    assert set(counts(database_url).values()) == {0}


def test_a_disagreement_with_the_table_is_listed(
    database_url: str, small_round: Path, tmp_path: Path
) -> None:
    table = small_round / "summary_results.json"
    rows = json.loads(table.read_text(encoding="utf-8"))
    for row in rows:
        if row["Location"] == RESNET_OFFLINE:
            row["Performance_Result"] = 1.0
    table.write_text(json.dumps(rows), encoding="utf-8")
    result = tracker(database_url, tmp_path, "ingest", str(small_round))
    assert result.exit_code == 0, result.output
    assert (
        f"note: results table disagrees: {RESNET_OFFLINE}: the logs give 6607.08 samples/s, "
        "the results table 1 Samples/s" in result.stdout
    )


def test_a_round_without_a_name_or_table_needs_its_version(
    database_url: str, small_round: Path, tmp_path: Path
) -> None:
    (small_round / "summary_results.json").unlink()
    anonymous = small_round.rename(tmp_path / "round")
    result = tracker(database_url, tmp_path, "ingest", str(anonymous))
    assert result.exit_code == 2
    assert "cannot tell which MLPerf round this is" in result.stderr
    assert "pass --software-version vX.Y" in result.stderr
    labelled = tracker(
        database_url, tmp_path, "ingest", str(anonymous), "--software-version", "5.1"
    )
    assert labelled.exit_code == 0, labelled.output
    with Store.open(database_url) as store:
        assert [v.version for v in store.list_versions()] == ["v5.1"]


def test_a_changed_or_added_file_is_noticed_on_the_next_ingest(
    database_url: str, small_round: Path, tmp_path: Path
) -> None:
    assert tracker(database_url, tmp_path, "ingest", str(small_round)).exit_code == 0
    unchanged = tracker(database_url, tmp_path, "ingest", str(small_round))
    assert "17 runs (mlperf-inference), unchanged, already stored" in unchanged.stdout
    copy = small_round / f"{SUBMITTER}/results/{EDGE}/resnet50-copy/Offline"
    shutil.copytree(small_round / RESNET_OFFLINE, copy)
    added = tracker(database_url, tmp_path, "ingest", str(small_round))
    assert added.exit_code == 0, added.output
    assert "18 runs (mlperf-inference), 1 result stored, 17 already stored" in added.stdout
    accuracy = copy / "accuracy/accuracy.txt"
    accuracy.write_bytes(accuracy.read_bytes().replace(b"accuracy=", b"accuracy= "))
    changed = tracker(database_url, tmp_path, "ingest", str(small_round))
    assert changed.exit_code == 0, changed.output
    assert "18 runs (mlperf-inference), 0 results stored, 18 already stored" in changed.stdout
