"""Benchmark charts per accelerator: each system's result divided by its accelerator count.

Where the data has accelerator counts, a benchmark page draws, beside its
charts of the results, one chart per software and throughput metric with each
system's median per accelerator across versions (its repeats' min–max as
error bars), the same figure the platform comparison ranks
(:mod:`tracker.analyze.platforms`, ``tracker compare`` and the platform pages):
a system's value divided by its total accelerator count. Only throughput
(higher is better) is divided, never a latency; a metric that is already per
accelerator (``…_per_accelerator``, or one beside its per-accelerator form) is
left as it is; a system whose results name several counts is left out (the
count of each value is not known here), and a chart whose systems all have one
accelerator says nothing new and is not drawn.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from tracker.report.charts import Chart, Spec, label, line_trace, xy_chart
from tracker.report.context import Cell, SeriesRow, SeriesTable
from tracker.report.inputs import SystemInfo

__all__ = ["PER_ACCELERATOR", "accelerator_count", "per_accelerator_charts"]

PER_ACCELERATOR = "_per_accelerator"


def accelerator_count(system: SystemInfo | None) -> int | None:
    """The system's one total accelerator count (``None``: unknown, or several)."""
    if system is None or len(system.accelerator_counts) != 1:
        return None
    count = system.accelerator_counts[0]
    return count if count > 0 else None


def _divisible(metric: str, hib: bool, metrics: set[str]) -> bool:
    return (
        hib
        and PER_ACCELERATOR not in metric
        and metric + PER_ACCELERATOR not in metrics
        and "latency" not in metric
    )


def _divided(cell: Cell | None, count: int) -> tuple[float | None, float | None, float | None]:
    if cell is None:
        return None, None, None
    return cell.median / count, cell.min / count, cell.max / count


def _trace(row: SeriesRow, name: str, versions: Sequence[str], count: int, index: int) -> Spec:
    medians, lows, highs = zip(*(_divided(c, count) for c in row.cells), strict=True)
    spread = any(c is not None and c.n > 1 and c.max > c.min for c in row.cells)
    unit = label(row.unit)
    return line_trace(
        name,
        versions,
        list(medians),
        index=index,
        hover=f"%{{x}}: <b>%{{y:,.4~g}} {unit}</b> per accelerator (÷ {count})",
        spread=(list(lows), list(highs)) if spread else None,
    )


def _chart(
    chart_id: str,
    table: SeriesTable,
    metric: str,
    unit: str,
    rows: Sequence[tuple[SeriesRow, int]],
) -> Chart:
    workloads = {row.workload for row, _n in rows}
    traces = []
    for index, (row, count) in enumerate(rows):
        parts = [row.system, f"{count} accelerators"]
        if len(workloads) > 1 and row.workload:
            parts.append(row.workload)
        traces.append(_trace(row, " · ".join(parts), table.versions, count, index))
    axis = {"type": "category", "categoryorder": "array", "categoryarray": list(table.versions)}
    return xy_chart(
        chart_id,
        f"{table.software}: {metric} per accelerator ({unit} ÷ accelerators, higher is better)",
        traces,
        x_title=f"{table.software} version",
        y_title=f"{unit} per accelerator",
        x_axis=axis,
    )


def per_accelerator_charts(
    tables: Sequence[SeriesTable], systems: Mapping[str, SystemInfo]
) -> tuple[Chart, ...]:
    """Per software and throughput metric, each system's result per accelerator (see the
    module docstring); ``systems``: the systems' descriptions by key."""
    charts: list[Chart] = []
    for table in tables:
        metrics = {row.metric for row in table.rows}
        groups: dict[tuple[str, str], list[tuple[SeriesRow, int]]] = defaultdict(list)
        for row in table.rows:
            count = accelerator_count(systems.get(row.system_key))
            if count is not None and _divisible(row.metric, row.higher_is_better, metrics):
                groups[(row.metric, row.unit)].append((row, count))
        for (metric, unit), rows in sorted(groups.items()):
            if all(count == 1 for _row, count in rows):
                continue
            charts.append(_chart(f"chart-acc-{len(charts) + 1}", table, metric, unit, rows))
    return tuple(charts)
