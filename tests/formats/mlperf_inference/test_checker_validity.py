"""Results the submission checker would reject are stored invalid, with the reason (issue #14).

Two cases, each in a small round built in ``tmp_path`` from real logs of the
shared data: an accuracy-mode LoadGen log where the performance run belongs
(v6.0 Lattix rgat), and a scenario its model does not have on the system's
type (an edge pointpainting Offline result inferred from a SingleStream run).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_rows import export, stored_nothing, tracker
from tracker.errors import ParseError
from tracker.formats.loadgen.parse import Entry
from tracker.formats.mlperf_inference.parse import primary_metric, scenario_reasons
from tracker.formats.mlperf_inference.parse_logs import summary_as_detail
from tracker.sources.trail import SnapshotCache
from tracker.store.facade import Store

NVIDIA = "closed/NVIDIA"
B200 = "B200-SXM-180GBx8_TRT"
RGAT = f"{NVIDIA}/results/{B200}/rgat/Offline"
WHISPER = f"{NVIDIA}/results/{B200}/whisper/Offline"
GATE = "closed/GATEOverflow"
RTX = "rtx4090x2-nvidia-gpu-TensorRT-default_config"
POINTPAINTING = f"{GATE}/results/{RTX}/pointpainting"
CLOSING = b"No warnings encountered during test.\n\nNo errors encountered during test.\n"
ACCURACY_REASON = "performance/run_1 holds an accuracy-mode run"
SCENARIO_REASON = (
    "scenario Offline is not allowed for pointpainting on edge systems "
    "(checker: allowed SingleStream)"
)
Row = dict[str, Any]


def exported(database_url: str, cache: Path) -> dict[str, Row]:
    return {row["location"]: row for row in export(database_url, cache)}


def _copy(source: Path, target: Path) -> None:
    """A writable copy (the shared files are read-only)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())


def _accuracy_mode(detail: bytes) -> bytes:
    """The detail log LoadGen writes in accuracy mode: the settings, no results."""
    kept = []
    for line in detail.splitlines(keepends=True):
        key = re.search(rb'"key": "([^"]+)"', line)
        if key and key.group(1).startswith((b"result_", b"early_stopping")):
            continue
        kept.append(line.replace(b'"value": "PerformanceOnly"', b'"value": "AccuracyOnly"'))
    return b"".join(kept)


@pytest.fixture
def accuracy_round(shared_data: Path, tmp_path: Path) -> Path:
    """v6.0: a valid whisper Offline result and an rgat Offline one from an accuracy run."""
    source = shared_data / "mlperf-inference" / "v6.0"
    target = tmp_path / "v6.0"
    _copy(
        source / NVIDIA / "systems" / f"{B200}.json", target / NVIDIA / "systems" / f"{B200}.json"
    )
    run = "performance/run_1"
    for name in ("mlperf_log_detail.txt", "mlperf_log_summary.txt"):
        _copy(source / WHISPER / run / name, target / WHISPER / run / name)
    detail = (source / WHISPER / run / "mlperf_log_detail.txt").read_bytes()
    (target / RGAT / run).mkdir(parents=True)
    (target / RGAT / run / "mlperf_log_detail.txt").write_bytes(_accuracy_mode(detail))
    (target / RGAT / run / "mlperf_log_summary.txt").write_bytes(CLOSING)
    return target


@pytest.fixture
def pointpainting_round(shared_data: Path, tmp_path: Path) -> Path:
    """v5.1, an edge system: pointpainting SingleStream and an Offline result inferred from it."""
    source = shared_data / "mlperf-inference" / "v5.1" / GATE
    target = tmp_path / "v5.1"
    _copy(source / "systems" / f"{RTX}.json", target / GATE / "systems" / f"{RTX}.json")
    run = source / "results" / RTX / "resnet50" / "singlestream" / "performance" / "run_1"
    for scenario in ("singlestream", "offline"):
        for log in run.iterdir():
            _copy(log, target / POINTPAINTING / scenario / "performance" / "run_1" / log.name)
    return target


