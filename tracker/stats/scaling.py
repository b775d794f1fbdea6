"""Scaling efficiency across accelerator counts.

Results that differ only in their accelerator (or node) count form a scaling
group: same :class:`ScalingKey` (submitter, accelerator model, benchmark,
scenario, metric, software stack, division, host CPU, power mode, …) and same
version. Which results may enter a group at all is the caller's rule
(:mod:`tracker.analyze.groupings`: throughput results of one system family). With ``N0`` the
smallest count in the group,

* throughput (higher is better): ``E(N) = (T(N)/N) / (T(N0)/N0)``;
* latency or time (lower is better): ``E(N) = (t(N0)·N0) / (t(N)·N)``.

Findings: ``E`` below a floor (default 0.90), and ``E`` at the same ``(N0, N)``
falling against the baseline version by more than a drop floor (default 0.05,
absolute: 0.99 → 0.93 is a drop of 0.06).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from tracker.stats.defaults import EFFICIENCY_DROP_FLOOR, EFFICIENCY_FLOOR
from tracker.stats.series import is_usable

__all__ = [
    "EfficiencyPoint",
    "ScalingFinding",
    "ScalingGroup",
    "ScalingIssue",
    "ScalingKey",
    "ScalingPoint",
    "efficiency",
    "efficiency_below_floor",
    "efficiencies_by_step",
    "efficiency_drops",
    "scaling_findings",
    "scaling_groups",
    "scaling_key",
]


@dataclass(frozen=True, slots=True, order=True)
class ScalingKey:
    """Everything that must match for two results to be one scaling group (bar the version)."""

    submitter: str
    accelerator: str
    benchmark: str
    scenario: str
    metric: str
    software_stack: str = ""
    division: str = ""
    workload: str = ""
    host_cpu: str = ""
    power_mode: str = ""
    """E.g. ``power-capped`` for an MLPerf MaxQ system: a family of its own."""
    family: str = ""
    """The rest of what a family shares (precision, host CPUs per node), as the analysis
    words it; empty: nothing more."""


def _norm(text: str | None) -> str:
    return " ".join((text or "").split())


def scaling_key(
    *,
    submitter: str | None,
    accelerator: str | None,
    benchmark: str,
    scenario: str,
    metric: str,
    software_stack: str | None = None,
    division: str | None = None,
    workload: str | None = None,
    host_cpu: str | None = None,
    power_mode: str | None = None,
    family: str | None = None,
) -> ScalingKey:
    """A :class:`ScalingKey` from plain fields, whitespace-normalised (``None`` is "")."""
    return ScalingKey(
        submitter=_norm(submitter),
        accelerator=_norm(accelerator),
        benchmark=_norm(benchmark),
        scenario=_norm(scenario),
        metric=_norm(metric),
        software_stack=_norm(software_stack),
        division=_norm(division),
        workload=_norm(workload),
        host_cpu=_norm(host_cpu),
        power_mode=_norm(power_mode),
        family=_norm(family),
    )


@dataclass(frozen=True, slots=True)
class ScalingPoint:
    """One result as scaling input: its key, version, total accelerator count and value."""

    key: ScalingKey
    version: str
    accelerators: int
    value: float
    higher_is_better: bool
    label: str = ""
    """E.g. the system name, carried into the group for the report."""


@dataclass(frozen=True, slots=True)
class EfficiencyPoint:
    """One accelerator count of a group: the median value there and its efficiency."""

    accelerators: int
    value: float
    """The median of the results at this count, in the metric's unit."""
    efficiency: float
    """``(value / N) / (value0 / N0)`` against the group's smallest count (inverted where
    lower is better)."""
    n_results: int
    labels: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ScalingGroup:
    """Results of one key and version at two or more accelerator counts, smallest first."""

    key: ScalingKey
    version: str
    higher_is_better: bool
    """Whether a larger value of the metric is better (throughput), or a smaller (latency)."""
    points: tuple[EfficiencyPoint, ...]

    @property
    def base_accelerators(self) -> int:
        """``N0``, the count every efficiency of the group is relative to."""
        return self.points[0].accelerators


class ScalingIssue(StrEnum):
    """Why a scaling finding was raised."""

    BELOW_FLOOR = "efficiency_below_floor"
    DROP = "efficiency_drop"


@dataclass(frozen=True, slots=True)
class ScalingFinding:
    """An efficiency under the floor, or a fall against the baseline version."""

    issue: ScalingIssue
    key: ScalingKey
    version: str
    """The version whose efficiency is found wanting."""
    accelerators: int
    base_accelerators: int
    """The group's smallest count, the one the efficiency is relative to."""
    efficiency: float
    threshold: float
    """The floor, or for a drop the baseline's efficiency minus the drop floor."""
    baseline_version: str | None = None
    baseline_efficiency: float | None = None


def efficiency(
    value: float,
    accelerators: int,
    base_value: float,
    base_accelerators: int,
    higher_is_better: bool,
) -> float:
    """``E(N)`` of one value against the base count's value (see the module docstring)."""
    if min(accelerators, base_accelerators) < 1:
        raise ValueError("accelerator counts must be at least 1")
    if not (is_usable(value) and is_usable(base_value)):
        raise ValueError("values must be positive and finite")
    if higher_is_better:
        return (value / accelerators) / (base_value / base_accelerators)
    return (base_value * base_accelerators) / (value * accelerators)


