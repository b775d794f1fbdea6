"""A benchmark's results ranked, and the charts of its results across versions.

**Ranked results.** For each software and metric of a benchmark page, the newest
version's results best first (the metric's direction decides), each with its
submitter, accelerators, availability, its result per accelerator where the
system's accelerator count is known (throughput only) and its change against the
same configuration in the version before: the same series (system, workload,
metric) one version earlier, counted as a change only when nothing but the
software changed between the two (the comparability rule,
:func:`tracker.analyze.groupings.besides_software`); otherwise the row says what
else changed and shows no ratio.

**Across versions.** A line joins a configuration's results across versions, so
only the configurations with results in two versions or more are drawn as lines
(the :data:`MAX_LINES` best in the newest version; the others stay in the tables).
When no configuration has two versions (different systems in each MLPerf round),
the chart is a ranked bar chart of the newest version instead: scattered single
dots say nothing across versions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from tracker.analyze.groupings import besides_software
from tracker.records.results import Configuration
from tracker.report.context import Cell, SeriesRow, SeriesTable
from tracker.report.inputs import SystemInfo

__all__ = [
    "MAX_BARS",
    "MAX_LINES",
    "RankedRow",
    "RankedTable",
    "lined_rows",
    "newest_index",
    "ranked_tables",
]

MAX_LINES = 12
"""Lines (legend entries) of one chart at most: the best in the newest version."""
MAX_BARS = 25
"""Bars of one ranked bar chart at most."""
ROUNDS_PREFIX = "mlperf"
"""Software whose versions are MLPerf rounds (other systems in each): every round is ranked,
the earlier ones folded; other software ranks its newest version only."""


@dataclass(frozen=True, slots=True)
class RankedRow:
    """One result of the newest version, in rank order."""

    rank: int
    system: str
    system_href: str
    submitter: str
    """Submitter; empty when unknown."""
    accelerators: str
    """``8 × NVIDIA B200-SXM-180GB``; empty when unknown."""
    availability: str
    """``preview`` or ``rdi``; empty when available or not stated."""
    workload: str
    value: float
    per_accelerator: float | None
    """The result divided by the accelerator count (throughput only; ``None``: not known)."""
    previous: float | None
    """The same configuration's result one version earlier (``None``: none, or another
    configuration)."""
    change: float | None
    """Direction-aware ratio to ``previous`` (above 1 is better)."""
    changed: str = ""
    """What else changed against the version before (not a software change)."""
    power_w: float | None = None
    per_accelerator_rank: int | None = None
    """Its rank by the result per accelerator (``None``: no per-accelerator figure)."""
    """The system's measured power while it ran (MLPerf power results; ``None``: none)."""

    @property
    def per_watt(self) -> float | None:
        """Performance per watt: the result divided by the measured power."""
        return self.value / self.power_w if self.power_w else None


@dataclass(frozen=True, slots=True)
class RankedTable:
    """The newest version's results of one software and metric, best first."""

    software: str
    version: str
    previous_version: str
    """The version compared against (empty: none)."""
    metric: str
    unit: str
    higher_is_better: bool
    rows: tuple[RankedRow, ...]
    has_per_accelerator: bool
    has_workloads: bool
    has_power: bool = False
    """Whether any result was measured with its power (a per-watt column)."""
    is_newest: bool = True
    """The newest version of its software and metric (the others are folded away)."""


def newest_index(rows: Sequence[SeriesRow]) -> int | None:
    """The index of the newest version column where any of ``rows`` has a result."""
    width = len(rows[0].cells) if rows else 0
    for index in range(width - 1, -1, -1):
        if any(row.cells[index] is not None for row in rows):
            return index
    return None


def lined_rows(rows: Sequence[SeriesRow]) -> list[SeriesRow]:
    """The rows with results in two versions or more, the best in the newest version
    first, at most :data:`MAX_LINES`."""
    kept = [r for r in rows if sum(c is not None for c in r.cells) >= 2]
    return _best_first(kept)[:MAX_LINES]


def _last(row: SeriesRow) -> Cell | None:
    return next((c for c in reversed(row.cells) if c is not None), None)


def _best_first(rows: Sequence[SeriesRow]) -> list[SeriesRow]:
    def key(row: SeriesRow) -> tuple[float, str]:
        cell = _last(row)
        value = cell.median if cell is not None else float("nan")
        return (-value if row.higher_is_better else value, row.system)

    return sorted(rows, key=key)


def _configuration(system: SystemInfo | None, version: str) -> Configuration | None:
    if system is None:
        return None
    return dict(system.configurations).get(version)


def _accelerators(system: SystemInfo | None) -> tuple[str, int | None]:
    if system is None:
        return "", None
    count = system.accelerator_counts[0] if len(system.accelerator_counts) == 1 else None
    model = ", ".join(system.accelerators)
    if count and model:
        return f"{count} × {model}", count
    return (f"{count} accelerators" if count else model), count


