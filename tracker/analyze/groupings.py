"""Which results may be grouped or compared: the rules, written down in one place.

A finding is only as sound as the group it came from. These rules decide every
group the analysis forms (the README's "Groupings" section says the same):

* **Series** (one metric across versions) are one software, system, benchmark,
  scenario, workload and metric. A system is its submitter and name within one
  division: an open-division system is a series of its own even when a closed
  system of the same submitter has the same name.
* **Software stacks** (configurations of one version that differ only in
  software) are compared only within one submitter, division, accelerator
  model, node and accelerator counts and host CPU.
* **Scaling groups** (:func:`scales_with_accelerators`, :func:`power_mode`):
  only throughput (or time-to-solution) results, never a per-query latency (a
  SingleStream or MultiStream result, or a metric named ``*latency*``), which
  by design does not improve with more accelerators; never sweep points or
  metrics already per accelerator; only
  within one round (version), division and **system family**: the same
  submitter, accelerator model, host CPU, framework and power mode. A
  power-capped system (MLPerf's ``MaxQ``) is a family of its own.
* **Precision classes** (:func:`precision_class`): where a round states the
  precision of a result (MLPerf's ``weight_data_types``: ``fp8``, ``fp4``, ...),
  a series is compared across versions only where both versions state the same
  class, and software stacks only within one class: a move from fp8 to fp4 is
  a different configuration, not a software gain.
* **Runs behind a score** (:data:`RUN_METRICS`): MLPerf Training stores each
  run as a sample of ``run_time_to_train_minutes`` beside the folder's official
  score (``time_to_train_minutes``, the olympic mean). The runs are shown, but
  only the score is compared, grouped for scaling and counted in gains, so a
  round counts once.
* **Twins** (:func:`twin_pairs`): an MLPerf ``-99.9`` result whose samples are
  those of its ``-99`` twin (to :data:`TWIN_TOLERANCE`) is one run reported
  twice. It counts once: the ``-99`` comparison carries it (its finding names
  the twin), and the twin adds no p-value to the Benjamini–Hochberg family, no
  finding and no gate line; a ``-99.9`` scaling finding that repeats its
  ``-99`` twin's is dropped.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from tracker.analysis import ScalingFinding, SeriesSamples
from tracker.analysis.issues import twin_benchmark
from tracker.analysis_records import SeriesInfo
from tracker.records import AnalysisSample

__all__ = [
    "comparable_groups",
    "fold_twins",
    "precision_class",
    "series_labels",
    "LATENCY_SCENARIOS",
    "POWER_CAPPED",
    "PERFORMANCE",
    "RUN_METRICS",
    "TWIN_TOLERANCE",
    "power_mode",
    "scales_with_accelerators",
    "twin_benchmark",
    "twin_pairs",
    "twin_scaling_findings",
]

RUN_METRICS = frozenset({"run_time_to_train_minutes"})
"""Metrics whose values are the runs behind another result's score: never analysed."""

LATENCY_SCENARIOS = frozenset({"singlestream", "multistream"})
"""Scenarios whose primary metric is a per-query latency (lower case)."""

POWER_CAPPED = "power-capped"
PERFORMANCE = "performance"
_MAXQ = re.compile(r"max[\s_-]?q(?![a-z])", re.IGNORECASE)


def precision_class(stated: str | None) -> str | None:
    """The precision class a result states (``FP8 `` → ``fp8``), or ``None``."""
    text = " ".join((stated or "").split()).casefold()
    return text or None


def power_mode(system: str | None) -> str:
    """``power-capped`` for an MLPerf ``MaxQ`` system (named so), else ``performance``."""
    return POWER_CAPPED if system and _MAXQ.search(system) else PERFORMANCE


def scales_with_accelerators(sample: AnalysisSample) -> bool:
    """Whether ``sample`` may enter a scaling group (see the module docstring)."""
    return (
        sample.accelerators_total is not None
        and sample.sweep_key is None
        and "per_accelerator" not in sample.metric
        and "latency" not in sample.metric
        and sample.scenario.casefold() not in LATENCY_SCENARIOS
    )


TWIN_TOLERANCE = 1e-5
"""Relative difference within which two samples are one run's value: a ``-99.9``
twin is often read from the summary log, its ``-99`` from the detail log, and
the two print different digits (29,739.88 and 29,739.9)."""