def _group(key: ScalingKey, version: str, points: list[ScalingPoint]) -> ScalingGroup | None:
    directions = {p.higher_is_better for p in points}
    if len(directions) != 1:
        raise ValueError(f"scaling group {key} {version}: points of both directions")
    hib = directions.pop()
    by_count: dict[int, list[ScalingPoint]] = {}
    for p in points:
        by_count.setdefault(p.accelerators, []).append(p)
    if len(by_count) < 2:
        return None
    counts = sorted(by_count)
    medians = {n: float(statistics.median(p.value for p in by_count[n])) for n in counts}
    n0 = counts[0]
    out = tuple(
        EfficiencyPoint(
            accelerators=n,
            value=medians[n],
            efficiency=efficiency(medians[n], n, medians[n0], n0, hib),
            n_results=len(by_count[n]),
            labels=tuple(sorted({p.label for p in by_count[n] if p.label})),
        )
        for n in counts
    )
    return ScalingGroup(key, version, hib, out)


def scaling_groups(points: Iterable[ScalingPoint]) -> tuple[ScalingGroup, ...]:
    """The scaling groups among ``points``: one per key and version with ≥ 2 counts.

    Points with a count below 1 or a value that is not positive and finite are
    ignored (real system descriptions carry wrong counts); several results at the
    same count are summarised by their median. Groups are sorted by key, version.
    """
    found: dict[tuple[ScalingKey, str], list[ScalingPoint]] = {}
    for p in points:
        if p.accelerators >= 1 and is_usable(p.value):
            found.setdefault((p.key, p.version), []).append(p)
    groups = (_group(key, version, pts) for (key, version), pts in sorted(found.items()))
    return tuple(g for g in groups if g is not None)


def efficiency_below_floor(
    groups: Iterable[ScalingGroup], *, floor: float = EFFICIENCY_FLOOR
) -> tuple[ScalingFinding, ...]:
    """A finding for every ``E(N) < floor`` (the base count itself has ``E = 1``)."""
    return tuple(
        ScalingFinding(
            ScalingIssue.BELOW_FLOOR,
            g.key,
            g.version,
            p.accelerators,
            g.base_accelerators,
            p.efficiency,
            floor,
        )
        for g in groups
        for p in g.points[1:]
        if p.efficiency < floor
    )


def efficiencies_by_step(
    groups: Iterable[ScalingGroup], version: str
) -> dict[tuple[ScalingKey, int, int], float]:
    """The efficiency of every step of ``version``'s groups, by (key, smallest count, count)."""
    return {
        (g.key, g.base_accelerators, p.accelerators): p.efficiency
        for g in groups
        if g.version == version
        for p in g.points[1:]
    }


def efficiency_drops(
    groups: Sequence[ScalingGroup],
    *,
    baseline_version: str,
    candidate_version: str,
    drop_floor: float = EFFICIENCY_DROP_FLOOR,
) -> tuple[ScalingFinding, ...]:
    """A finding where ``E`` at the same key and ``(N0, N)`` fell by more than ``drop_floor``."""
    before = efficiencies_by_step(groups, baseline_version)
    after = efficiencies_by_step(groups, candidate_version)
    out = []
    for (key, n0, n), e_new in sorted(after.items()):
        e_old = before.get((key, n0, n))
        if e_old is not None and e_old - e_new > drop_floor:
            out.append(
                ScalingFinding(
                    ScalingIssue.DROP,
                    key,
                    candidate_version,
                    n,
                    n0,
                    e_new,
                    e_old - drop_floor,
                    baseline_version,
                    e_old,
                )
            )
    return tuple(out)


def scaling_findings(
    groups: Sequence[ScalingGroup],
    *,
    version_order: Sequence[str],
    floor: float = EFFICIENCY_FLOOR,
    drop_floor: float = EFFICIENCY_DROP_FLOOR,
) -> tuple[ScalingFinding, ...]:
    """Every efficiency under ``floor``, and every drop against the previous version.

    The baseline of a version is, per key and ``(N0, N)``, the latest earlier
    version in ``version_order`` that has the same pair. Versions not in
    ``version_order`` are only checked against the floor.
    """
    found = list(efficiency_below_floor(groups, floor=floor))
    last: dict[tuple[ScalingKey, int, int], tuple[str, float]] = {}
    for version in version_order:
        current = efficiencies_by_step(groups, version)
        for pair, e_new in sorted(current.items()):
            previous = last.get(pair)
            if previous is not None and previous[1] - e_new > drop_floor:
                key, n0, n = pair
                found.append(
                    ScalingFinding(
                        ScalingIssue.DROP,
                        key,
                        version,
                        n,
                        n0,
                        e_new,
                        previous[1] - drop_floor,
                        previous[0],
                        previous[1],
                    )
                )
        last.update((pair, (version, e)) for pair, e in current.items())
    return tuple(found)