def _change(
    row: SeriesRow,
    cell: Cell,
    previous: Cell | None,
    before: Configuration | None,
    after: Configuration | None,
) -> tuple[float | None, str]:
    """The direction-aware ratio to the version before, or what else changed."""
    if previous is None or previous.median <= 0 or cell.median <= 0:
        return None, ""
    besides = besides_software(before, after)
    if not besides.software_only:
        return None, besides.text
    ratio = cell.median / previous.median
    return (ratio if row.higher_is_better else 1.0 / ratio), ""


def _ranked_row(
    rank: int,
    row: SeriesRow,
    versions: Sequence[str],
    index: int,
    system: SystemInfo | None,
) -> RankedRow:
    cell = row.cells[index]
    assert cell is not None
    shown, count = _accelerators(system)
    conf = _configuration(system, versions[index])
    availability = (conf.availability or "") if conf is not None else ""
    previous = row.cells[index - 1] if index > 0 else None
    old = _configuration(system, versions[index - 1]) if index > 0 else None
    change, changed = _change(row, cell, previous, old, conf)
    return RankedRow(
        rank=rank,
        system=row.system,
        system_href=row.system_href,
        submitter=system.submitters[0] if system and len(system.submitters) == 1 else "",
        accelerators=shown,
        availability="" if availability == "available" else availability,
        workload=row.workload,
        value=cell.median,
        per_accelerator=cell.median / count if count and row.higher_is_better else None,
        previous=previous.median if previous is not None and change is not None else None,
        change=change,
        changed=changed,
    )


PowerKey = tuple[str, str, str, str, str, str]
"""Software, version, system key, benchmark, scenario, metric of a result with power."""


def _labels(row: SeriesRow) -> tuple[str, str, str, str]:
    return (row.system_key, row.benchmark, row.scenario, row.metric)


def _with_power(row: RankedRow, power_w: float | None) -> RankedRow:
    return row if power_w is None else replace(row, power_w=power_w)


def _per_accelerator_ranks(rows: tuple[RankedRow, ...]) -> tuple[RankedRow, ...]:
    """``rows`` with their ranks by the result per accelerator (the most first)."""
    divided = sorted(
        (r for r in rows if r.per_accelerator is not None),
        key=lambda r: (-(r.per_accelerator or 0.0), r.rank),
    )
    ranks = {id(r): rank for rank, r in enumerate(divided, start=1)}
    return tuple(replace(r, per_accelerator_rank=ranks.get(id(r))) for r in rows)


def _ranked_table(
    table: SeriesTable,
    group: tuple[str, str, bool],
    rows: Sequence[SeriesRow],
    index: int,
    described: Mapping[str, SystemInfo],
    power: Mapping[PowerKey, float],
) -> RankedTable:
    """The results of one version (column ``index``) of one metric, best first."""
    metric, unit, hib = group
    version = table.versions[index]

    def order(row: SeriesRow) -> tuple[float, str]:
        cell = row.cells[index]
        value = cell.median if cell is not None else float("nan")
        return (-value if hib else value, row.system)

    ranked = sorted((r for r in rows if r.cells[index] is not None), key=order)
    found = tuple(
        _with_power(
            _ranked_row(rank, row, table.versions, index, described.get(row.system_key)),
            power.get((table.software, version, *_labels(row))),
        )
        for rank, row in enumerate(ranked, start=1)
    )
    found = _per_accelerator_ranks(found)
    return RankedTable(
        software=table.software,
        version=version,
        previous_version=table.versions[index - 1] if index > 0 else "",
        metric=metric,
        unit=unit,
        higher_is_better=hib,
        rows=found,
        has_per_accelerator=any(r.per_accelerator is not None for r in found),
        has_workloads=any(r.workload for r in found),
        has_power=any(r.power_w for r in found),
        is_newest=index == newest_index(rows),
    )


def ranked_tables(
    tables: Sequence[SeriesTable],
    described: Mapping[str, SystemInfo],
    power: Mapping[PowerKey, float] | None = None,
) -> tuple[RankedTable, ...]:
    """Per software and metric, the newest version's results best first (and for MLPerf
    rounds each earlier round's, newest first);
    ``power``: the measured power (W) of the results that have one, beside their
    performance."""
    out = []
    for table in tables:
        groups: dict[tuple[str, str, bool], list[SeriesRow]] = {}
        for row in table.rows:
            groups.setdefault((row.metric, row.unit, row.higher_is_better), []).append(row)
        every = table.software.startswith(ROUNDS_PREFIX)
        for group, rows in sorted(groups.items()):
            newest = newest_index(rows)
            for index in range(len(table.versions) - 1, -1, -1):
                if (every or index == newest) and any(r.cells[index] is not None for r in rows):
                    out.append(_ranked_table(table, group, rows, index, described, power or {}))
    return tuple(out)