def _same_samples(a: SeriesSamples, b: SeriesSamples, versions: Iterable[str]) -> bool:
    for version in versions:
        i, j = a.index(version), b.index(version)
        if i is None or j is None or len(a.samples[i]) != len(b.samples[j]):
            return False
        pairs = zip(sorted(a.samples[i]), sorted(b.samples[j]), strict=True)
        if not all(math.isclose(x, y, rel_tol=TWIN_TOLERANCE) for x, y in pairs):
            return False
    return True


def twin_pairs(
    series: Iterable[SeriesSamples],
    labels_of: Mapping[str, Sequence[str]],
    versions: Sequence[str] | None = None,
) -> dict[str, str]:
    """Twin series key → its ``-99`` series key, where both have the same samples.

    ``labels_of`` gives each key's labels (software, system, benchmark, scenario,
    workload, metric); ``versions`` are the versions that must agree (every
    version of the twin when ``None``).
    """
    by_labels = {tuple(labels_of[s.key]): s for s in series if s.key in labels_of}
    out: dict[str, str] = {}
    for labels, twin in by_labels.items():
        primary_benchmark = twin_benchmark(labels[2])
        if primary_benchmark is None:
            continue
        primary = by_labels.get((*labels[:2], primary_benchmark, *labels[3:]))
        if primary is None or not twin.versions:
            continue
        if _same_samples(twin, primary, versions or twin.versions):
            out[twin.key] = primary.key
    return out


def twin_scaling_findings(findings: Iterable[ScalingFinding]) -> set[ScalingFinding]:
    """The findings of ``-99.9`` groups that repeat a ``-99`` group's finding exactly."""
    found = list(findings)
    index = {(f.issue, f.key, f.version, f.base_accelerators, f.accelerators): f for f in found}
    out = set()
    for f in found:
        primary_benchmark = twin_benchmark(f.key.benchmark)
        if primary_benchmark is None:
            continue
        where = (f.issue, replace(f.key, benchmark=primary_benchmark), f.version)
        primary = index.get((*where, f.base_accelerators, f.accelerators))
        if primary is None:
            continue
        if math.isclose(primary.efficiency, f.efficiency, rel_tol=TWIN_TOLERANCE):
            out.add(f)
    return out


def series_labels(infos: Mapping[str, SeriesInfo]) -> dict[str, tuple[str, ...]]:
    """Each series' labels, as :func:`twin_pairs` matches them (axis and stack version last)."""
    return {
        key: (i.software, i.system, i.benchmark, i.scenario, i.workload, i.metric, i.axis)
        + (i.version or "",)
        for key, i in infos.items()
    }


def fold_twins(
    groups: Mapping[tuple[str, str], Sequence[SeriesSamples]], infos: Mapping[str, SeriesInfo]
) -> tuple[dict[tuple[str, str], list[SeriesSamples]], dict[str, list[str]]]:
    """``groups`` without the ``-99.9`` twins that repeat their ``-99`` series at the pair,
    and per ``-99`` key the twins it stands for (:mod:`tracker.analyze.groupings`)."""
    labels = series_labels(infos)
    kept: dict[tuple[str, str], list[SeriesSamples]] = {}
    twins: dict[str, list[str]] = defaultdict(list)
    for pair, members in groups.items():
        repeated = twin_pairs(members, labels, versions=pair)
        kept[pair] = [s for s in members if s.key not in repeated]
        for twin, primary in sorted(repeated.items()):
            if twin not in twins[primary]:
                twins[primary].append(twin)
    return kept, dict(twins)


def comparable_groups(
    groups: Mapping[tuple[str, str], Sequence[SeriesSamples]],
    infos: Mapping[str, SeriesInfo],
    precisions: Mapping[str, Mapping[str, frozenset[str]]],
) -> tuple[dict[tuple[str, str], list[SeriesSamples]], dict[str, list[str]]]:
    """The pairs the rules allow: one precision class on both sides, twins folded
    (:func:`fold_twins`: the kept groups and, per ``-99`` key, its twins)."""
    kept = {
        pair: [s for s in members if _one_precision(precisions.get(s.key), pair)]
        for pair, members in groups.items()
    }
    return fold_twins(kept, infos)


def _one_precision(by_version: Mapping[str, frozenset[str]] | None, pair: tuple[str, str]) -> bool:
    if not by_version:
        return True
    before, after = by_version.get(pair[0]), by_version.get(pair[1])
    return not before or not after or before == after
