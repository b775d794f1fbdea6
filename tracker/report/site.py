"""The whole site as page contexts, and its machine-readable files (report.json, CSV).

:func:`build_site` turns a :class:`~tracker.report.inputs.ReportInput` into one
context per page (a :class:`Site`); :mod:`tracker.report.render` writes them.
``report.json`` (compact JSON, sorted keys) holds what the pages show, without the chart specs: the
results tables, the overview, every comparison, the scaling groups, the
serving curves and the findings. Everything is sorted, so the same input gives
the same bytes.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from tracker.report.common import FindingRow, finding_rows
from tracker.report.context import IndexPage, build_index_page
from tracker.report.inputs import ReportInput
from tracker.report.pages_analysis import (
    FindingsPage,
    ScalingPage,
    ServingPage,
    build_findings_page,
    build_scaling_page,
    build_serving_page,
)
from tracker.report.pages_compare import (
    ComparePage,
    OverviewPage,
    build_compare_pages,
    build_overview_page,
)
from tracker.report.pages_series import (
    BenchmarkPage,
    SystemPage,
    build_benchmark_pages,
    build_system_pages,
    series_marks,
)

__all__ = ["Site", "build_site", "findings_csv", "report_json", "results_csv"]

_CHART_FIELDS = frozenset({"chart", "charts", "gains_chart"})


@dataclass(frozen=True, slots=True)
class Site:
    """Every page of the report, by path relative to the site root where there are many."""

    overview: OverviewPage
    results: IndexPage
    benchmarks: Mapping[str, BenchmarkPage]
    systems: Mapping[str, SystemPage]
    comparisons: Mapping[str, ComparePage]
    scaling: ScalingPage
    serving: ServingPage
    findings: FindingsPage


def build_site(data: ReportInput, *, generated_at: str) -> Site:
    """Every page context of the site for ``data``."""
    results = build_index_page(
        data.points, data.versions, generated_at=generated_at, title=data.title
    )
    is_example = results.is_example
    rows: tuple[FindingRow, ...] = finding_rows(data.findings)
    marks = series_marks(data, rows)
    benchmarks = build_benchmark_pages(data, rows, marks, generated_at=generated_at)
    systems = build_system_pages(data, rows, marks, generated_at=generated_at)
    overview = build_overview_page(
        data,
        generated_at=generated_at,
        counts=results.counts,
        is_example=is_example,
        findings=rows,
        benchmarks={path: page.title for path, page in benchmarks.items()},
        systems={path: page.title for path, page in systems.items()},
    )
    return Site(
        overview=overview,
        results=results,
        benchmarks=benchmarks,
        systems=systems,
        comparisons=build_compare_pages(data, generated_at=generated_at, is_example=is_example),
        scaling=build_scaling_page(data, rows, generated_at=generated_at, is_example=is_example),
        serving=build_serving_page(data, generated_at=generated_at, is_example=is_example),
        findings=build_findings_page(data, rows, generated_at=generated_at, is_example=is_example),
    )


def _data(value: Any) -> Any:
    """``value`` as JSON-ready data (like ``asdict``, without copying), chart specs left out."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _data(getattr(value, f.name))
            for f in fields(value)
            if f.name not in _CHART_FIELDS
        }
    if isinstance(value, tuple | list):
        return [_data(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _data(v) for k, v in value.items()}
    return str(value)


def report_json(site: Site) -> str:
    """``report.json``: what the pages show (no chart specs), sorted keys, final newline."""
    content = {
        "title": site.results.title,
        "generated_at": site.results.generated_at,
        "is_example": site.results.is_example,
        "counts": _data(site.results.counts),
        "tables": [_data(t) for t in site.results.tables],
        "overview": {
            key: value
            for key, value in _data(site.overview).items()
            if key not in ("generated_at", "title", "is_example", "counts")
        },
        "pages": {
            "benchmarks": {path: page.title for path, page in site.benchmarks.items()},
            "systems": {path: page.title for path, page in site.systems.items()},
            "comparisons": {path: page.title for path, page in site.comparisons.items()},
        },
        "comparisons": [_strip(_data(page)) for page in site.comparisons.values()],
        "scaling": _strip(_data(site.scaling)),
        "serving": _strip(_data(site.serving)),
        "findings": _strip(_data(site.findings)),
    }
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return text + "\n"


def _strip(page: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in page.items() if k not in ("generated_at", "is_example")}


def _csv(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else v for v in row])
    return buffer.getvalue()


def results_csv(site: Site) -> str:
    """``results.csv``: one row per series and version (median of its samples)."""
    header = (
        "software",
        "version",
        "system",
        "benchmark",
        "scenario",
        "workload",
        "metric",
        "unit",
        "higher_is_better",
        "median",
        "n",
        "valid",
        "min",
        "max",
        "is_example",
    )
    rows = (
        (
            table.software,
            version,
            row.system,
            row.benchmark,
            row.scenario,
            row.workload,
            row.metric,
            row.unit,
            row.higher_is_better,
            repr(cell.median),
            cell.n,
            cell.valid_count,
            repr(cell.min),
            repr(cell.max),
            row.is_example,
        )
        for table in site.results.tables
        for row in table.rows
        for version, cell in zip(table.versions, row.cells, strict=True)
        if cell is not None
    )
    return _csv(header, rows)


def findings_csv(site: Site) -> str:
    """``findings.csv``: one row per finding, as the findings page lists them."""
    header = (
        "id",
        "status",
        "kind",
        "software",
        "system",
        "benchmark",
        "scenario",
        "metric",
        "baseline",
        "candidate",
        "change_pct",
        "higher_is_better",
        "ci_low_pct",
        "ci_high_pct",
        "p_value",
        "q_value",
        "method",
        "series_key",
        "note",
    )
    rows = (
        (
            f.id,
            f.status,
            f.kind,
            f.software,
            f.system,
            f.benchmark,
            f.scenario,
            f.metric,
            f.baseline,
            f.candidate,
            f.change_pct,
            f.higher_is_better,
            f.ci_pct[0] if f.ci_pct else None,
            f.ci_pct[1] if f.ci_pct else None,
            f.p_value,
            f.q_value,
            f.method,
            f.series_key,
            f.note,
        )
        for f in site.findings.rows
    )
    return _csv(header, rows)


def comparisons_csv(site: Site) -> str:
    """``comparisons.csv``: every series of every comparison page."""
    header = (
        "software",
        "baseline",
        "candidate",
        "system",
        "benchmark",
        "scenario",
        "workload",
        "metric",
        "unit",
        "higher_is_better",
        "baseline_value",
        "candidate_value",
        "delta_pct",
        "ci_low_pct",
        "ci_high_pct",
        "p_value",
        "q_value",
        "method",
        "verdict",
    )
    rows = (
        (
            p.software,
            p.baseline,
            p.candidate,
            r.system,
            r.benchmark,
            r.scenario,
            r.workload,
            r.metric,
            r.unit,
            r.higher_is_better,
            r.baseline_value,
            r.candidate_value,
            r.delta_pct,
            r.ci_pct[0] if r.ci_pct else None,
            r.ci_pct[1] if r.ci_pct else None,
            r.p_value,
            r.q_value,
            r.method,
            r.verdict,
        )
        for p in site.comparisons.values()
        for r in p.rows
    )
    return _csv(header, rows)
