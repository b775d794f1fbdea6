"""Small result trees in the real formats, for tests that go through ingest and analysis.

* :func:`write_aiperf_sweep`: an AIPerf 0.13.0 concurrency sweep, one
  ``concurrency_N/profile_export_aiperf.json`` per point, shaped like the real
  files in ``shared/data/aiperf`` (the blocks the tracker reads, the input config
  with the profiling phase, run info).
* :func:`write_mlperf_result`: one system of an MLPerf Inference round
  (``<division>/<submitter>/systems/<system>.json`` and the result folder's
  ``performance/run_1/mlperf_log_summary.txt``), shaped like the v6.0 NVIDIA files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from click.testing import CliRunner, Result

from tracker.cli import cli


def tracker(database_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", database_url, *args])


def tracker_ok(database_url: str, *args: str) -> Result:
    result = tracker(database_url, *args)
    assert result.exit_code == 0, result.output
    return result


def _block(unit: str, value: float) -> dict[str, object]:
    return {"unit": unit, "avg": value, "p50": value, "p90": value, "p99": value}


def _summary(
    concurrency: int, tokens_per_s: float, per_user: float, isl: int, osl: int
) -> dict[str, object]:
    tpot_ms = 1000.0 / per_user
    return {
        "schema_version": "1.4",
        "aiperf_version": "0.13.0",
        "benchmark_id": f"run-c{concurrency}-{tokens_per_s:g}",
        "request_throughput": {"unit": "requests/sec", "avg": tokens_per_s / osl},
        "request_latency": _block("ms", 2000.0 + osl * tpot_ms),
        "time_to_first_token": _block("ms", 2000.0),
        "inter_token_latency": _block("ms", tpot_ms),
        "output_token_throughput": {"unit": "tokens/sec", "avg": tokens_per_s},
        "output_token_throughput_per_user": _block("tokens/sec/user", per_user),
        "output_sequence_length": _block("tokens", float(osl)),
        "input_sequence_length": _block("tokens", float(isl)),
        "benchmark_duration": {"unit": "sec", "avg": 120.0},
        "input_config": {
            "models": {"strategy": "round_robin", "items": [{"name": "llama-3.3-70b"}]},
            "endpoint": {"type": "chat", "streaming": True},
            "datasets": [
                {
                    "name": "main",
                    "type": "synthetic",
                    "prompts": {"isl": {"mean": isl, "stddev": 0}, "osl": {"mean": osl}},
                }
            ],
            "phases": [
                {"name": "warmup", "kind": "warmup", "type": "concurrency", "concurrency": 1},
                {
                    "name": "profiling",
                    "kind": "profiling",
                    "type": "concurrency",
                    "requests": 256,
                    "concurrency": concurrency,
                },
            ],
        },
        "run_info": {"sweep_id": "seed-sweep", "trial": 0, "run_label": "run_0001"},
        "was_cancelled": False,
        "is_complete": True,
        "error_summary": [],
        "start_time": "2026-11-30T10:00:00",
        "end_time": "2026-11-30T10:02:00",
    }


def write_aiperf_sweep(
    root: Path,
    points: Sequence[tuple[int, float, float]],
    *,
    isl: int = 65536,
    osl: int = 400,
) -> Path:
    """A sweep of ``(concurrency, output tokens/s of the system, tokens/s/user)`` points."""
    for concurrency, tokens_per_s, per_user in points:
        run = root / f"concurrency_{concurrency}"
        run.mkdir(parents=True)
        doc = _summary(concurrency, tokens_per_s, per_user, isl, osl)
        (run / "profile_export_aiperf.json").write_text(json.dumps(doc, indent=2), "utf-8")
    return root


SUMMARY_LOG = """================================================
MLPerf Results Summary
================================================
SUT name : PySUT
Scenario : {scenario}
Mode     : PerformanceOnly
Samples per second: {samples:g}
Tokens per second: {tokens:g}
Result is : VALID
  Min duration satisfied : Yes
  Min queries satisfied : Yes
  Early stopping satisfied: Yes

================================================
Additional Stats
================================================
Min latency (ns)                : 12792569561
Max latency (ns)                : 4620958739770
Mean latency (ns)               : 1897870982214
50.00 percentile latency (ns)   : 1870729078829
90.00 percentile latency (ns)   : 3490260096746

================================================
Test Parameters Used
================================================
samples_per_query : 3071600
target_qps : 720
min_duration (ms): 2000000
min_query_count : 1
performance_sample_count : 4388

No warnings encountered during test.

No errors encountered during test.
"""


def write_mlperf_result(
    round_dir: Path,
    system: str,
    *,
    nodes: int,
    per_node: int,
    tokens_per_s: float,
    accelerator: str = "NVIDIA GB300",
    framework: str = "TensorRT 10.14, CUDA 13.1, TensorRT-LLM 1.2",
    benchmark: str = "deepseek-r1",
    scenario: str = "Offline",
    submitter: str = "NVIDIA",
) -> None:
    """One system and its result of ``benchmark``/``scenario`` in a round folder."""
    base = round_dir / "closed" / submitter
    (base / "systems").mkdir(parents=True, exist_ok=True)
    description = {
        "submitter": submitter,
        "division": "closed",
        "system_name": f"{system} ({nodes * per_node}x {accelerator})",
        "status": "available",
        "system_type": "datacenter",
        "accelerator_model_name": accelerator,
        "accelerators_per_node": per_node,
        "number_of_nodes": nodes,
        "host_processor_model_name": "NVIDIA Grace CPU",
        "framework": framework,
        "other_software_stack": f"{framework}, Driver 580.{nodes}",
    }
    (base / "systems" / f"{system}.json").write_text(json.dumps(description), "utf-8")
    run = base / "results" / system / benchmark / scenario / "performance" / "run_1"
    run.mkdir(parents=True)
    log = SUMMARY_LOG.format(scenario=scenario, samples=tokens_per_s / 3750, tokens=tokens_per_s)
    (run / "mlperf_log_summary.txt").write_text(log, "utf-8")
