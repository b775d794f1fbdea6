"""Platforms of a round: the round at a glance, and its systems ranked per accelerator.

A round at a glance: a page per MLPerf round (a version label such as ``v6.1``).

It answers an analyst's first questions about a round:

* **Which accelerator leads which benchmark, and by how much**: a matrix of
  accelerator models (rows) by benchmark and scenario (columns). A cell holds the
  best result per accelerator of any system built on that accelerator model, its
  ratio to the leader of the column (the best per accelerator of any model), and
  is coloured by that ratio; its title names the best system and counts the
  submitters and systems behind the model. The figures are those of
  ``tracker compare --round`` (the rankings of
  :func:`tracker.analyze.platforms.rank_platforms`: valid throughput divided by the
  accelerator count, one measurement published under several names counted once).
  The closed division comes first (the one results are compared in); the open
  division, whose rules allow other models and methods, has a matrix of its own.
  The columns are cut into tables of at most :data:`MAX_COLUMNS`, each table
  holding only the accelerators with a result in its columns, so a table fits a
  wide screen.
* **What moved since the previous round**: the same system in both rounds where
  nothing but the software changed (the comparability rule,
  :func:`tracker.analyze.groupings.besides_software`, applied by
  :func:`tracker.analyze.platforms.round_gains`), per accelerator, largest gain
  first; pairs whose configuration changed are counted apart, never as gains.
* **Power**, where the round has it: each result with its measured power,
  ranked by performance per watt (:class:`PowerRow`).

Systems not yet available (``preview``, ``rdi``) are marked wherever they appear.

Platforms compared within a round, per accelerator: a page per round.

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

from tracker.analyze.groupings import SAME_SYSTEM
from tracker.records.results import AnalysisSample
from tracker.report.common import Page, SystemNames, benchmark_href, slug
from tracker.report.inputs import PowerResult, ReportInput

if TYPE_CHECKING:
    from tracker.analyze.platforms import PlatformRanking, PlatformResult, RoundGain

__all__ = [
    "MAX_COLUMNS",
    "MatrixCell",
    "MatrixColumn",
    "MatrixRow",
    "MatrixTable",
    "PlatformCase",
    "PlatformRow",
    "PlatformSamples",
    "PlatformsPage",
    "PowerRow",
    "RoundMove",
    "RoundPage",
    "StackCase",
    "build_platform_pages",
    "build_round_pages",
    "mlperf_rounds",
    "platforms_href",
    "round_href",
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
        self.software: dict[str, str] = {}
        """Each version's software (the first seen): which versions are MLPerf rounds."""

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
                self.software.setdefault(s.version, s.software)
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


MAX_COLUMNS = 9
"""Benchmark and scenario columns of one matrix table at most (more are cut into further
tables of about equal width)."""


@dataclass(frozen=True, slots=True)
class MatrixColumn:
    """One benchmark and scenario of the round."""

    benchmark: str
    scenario: str
    unit: str
    """Unit of the results (per accelerator in the cells)."""
    href: str
    """The benchmark page."""
    leader: str
    """The accelerator model with the best result per accelerator."""


@dataclass(frozen=True, slots=True)
class MatrixCell:
    """The best result per accelerator of one accelerator model in one column."""

    per_accelerator: float
    """The best system's result divided by its accelerator count."""
    ratio: float
    """To the column's leader (1: the leader)."""
    system: str
    """The best system (with its submitter where names collide)."""
    system_href: str
    accelerators: int
    """The best system's accelerator count."""
    submitters: int
    """Submitters with a result on this accelerator model in the column."""
    systems: int
    """Systems (rows of the ranking, twins included) on this model in the column."""
    availability: str = ""
    """The best system's availability when not ``available`` (``preview``, ``rdi``)."""


@dataclass(frozen=True, slots=True)
class MatrixRow:
    """One accelerator model: a cell per column of its table (``None``: no result)."""

    accelerator: str
    cells: tuple[MatrixCell | None, ...]


@dataclass(frozen=True, slots=True)
class MatrixTable:
    """Some columns of one division's matrix, with the accelerators that have a result."""

    division: str
    columns: tuple[MatrixColumn, ...]
    rows: tuple[MatrixRow, ...]


@dataclass(frozen=True, slots=True)
class RoundMove:
    """One result of the same configuration in the previous round and this one."""

    benchmark: str
    scenario: str
    href: str
    system: str
    system_href: str
    accelerator: str
    accelerators: int
    unit: str
    before: float
    """Per accelerator, in the previous round."""
    after: float
    """Per accelerator, in this round."""
    ratio: float
    """after / before: above 1 is more throughput."""
    availability: str = ""
    """This round's availability when not ``available``."""


