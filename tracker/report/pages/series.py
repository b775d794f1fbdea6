"""The page of each benchmark/scenario and of each system: series across versions, and
charts per accelerator.

The page of each benchmark/scenario and of each system: series across versions.

A benchmark page draws one chart per software and metric, one line per system
(and workload): the median of each version with the min–max of its repeats as
error bars, change points and findings marked (with hover text) on the version
where they happen; what every line shares (one system, one workload) is named
in the chart's title, not in each legend entry. A system page draws, per software and
metric, each benchmark's performance relative to its first measured version
(above 1 is better whatever the metric's direction), so software gains on fixed
hardware read off one chart. Both carry the results tables (every sample,
invalid runs marked) and the findings about their series, one per issue (the
first :data:`MAX_FINDINGS`; all on the findings pages). A system is its identity
(submitter and name). Each page is built from its own points, one at a time.

Benchmark charts per accelerator: each system's result divided by its accelerator count.

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
from dataclasses import dataclass, field

from tracker.analyze.groupings import PER_ACCELERATOR
from tracker.records.findings import KIND_CHANGE_POINT
from tracker.records.results import INFERENCE_SOFTWARE, SeriesPoint
from tracker.report.charts import (
    Chart,
    Spec,
    label,
    line_trace,
    log_axis,
    marker_trace,
    ranked_bar_chart,
    xy_chart,
)
from tracker.report.common import (
    FindingRow,
    Page,
    PageLink,
    RowKey,
    SystemNames,
    benchmark_href,
    key_lookup,
)
from tracker.report.context import Cell, SeriesRow, SeriesTable, build_index_page
from tracker.report.filters import format_change, format_range, format_repeats, format_value
from tracker.report.inputs import ReportInput, SystemInfo
from tracker.report.issues import FindingIssue, cause_points, finding_issues
from tracker.report.pages.ranking import (
    MAX_BARS,
    PowerKey,
    RankedTable,
    lined_rows,
    newest_index,
    ranked_tables,
)

__all__ = [
    "BenchmarkPage",
    "MAX_FINDINGS",
    "Marks",
    "SeriesContext",
    "SystemPage",
    "accelerator_count",
    "build_benchmark_page",
    "build_system_page",
    "per_accelerator_charts",
    "series_context",
    "series_marks",
]


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


def _per_accelerator_bars(
    chart_id: str, table: SeriesTable, metric: str, unit: str, rows: Sequence[tuple[SeriesRow, int]]
) -> Chart | None:
    """The newest version's results per accelerator, ranked (no system has two versions)."""
    index = newest_index([row for row, _n in rows])
    if index is None:
        return None
    found = [(row, c.median / n, n) for row, n in rows if (c := row.cells[index]) is not None]
    found.sort(key=lambda t: (-t[1], t[0].system))
    shown = found[:MAX_BARS]
    names = [f"{row.system} · {n} accelerators" for row, _v, n in shown]
    values = [v for _row, v, _n in shown]
    more = f", the best {len(shown)} of {len(found)}" if len(found) > len(shown) else ""
    return ranked_bar_chart(
        chart_id,
        f"{table.software} {table.versions[index]}: {metric} per accelerator, ranked"
        f" ({unit} ÷ accelerators, higher is better){more}",
        names,
        values,
        x_title=f"{unit} per accelerator",
        hover=[
            f"{n}: {format_value(v, unit)} per accelerator"
            for n, v in zip(names, values, strict=True)
        ],
        log=bool(values) and min(values) > 0 and max(values) / min(values) > 30.0,
    )


def per_accelerator_charts(
    tables: Sequence[SeriesTable], systems: Mapping[str, SystemInfo]
) -> tuple[Chart, ...]:
    """Per software and throughput metric, each system's result per accelerator (see the
    module docstring); ``systems``: the systems' descriptions by key. Lines for the systems
    with two versions or more (the best :data:`MAX_LINES`), else the newest version ranked."""
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
            chart_id = f"chart-acc-{len(charts) + 1}"
            lined = set(map(id, lined_rows([row for row, _n in rows])))
            kept = [(row, n) for row, n in rows if id(row) in lined]
            if kept:
                kept.sort(key=lambda rn: _per_accelerator_order(*rn))
                charts.append(_chart(chart_id, table, metric, unit, kept))
            elif (bars := _per_accelerator_bars(chart_id, table, metric, unit, rows)) is not None:
                charts.append(bars)
    return tuple(charts)


