"""``tracker demo``: seeded example data in the real formats, ingested through the demo job,
analysed, reported and gated.

``tracker demo``: seeded example data, ingested through the demo job, reported.

The demo writes into its own folder (default ``demo/``): ``data/`` holds the
example data in the real formats (LoadGen runs, AIPerf concurrency sweeps and
MLPerf-layout rounds, see the example data below),
``site/`` the rendered report. It ingests through ``ingest/demo.toml``, analyses
(storing the findings), renders the report and runs the gate on the newest
version of the example serving stack against the one before, which has a
planted 8% regression (gate verdict 1). Everything it shows is labelled as
example data.

The demo only ever removes what it wrote itself: its ``data/`` folder holds a
marker file (:data:`DEMO_MARKER`) written before anything else, and a later
demo into the same folder removes ``data/`` (and its ``demo.db``) only when
that marker is there; a ``data/`` folder or ``demo.db`` of the user's own stops
the demo with an error that names it (:func:`prepare_demo_folder`).

Seeded example data in the real MLPerf LoadGen log format (for ``tracker demo``).

Every file written here is example data and says so: the SUT is named
``ExampleSUT (example data)`` and the data folder holds a README saying the
numbers are made up. The logs have the same sections and keys as LoadGen
6.0.x writes, so they go through the same parser as real runs.

Seeded example data for ``tracker demo``: AIPerf sweeps and MLPerf-layout rounds.

Modelled on public figures, and labelled as example data
everywhere (system names say "example data", the submitter is ``ExampleCorp``):

* **Serving** (``serving/<version>/<workload>/trial_<n>/concurrency_<c>/``, AIPerf
  0.13.0 ``profile_export_aiperf.json``), an example serving stack on 4
  accelerators, three trials per sweep. The agentic workload (64k-token context,
  400 output tokens) goes from 718 to 1,997 tokens/s at 50 tokens/s/user between
  1.0.0 and 1.1.0 (2.78×); in 1.2.0 the chat workload (1k/1k) regresses by 8%.
  The fronts around the target are straight lines, so PCHIP reads the figures
  exactly (trial 1 is the figure; trials 2 and 3 carry 1% seeded noise).
* **MLPerf rounds** (``mlperf/<round>/closed/ExampleCorp/...``, v6.0 layout
  summary logs): one rack of 72 accelerators and four racks (288) at 99%
  efficiency in both rounds, a 1.6× software gain from v5.1 to v6.0, and a
  second configuration (8 → 32 accelerators) whose efficiency falls from 97% to 84%.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np

from tracker.analyze.run import AnalysisOutcome, run_analysis
from tracker.errors import ConfigError
from tracker.formats.reader import ProgressCallback
from tracker.gate.decision import GateResult, run_gate
from tracker.gate.policy import GatePolicy
from tracker.ingest.run import SourceOutcome, ingest_source, read_job
from tracker.paths import jobs_dir, lstat_mode
from tracker.report.publish import publish_report
from tracker.report.render import check_output_folder
from tracker.store.facade import Store

__all__ = [
    "DEMO_DATABASE",
    "DEMO_JOB",
    "DEMO_MARKER",
    "DEMO_SERIES",
    "DEMO_VERSIONS",
    "DemoOutcome",
    "DemoSeries",
    "MLPERF_ROUNDS",
    "SERVING_VERSIONS",
    "SERVING_WORKLOADS",
    "TRIALS",
    "prepare_demo_folder",
    "run_demo",
    "write_aiperf_sweep",
    "write_demo_data",
    "write_mlperf_rounds",
    "write_serving_data",
]


LOADGEN_VERSION = "6.0.17 @ d6147c7eb7"
SUT_NAME = "ExampleSUT (example data)"
DEMO_VERSIONS = ("1.0.0", "1.1.0", "1.2.0")
REPEATS = 3
NOISE = 0.01


@dataclass(frozen=True, slots=True)
class DemoSeries:
    """One example series: LoadGen scenario and its primary value per version."""

    folder: str
    """The name of its LoadGen output folder (``<benchmark>-<scenario>``)."""
    use_token_latencies: bool
    """Whether LoadGen reports tokens (an LLM benchmark) rather than samples."""
    value_by_version: tuple[float, ...]
    """samples/s (Offline), tokens/s (Server, token latencies) or ms (SingleStream)."""

    @property
    def scenario(self) -> str:
        """The LoadGen scenario: the folder name's last part."""
        return self.folder.rpartition("-")[2]


