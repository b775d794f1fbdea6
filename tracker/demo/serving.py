"""Seeded example data for ``tracker demo``: AIPerf sweeps and MLPerf-layout rounds.

Modelled on the public figures of SPEC §1, and labelled as example data
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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "MLPERF_ROUNDS",
    "SERVING_VERSIONS",
    "SERVING_WORKLOADS",
    "TRIALS",
    "write_aiperf_sweep",
    "write_mlperf_rounds",
    "write_serving_data",
]

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
    osl: int
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