@dataclass(frozen=True, slots=True)
class PowerRow:
    """One result with its measured power, ranked by performance per watt."""

    rank: int
    benchmark: str
    scenario: str
    href: str
    system: str
    system_href: str
    accelerators: int
    value: float
    unit: str
    power_w: float
    per_watt: float
    """``value / power_w``: the unit per watt (tokens/s per W = tokens per joule)."""
    division: str = ""
    availability: str = ""
    twins: tuple[str, ...] = ()
    """Benchmarks of the same measurement (``llama2-70b-99.9`` beside ``llama2-70b-99``):
    one row for them all."""


@dataclass(frozen=True, slots=True)
class RoundPage(Page):
    """The context of ``round.html``: one round at a glance."""

    round: str
    previous: str
    """The round before it (empty: none stored)."""
    tables: tuple[MatrixTable, ...]
    """The matrix, closed division first, its columns cut into tables."""
    divisions: tuple[str, ...]
    """The divisions of the matrix, in order."""
    cases: int
    """Benchmark and scenario columns of the round, all divisions."""
    accelerators: int
    """Accelerator models with a result in the round."""
    moves: tuple[RoundMove, ...]
    """The same configuration in the previous round and this one, largest gain first."""
    changed: int
    """Pairs of the two rounds whose configuration changed (not gains; not listed)."""
    power: tuple[PowerRow, ...]
    """Results with measured power, best per watt first."""
    platforms_href: str
    """The round's full rankings per accelerator (empty: no such page)."""


def round_href(round_label: str) -> str:
    """The page of one round at a glance."""
    return f"round/{slug(round_label)}.html"


def _division(result: PlatformResult) -> str:
    return (result.division or "closed").strip().lower() or "closed"


def _submitter(key: str) -> str:
    return key.split("/", 1)[0]


def _cells(ranking: PlatformRanking, division: str, names: SystemNames) -> dict[str, MatrixCell]:
    """The best result per accelerator of each accelerator model of one division."""
    results = [r for r in ranking.results if _division(r) == division]
    if not results:
        return {}
    leader = max(r.per_accelerator for r in results)
    by_model: dict[str, list[PlatformResult]] = defaultdict(list)
    for r in results:
        by_model[r.accelerator or "?"].append(r)
    cells = {}
    for model, members in by_model.items():
        best = max(members, key=lambda r: (r.per_accelerator, -r.rank))
        keys = [k for r in members for k in (r.system_key, *r.twins)]
        name = names.of(best.system_key, best.system)
        status = best.availability or ""
        cells[model] = MatrixCell(
            per_accelerator=best.per_accelerator,
            ratio=best.per_accelerator / leader,
            system=name.label,
            system_href=name.href,
            accelerators=best.accelerators,
            submitters=len({_submitter(k) for k in keys}),
            systems=len(set(keys)),
            availability="" if status == "available" else status,
        )
    return cells


def _row_order(model: str, cells: Sequence[MatrixCell | None]) -> tuple[int, int, str]:
    """Accelerators leading most columns first, then those with most results."""
    present = [c for c in cells if c is not None]
    return (-sum(c.ratio >= 1.0 for c in present), -len(present), model)