def _per_accelerator_order(row: SeriesRow, count: int) -> tuple[float, str]:
    last = next((c for c in reversed(row.cells) if c is not None), None)
    return (-(last.median / count) if last is not None else 0.0, row.system)


MAX_FINDINGS = 50
"""Findings listed on one benchmark or system page (the findings pages list them all)."""

_MARK_STYLE = {
    KIND_CHANGE_POINT: ("Change point", "diamond-open", "#8250df"),
    "regression": ("Regression", "triangle-down", "#cf222e"),
    "suspect": ("Suspect", "circle-open", "#bc4c00"),
    "improvement": ("Improvement", "triangle-up", "#1a7f37"),
}


@dataclass(frozen=True, slots=True)
class BenchmarkPage(Page):
    """The context of ``benchmark.html``: one benchmark and scenario (its title), every
    system."""

    benchmark: str
    """Benchmark (model) name."""
    scenario: str
    """Scenario."""
    charts: tuple[Chart, ...]
    """One chart per software and metric."""
    per_accelerator: tuple[Chart, ...]
    """Throughput per accelerator, where systems have accelerator counts."""
    tables: tuple[SeriesTable, ...]
    """Results, one table per software."""
    findings: tuple[FindingIssue, ...]
    """Findings about these series (one per issue), the first MAX_FINDINGS."""
    findings_total: int
    """How many there are in all (issues)."""
    systems: tuple[PageLink, ...]
    """The systems measured here."""
    ranked: tuple[RankedTable, ...] = ()
    """Per software and metric, the newest version's results best first."""


@dataclass(frozen=True, slots=True)
class SystemPage(Page):
    """The context of ``system.html``: one system, every benchmark it ran; its title is the
    system's name (with its submitter where names collide)."""

    system: SystemInfo
    """What the results say about the system."""
    charts: tuple[Chart, ...]
    """Per software and metric: each benchmark relative to its first version."""
    tables: tuple[SeriesTable, ...]
    """Results, one table per software."""
    findings: tuple[FindingIssue, ...]
    """Findings about these series (one per issue), the first MAX_FINDINGS."""
    findings_total: int
    """How many there are in all (issues)."""
    benchmarks: tuple[PageLink, ...]
    """The benchmarks it ran."""


Marks = dict[str, list[tuple[str, str, str]]]
"""Series key → (version, kind, hover text) of its change points and findings."""


def series_marks(data: ReportInput, findings: Sequence[FindingRow]) -> Marks:
    """What to mark on each analysis series: change points and comparison findings."""
    marks: Marks = defaultdict(list)
    for result in data.change_points:
        info = data.infos.get(result.key)
        hib = info.higher_is_better if info else True
        for cp in result.change_points:
            change = format_change(cp.delta_pct, hib)
            text = f"change point {cp.version_before} → {cp.version_after}: {change}"
            marks[result.key].append((cp.version_after, KIND_CHANGE_POINT, text))
    for row in findings:
        if row.kind in _MARK_STYLE and row.kind != KIND_CHANGE_POINT and row.candidate:
            change = format_change(row.change_pct, row.higher_is_better)
            text = f"{row.kind} {row.baseline} → {row.candidate}: {change} ({row.status})"
            marks[row.series_key].append((row.candidate, row.kind, text))
    return marks


def _mark_traces(
    rows: Sequence[tuple[Sequence[str], Sequence[float | None], list[tuple[str, str, str]]]],
) -> list[dict[str, object]]:
    """Marker traces, one per mark kind, at the marked version of each row's line."""
    found: dict[str, tuple[list[str], list[float | None], list[str]]] = {}
    for versions, ys, marks in rows:
        for version, kind, text in sorted(marks):
            if version not in versions:
                continue
            y = ys[list(versions).index(version)]
            xs, yv, texts = found.setdefault(kind, ([], [], []))
            xs.append(version)
            yv.append(y)
            texts.append(text)
    traces: list[dict[str, object]] = []
    for kind in _MARK_STYLE:
        if kind in found:
            name, symbol, colour = _MARK_STYLE[kind]
            xs, yv, texts = found[kind]
            traces.append(
                marker_trace(name, xs, yv, symbol=symbol, marker_color=colour, text=texts)
            )
    return traces


