"""What the index page shows, built from plain records and nothing else.

Each page gets one frozen dataclass whose fields each carry a docstring (as
datasette documents its ``Context``), so the template's inputs are written down
in one place and a test can check that none is left undocumented.

One table per software name; its columns are that software's versions in the
explicit order the caller passes (never the order of ingestion); its rows are
the series (system, benchmark, scenario, workload, metric) measured on it. A
system is its identity (submitter and name): two systems of one name are two
rows, labelled with their submitters.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tracker.records.results import SeriesPoint, VersionInfo
from tracker.report.common import Page, SeriesColumns, SystemNames

__all__ = [
    "Cell",
    "IndexPage",
    "PageCounts",
    "SeriesRow",
    "SeriesTable",
    "build_index_page",
]

_RowKey = tuple[str, str, str, str, str, str]
"""System name, system key, benchmark, scenario, workload, metric: the rows' order."""


@dataclass(frozen=True, slots=True)
class Cell:
    """The samples of one series at one version, summarised."""

    median: float
    """Median of the samples; the value shown."""
    n: int
    """Number of samples (repeats) behind the median."""
    valid_count: int
    """How many of the samples were valid runs."""
    min: float
    """Smallest sample."""
    max: float
    """Largest sample."""
    has_invalid: bool
    """True when at least one sample is invalid."""


@dataclass(frozen=True, slots=True)
class SeriesRow(SeriesColumns):
    """One series of one software: a row of its table."""

    is_example: bool
    """True when any sample in the row is example data."""
    cells: tuple[Cell | None, ...]
    """One cell per version column, in column order; None where not measured."""


@dataclass(frozen=True, slots=True)
class SeriesTable:
    """All series of one software name."""

    software: str
    """Software name; the table's heading."""
    versions: tuple[str, ...]
    """Version labels with results, in explicit version order."""
    rows: tuple[SeriesRow, ...]
    """Series, sorted by system, benchmark, scenario, workload, metric."""

    @property
    def metric_count(self) -> int:
        """Distinct metrics of the rows (one: the table names it once, not per row)."""
        return len({(row.metric, row.unit) for row in self.rows})

    @property
    def has_workloads(self) -> bool:
        """Whether any row has a workload (else no workload column)."""
        return any(row.workload for row in self.rows)

    @property
    def has_example(self) -> bool:
        """Whether any row holds example data (said once, above the table)."""
        return any(row.is_example for row in self.rows)


@dataclass(frozen=True, slots=True)
class PageCounts:
    """Totals shown in the page summary."""

    software: int
    """Number of software names (tables)."""
    series: int
    """Number of series (rows) over all tables."""
    samples: int
    """Number of samples over all cells."""
    invalid_samples: int
    """Number of samples from invalid runs."""


@dataclass(frozen=True, slots=True)
class IndexPage(Page):
    """The context of ``index.html`` (and the content of ``report.json``)."""

    tables: tuple[SeriesTable, ...]
    """One table per software name, sorted by name."""
    counts: PageCounts
    """Totals for the summary line."""


def build_index_page(
    points: Iterable[SeriesPoint],
    versions: Sequence[VersionInfo],
    *,
    generated_at: str,
    title: str = "Benchmark results",
    names: SystemNames | None = None,
) -> IndexPage:
    """The index page context for ``points``.

    ``versions`` lists each software's versions in their explicit order; columns
    follow it. Only versions with at least one point become columns; a version
    found in ``points`` but not listed in ``versions`` goes last, sorted by label.
    ``names`` labels the systems (by default: from ``points`` alone).
    """
    by_software: dict[str, list[SeriesPoint]] = defaultdict(list)
    for point in points:
        by_software[point.software].append(point)
    if names is None:
        names = SystemNames((p.system_key, p.system) for g in by_software.values() for p in g)
    listed = _listed_versions(versions)
    tables = tuple(
        _build_table(software, by_software[software], listed.get(software, []), names)
        for software in sorted(by_software)
    )
    all_points = [point for group in by_software.values() for point in group]
    return IndexPage(
        title=title,
        generated_at=generated_at,
        is_example=any(point.is_example for point in all_points),
        tables=tables,
        counts=_count(tables),
    )


def _listed_versions(versions: Sequence[VersionInfo]) -> dict[str, list[str]]:
    listed: dict[str, list[str]] = defaultdict(list)
    for info in versions:
        if info.version not in listed[info.software]:
            listed[info.software].append(info.version)
    return listed


def _column_order(points: Sequence[SeriesPoint], listed: Sequence[str]) -> tuple[str, ...]:
    present = {point.version for point in points}
    known = [version for version in listed if version in present]
    unlisted = sorted(present.difference(listed))
    return (*known, *unlisted)


def _row_key(point: SeriesPoint) -> _RowKey:
    return (
        point.system,
        point.system_key or point.system,
        point.benchmark,
        point.scenario,
        point.workload,
        point.metric,
    )


def _build_table(
    software: str, points: Sequence[SeriesPoint], listed: Sequence[str], names: SystemNames
) -> SeriesTable:
    columns = _column_order(points, listed)
    series: dict[_RowKey, list[SeriesPoint]] = defaultdict(list)
    for point in points:
        series[_row_key(point)].append(point)
    rows = tuple(_build_row(series[key], columns, names) for key in sorted(series))
    return SeriesTable(software=software, versions=columns, rows=rows)


def _build_row(
    points: Sequence[SeriesPoint], columns: Sequence[str], names: SystemNames
) -> SeriesRow:
    by_version: dict[str, list[SeriesPoint]] = defaultdict(list)
    for point in points:
        by_version[point.version].append(point)
    first = points[0]
    system = names.of(first.system_key, first.system)
    return SeriesRow(
        system=system.label,
        system_key=system.key,
        system_href=system.href,
        benchmark=first.benchmark,
        scenario=first.scenario,
        workload=first.workload,
        metric=first.metric,
        unit=first.unit,
        higher_is_better=first.higher_is_better,
        is_example=any(point.is_example for point in points),
        cells=tuple(_build_cell(by_version.get(version, [])) for version in columns),
    )


def _build_cell(points: Sequence[SeriesPoint]) -> Cell | None:
    """Summarise the samples of one series at one version (repeats merged)."""
    values = sorted(float(value) for point in points for value in point.values)
    n = len(values)
    if not n:
        return None
    valid_count = max(0, min(sum(point.valid_count for point in points), n))
    mid = n // 2
    median = values[mid] if n % 2 else (values[mid - 1] + values[mid]) / 2
    return Cell(
        median=median,
        n=n,
        valid_count=valid_count,
        min=values[0],
        max=values[-1],
        has_invalid=valid_count < n,
    )


def _count(tables: Sequence[SeriesTable]) -> PageCounts:
    cells = [cell for table in tables for row in table.rows for cell in row.cells if cell]
    return PageCounts(
        software=len(tables),
        series=sum(len(table.rows) for table in tables),
        samples=sum(cell.n for cell in cells),
        invalid_samples=sum(cell.n - cell.valid_count for cell in cells),
    )