def _division_tables(
    rankings: Sequence[PlatformRanking], division: str, names: SystemNames
) -> list[MatrixTable]:
    """One division's matrix, cut into tables of at most :data:`MAX_COLUMNS` columns."""
    columns: list[tuple[MatrixColumn, dict[str, MatrixCell]]] = []
    for ranking in rankings:
        cells = _cells(ranking, division, names)
        if not cells:
            continue
        leader = max(cells, key=lambda m: (cells[m].ratio, m))
        href = benchmark_href(ranking.benchmark, ranking.scenario)
        column = MatrixColumn(ranking.benchmark, ranking.scenario, ranking.unit, href, leader)
        columns.append((column, cells))
    tables = []
    size = -(-len(columns) // -(-len(columns) // MAX_COLUMNS)) if columns else 1
    for start in range(0, len(columns), size):
        chunk = columns[start : start + size]
        models = sorted({m for _c, cells in chunk for m in cells})
        rows = [MatrixRow(m, tuple(cells.get(m) for _c, cells in chunk)) for m in models]
        rows.sort(key=lambda r: _row_order(r.accelerator, r.cells))
        tables.append(MatrixTable(division, tuple(c for c, _cells in chunk), tuple(rows)))
    return tables


def _divisions(rankings: Sequence[PlatformRanking]) -> list[str]:
    found = {_division(r) for ranking in rankings for r in ranking.results}
    return sorted(found, key=lambda d: (d != "closed", d != "open", d))


def _moves(
    gains: Sequence[RoundGain], names: SystemNames, round_label: str
) -> tuple[list[RoundMove], int]:
    """The same-configuration pairs into ``round_label``, largest gain first, and how many
    pairs changed configuration."""
    moves = []
    changed = 0
    for g in gains:
        if g.new_round != round_label:
            continue
        if g.kind != SAME_SYSTEM:
            changed += 1
            continue
        name = names.of(g.new_system_key or g.new_system, g.new_system)
        status = g.new_availability or ""
        moves.append(
            RoundMove(
                benchmark=g.benchmark,
                scenario=g.scenario,
                href=benchmark_href(g.benchmark, g.scenario),
                system=name.label,
                system_href=name.href,
                accelerator=g.accelerator or "?",
                accelerators=g.new_accelerators,
                unit=g.unit,
                before=g.old_value / g.old_accelerators,
                after=g.new_value / g.new_accelerators,
                ratio=g.ratio,
                availability="" if status == "available" else status,
            )
        )
    moves.sort(key=lambda m: (-m.ratio, m.benchmark, m.scenario, m.system))
    return moves, changed


def _power_twins(power: Sequence[PowerResult]) -> list[tuple[PowerResult, tuple[str, ...]]]:
    """One result per measurement: the same system, scenario, result and power published
    under several benchmarks (an accuracy twin) is one, naming the others."""
    groups: dict[tuple[str, str, str, str], list[PowerResult]] = defaultdict(list)
    for p in power:
        groups[(p.system_key, p.scenario, f"{p.value:.6g}", f"{p.power_w:.6g}")].append(p)
    out = []
    for members in groups.values():
        head, *rest = sorted(members, key=lambda p: p.benchmark)
        out.append((head, tuple(p.benchmark for p in rest)))
    return out


def power_rows(
    power: Sequence[PowerResult], names: SystemNames, round_label: str
) -> tuple[PowerRow, ...]:
    """The round's results with measured power, best performance per watt first (twins
    once)."""
    found = _power_twins([p for p in power if p.round == round_label and p.power_w > 0])
    found.sort(key=lambda t: (-t[0].value / t[0].power_w, t[0].benchmark, t[0].scenario))
    rows = []
    for rank, (p, twins) in enumerate(found, start=1):
        name = names.of(p.system_key, p.system)
        rows.append(
            PowerRow(
                rank=rank,
                benchmark=p.benchmark,
                scenario=p.scenario,
                href=benchmark_href(p.benchmark, p.scenario),
                system=name.label,
                system_href=name.href,
                accelerators=p.accelerators or 0,
                value=p.value,
                unit=p.unit,
                power_w=p.power_w,
                per_watt=p.value / p.power_w,
                division=p.division,
                availability="" if p.availability == "available" else p.availability,
                twins=twins,
            )
        )
    return tuple(rows)


MLPERF_PREFIX = "mlperf"
"""Software names of MLPerf results start with it (``mlperf-inference``): their versions
are rounds."""


def mlperf_rounds(data: ReportInput) -> list[str]:
    """The MLPerf rounds with rankings, in version order (then by label)."""
    order = {v.version: i for i, v in enumerate(data.versions)}
    rounds = {v.version for v in data.versions if v.software.startswith(MLPERF_PREFIX)}
    found = {r.round for r in data.platforms if r.round in rounds}
    return sorted(found, key=lambda v: (order.get(v, len(order)), v))


def build_round_pages(
    data: ReportInput,
    names: SystemNames,
    *,
    generated_at: str,
    is_example: bool,
    platforms: dict[str, str],
) -> Iterator[tuple[str, RoundPage]]:
    """(path, context) of each round's page; ``platforms``: the rankings pages by round."""
    by_round: dict[str, list[PlatformRanking]] = defaultdict(list)
    for ranking in data.platforms:
        by_round[ranking.round].append(ranking)
    rounds = mlperf_rounds(data)
    for index, round_label in enumerate(rounds):
        rankings = by_round[round_label]
        divisions = _divisions(rankings)
        tables = [t for d in divisions for t in _division_tables(rankings, d, names)]
        moves, changed = _moves(data.round_gains, names, round_label)
        models = {r.accelerator or "?" for ranking in rankings for r in ranking.results}
        yield (
            round_href(round_label),
            RoundPage(
                title=f"Round {round_label} at a glance",
                generated_at=generated_at,
                is_example=is_example,
                round=round_label,
                previous=rounds[index - 1] if index else "",
                tables=tuple(tables),
                divisions=tuple(divisions),
                cases=len(rankings),
                accelerators=len(models),
                moves=tuple(moves),
                changed=changed,
                power=power_rows(data.power, names, round_label),
                platforms_href=platforms.get(round_label, ""),
            ),
        )