def _groups(table: SeriesTable) -> list[tuple[tuple[str, str, bool], list[SeriesRow]]]:
    groups: dict[tuple[str, str, bool], list[SeriesRow]] = defaultdict(list)
    for row in table.rows:
        groups[(row.metric, row.unit, row.higher_is_better)].append(row)
    return sorted(groups.items())


def _direction(hib: bool) -> str:
    return "higher is better" if hib else "lower is better"


def _relative(cells: Sequence[float | None], hib: bool) -> list[float | None]:
    first = next((v for v in cells if v), None)
    if first is None:
        return [None for _ in cells]
    return [None if v is None or v <= 0 else (v / first if hib else first / v) for v in cells]


def _relative_spread(row: SeriesRow, hib: bool) -> tuple[list[float | None], list[float | None]]:
    """Each version's min–max relative to the first version's median (better is higher)."""
    first = next((c.median for c in row.cells if c and c.median), None)
    lows: list[float | None] = []
    highs: list[float | None] = []
    for c in row.cells:
        if first is None or c is None or c.min <= 0:
            lows.append(None)
            highs.append(None)
        elif hib:
            lows.append(c.min / first)
            highs.append(c.max / first)
        else:
            lows.append(first / c.max)
            highs.append(first / c.min)
    return lows, highs


def _has_spread(row: SeriesRow) -> bool:
    return any(c is not None and c.n > 1 and c.max > c.min for c in row.cells)


def _names(rows: Sequence[SeriesRow], by_system: bool) -> tuple[list[str], str]:
    """Each line's legend entry, with what every line shares left out (put in the title)."""
    systems = {row.system for row in rows}
    workloads = {row.workload for row in rows}
    names = []
    for row in rows:
        parts = []
        if by_system and len(systems) > 1:
            parts.append(row.system)
        if not by_system:
            parts.append(f"{row.benchmark} {row.scenario}")
        if len(workloads) > 1 and row.workload:
            parts.append(row.workload)
        names.append(" · ".join(parts) or (row.system if by_system else row.benchmark))
    shared = []
    if by_system and len(systems) == 1:
        shared.append(rows[0].system)
    if len(workloads) == 1 and rows[0].workload:
        shared.append(rows[0].workload)
    return names, " · ".join(shared)


def _line_chart(
    chart_id: str,
    table: SeriesTable,
    group: tuple[str, str, bool],
    rows: Sequence[SeriesRow],
    lookup: Mapping[RowKey, list[str]],
    marks: Marks,
    *,
    by_system: bool,
) -> Chart:
    """One software and metric across versions: a line per row (a configuration)."""
    metric, unit, hib = group
    axis = {"type": "category", "categoryorder": "array", "categoryarray": list(table.versions)}
    traces = []
    marked = []
    names, shared = _names(rows, by_system)
    for index, (row, name) in enumerate(zip(rows, names, strict=True)):
        ys, trace = _row_trace(row, name, table.versions, index, unit, hib, by_system=by_system)
        traces.append(trace)
        keys = lookup.get((table.software, *_labels(row)), [])
        marked.append((table.versions, ys, [m for k in keys for m in marks.get(k, [])]))
    traces.extend(_mark_traces(marked))
    y_axis = log_axis() if by_system and _spread(rows) > 30.0 else None
    of = f" · {shared}" if shared else ""
    if by_system:
        title = f"{table.software}: {metric} ({unit}, {_direction(hib)}){of}"
        y_title = f"{metric} ({unit})"
    else:
        title = f"{table.software}: {metric} relative to the first version (↑ better){of}"
        y_title = "× first version (↑ better)"
    return xy_chart(
        chart_id,
        title,
        traces,
        x_title=f"{table.software} version",
        y_title=y_title + (" (log scale)" if y_axis else ""),
        x_axis=axis,
        y_axis=y_axis,
    )


