"""Seeded example data in the real MLPerf LoadGen log format (for ``tracker demo``).

Every file written here is example data and says so: the SUT is named
``ExampleSUT (example data)`` and the data folder holds a README saying the
numbers are made up. The logs have the same sections and keys as LoadGen
6.0.x writes, so they go through the same parser as real runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["DEMO_SERIES", "DEMO_VERSIONS", "DemoSeries", "write_demo_data"]

LOADGEN_VERSION = "6.0.17 @ d6147c7eb7"
SUT_NAME = "ExampleSUT (example data)"
DEMO_VERSIONS = ("1.0.0", "1.1.0", "1.2.0")
REPEATS = 3
NOISE = 0.01


@dataclass(frozen=True, slots=True)
class DemoSeries:
    """One example series: LoadGen scenario and its primary value per version."""

    folder: str
    scenario: str
    use_token_latencies: bool
    value_by_version: tuple[float, ...]
    """samples/s (Offline), tokens/s (Server, token latencies) or ms (SingleStream)."""


DEMO_SERIES = (
    DemoSeries("resnet50-Offline", "Offline", False, (10_250.0, 10_480.0, 11_320.0)),
    DemoSeries("llama2-70b-Server", "Server", True, (2_410.0, 2_530.0, 3_015.0)),
    DemoSeries("resnet50-SingleStream", "SingleStream", False, (0.520, 0.505, 0.498)),
)

README = """\
# Example data (not a real measurement)

