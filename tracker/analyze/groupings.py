"""Which results may be grouped or compared, and which findings share a cause: the rules,
written down in one place.

Which results may be grouped or compared: the rules, written down in one place.

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

Findings that share a cause, as one issue with members (the gate's, ``findings``' and the
report's lines).

One change in a serving stack shows in many series: every point of a sweep
(workload ``<curve>/c<N>`` or ``/r<rate>``), the per-accelerator form of each
metric (``X`` and ``X_per_accelerator``) and the derived series at the
interactivity target (``X at N tokens/s/user (...)``, workload ``<curve>``).
MLPerf's ``-99.9`` twins are already folded by the analysis; a twin's benchmark
is read as its ``-99`` here too. :func:`cause_of` says what a series is about;
series with the same :attr:`Cause.key` (software, system, benchmark, scenario,
curve, base metric) that changed in the same direction between the same
versions are one issue, and :func:`where` names its points:
``at c2–c32 and at 50 tokens/s/user``.

Pure over labels (no store, no analysis run): the gate (:mod:`tracker.gate.items`),
``tracker findings`` (:mod:`tracker.analyze.summary`) and the report
(:mod:`tracker.report.issues`) group with it, so the three count one regression alike.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from tracker.records.findings import SeriesInfo
from tracker.records.keys import VersionPair
from tracker.records.results import AnalysisSample
from tracker.stats import ScalingFinding, SeriesSamples

__all__ = [
    "Cause",
    "LATENCY_SCENARIOS",
    "PERFORMANCE",
    "PER_ACCELERATOR",
    "POWER_CAPPED",
    "RUN_METRICS",
    "TWIN_TOLERANCE",
    "cause_of",
    "comparable_groups",
    "fold_twins",
    "group_by",
    "point_order",
    "power_mode",
    "precision_class",
    "scales_with_accelerators",
    "series_labels",
    "twin_benchmark",
    "twin_pairs",
    "twin_scaling_findings",
    "where",
]


PER_ACCELERATOR = "_per_accelerator"
_POINT = re.compile(r"^(?P<curve>.+)/(?P<point>(?:r\d[\d.]*-)?c\d[\d.]*|r\d[\d.]*)$")
_AT_TARGET = re.compile(r"^(?P<metric>\S+) at (?P<target>\d[\d.]*) tokens/s/user\b")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")

_TWIN_SUFFIX = "-99.9"
_PRIMARY_SUFFIX = "-99"

T = TypeVar("T")


def twin_benchmark(benchmark: str) -> str | None:
    """The ``-99`` benchmark a ``-99.9`` benchmark may be the twin of (else ``None``)."""
    if benchmark.endswith(_TWIN_SUFFIX):
        return benchmark[: -len(_TWIN_SUFFIX)] + _PRIMARY_SUFFIX
    return None


@dataclass(frozen=True, slots=True)
class Cause:
    """What one series is about: ``key`` is shared by the series of one cause; ``point``
    is the sweep point (``c16``; empty for the curve), ``target`` the interactivity
    target of a derived series (``50``; empty otherwise)."""

    key: tuple[str, str, str, str, str, str]
    point: str = ""
    target: str = ""
    per_accelerator: bool = False

    @property
    def curve(self) -> str:
        """The workload without the point."""
        return self.key[4]

    @property
    def metric(self) -> str:
        """The base metric (no per-accelerator suffix, no target)."""
        return self.key[5]


def cause_of(
    software: str, system: str, benchmark: str, scenario: str, workload: str, metric: str
) -> Cause:
    """The cause of the series with these labels."""
    point_match = _POINT.match(workload)
    curve, point = (point_match["curve"], point_match["point"]) if point_match else (workload, "")
    target_match = _AT_TARGET.match(metric)
    base, target = (
        (target_match["metric"], target_match["target"]) if target_match else (metric, "")
    )
    per_accelerator = base.endswith(PER_ACCELERATOR)
    if per_accelerator:
        base = base[: -len(PER_ACCELERATOR)]
    bench = twin_benchmark(benchmark) or benchmark
    return Cause((software, system, bench, scenario, curve, base), point, target, per_accelerator)


def group_by(items: Iterable[T], key: Callable[[T], Hashable]) -> list[list[T]]:
    """``items`` in groups of equal ``key``, each group and the groups in first-seen order."""
    groups: dict[Hashable, list[T]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return list(groups.values())


def point_order(point: str) -> tuple[float, ...]:
    """A sweep point's sort key: its numbers (``r2-c16`` → (2, 16))."""
    return tuple(float(n) for n in _NUMBER.findall(point))


def _points(points: Sequence[str], every: Sequence[str]) -> str:
    """``c2–c32`` when ``points`` are a run of neighbours in ``every``, else a list."""
    ordered = sorted(set(points), key=point_order)
    if len(ordered) == 1:
        return ordered[0]
    universe = sorted(set(every) | set(ordered), key=point_order)
    at = [universe.index(p) for p in ordered]
    if at[-1] - at[0] == len(at) - 1:
        return f"{ordered[0]}–{ordered[-1]}"
    return ", ".join(ordered)


def where(causes: Iterable[Cause], every_point: Sequence[str] = ()) -> str:
    """Where an issue shows: ``at c2–c32 and at 50 tokens/s/user`` (empty for one plain
    series); ``every_point``: the curve's points looked at, to tell a run from a list."""
    found = list(causes)
    points = [c.point for c in found if c.point]
    targets = sorted({c.target for c in found if c.target}, key=point_order)
    parts = []
    if points:
        parts.append(f"at {_points(points, every_point)}")
    parts += [f"at {t} tokens/s/user" for t in targets]
    return " and ".join(parts)


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
    groups: Mapping[VersionPair, Sequence[SeriesSamples]], infos: Mapping[str, SeriesInfo]
) -> tuple[dict[VersionPair, list[SeriesSamples]], dict[str, list[str]]]:
    """``groups`` without the ``-99.9`` twins that repeat their ``-99`` series at the pair,
    and per ``-99`` key the twins it stands for (:mod:`tracker.analyze.groupings`)."""
    labels = series_labels(infos)
    kept: dict[VersionPair, list[SeriesSamples]] = {}
    twins: dict[str, list[str]] = defaultdict(list)
    for pair, members in groups.items():
        repeated = twin_pairs(members, labels, versions=(pair.baseline, pair.candidate))
        kept[pair] = [s for s in members if s.key not in repeated]
        for twin, primary in sorted(repeated.items()):
            if twin not in twins[primary]:
                twins[primary].append(twin)
    return kept, dict(twins)


def comparable_groups(
    groups: Mapping[VersionPair, Sequence[SeriesSamples]],
    infos: Mapping[str, SeriesInfo],
    precisions: Mapping[str, Mapping[str, frozenset[str]]],
) -> tuple[dict[VersionPair, list[SeriesSamples]], dict[str, list[str]]]:
    """The pairs the rules allow: one precision class on both sides, twins folded
    (:func:`fold_twins`: the kept groups and, per ``-99`` key, its twins)."""
    kept = {
        pair: [s for s in members if _one_precision(precisions.get(s.key), pair)]
        for pair, members in groups.items()
    }
    return fold_twins(kept, infos)


def _one_precision(by_version: Mapping[str, frozenset[str]] | None, pair: VersionPair) -> bool:
    if not by_version:
        return True
    before, after = by_version.get(pair.baseline), by_version.get(pair.candidate)
    return not before or not after or before == after