def _row_trace(
    row: SeriesRow,
    name: str,
    versions: Sequence[str],
    index: int,
    unit: str,
    hib: bool,
    *,
    by_system: bool,
) -> tuple[list[float | None], Spec]:
    """The y values of a row's line and the line (medians, or relative to the first)."""
    medians = [cell.median if cell else None for cell in row.cells]
    texts = [_point_text(cell, unit) for cell in row.cells]
    if by_system:
        ys = medians
        hover = "%{x}: <b>%{y:,.4~g} " + label(unit) + "</b><br>%{text}"
        spread: tuple[list[float | None], list[float | None]] = (
            [c.min if c else None for c in row.cells],
            [c.max if c else None for c in row.cells],
        )
    else:
        ys = _relative(medians, hib)
        hover = "%{x}: <b>%{y:.3f}×</b> the first version<br>%{text}"
        spread = _relative_spread(row, hib)
    trace = line_trace(
        name,
        versions,
        ys,
        index=index,
        hover=hover,
        spread=spread if _has_spread(row) else None,
        text=texts,
    )
    return ys, trace


def _bar_chart(
    chart_id: str, table: SeriesTable, group: tuple[str, str, bool], rows: Sequence[SeriesRow]
) -> Chart | None:
    """The newest version's results of one metric ranked, when no configuration has two
    versions (a line would be a dot)."""
    metric, unit, hib = group
    index = newest_index(rows)
    if index is None:
        return None
    present = [(r, c) for r in rows if (c := r.cells[index]) is not None]
    ranked = sorted(present, key=lambda rc: (-rc[1].median if hib else rc[1].median, rc[0].system))
    version = table.versions[index]
    shown = ranked[:MAX_BARS]
    more = f", the best {len(shown)} of {len(ranked)}" if len(ranked) > len(shown) else ""
    names = [" · ".join(p for p in (r.system, r.workload) if p) for r, _c in shown]
    values = [c.median for _r, c in shown]
    return ranked_bar_chart(
        chart_id,
        f"{table.software} {version}: {metric} ranked ({unit}, {_direction(hib)}){more}",
        names,
        values,
        x_title=f"{metric} ({unit})",
        hover=[f"{n}: {format_value(v, unit)}" for n, v in zip(names, values, strict=True)],
        log=bool(values) and min(values) > 0 and max(values) / min(values) > 30.0,
    )


def _charts(
    tables: Sequence[SeriesTable],
    lookup: Mapping[RowKey, list[str]],
    marks: Marks,
    *,
    by_system: bool,
) -> tuple[Chart, ...]:
    """Per software and metric: lines of the configurations with two versions or more (the
    best :data:`MAX_LINES`), else (benchmark pages) the newest version's results ranked."""
    charts: list[Chart] = []
    for table in tables:
        for group, rows in _groups(table):
            chart_id = f"chart-{len(charts) + 1}"
            lined = lined_rows(rows)
            if lined:
                charts.append(
                    _line_chart(chart_id, table, group, lined, lookup, marks, by_system=by_system)
                )
            elif by_system and (bars := _bar_chart(chart_id, table, group, rows)) is not None:
                charts.append(bars)
    return tuple(charts)


def _point_text(cell: Cell | None, unit: str) -> str:
    """What a point's hover adds to its median: the repeats and their range."""
    if cell is None:
        return ""
    if cell.n == 1:
        return "one sample"
    return f"{format_repeats(cell.n)}, min–max {format_range(cell.min, cell.max, unit)}"


def _spread(rows: Sequence[SeriesRow]) -> float:
    """Largest over smallest positive median of the rows (1 when there are none)."""
    values = [c.median for row in rows for c in row.cells if c is not None and c.median > 0]
    return max(values) / min(values) if values else 1.0


def _labels(row: SeriesRow) -> tuple[str, str, str, str, str]:
    return (row.system_key, row.benchmark, row.scenario, row.workload, row.metric)


