"""Benchmark of the analysis (run by `make bench`): 10,000 series × 50 versions in ≤ 5 s.

Synthetic series shaped like the anchors' Appendix A generator (seeded): about
60% stationary, 30% with one step and 10% with two (steps of ±3–30%), Gaussian
noise with a 2% coefficient of variation and 1% of points hit by a ±10–30%
spike; 5% of series also lose 10% at the last version.

Two variants, each timed end to end through the public API (data generation
excluded), median of 3 runs:

* ``single``: one value per version (the MLPerf case): the last two versions
  compared (prediction interval on the history), Benjamini–Hochberg over the
  family, and change points over every series;
* ``repeats``: 5 repeats per version: the same, the comparison by Welch's t on
  logs with a bootstrap CI (1,000 resamples a side) and change points on the
  per-version medians.

and a third, ``analyze``: what ``tracker analyze`` does after reading the
database, on the ``single`` data as stored records (one ``AnalysisSample`` per
value): series building, the comparison of each series' newest two versions in
one BH family, change points, scaling, gains and the findings to store.

Prints the seconds, the ratio to the 5 s target and the detection scores, and
writes them to benchmarks/results/analysis.json. "false" regressions are series
without a planted drop; most are a spike down on the last version (about 1% × ½
of the series with one value per version), which no gate can tell from a drop.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from tracker.analyze.run import analyse
from tracker.records.results import AnalysisSample, VersionInfo
from tracker.stats import (
    ChangePointResult,
    ComparisonRun,
    SeriesSamples,
    Verdict,
    compare_versions,
    detect_change_points,
)
from tracker.versions import version_sort_key

SERIES = 10_000
VERSIONS = 50
REPEATS = 5
RUNS = 3
TARGET_S = 5.0
SEED = 20260901
RESULTS = Path(__file__).parent / "results" / "analysis.json"


def _levels(rng: np.random.Generator) -> tuple[np.ndarray, list[list[int]], np.ndarray]:
    """Per-series level paths (SERIES × VERSIONS), true change points, planted last drops."""
    base = rng.uniform(100.0, 10_000.0, SERIES)
    level = np.repeat(base[:, None], VERSIONS, axis=1)
    truth: list[list[int]] = []
    margin = 10
    for i in range(SERIES):
        kind = rng.random()
        cps: list[int] = []
        if kind < 0.30:
            cps = [int(rng.integers(margin, VERSIONS - margin))]
        elif kind < 0.40:
            k1 = int(rng.integers(margin, VERSIONS // 2 - 1))
            cps = [k1, int(rng.integers(max(k1 + 3, VERSIONS // 2 + 1), VERSIONS - margin + 1))]
        for k in cps:
            level[i, k:] *= 1 + rng.choice([-1, 1]) * rng.uniform(0.03, 0.30)
        truth.append(cps)
    dropped = rng.random(SERIES) < 0.05
    level[dropped, -1] *= 0.90
    return level, truth, dropped


def _noisy(rng: np.random.Generator, level: np.ndarray, repeats: int) -> np.ndarray:
    values = level[:, :, None] * (1 + rng.normal(0.0, 0.02, (*level.shape, repeats)))
    spikes = rng.random(values.shape) < 0.01
    size = int(spikes.sum())
    values[spikes] *= 1 + rng.choice([-1, 1], size) * rng.uniform(0.1, 0.3, size)
    return values


def _series(values: np.ndarray) -> list[SeriesSamples]:
    versions = tuple(f"1.{v}" for v in range(VERSIONS))
    return [
        SeriesSamples(
            key=f"s{i}",
            versions=versions,
            samples=tuple(tuple(map(float, row)) for row in values[i]),
            higher_is_better=True,
        )
        for i in range(values.shape[0])
    ]


def _analyse(series: list[SeriesSamples]) -> tuple[ComparisonRun, tuple[ChangePointResult, ...]]:
    rng = np.random.default_rng(SEED)
    run = compare_versions(series, f"1.{VERSIONS - 2}", f"1.{VERSIONS - 1}", rng=rng)
    return run, detect_change_points(series)


def _score(found: tuple[ChangePointResult, ...], truth: list[list[int]]) -> dict[str, float]:
    """Precision, recall and false-alarm share of stationary series, ±2 points (anchors §4)."""
    tp = fp = fn = alarms = stationary = 0
    for result, true in zip(found, truth, strict=True):
        used: set[int] = set()
        for cp in result.change_points:
            hit = next(
                (j for j, t in enumerate(true) if j not in used and abs(cp.index - t) <= 2), None
            )
            if hit is None:
                fp += 1
            else:
                used.add(hit)
                tp += 1
        fn += len(true) - len(used)
        if not true:
            stationary += 1
            alarms += bool(result.change_points)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {
        "precision": round(precision, 3),
        "recall": round(recall, 3),
        "f1": round(2 * precision * recall / (precision + recall), 3) if tp else 0.0,
        "stationary_series_with_alarm": round(alarms / max(stationary, 1), 4),
    }


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _variant(name: str, repeats: int) -> dict[str, object]:
    rng = np.random.default_rng(SEED)
    level, truth, dropped = _levels(rng)
    series = _series(_noisy(rng, level, repeats))
    seconds = [_timed(lambda: _analyse(series)) for _ in range(RUNS)]
    run, found = _analyse(series)
    flagged = np.array([c.verdict is Verdict.REGRESSION for c in run.comparisons])
    median = statistics.median(seconds)
    return {
        "variant": name,
        "series": SERIES,
        "versions": VERSIONS,
        "repeats_per_version": repeats,
        "seconds_runs": [round(s, 3) for s in seconds],
        "median_s": round(median, 3),
        "ratio_to_target": round(median / TARGET_S, 3),
        "family_size": run.family_size,
        "verdicts": {v.value: n for v, n in run.counts().items()},
        "planted_last_drops": int(dropped.sum()),
        "regressions_true": int((flagged & dropped).sum()),
        "regressions_false": int((flagged & ~dropped).sum()),
        "change_points": _score(found, truth),
    }


def _records(values: np.ndarray) -> tuple[list[AnalysisSample], list[VersionInfo]]:
    versions = [f"1.{v}" for v in range(VERSIONS)]
    samples = [
        AnalysisSample(
            "bench",
            versions[v],
            f"/node-{i % 100}",
            f"node-{i % 100}",
            None,
            None,
            "GPU",
            1,
            8,
            None,
            f"model-{i // 100}",
            "Offline",
            "",
            "tokens_per_s",
            "tokens/s",
            True,
            float(values[i, v, 0]),
            True,
            "stack",
            None,
        )
        for i in range(values.shape[0])
        for v in range(VERSIONS)
    ]
    return samples, [VersionInfo("bench", v, version_sort_key(v)) for v in versions]


def _orchestrated() -> dict[str, object]:
    rng = np.random.default_rng(SEED)
    level, _truth, dropped = _levels(rng)
    samples, versions = _records(_noisy(rng, level, 1))
    seconds = [_timed(lambda: analyse(samples, [], versions)) for _ in range(RUNS)]
    outcome = analyse(samples, [], versions)
    flagged = {c.key for c in outcome.comparisons.with_verdict(Verdict.REGRESSION)}
    keys = [f"bench|/node-{i % 100}|model-{i // 100}|Offline||tokens_per_s" for i in range(SERIES)]
    true = sum(keys[i] in flagged for i in np.flatnonzero(dropped))
    median = statistics.median(seconds)
    return {
        "variant": "analyze",
        "series": SERIES,
        "versions": VERSIONS,
        "repeats_per_version": 1,
        "seconds_runs": [round(s, 3) for s in seconds],
        "median_s": round(median, 3),
        "ratio_to_target": round(median / TARGET_S, 3),
        "family_size": outcome.family_size,
        "verdicts": {v.value: n for v, n in outcome.comparisons.counts().items()},
        "findings": outcome.finding_counts(),
        "planted_last_drops": int(dropped.sum()),
        "regressions_true": int(true),
        "regressions_false": len(flagged) - int(true),
    }


def main() -> None:
    variants = [_variant("single", 1), _variant("repeats", REPEATS), _orchestrated()]
    figures = {"target_s": TARGET_S, "variants": variants}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for v in variants:
        print(
            f"{v['variant']:>8}: {v['series']} series x {v['versions']} versions "
            f"x {v['repeats_per_version']} repeats: median {v['median_s']:.2f} s "
            f"(ratio to the {TARGET_S:g} s target {v['ratio_to_target']:.2f}); "
            f"regressions {v['regressions_true']} true / {v['regressions_false']} false "
            f"of {v['planted_last_drops']} planted; "
            + (
                f"change points {v['change_points']}"
                if "change_points" in v
                else f"findings {v['findings']}"
            )
        )
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
