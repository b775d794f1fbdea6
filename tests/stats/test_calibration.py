"""Statistical behaviour on seeded synthetic data, at the sizes the issue names, with margins.

Measured when written (the seeds below), against the required bounds:

* 5 repeats a side, CV 2%, 1,000 series of which 10% lose 10%, one BH family:
  all 107 planted regressions flagged (≥ 90% required), 2 of 893 clean series,
  0.2% (≤ 1% required).
* one value per version, 10 history points, 20,000 series without change: raw
  one-sided p < 0.05 for 5.3% of them in the worse direction and 5.0% in the
  better one (4–6% required), with the outlier test (≤ 1% of clean histories lose
  a point) and the variances pooled across the 20,000 series (issue 15). The old
  neighbour de-spiking, which touched about 4% of clean histories, gave 5.4% / 5.2%.
* change points, the anchors' §4 set (1,000 series × 50 points, CV 2%, 1%
  one-point spikes, seed 20260901): F1 0.950 (≥ 0.92; 0.944 before bumps were
  split, issue 15), 0.5% of stationary series with a false change point (≤ 3%).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.analyze.run import analyse
from tracker.records.results import AnalysisSample, VersionInfo
from tracker.stats import (
    SeriesSamples,
    Verdict,
    collect_evidence,
    compare_versions,
    find_change_points,
)
from tracker.versions import version_sort_key


def test_five_repeats_find_planted_ten_percent_regressions_and_few_false_ones() -> None:
    rng = np.random.default_rng(1234)
    n, repeats = 1000, 5
    planted = rng.random(n) < 0.10
    base = 1000.0 * (1.0 + rng.normal(0.0, 0.02, (n, repeats)))
    cand = 1000.0 * np.where(planted, 0.90, 1.0)[:, None] * (1.0 + rng.normal(0.0, 0.02, (n, 5)))
    series = [
        SeriesSamples(f"s{i}", ("2.0.12", "2.0.13"), (tuple(base[i]), tuple(cand[i])), True)
        for i in range(n)
    ]
    run = compare_versions(series, "2.0.12", "2.0.13", rng=np.random.default_rng(0))
    assert run.family_size == n
    flagged = np.array([c.verdict is Verdict.REGRESSION for c in run.comparisons])
    assert 80 <= planted.sum() <= 130  # 107 planted
    assert (flagged & planted).sum() / planted.sum() >= 0.90  # measured 1.00
    assert (flagged & ~planted).sum() / (~planted).sum() <= 0.01  # measured 0.002


def test_the_single_value_history_test_is_calibrated() -> None:
    rng = np.random.default_rng(7)
    n, history = 20_000, 10
    values = 1000.0 * (1.0 + rng.normal(0.0, 0.02, (n, history + 1)))
    versions = tuple(f"v{i}" for i in range(history + 1))
    series = [
        SeriesSamples(f"h{i}", versions, tuple((float(v),) for v in values[i]), True)
        for i in range(n)
    ]
    found = collect_evidence(series, "v9", "v10", rng=np.random.default_rng(0))
    assert {ev.n_baseline for ev in found.evidence} == {history}
    sided = [ev.one_sided() for ev in found.evidence]
    worse = np.array([p[0] for p in sided if p is not None])
    better = np.array([p[1] for p in sided if p is not None])
    # one-sided, before any correction: measured 0.0533 (worse) and 0.0499 (better)
    assert 0.04 <= np.mean(worse < 0.05) <= 0.06
    assert 0.04 <= np.mean(better < 0.05) <= 0.06


@pytest.mark.parametrize(("repeats", "history"), [(5, 1), (1, 10), (1, 2)])
def test_latency_and_throughput_regressions_have_opposite_raw_changes_and_one_verdict(
    repeats: int, history: int
) -> None:
    rng = np.random.default_rng(42)
    versions = tuple(f"1.{i}" for i in range(history + 1))
    throughput, latency = [], []
    for i in range(200):
        drop = 0.10 if i % 2 else 0.0
        level = 1000.0 * np.ones((history + 1, repeats))
        level[-1] *= 1.0 - drop
        tput = level * (1.0 + rng.normal(0.0, 0.02, level.shape))
        throughput.append(SeriesSamples(f"t{i}", versions, tuple(map(tuple, tput)), True))
        # the same runs measured as a time per unit of work: lower is better
        latency.append(SeriesSamples(f"l{i}", versions, tuple(map(tuple, 1e6 / tput)), False))
    pair = versions[-2], versions[-1]
    a = compare_versions(throughput, *pair, rng=np.random.default_rng(0)).comparisons
    b = compare_versions(latency, *pair, rng=np.random.default_rng(0)).comparisons
    for t, lat in zip(a, b, strict=True):
        dt, dl = t.evidence.delta_pct, lat.evidence.delta_pct
        assert dt is not None and dl is not None and dt * dl < 0.0
        assert t.verdict is lat.verdict
    assert sum(c.verdict is Verdict.REGRESSION for c in a) >= 50


def _sample(version: str, key: int, value: float, *, higher: bool = True) -> AnalysisSample:
    return AnalysisSample(
        software="vllm",
        version=version,
        system_key=f"/node-{key}",
        system=f"node-{key}",
        submitter=None,
        division=None,
        accelerator="NVIDIA B200-SXM-180GB",
        nodes=1,
        accelerators_total=8,
        host_cpu=None,
        benchmark="llama2-70b",
        scenario="Offline",
        workload="",
        metric="tokens_per_s" if higher else "p99_latency_ms",
        unit="tokens/s" if higher else "ms",
        higher_is_better=higher,
        value=value,
        is_valid=True,
        software_stack="vLLM",
        sweep_key=None,
    )


@pytest.mark.parametrize("repeats", [1, 5])
def test_constant_series_never_yield_a_finding(repeats: int) -> None:
    versions = [f"0.{i}.0" for i in range(12)]
    samples = [
        _sample(v, key, value, higher=higher)
        for key, value in enumerate((1.0, 1234.5, 7e9))
        for higher in (True, False)
        for v in versions
        for _ in range(repeats)
    ]
    infos = [VersionInfo("vllm", v, version_sort_key(v)) for v in versions]
    outcome = analyse(samples, [], infos)
    assert outcome.findings == ()
    assert {c.verdict for c in outcome.comparisons.comparisons} == {Verdict.NO_CHANGE}
    assert all(g.gain == 1.0 for g in outcome.gains)


@settings(deadline=None, max_examples=25)
@given(
    steps=st.lists(st.integers(-60, 60), min_size=9, max_size=14),
    jump=st.sampled_from([700, 850, 1000, 1150]),
    repeats=st.sampled_from([1, 3]),
    k=st.floats(min_value=1e-3, max_value=1e4),
)
def test_scaling_every_value_changes_no_finding(
    steps: list[int], jump: int, repeats: int, k: float
) -> None:
    versions = [f"1.{i}" for i in range(len(steps))]
    infos = [VersionInfo("vllm", v, version_sort_key(v)) for v in versions]

    def findings(scale: float) -> list[tuple[str, str, str | None, str | None]]:
        samples = [
            _sample(v, 0, scale * (1000 + step + r) * (jump / 1000 if i > 5 else 1.0), higher=h)
            for i, (v, step) in enumerate(zip(versions, steps, strict=True))
            for r in range(repeats)
            for h in (True, False)
        ]
        found = analyse(samples, [], infos).findings
        return sorted(
            (f.kind, f.series_key, f.baseline_version, f.candidate_version) for f in found
        )

    assert findings(1.0) == findings(k)


def _appendix_a_series(
    rng: np.random.Generator, n_series: int, n_points: int, cv: float = 0.02, spikes: float = 0.01
) -> tuple[np.ndarray, list[list[int]]]:
    """``make_series`` of the anchors' Appendix A ``bench_detectors.py``, unchanged."""
    series, truth = [], []
    for _ in range(n_series):
        base = rng.uniform(100.0, 10000.0)
        level = np.full(n_points, base)
        kind = rng.random()
        cps: list[int] = []
        m = max(3, min(10, n_points // 5))
        if kind < 0.30:
            k = int(rng.integers(m, n_points - m))
            level[k:] *= 1 + rng.choice([-1, 1]) * rng.uniform(0.03, 0.30)
            cps = [k]
        elif kind < 0.40:
            k1 = int(rng.integers(m, max(m + 1, n_points // 2 - 1)))
            k2 = int(rng.integers(max(k1 + 3, n_points // 2 + 1), n_points - m + 1))
            level[k1:] *= 1 + rng.choice([-1, 1]) * rng.uniform(0.03, 0.30)
            level[k2:] *= 1 + rng.choice([-1, 1]) * rng.uniform(0.03, 0.30)
            cps = [k1, k2]
        y = level * (1 + rng.normal(0.0, cv, n_points))
        hit = rng.random(n_points) < spikes
        y[hit] *= 1 + rng.choice([-1, 1], hit.sum()) * rng.uniform(0.1, 0.3, hit.sum())
        series.append(y)
        truth.append(cps)
    return np.array(series), truth


def _score(found: list[tuple[int, ...]], truth: list[list[int]]) -> tuple[float, float]:
    """F1 with a ±2-point tolerance, and the share of stationary series with an alarm."""
    tp = fp = fn = alarms = stationary = 0
    for cps, true in zip(found, truth, strict=True):
        used: set[int] = set()
        for c in cps:
            hit = next((j for j, t in enumerate(true) if j not in used and abs(c - t) <= 2), None)
            if hit is None:
                fp += 1
            else:
                used.add(hit)
                tp += 1
        fn += len(true) - len(used)
        if not true:
            stationary += 1
            alarms += bool(cps)
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    return 2 * precision * recall / (precision + recall), alarms / stationary


def test_change_points_on_the_anchor_benchmark_set() -> None:
    values, truth = _appendix_a_series(np.random.default_rng(20260901), 1000, 50)
    f1, false_alarms = _score(find_change_points(values), truth)
    assert f1 >= 0.92  # measured 0.950
    assert false_alarms <= 0.03  # measured 0.005