Written by `tracker demo` with a fixed seed. The numbers are made up to show
the tracker at work; the files follow the real MLPerf LoadGen 6.0 log format
(`mlperf_log_summary.txt`, `mlperf_log_detail.txt`). Layout:
`<software version>/<benchmark>-<scenario>/run_<n>/`.
"""


def write_demo_data(data_dir: Path, *, seed: int = 1234) -> list[Path]:
    """Write every run of the demo dataset under ``data_dir``; return the run folders."""
    rng = np.random.default_rng(seed)
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "README.md").write_text(README, encoding="utf-8")
    runs: list[Path] = []
    for v_index, version in enumerate(DEMO_VERSIONS):
        for series in DEMO_SERIES:
            for repeat in range(1, REPEATS + 1):
                value = series.value_by_version[v_index] * float(rng.normal(1.0, NOISE))
                run_dir = data_dir / version / series.folder / f"run_{repeat}"
                _write_run(run_dir, series, value, day=1 + v_index * 7 + repeat)
                runs.append(run_dir)
    return runs


def _write_run(run_dir: Path, series: DemoSeries, value: float, *, day: int) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    run = _RunNumbers.of(series, value)
    (run_dir / "mlperf_log_summary.txt").write_text(_summary(series, run), encoding="utf-8")
    (run_dir / "mlperf_log_detail.txt").write_text(_detail(series, run, day), encoding="utf-8")
    (run_dir / "mlperf_log_accuracy.json").write_text("[\n]\n", encoding="utf-8")


@dataclass(frozen=True, slots=True)
class _RunNumbers:
    samples_per_s: float
    tokens_per_s: float | None
    latency_ns: tuple[int, ...]  # min, mean, p50, p90, p99, max
    early_stopping_ns: int | None

    @classmethod
    def of(cls, series: DemoSeries, value: float) -> _RunNumbers:
        if series.scenario == "SingleStream":
            p90 = round(value * 1e6)
            lat = (p90 * 6 // 10, p90 * 8 // 10, p90 * 3 // 4, p90 - 9_000, p90 * 5 // 4, p90 * 3)
            return cls(round(1e9 / lat[1], 2), None, lat, p90)
        if series.use_token_latencies:
            samples = value / 256.0
            return cls(
                samples,
                value,
                (
                    620_000_000,
                    9_800_000_000,
                    9_100_000_000,
                    15_900_000_000,
                    19_200_000_000,
                    21_000_000_000,
                ),
                None,
            )
        lat = (3_300_000, 610_000_000, 600_000_000, 1_080_000_000, 1_190_000_000, 1_200_000_000)
        return cls(value, None, lat, None)


def _summary(series: DemoSeries, run: _RunNumbers) -> str:
    lines = [
        "=" * 48,
        "MLPerf Results Summary",
        "=" * 48,
        f"SUT name : {SUT_NAME}",
        f"Scenario : {series.scenario}",
        "Mode     : PerformanceOnly",
        *_summary_result_lines(series, run),
        "Result is : VALID",
    ]
    if series.scenario == "Server":
        lines.append("  Performance constraints satisfied : Yes")
    lines += [
        "  Min duration satisfied : Yes",
        "  Min queries satisfied : Yes",
        "  Early stopping satisfied: Yes",
        *_early_stopping_lines(series, run),
        "",
        "=" * 48,
        "Additional Stats",
        "=" * 48,
        *_latency_lines(run),
        "",
        "=" * 48,
        "Test Parameters Used",
        "=" * 48,
        "samples_per_query : 1",
        "min_duration (ms): 600000",
        "",
        "No warnings encountered during test.",
        "",
        "No errors encountered during test.",
    ]
    return "\n".join(lines) + "\n"


def _summary_result_lines(series: DemoSeries, run: _RunNumbers) -> list[str]:
    if series.scenario == "SingleStream":
        return [f"90.0th percentile latency (ns) : {run.latency_ns[3]}"]
    if series.scenario == "Server":
        lines = [f"Completed samples per second    : {run.samples_per_s:.2f}"]
        if run.tokens_per_s is not None:
            lines.append(f"Completed tokens per second: {run.tokens_per_s:.2f}")
        return lines
    return [f"Samples per second: {run.samples_per_s:g}"]


def _early_stopping_lines(series: DemoSeries, run: _RunNumbers) -> list[str]:
    if series.scenario == "SingleStream":
        return [
            "Early Stopping Result:",
            " * Processed at least 64 queries (1153846).",
            " * Would discard 114917 highest latency queries.",
            f" * Early stopping 90.0th percentile estimate: {run.early_stopping_ns}",
        ]
    if series.scenario == "Server" and run.tokens_per_s is not None:
        return [
            "TTFT Early Stopping Result:",
            " * Run successful.",
            "TPOT Early Stopping Result:",
            " * Run successful.",
        ]
    return []


def _latency_lines(run: _RunNumbers) -> list[str]:
    labels = (
        "Min latency (ns)",
        "Mean latency (ns)",
        "50.00 percentile latency (ns)",
        "90.00 percentile latency (ns)",
        "99.00 percentile latency (ns)",
        "Max latency (ns)",
    )
    return [f"{label:<32}: {value}" for label, value in zip(labels, run.latency_ns, strict=True)]


def _detail(series: DemoSeries, run: _RunNumbers, day: int) -> str:
    events: list[tuple[str, object]] = [
        ("loadgen_version", LOADGEN_VERSION),
        ("test_datetime", f"2026-11-{day:02d}T09:00:00Z"),
        ("sut_name", SUT_NAME),
        ("qsl_name", "ExampleQSL"),
        ("requested_scenario", series.scenario),
        ("requested_test_mode", "PerformanceOnly"),
    ]
    if series.use_token_latencies:
        events.append(("requested_use_token_latencies", True))
    events += [
        ("effective_scenario", series.scenario),
        ("effective_test_mode", "PerformanceOnly"),
        ("effective_samples_per_query", 1),
        ("effective_min_duration_ms", 600000),
        ("result_validity", "VALID"),
        ("result_min_duration_met", True),
        ("result_min_queries_met", True),
        ("early_stopping_met", True),
        *_detail_results(series, run),
        ("num_errors", 0),
    ]
    return "".join(_event(key, value, n) for n, (key, value) in enumerate(events))


def _detail_results(series: DemoSeries, run: _RunNumbers) -> list[tuple[str, object]]:
    names = ("min", "mean", "50.00_percentile", "90.00_percentile", "99.00_percentile", "max")
    latencies: list[tuple[str, object]] = [
        (f"result_{name}_latency_ns", value)
        for name, value in zip(names, run.latency_ns, strict=True)
    ]
    if series.scenario == "SingleStream":
        return [
            ("early_stopping_latency_ss", run.early_stopping_ns),
            ("result_qps_with_loadgen_overhead", _g(run.samples_per_s)),
            *latencies,
        ]
    if series.scenario == "Server":
        rows: list[tuple[str, object]] = [
            ("result_perf_constraints_met", True),
            ("result_completed_samples_per_sec", _g(run.samples_per_s)),
            *latencies,
        ]
        if run.tokens_per_s is not None:
            rows.append(("result_completed_tokens_per_second", _g(run.tokens_per_s)))
        return rows
    return [("result_samples_per_second", _g(run.samples_per_s)), *latencies]


def _g(value: float) -> float:
    """Six significant digits, as LoadGen prints numbers in the detail log."""
    return float(f"{value:.6g}")


def _event(key: str, value: object, n: int) -> str:
    event = {
        "key": key,
        "value": value,
        "time_ms": round(0.01 + n * 0.001, 6),
        "namespace": "mlperf::logging",
        "event_type": "POINT_IN_TIME",
        "metadata": {
            "is_error": False,
            "is_warning": False,
            "file": "loadgen.cc",
            "line_no": 1200 + n,
            "pid": 4242,
            "tid": 4242,
        },
    }
    return ":::MLLOG " + json.dumps(event) + "\n"