DEMO_SERIES = (
    DemoSeries("resnet50-Offline", False, (10_250.0, 10_480.0, 11_320.0)),
    DemoSeries("llama2-70b-Server", True, (2_410.0, 2_530.0, 3_015.0)),
    DemoSeries("resnet50-SingleStream", False, (0.520, 0.505, 0.498)),
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


TARGET = 50.0
ACCELERATORS = 4
TRIALS = 3
TRIAL_NOISE = 0.01
SERVING_VERSIONS = ("1.0.0", "1.1.0", "1.2.0")
MLPERF_ROUNDS = ("v5.1", "v6.0")


@dataclass(frozen=True, slots=True)
class Workload:
    """One serving workload and its system tokens/s at 50 tokens/s/user per version."""

    name: str
    isl: int
    """Input sequence length, tokens."""
    osl: int
    """Output sequence length, tokens."""
    at_target: tuple[float, ...]


SERVING_WORKLOADS = (
    Workload("agentic", 65536, 400, (718.0, 1997.0, 1997.0)),
    Workload("chat", 1024, 1024, (2400.0, 2600.0, 2392.0)),
)
"""chat 1.1.0 → 1.2.0: 2,600 → 2,392 tokens/s, an 8% regression."""


def _point(
    concurrency: int, tokens_per_s: float, per_user: float, w: Workload
) -> dict[str, object]:
    tpot_ms = 1000.0 / per_user

    def block(unit: str, value: float) -> dict[str, object]:
        return {"unit": unit, "avg": value, "p50": value, "p90": value, "p99": value}

    phase = {"name": "profiling", "kind": "profiling", "type": "concurrency"}
    return {
        "schema_version": "1.4",
        "aiperf_version": "0.13.0",
        "benchmark_id": f"example-{w.name}-c{concurrency}-{tokens_per_s:.6g}",
        "request_throughput": {"unit": "requests/sec", "avg": tokens_per_s / w.osl},
        "request_latency": block("ms", 2000.0 + w.osl * tpot_ms),
        "time_to_first_token": block("ms", 2000.0),
        "inter_token_latency": block("ms", tpot_ms),
        "output_token_throughput": {"unit": "tokens/sec", "avg": tokens_per_s},
        "output_token_throughput_per_user": block("tokens/sec/user", per_user),
        "output_sequence_length": block("tokens", float(w.osl)),
        "input_sequence_length": block("tokens", float(w.isl)),
        "benchmark_duration": {"unit": "sec", "avg": 120.0},
        "input_config": {
            "models": {"strategy": "round_robin", "items": [{"name": "example-llm-70b"}]},
            "endpoint": {"type": "chat", "streaming": True},
            "datasets": [
                {
                    "name": "main",
                    "type": "synthetic",
                    "prompts": {"isl": {"mean": w.isl, "stddev": 0}, "osl": {"mean": w.osl}},
                }
            ],
            "phases": [{**phase, "requests": 256, "concurrency": concurrency}],
        },
        "run_info": {"sweep_id": f"example-{w.name}", "trial": 0, "run_label": "run_0001"},
        "was_cancelled": False,
        "is_complete": True,
        "error_summary": [],
        "start_time": "2026-11-30T10:00:00",
        "end_time": "2026-11-30T10:02:00",
    }


def write_aiperf_sweep(root: Path, points: Sequence[tuple[int, float, float]], w: Workload) -> Path:
    """One sweep folder of ``(concurrency, system tokens/s, tokens/s/user)`` points."""
    for concurrency, tokens_per_s, per_user in points:
        run = root / f"concurrency_{concurrency}"
        run.mkdir(parents=True, exist_ok=True)
        doc = _point(concurrency, tokens_per_s, per_user, w)
        (run / "profile_export_aiperf.json").write_text(json.dumps(doc, indent=2), "utf-8")
    return root


def _front(at_target: float, scale: float) -> list[tuple[int, float, float]]:
    """A front that is a straight line through (50 tokens/s/user, ``at_target``) near it."""
    slope = at_target / 60.0
    points = [
        (c, scale * (at_target + slope * (TARGET - x)), x)
        for c, x in ((2, 75.0), (4, 60.0), (8, 40.0), (16, 30.0))
    ]
    points.append((32, scale * at_target * 1.45, 15.0))
    return points


def write_serving_data(data_dir: Path, *, seed: int) -> list[Path]:
    """Every serving sweep (versions × workloads × trials); return the sweep folders."""
    rng = np.random.default_rng(seed)
    sweeps = []
    for v_index, version in enumerate(SERVING_VERSIONS):
        for w in SERVING_WORKLOADS:
            for trial in range(1, TRIALS + 1):
                scale = 1.0 if trial == 1 else float(rng.normal(1.0, TRIAL_NOISE))
                root = data_dir / "serving" / version / w.name / f"trial_{trial}"
                sweeps.append(write_aiperf_sweep(root, _front(w.at_target[v_index], scale), w))
    return sweeps


_SUMMARY_LOG = """================================================
MLPerf Results Summary
================================================
SUT name : ExampleSUT (example data)
Scenario : {scenario}
Mode     : PerformanceOnly
Samples per second: {samples:.6g}
Tokens per second: {tokens:.8g}
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


@dataclass(frozen=True, slots=True)
class _System:
    name: str
    accelerator: str
    nodes: int
    per_node: int
    tokens_per_s: tuple[float, ...]
    """Per round of :data:`MLPERF_ROUNDS`."""


def _systems() -> tuple[_System, ...]:
    rack = (1.0e6, 1.6e6)  # one rack's tokens/s: a 1.6x software-only gain
    small = (52_000.0, 60_000.0)
    return (
        _System("Example-NVL72x72", "Example Accel X", 18, 4, rack),
        _System("Example-NVL72x288", "Example Accel X", 72, 4, tuple(4 * 0.99 * r for r in rack)),
        _System("Example-8x", "Example Accel Y", 1, 8, small),
        _System("Example-8x4", "Example Accel Y", 4, 8, (4 * 0.97 * small[0], 4 * 0.84 * small[1])),
    )


def _write_system(round_dir: Path, system: _System, tokens_per_s: float, stack: str) -> None:
    base = round_dir / "closed" / "ExampleCorp"
    (base / "systems").mkdir(parents=True, exist_ok=True)
    total = system.nodes * system.per_node
    description = {
        "submitter": "ExampleCorp",
        "division": "closed",
        "system_name": f"{system.name} ({total}x {system.accelerator}, example data)",
        "status": "available",
        "system_type": "datacenter",
        "accelerator_model_name": system.accelerator,
        "accelerators_per_node": system.per_node,
        "number_of_nodes": system.nodes,
        "host_processor_model_name": "Example CPU",
        "framework": stack,
        "other_software_stack": f"{stack}, Example Driver 1.{system.nodes}",
    }
    (base / "systems" / f"{system.name}.json").write_text(json.dumps(description), "utf-8")
    run = base / "results" / system.name / "example-llm" / "Offline" / "performance" / "run_1"
    run.mkdir(parents=True, exist_ok=True)
    log = _SUMMARY_LOG.format(scenario="Offline", samples=tokens_per_s / 3750, tokens=tokens_per_s)
    (run / "mlperf_log_summary.txt").write_text(log, "utf-8")


def write_mlperf_rounds(data_dir: Path) -> list[Path]:
    """One MLPerf-layout round folder per :data:`MLPERF_ROUNDS`; return them."""
    rounds = []
    for r_index, label in enumerate(MLPERF_ROUNDS):
        round_dir = data_dir / "mlperf" / label
        stack = "Example Serving Framework"
        for system in _systems():
            _write_system(round_dir, system, system.tokens_per_s[r_index], stack)
        rounds.append(round_dir)
    return rounds


DEMO_JOB = "demo.toml"
DEMO_MARKER = ".tracker-demo"
"""The file in ``data/`` that marks the folder as written by ``tracker demo``."""
DEMO_DATABASE = ("demo.db", "demo.db-wal", "demo.db-shm")
"""The demo's own SQLite database (and its journal files) in its folder."""
DEMO_CANDIDATE = SERVING_VERSIONS[-1]
"""The version the demo gates (against the one before it)."""


@dataclass(frozen=True, slots=True)
class DemoOutcome:
    """Where the demo wrote its data and report, and what it stored."""

    data_dir: Path
    index_page: Path
    runs_written: int
    sources: tuple[SourceOutcome, ...]
    analysis: AnalysisOutcome
    gate: GateResult


def run_demo(
    store: Store,
    out_dir: Path,
    *,
    generated_at: str,
    today: date,
    seed: int = 1234,
    progress: ProgressCallback | None = None,
    force: bool = False,
) -> DemoOutcome:
    """Write the example data, ingest it with ``jobs/demo.toml``, analyse, report, gate.

    ``force``: the report may take over a ``site/`` folder the tracker did not make
    (see :func:`tracker.report.render.check_output_folder`)."""
    data_dir = out_dir / "data"
    _claim(data_dir)
    runs = write_demo_data(data_dir, seed=seed)
    runs += write_serving_data(data_dir, seed=seed)
    runs += write_mlperf_rounds(data_dir)
    _job, specs = read_job(jobs_dir() / DEMO_JOB, root=data_dir)
    outcomes = []
    for done, spec in enumerate(specs, start=1):
        outcomes.append(ingest_source(store, spec, strict=True))
        if progress is not None:
            progress(done, len(specs), spec.location)
    analysis = run_analysis(store)
    index = publish_report(store, out_dir / "site", generated_at=generated_at, force=force)
    gate = run_gate(store, GatePolicy(), candidate=DEMO_CANDIDATE, today=today)
    return DemoOutcome(
        data_dir=data_dir,
        index_page=index,
        runs_written=len(runs),
        sources=tuple(outcomes),
        analysis=analysis,
        gate=gate,
    )


def _is_demo_data(data_dir: Path) -> bool:
    """Whether ``data_dir`` is a real folder (not a link) holding the demo's marker file."""
    folder, marker = lstat_mode(data_dir), lstat_mode(data_dir / DEMO_MARKER)
    return (
        folder is not None and stat.S_ISDIR(folder) and marker is not None and stat.S_ISREG(marker)
    )


def _not_ours(path: Path, data_dir: Path) -> ConfigError:
    return ConfigError(
        f"{path} was not written by `tracker demo` ({data_dir} has no {DEMO_MARKER} file), "
        "and the demo would replace it: move it away, or give another folder with --out"
    )


def _claim(data_dir: Path) -> None:
    """Make ``data_dir`` the demo's (a new folder, marked); refuse a folder of the user's."""
    if lstat_mode(data_dir) is not None:
        if not _is_demo_data(data_dir):
            raise _not_ours(data_dir, data_dir)
        return
    data_dir.mkdir(parents=True)
    marker = data_dir / DEMO_MARKER
    part = data_dir / f"{DEMO_MARKER}.part"
    part.write_text("Written by `tracker demo`; it removes this folder.\n", encoding="utf-8")
    os.replace(part, marker)


def prepare_demo_folder(out_dir: Path, *, fresh_database: bool, force: bool = False) -> None:
    """Remove what an earlier demo wrote into ``out_dir``: its marked ``data/`` folder
    and, with ``fresh_database``, its ``demo.db``; then make ``out_dir/data`` the demo's.

    Raises :class:`~tracker.errors.ConfigError` (nothing removed) when ``data/`` is not
    the demo's, or when ``demo.db`` is there without the demo's ``data/``, and a
    :class:`~tracker.report.render.RenderError` when ``site/`` is a folder the tracker
    did not make (unless ``force``).
    """
    check_output_folder(out_dir / "site", force=force)
    data_dir = out_dir / "data"
    ours = _is_demo_data(data_dir)
    if lstat_mode(data_dir) is not None and not ours:
        raise _not_ours(data_dir, data_dir)
    databases = [out_dir / n for n in DEMO_DATABASE if lstat_mode(out_dir / n) is not None]
    if fresh_database and databases and not ours:
        raise _not_ours(databases[0], data_dir)
    if ours:
        shutil.rmtree(data_dir)
    for database in databases if fresh_database else []:
        database.unlink()  # a link is removed, never followed
    _claim(data_dir)