@dataclass(frozen=True, slots=True)
class SeriesContext:
    """What every benchmark and system page shares, computed once for the whole site."""

    data: ReportInput
    names: SystemNames
    lookup: Mapping[RowKey, list[str]]
    marks: Marks
    by_benchmark: Mapping[tuple[str, str], Sequence[FindingIssue]]
    by_system: Mapping[str, Sequence[FindingIssue]]
    described: Mapping[str, SystemInfo]
    generated_at: str
    power: Mapping[PowerKey, float] = field(default_factory=dict)
    """The measured power (W) of each result that has one (the rankings' per-watt column)."""


def series_context(
    data: ReportInput,
    findings: Sequence[FindingRow],
    names: SystemNames,
    *,
    generated_at: str,
    issues: Sequence[FindingIssue] | None = None,
) -> SeriesContext:
    """The lookups the benchmark and system pages need (findings in ``findings`` order;
    ``issues``: the same grouped, :func:`~tracker.report.issues.finding_issues`)."""
    if issues is None:
        points = cause_points(data.infos.values())
        issues = finding_issues(findings, points, first_page="findings.html")
    by_benchmark: dict[tuple[str, str], list[FindingIssue]] = defaultdict(list)
    by_system: dict[str, list[FindingIssue]] = defaultdict(list)
    for issue in issues:
        f = issue.head
        by_benchmark[(f.benchmark, f.scenario)].append(issue)
        if f.system_key:
            by_system[f.system_key].append(issue)
    return SeriesContext(
        data=data,
        names=names,
        lookup=key_lookup(data.infos),
        marks=series_marks(data, findings),
        by_benchmark=by_benchmark,
        by_system=by_system,
        described={s.key or s.name: s for s in data.systems},
        generated_at=generated_at,
        power={
            (
                INFERENCE_SOFTWARE,
                p.round,
                p.system_key,
                p.benchmark,
                p.scenario,
                p.metric,
            ): p.power_w
            for p in data.power
        },
    )


def _tables(ctx: SeriesContext, points: Sequence[SeriesPoint]) -> tuple[SeriesTable, ...]:
    page = build_index_page(
        points, ctx.data.versions, generated_at=ctx.generated_at, names=ctx.names
    )
    return page.tables


def build_benchmark_page(ctx: SeriesContext, points: Sequence[SeriesPoint]) -> BenchmarkPage:
    """The page of the benchmark and scenario of ``points`` (every point of it)."""
    head = points[0]
    benchmark, scenario = head.benchmark, head.scenario
    tables = _tables(ctx, points)
    systems = sorted(
        {(p.system_key or p.system, p.system) for p in points},
        key=lambda ks: (ctx.names.of(*ks).label, ks[0]),
    )
    findings = ctx.by_benchmark.get((benchmark, scenario), ())
    return BenchmarkPage(
        title=f"{benchmark} · {scenario}",
        generated_at=ctx.generated_at,
        is_example=any(p.is_example for p in points),
        benchmark=benchmark,
        scenario=scenario,
        charts=_charts(tables, ctx.lookup, ctx.marks, by_system=True),
        per_accelerator=per_accelerator_charts(tables, ctx.described),
        tables=tables,
        ranked=ranked_tables(tables, ctx.described, ctx.power),
        findings=tuple(findings[:MAX_FINDINGS]),
        findings_total=len(findings),
        systems=tuple(PageLink(n.label, n.href) for n in (ctx.names.of(*ks) for ks in systems)),
    )


def build_system_page(ctx: SeriesContext, points: Sequence[SeriesPoint]) -> SystemPage:
    """The page of the system of ``points`` (every point of it)."""
    head = points[0]
    name = ctx.names.of(head.system_key, head.system)
    tables = _tables(ctx, points)
    benchmarks = sorted({(p.benchmark, p.scenario) for p in points})
    findings = ctx.by_system.get(name.key, ())
    return SystemPage(
        title=name.label,
        generated_at=ctx.generated_at,
        is_example=any(p.is_example for p in points),
        system=ctx.described.get(name.key, SystemInfo(name=name.name, key=name.key)),
        charts=_charts(tables, ctx.lookup, ctx.marks, by_system=False),
        tables=tables,
        findings=tuple(findings[:MAX_FINDINGS]),
        findings_total=len(findings),
        benchmarks=tuple(PageLink(f"{b} · {s}", benchmark_href(b, s)) for b, s in benchmarks),
    )
