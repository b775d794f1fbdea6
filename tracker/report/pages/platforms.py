"""Platforms compared within a round, per accelerator: a page per round.

For each benchmark and scenario of a round (a version label: ``v6.1``), every
system's valid throughput result divided by its accelerator count, ranked best
first, with its ratio to the reference system (the best of the case): the
figures ``tracker compare --round`` prints, ranked by
:func:`tracker.analyze.platforms.rank_platforms` in
:mod:`tracker.report.publish` (the report only lays them out). A case with one
system compares nothing and is left out; a round with no case left has no
page. Each table shows its key columns first (rank, system, per accelerator,
ratio) and scrolls inside its own box.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tracker.records.results import AnalysisSample
from tracker.report.common import Page, SystemNames, benchmark_href, slug
from tracker.report.inputs import ReportInput

if TYPE_CHECKING:
    from tracker.analyze.platforms import PlatformRanking

__all__ = [
    "PlatformCase",
    "PlatformRow",
    "PlatformSamples",
    "PlatformsPage",
    "StackCase",
    "build_platform_pages",
    "platforms_href",
]


@dataclass(frozen=True, slots=True)
class PlatformRow:
    """One system's result in one case, per accelerator."""

    rank: int
    """1 = the most per accelerator."""
    system: str
    """System name (with its submitter where names collide)."""
    system_href: str
    """The system page (relative to the root)."""
    accelerator: str
    """Accelerator model; empty when unknown."""
    accelerators: int
    """Total accelerators N."""
    per_accelerator: float
    """The result divided by N."""
    value: float
    """The result (mean of its samples)."""
    ratio: float | None
    """Per accelerator, to the reference system."""
    is_reference: bool
    """The reference system of the case."""
    division: str
    """Division (MLPerf: closed, open); may be empty."""
    availability: str = ""
    """``available``, ``preview`` or ``rdi``; empty when not stated."""
    twins: tuple[str, ...] = ()
    """Systems that published this very measurement too (counted once, in this row)."""


@dataclass(frozen=True, slots=True)
class PlatformCase:
    """One benchmark and scenario of the round: its systems ranked per accelerator."""

    title: str
    """Benchmark · scenario · metric."""
    benchmark: str
    """Benchmark."""
    scenario: str
    """Scenario."""
    metric: str
    """Metric divided."""
    unit: str
    """Unit of the results."""
    href: str
    """The benchmark page."""
    reference: str
    """The reference system (the best of the case)."""
    rows: tuple[PlatformRow, ...]
    """Best per accelerator first."""


@dataclass(frozen=True, slots=True)
class PlatformsPage(Page):
    """The context of ``platforms.html``: one round."""

    round: str
    """The round (version label)."""
    cases: tuple[PlatformCase, ...]
    """By benchmark and scenario."""
    systems: int
    """Distinct systems ranked on the page."""
    stacks: tuple[StackCase, ...] = ()
    """Software stacks of one platform within the round, ranked (no direction)."""


_Key = tuple[str, str, str, str, str, str]
"""round, benchmark, scenario, metric, unit, system key."""


class PlatformSamples:
    """The results a platform comparison ranks, gathered while the samples stream by.

    Valid throughput results of a system with an accelerator count, outside sweeps
    and not already per accelerator; one per round, case and system is kept (the
    first, with the mean of the values seen), so memory follows the series, not
    the samples.
    """

    def __init__(self) -> None:
        self._first: dict[_Key, AnalysisSample] = {}
        self._sums: dict[_Key, tuple[float, int]] = {}

    @staticmethod
    def ranked(s: AnalysisSample) -> bool:
        """Whether a platform comparison ranks ``s``."""
        return (
            s.is_valid
            and s.higher_is_better
            and (s.accelerators_total or 0) > 0
            and s.value > 0
            and not s.workload
            and s.sweep_key is None
            and "per_accelerator" not in s.metric
        )

    def watch(self, samples: Iterable[AnalysisSample]) -> Iterator[AnalysisSample]:
        """``samples``, unchanged; those a comparison ranks are noted."""
        for s in samples:
            if self.ranked(s):
                key = (s.version, s.benchmark, s.scenario, s.metric, s.unit, s.system_key)
                self._first.setdefault(key, s)
                total, n = self._sums.get(key, (0.0, 0))
                self._sums[key] = (total + s.value, n + 1)
            yield s

    def by_round(self) -> dict[str, list[AnalysisSample]]:
        """Per round, one sample per case and system: its mean value."""
        found: dict[str, list[AnalysisSample]] = defaultdict(list)
        for key, first in self._first.items():
            total, n = self._sums[key]
            found[key[0]].append(replace(first, value=total / n))
        return found


