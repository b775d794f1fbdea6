"""A throughput (or latency, or time) that is not positive is stored as invalid (issue 21).

Before, a throughput fallen to 0 was stored as a valid value and the gate called it
"inconclusive" (exit 0). Every primary metric the parsers produce must be positive:
a zero, negative or NaN value is stored as invalid with ``extra.invalid_reason``,
named in the ingest's note, and the gate fails on it (kind ``invalid``).
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tracker.formats.reader import require_positive
from tracker.records.results import MetricRecord, ResultRecord, SoftwareRecord, SystemRecord

Run = Callable[..., Result]
REASON = "samples_per_s is 0: it must be positive"


def _zero_throughput(loadgen_local: Path, target: Path) -> Path:
    """The real Offline run with its throughput event set to 0 (the detail log alone)."""
    shutil.copytree(loadgen_local / "Offline", target)
    (target / "mlperf_log_summary.txt").unlink()
    detail = target / "mlperf_log_detail.txt"
    text = detail.read_text("utf-8")
    before = '"key": "result_samples_per_second", "value": 309778'
    assert before in text
    detail.write_text(text.replace(before, '"key": "result_samples_per_second", "value": 0'))
    return target


def _ingest(run: Run, url: str, source: Path, version: str) -> Result:
    args = ["--kind", "loadgen", "--benchmark", "resnet50", "--system", "box"]
    return run(["--database-url", url, "ingest", str(source), *args, "--software-version", version])


def test_a_zero_throughput_is_stored_as_invalid_and_fails_the_gate(
    database_url: str, loadgen_local: Path, tmp_path: Path, run_tracker: Run
) -> None:
    assert _ingest(run_tracker, database_url, loadgen_local / "Offline", "1.0").exit_code == 0
    zero = _zero_throughput(loadgen_local, tmp_path / "zero")
    done = _ingest(run_tracker, database_url, zero, "2.0")
    assert done.exit_code == 0, done.output
    assert f"1 result stored as invalid: mlperf_log_detail.txt: {REASON}" in done.stdout

    exported = run_tracker(["--database-url", database_url, "export", "--format", "json"])
    rows = {r["software_version"]: r for r in json.loads(exported.stdout)}
    assert rows["2.0"]["valid"] is False and rows["2.0"]["value"] == 0.0
    assert rows["2.0"]["extra"]["invalid_reason"] == REASON
    assert rows["1.0"]["valid"] is True and "invalid_reason" not in rows["1.0"]["extra"]

    gate = run_tracker(["--database-url", database_url, "gate", "--candidate", "2.0"])
    assert gate.exit_code == 1, gate.output
    assert "gate: 1 (1 invalid, 1.0 → 2.0)" in gate.stdout and REASON in gate.stdout


def _result(value: float, *, valid: bool = True, reason: str | None = None) -> ResultRecord:
    return ResultRecord(
        system=SystemRecord(name="box"),
        software=SoftwareRecord(software="local", version="1.0"),
        benchmark="resnet50",
        scenario="Offline",
        metric=MetricRecord("samples_per_s", "samples/s", True),
        value=value,
        is_valid=valid,
        artifact_path="mlperf_log_detail.txt",
        artifact_sha256="0" * 64,
        extra={"invalid_reason": reason} if reason else {},
    )


@pytest.mark.parametrize("value", [0.0, -0.0, -1.5, math.nan])
def test_every_value_that_is_not_positive_is_invalid(value: float) -> None:
    [checked] = require_positive([_result(value)])
    assert checked.is_valid is False
    assert checked.extra["invalid_reason"] == f"samples_per_s is {value:g}: it must be positive"


def test_a_positive_value_is_kept_and_so_is_an_earlier_reason() -> None:
    kept = _result(1e-9)
    assert require_positive([kept]) == [kept]
    known = _result(0.0, valid=False, reason="an accuracy-mode run")
    assert require_positive([known]) == [known]
    [checked] = require_positive([_result(0.0, valid=False)])
    assert checked.extra["invalid_reason"] == REASON
