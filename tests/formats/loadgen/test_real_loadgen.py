"""Fresh logs from the real LoadGen (``mlcommons-loadgen``), ingested and compared with the logs.

The tiny SUT in ``loadgen_tiny_sut.py`` runs in a subprocess (LoadGen keeps
process-wide state) for about a second. Its figures and even its verdict depend
on the machine, so every assertion reads the expected value from the logs
LoadGen just wrote.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.serving_cli import export, ingest_ok

SUT = Path(__file__).resolve().parents[2] / "support" / "loadgen_tiny_sut.py"


@pytest.fixture(scope="module")
def fresh_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("loadgen")
    done = subprocess.run(
        [sys.executable, str(SUT), str(out)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, (
        f"the tiny LoadGen SUT failed (is the dev dependency mlcommons-loadgen installed?)\n"
        f"{done.stderr[-2000:]}"
    )
    return out


def _detail(run: Path) -> dict[str, Any]:
    events: dict[str, Any] = {}
    for line in (run / "mlperf_log_detail.txt").read_text().splitlines():
        if line.startswith(":::MLLOG "):
            event = json.loads(line[len(":::MLLOG ") :])
            events.setdefault(event["key"], event["value"])
    return events


def _summary_says_valid(run: Path) -> bool:
    text = (run / "mlperf_log_summary.txt").read_text()
    return "Result is : VALID" in text


def test_fresh_loadgen_runs_are_stored_as_loadgen_wrote_them(
    database_url: str, fresh_logs: Path
) -> None:
    result = ingest_ok(database_url, fresh_logs, "--system", "ci", "--benchmark", "tiny")
    assert "2 runs (loadgen), 2 results stored" in result.output
    rows = {row["run_label"]: row for row in export(database_url)}
    offline, server = rows["Offline"], rows["Server_tokens"]
    events = _detail(fresh_logs / "Offline")
    assert offline["scenario"] == events["effective_scenario"] == "Offline"
    assert offline["metric"] == "samples_per_s"
    assert offline["value"] == pytest.approx(float(events["result_samples_per_second"]))
    assert offline["valid"] is (events["result_validity"] == "VALID")
    assert offline["valid"] is _summary_says_valid(fresh_logs / "Offline")
    assert offline["extra"]["loadgen_version"] == events["loadgen_version"]

    events = _detail(fresh_logs / "Server_tokens")
    assert server["scenario"] == "Server" and events["requested_use_token_latencies"] is True
    assert (server["metric"], server["unit"]) == ("tokens_per_s", "tokens/s")
    assert server["value"] == pytest.approx(float(events["result_completed_tokens_per_second"]))
    assert server["valid"] is (events["result_validity"] == "VALID")
    extra = server["extra"]
    ttft = float(events["result_first_token_99.00_percentile_latency_ns"]) / 1e6
    tpot = float(events["result_time_per_output_token_50.00_percentile_ns"]) / 1e6
    assert extra["ttft_p99_ms"] == pytest.approx(ttft)
    assert extra["tpot_p50_ms"] == pytest.approx(tpot)
    assert extra["queries_per_s"] == pytest.approx(
        float(events["result_completed_samples_per_sec"])
    )
    assert extra["sut_name"] == events["sut_name"]


def test_fresh_summary_alone_gives_the_same_token_latencies(
    database_url: str, fresh_logs: Path, tmp_path: Path
) -> None:
    run = tmp_path / "Server_tokens"
    run.mkdir()
    summary = (fresh_logs / "Server_tokens" / "mlperf_log_summary.txt").read_bytes()
    (run / "mlperf_log_summary.txt").write_bytes(summary)
    ingest_ok(database_url, run, "--system", "ci", "--benchmark", "tiny")
    [row] = export(database_url)
    events = _detail(fresh_logs / "Server_tokens")
    for pct in ("50.00", "90.00", "99.00"):
        name = f"ttft_p{pct.rstrip('0').rstrip('.')}_ms"
        expected = float(events[f"result_first_token_{pct}_percentile_latency_ns"]) / 1e6
        assert row["extra"][name] == pytest.approx(expected)
    assert row["extra"]["primary_metric_from"] == "summary log"
    assert row["valid"] is (events["result_validity"] == "VALID")