@dataclass(frozen=True, slots=True)
class StackCase:
    """The software stacks of one platform, benchmark, scenario and metric in the round, best
    first: a ranking, never an improvement or regression."""

    title: str
    """Platform · benchmark · scenario · metric."""
    href: str
    """The benchmark page."""
    unit: str
    """Unit of the levels."""
    stacks: tuple[tuple[str, float, float], ...]
    """(stack, level, ratio to the best) best first."""


def _stack_cases(data: ReportInput, round_label: str) -> tuple[StackCase, ...]:
    out = []
    for r in data.stack_rankings:
        info = data.infos.get(r.key)
        if info is None or r.version != round_label:
            continue
        parts = (info.system, info.benchmark, info.scenario, info.workload, info.metric)
        out.append(
            StackCase(
                title=" · ".join(p for p in parts if p),
                href=benchmark_href(info.benchmark, info.scenario),
                unit=info.unit,
                stacks=r.stacks,
            )
        )
    return tuple(out)


def platforms_href(round_label: str) -> str:
    """The page of one round's platform comparison."""
    return f"platforms/{slug(round_label)}.html"


def _case(ranking: PlatformRanking, names: SystemNames) -> PlatformCase:
    rows = []
    reference = ""
    for r in ranking.results:
        name = names.of(r.system_key, r.system)
        if r.is_reference:
            reference = name.label
        rows.append(
            PlatformRow(
                rank=r.rank,
                system=name.label,
                system_href=name.href,
                accelerator=r.accelerator or "",
                accelerators=r.accelerators,
                per_accelerator=r.per_accelerator,
                value=r.value,
                ratio=r.ratio,
                is_reference=r.is_reference,
                division=r.division or "",
                availability=r.availability or "",
                twins=tuple(names.of(t).label for t in r.twins),
            )
        )
    parts = (ranking.benchmark, ranking.scenario, ranking.metric)
    return PlatformCase(
        title=" · ".join(p for p in parts if p),
        benchmark=ranking.benchmark,
        scenario=ranking.scenario,
        metric=ranking.metric,
        unit=ranking.unit,
        href=benchmark_href(ranking.benchmark, ranking.scenario),
        reference=reference,
        rows=tuple(rows),
    )


def _rounds(data: ReportInput) -> list[str]:
    """The rounds with rankings, in version order (then by label)."""
    order = {v.version: i for i, v in enumerate(data.versions)}
    found = {r.round for r in data.platforms}
    return sorted(found, key=lambda v: (order.get(v, len(order)), v))


def build_platform_pages(
    data: ReportInput, names: SystemNames, *, generated_at: str, is_example: bool
) -> Iterator[tuple[str, PlatformsPage]]:
    """(path, context) of each round's page: its cases with two systems or more."""
    by_round: dict[str, list[PlatformRanking]] = defaultdict(list)
    for ranking in data.platforms:
        if len(ranking.results) > 1:
            by_round[ranking.round].append(ranking)
    for round_label in _rounds(data):
        rankings: Sequence[PlatformRanking] = by_round.get(round_label, ())
        if not rankings:
            continue
        cases = tuple(_case(r, names) for r in rankings)
        systems = {row.system_href for case in cases for row in case.rows}
        stacks = _stack_cases(data, round_label)
        yield (
            platforms_href(round_label),
            PlatformsPage(
                title=f"Platforms per accelerator: {round_label}",
                generated_at=generated_at,
                is_example=is_example,
                round=round_label,
                cases=cases,
                systems=len(systems),
                stacks=stacks,
            ),
        )
