"""`tracker ingest` of local LoadGen runs: faithful values, idempotent, all or nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.formats.loadgen.test_parse import RUNS, SUMMARY_PATTERNS, _printed_value
from tracker.cli import cli
from tracker.store.facade import Store


def _tracker(database_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", database_url, *args])


def _ingest(database_url: str, source: Path, *extra: str) -> Result:
    return _tracker(
        database_url,
        "ingest",
        str(source),
        "--kind",
        "loadgen",
        "--software-version",
        "6.0.17",
        "--system",
        "ci-box",
        *extra,
    )


def _export(database_url: str) -> list[dict[str, object]]:
    result = _tracker(database_url, "export", "--format", "json")
    assert result.exit_code == 0, result.output
    rows: list[dict[str, object]] = json.loads(result.stdout)
    return rows


def _counts(database_url: str) -> dict[str, int]:
    with Store.open(database_url) as store:
        return store.count_rows()


@pytest.mark.parametrize("run", RUNS)
def test_ingest_stores_the_value_printed_in_the_summary(
    database_url: str, loadgen_local: Path, run: str
) -> None:
    result = _ingest(database_url, loadgen_local / run, "--benchmark", "resnet50")
    assert result.exit_code == 0, result.output
    [row] = _export(database_url)
    assert row["value"] == pytest.approx(_printed_value(loadgen_local / run), rel=2e-5, abs=0.006)
    assert row["metric"] == SUMMARY_PATTERNS[run][2]
    assert row["valid"] is (run != "Server_invalid")
    assert row["software_version"] == "6.0.17"
    assert row["system"] == "ci-box"
    assert row["benchmark"] == "resnet50"
    assert row["source_kind"] == "loadgen"
    assert row["artifact_path"] == "mlperf_log_detail.txt"


def test_whole_folder_stores_every_run_including_the_invalid_one(
    database_url: str, loadgen_local: Path
) -> None:
    result = _ingest(database_url, loadgen_local)
    assert result.exit_code == 0, result.output
    assert "7 runs (loadgen), 7 results stored" in result.output
    assert "stored under the SUT name 'PySUT'" in result.output
    rows = _export(database_url)
    assert sorted(r["artifact_path"] for r in rows) == sorted(
        f"{run}/mlperf_log_detail.txt" for run in RUNS
    )
    assert [r["valid"] for r in rows].count(False) == 1


def test_ingesting_twice_changes_nothing(database_url: str, loadgen_local: Path) -> None:
    assert _ingest(database_url, loadgen_local).exit_code == 0
    before = (_counts(database_url), _export(database_url))
    again = _ingest(database_url, loadgen_local)
    assert again.exit_code == 0, again.output
    assert "unchanged, already stored" in again.output
    assert (_counts(database_url), _export(database_url)) == before


def test_a_run_reached_through_another_folder_is_not_stored_twice(
    database_url: str, loadgen_local: Path
) -> None:
    assert _ingest(database_url, loadgen_local / "Offline").exit_code == 0
    result = _ingest(database_url, loadgen_local)
    assert result.exit_code == 0, result.output
    assert "6 results stored, 1 already stored" in result.output
    assert _counts(database_url)["result"] == 7


def _broken_copy(loadgen_local: Path, tmp_path: Path, run: str = "Server") -> Path:
    target = tmp_path / "runs" / run
    shutil.copytree(loadgen_local / run, target)
    detail = target / "mlperf_log_detail.txt"
    lines = detail.read_bytes().splitlines(keepends=True)
    lines[4] = b':::MLLOG {"key": "truncated", "val\n'
    detail.write_bytes(b"".join(lines))
    return target


def test_malformed_log_is_reported_with_its_file_and_nothing_is_stored(
    database_url: str, loadgen_local: Path, tmp_path: Path
) -> None:
    broken = _broken_copy(loadgen_local, tmp_path)
    result = _ingest(database_url, broken)
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"Error: {broken}/mlperf_log_detail.txt: line 5: event is not valid JSON"
    )
    assert set(_counts(database_url).values()) == {0}


def test_strict_stores_nothing_of_a_source_with_one_bad_run(
    database_url: str, loadgen_local: Path, tmp_path: Path
) -> None:
    broken = _broken_copy(loadgen_local, tmp_path)
    shutil.copytree(loadgen_local / "Offline", broken.parent / "Offline")
    result = _ingest(database_url, broken.parent, "--strict")
    assert result.exit_code == 2
    assert "Error: " in result.stderr and "Server/mlperf_log_detail.txt: line 5" in result.stderr
    assert set(_counts(database_url).values()) == {0}


def test_without_strict_the_good_runs_are_stored_and_the_bad_file_listed(
    database_url: str, loadgen_local: Path, tmp_path: Path
) -> None:
    broken = _broken_copy(loadgen_local, tmp_path)
    shutil.copytree(loadgen_local / "Offline", broken.parent / "Offline")
    result = _ingest(database_url, broken.parent)
    assert result.exit_code == 2
    assert "2 runs (loadgen), 1 result stored" in result.stdout
    assert "Server/mlperf_log_detail.txt: line 5" in result.stderr
    [row] = _export(database_url)
    assert row["scenario"] == "Offline"


def test_missing_labels_are_clear_errors(database_url: str, loadgen_local: Path) -> None:
    result = _tracker(database_url, "ingest", str(loadgen_local / "Offline"), "--system", "x")
    assert result.exit_code == 2
    assert "pass --software-version" in result.stderr


def test_folder_without_results_lists_what_was_looked_for(
    database_url: str, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("nothing here")
    result = _tracker(database_url, "ingest", str(tmp_path), "--software-version", "1")
    assert result.exit_code == 2
    assert "cannot tell what kind of results" in result.stderr
    assert "mlperf_log_summary.txt" in result.stderr
    kinds = result.stderr.split("Supported kinds: ", 1)[1].split(";")[0]
    assert "loadgen" in kinds.split(", ")


def test_missing_source_is_a_clear_error(database_url: str, tmp_path: Path) -> None:
    result = _tracker(database_url, "ingest", str(tmp_path / "nope"))
    assert result.exit_code == 2
    assert result.stderr == f"Error: {tmp_path / 'nope'}: no such file or folder\n"