def test_an_accuracy_mode_performance_log_is_stored_invalid_and_the_round_kept(
    database_url: str, accuracy_round: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    result = tracker(database_url, cache, "ingest", str(accuracy_round))
    assert result.exit_code == 0, result.output
    assert "2 runs (mlperf-inference), 2 results stored" in result.stdout
    assert f"note: 1 result stored as invalid: {RGAT}: {ACCURACY_REASON}\n" in result.stdout
    assert "Error" not in result.output
    rows = exported(database_url, cache)
    rgat, whisper = rows[RGAT], rows[WHISPER]
    assert (rgat["valid"], rgat["extra"]["invalid_reason"]) == (False, ACCURACY_REASON)
    assert rgat["extra"]["primary_metric_from"] == "none (an accuracy-mode log)"
    assert (rgat["metric"], rgat["unit"], rgat["value"]) == ("samples_per_s", "samples/s", 0.0)
    assert whisper["valid"] and "invalid_reason" not in whisper["extra"]
    (key,) = (path.name for path in (cache / "snapshots").iterdir())
    snapshot = SnapshotCache(cache).load(key)
    assert snapshot is not None and (snapshot.runs_found, snapshot.results) == (2, 2)
    again = tracker(database_url, cache, "ingest", str(accuracy_round))
    assert again.exit_code == 0, again.output
    assert "2 runs (mlperf-inference), unchanged, already stored" in again.stdout
    assert "note:" not in again.stdout  # recognised by its snapshot, not read again


def test_strict_refuses_a_round_with_an_accuracy_mode_performance_log(
    database_url: str, accuracy_round: Path, tmp_path: Path
) -> None:
    result = tracker(database_url, tmp_path / "cache", "ingest", str(accuracy_round), "--strict")
    assert result.exit_code == 2
    detail = accuracy_round / RGAT / "performance/run_1/mlperf_log_detail.txt"
    assert f"Error: {detail}" in result.stderr
    assert "accuracy-mode log where the performance run belongs" in result.stderr
    with Store.open(database_url) as store:
        assert set(store.count_rows().values()) == {0}


def test_an_accuracy_run_summary_alone_is_stored_invalid(
    database_url: str, accuracy_round: Path, tmp_path: Path
) -> None:
    (accuracy_round / RGAT / "performance/run_1/mlperf_log_detail.txt").unlink()
    cache = tmp_path / "cache"
    result = tracker(database_url, cache, "ingest", str(accuracy_round))
    assert result.exit_code == 0, result.output
    assert f"1 result stored as invalid: {RGAT}: {ACCURACY_REASON}" in result.stdout
    rgat = exported(database_url, cache)[RGAT]
    assert (rgat["valid"], rgat["extra"]["invalid_reason"]) == (False, ACCURACY_REASON)


def test_a_scenario_the_checker_does_not_allow_is_stored_invalid(
    database_url: str, pointpainting_round: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    result = tracker(database_url, cache, "ingest", str(pointpainting_round))
    assert result.exit_code == 0, result.output
    assert "2 runs (mlperf-inference), 2 results stored" in result.stdout
    offline = f"{POINTPAINTING}/offline"
    assert f"note: 1 result stored as invalid: {offline}: {SCENARIO_REASON}\n" in result.stdout
    rows = exported(database_url, cache)
    assert rows[offline]["extra"]["inferred"] is True
    assert (rows[offline]["valid"], rows[offline]["extra"]["invalid_reason"]) == (
        False,
        SCENARIO_REASON,
    )
    assert rows[f"{POINTPAINTING}/singlestream"]["valid"]


def test_strict_refuses_a_scenario_the_checker_does_not_allow(
    database_url: str, pointpainting_round: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    result = tracker(database_url, cache, "ingest", "--strict", str(pointpainting_round))
    assert result.exit_code == 2, result.output
    assert "the submission checker rejects it" in result.output
    assert stored_nothing(database_url, cache)


def test_the_open_division_is_not_held_to_the_scenario_table(
    database_url: str, pointpainting_round: Path, tmp_path: Path
) -> None:
    shutil.move(pointpainting_round / "closed", pointpainting_round / "open")
    system = pointpainting_round / "open" / "GATEOverflow" / "systems" / f"{RTX}.json"
    description = json.loads(system.read_text(encoding="utf-8"))
    system.write_text(json.dumps({**description, "division": "open"}), encoding="utf-8")
    cache = tmp_path / "cache"
    result = tracker(database_url, cache, "ingest", str(pointpainting_round))
    assert result.exit_code == 0, result.output
    assert "stored as invalid" not in result.stdout
    assert all(row["valid"] for row in exported(database_url, cache).values())


@pytest.mark.parametrize(
    ("model", "scenario", "round_label", "system_type", "division", "reason"),
    [
        ("pointpainting", "SingleStream", "v5.1", "edge", "closed", None),
        ("pointpainting", "Offline", "v5.0", "datacenter,edge", "network", "allowed SingleStream"),
        ("pointpainting", "Offline", "v5.1", "edge, datacenter", "closed", "allowed SingleStream"),
        ("pointpainting", "Offline", "v5.1", "edge", "open", None),
        ("pointpainting", "Offline", "v6.1", "edge", "closed", None),
        ("pointpainting", "Offline", "v5.1", "", "closed", None),
        ("resnet", "Offline", "v6.0", "datacenter", "closed", "resnet is not a v6.0 benchmark"),
        ("resnet", "Server", "v4.1", "datacenter", "closed", None),
        ("llama2-70b-99", "Interactive", "v5.1", "datacenter", "closed", None),
        ("llama2-70b-99", "Interactive", "v4.1", "datacenter", "closed", "allowed Server, Off"),
        ("deepseek-r1", "SingleStream", "v5.1", "datacenter,edge", "closed", None),
        ("deepseek-r1", "SingleStream", "v6.0", "datacenter,edge", "closed", "allowed Offline, "),
        ("gpt-oss-120b", "Interactive", "v6.0", "datacenter", "closed", None),
        ("whisper", "Offline", "v6.0", "edge", "closed", None),
        ("yolo-99", "MultiStream", "v6.0", "edge", "closed", None),
    ],
)
def test_the_checker_scenario_table(
    model: str,
    scenario: str,
    round_label: str,
    system_type: str,
    division: str,
    reason: str | None,
) -> None:
    found = scenario_reasons(
        model, scenario, round_label=round_label, system_type=system_type, division=division
    )
    if reason is None:
        assert found == []
    else:
        assert len(found) == 1 and reason in found[0], found


def test_an_accuracy_run_summary_is_read_as_accuracy_mode() -> None:
    log = summary_as_detail(CLOSING, path="s")
    assert log == {"effective_test_mode": Entry("AccuracyOnly", 1)}
    primary = primary_metric(
        log,
        model="llama2-70b-99",
        scenario="Interactive",
        round_label="v6.0",
        system_type="datacenter",
        path="x/Interactive/performance/run_1/mlperf_log_summary.txt",
    )
    assert not primary.measured and primary.value == 0.0
    assert primary.invalid_reasons == (ACCURACY_REASON,)
    assert (primary.metric.name, primary.loadgen_scenario) == ("tokens_per_s", "Server")
    with pytest.raises(ParseError, match="not a LoadGen summary"):
        summary_as_detail(b"No warnings encountered during test.\nhello\n", path="s")
