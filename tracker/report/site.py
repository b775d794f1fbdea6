"""The whole site, rendered in passes that each hold one page's data at a time.

:func:`render_site` writes every page of a :class:`~tracker.report.inputs.ReportInput`
and the machine-readable files (:mod:`tracker.report.files`):

1. the benchmark pages, one benchmark/scenario's points at a time, and
   ``results.csv`` with them (the totals and whether any result is example
   data are known after this pass);
2. the system pages, one system's points at a time;
3. the comparisons, one pair at a time: its pages (the series that are not
   "no change", 1,000 a page) and its ``comparisons.csv`` rows (every series);
   its counts and, for the newest pairs, its gains are kept;
4. scaling, serving and the findings pages (1,000 a page) with ``findings.csv``;
5. the overview and ``report.json``.

Every pass writes into a temporary folder beside the site, moved into place
only when the whole site is written (:mod:`tracker.report.render`): a failed
or killed render leaves the previous site as it was.

Memory follows the largest page, not the database: the points and the pairs
are streamed (``read_points``, ``pairs``), nothing else grows with every result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tracker.report.common import (
    FindingRow,
    SystemNames,
    benchmark_href,
    finding_rows,
    system_names,
)
from tracker.report.context import PageCounts, SeriesTable
from tracker.report.files import (
    COMPARISONS_HEADER,
    FINDINGS_HEADER,
    RESULTS_HEADER,
    CsvFile,
    comparison_csv_rows,
    finding_csv_rows,
    report_json,
    result_csv_rows,
)
from tracker.report.inputs import ReportInput, point_groups
from tracker.report.issues import cause_points, finding_issues
from tracker.report.pages.compare import (
    PairSummary,
    build_compare_pages,
    compare_rows,
    pair_findings,
    pair_summary,
)
from tracker.report.pages.findings import build_findings_pages, build_scaling_page
from tracker.report.pages.overview import GainRow, build_overview_page, pair_gains, pair_headline
from tracker.report.pages.platforms import (
    build_platform_pages,
    build_round_pages,
    mlperf_rounds,
    round_href,
)
from tracker.report.pages.series import (
    SeriesContext,
    build_benchmark_page,
    build_system_page,
    series_context,
)
from tracker.report.pages.serving import build_serving_page
from tracker.report.pages.training import build_training_pages, training_lines
from tracker.report.render import NAV, PageWriter, staged_site

__all__ = ["render_site", "site_nav"]


@dataclass(slots=True)
class _Totals:
    """What the first pass learns about every result."""

    software: set[str] = field(default_factory=set)
    series: int = 0
    samples: int = 0
    invalid: int = 0
    is_example: bool = False
    benchmarks: dict[str, str] = field(default_factory=dict)

    def add(self, tables: Iterable[SeriesTable]) -> None:
        for table in tables:
            self.software.add(table.software)
            self.series += len(table.rows)
            for row in table.rows:
                for cell in row.cells:
                    if cell is not None:
                        self.samples += cell.n
                        self.invalid += cell.n - cell.valid_count

    def counts(self) -> PageCounts:
        return PageCounts(len(self.software), self.series, self.samples, self.invalid)


def site_nav(data: ReportInput) -> tuple[tuple[str, str], ...]:
    """The navigation of a site of ``data``: the kinds of data it has, no link to a page
    of a kind it lacks (no Training link without Training results), and the newest
    round at a glance where there are MLPerf rounds."""
    absent = set()
    if not data.training:
        absent.add("Training")
    if not (data.targets or data.sweep_points):
        absent.add("Serving")
    if not (data.scaling or data.scaling_issues):
        absent.add("Scaling")
    if not data.platforms:
        absent.add("Platforms")
    nav = [(text, href) for text, href in NAV if text not in absent]
    rounds = mlperf_rounds(data)
    if rounds:
        nav.insert(1, ("Rounds", round_href(rounds[-1])))
    return tuple(nav)


def _benchmark_pass(ctx: SeriesContext, out: PageWriter, results: CsvFile) -> _Totals:
    totals = _Totals()
    for points in point_groups(ctx.data, "benchmark"):
        page = build_benchmark_page(ctx, points)
        href = benchmark_href(page.benchmark, page.scenario)
        out.page(href, "benchmark.html", page)
        results.rows(result_csv_rows(page.tables, ctx.names))
        totals.add(page.tables)
        totals.is_example = totals.is_example or page.is_example
        totals.benchmarks[href] = page.title
    return totals


def _system_pass(ctx: SeriesContext, out: PageWriter) -> dict[str, str]:
    titles = {}
    for points in point_groups(ctx.data, "system"):
        page = build_system_page(ctx, points)
        href = ctx.names.of(page.system.key or page.system.name).href
        out.page(href, "system.html", page)
        titles[href] = page.title
    return titles


def _compare_pass(
    data: ReportInput,
    findings: Sequence[FindingRow],
    names: SystemNames,
    out: PageWriter,
    csv: CsvFile,
    *,
    generated_at: str,
    is_example: bool,
) -> tuple[list[PairSummary], list[GainRow]]:
    summaries: list[PairSummary] = []
    gains: list[GainRow] = []
    targets = frozenset(t.key for t in data.targets)
    for pair in data.pairs:
        rows = compare_rows(pair, data.infos, names, targets)
        scaling = pair_findings(pair, findings)
        summary = pair_summary(pair, rows, scaling)
        pages = build_compare_pages(
            summary,
            rows,
            generated_at=generated_at,
            is_example=is_example,
            scaling=scaling,
            headline=pair_headline(summary).text,
        )
        for href, page in pages:
            out.page(href, "compare.html", page)
        csv.rows(comparison_csv_rows(summary, rows, names))
        summaries.append(summary)
        if pair.is_latest:
            gains.extend(pair_gains(pair, data.infos, names))
    return summaries, gains


def _findings_pass(
    data: ReportInput,
    findings: tuple[FindingRow, ...],
    names: SystemNames,
    out: PageWriter,
    *,
    generated_at: str,
    is_example: bool,
) -> list[str]:
    hrefs = []
    for href, page in build_findings_pages(
        data, findings, generated_at=generated_at, is_example=is_example
    ):
        out.page(href, "findings.html", page)
        hrefs.append(href)
    with CsvFile(out.path("findings.csv"), FINDINGS_HEADER) as csv:
        csv.rows(finding_csv_rows(findings, names))
    return hrefs


def _round_passes(
    data: ReportInput, names: SystemNames, out: PageWriter, *, generated_at: str, example: bool
) -> tuple[dict[str, str], dict[str, str]]:
    """Each round's platforms page and its page at a glance: their paths → rounds."""
    platforms = {}
    for href, platform_page in build_platform_pages(
        data, names, generated_at=generated_at, is_example=example
    ):
        out.page(href, "platforms.html", platform_page)
        platforms[href] = platform_page.round
    rounds = {}
    by_round = {label: h for h, label in platforms.items()}
    for href, round_page in build_round_pages(
        data, names, generated_at=generated_at, is_example=example, platforms=by_round
    ):
        out.page(href, "round.html", round_page)
        rounds[href] = round_page.round
    return platforms, rounds


def render_site(
    data: ReportInput,
    out_dir: Path,
    *,
    generated_at: str,
    on_page: Callable[[int, str], None] | None = None,
    force: bool = False,
) -> Path:
    """Write every page, ``static/``, ``report.json`` and the CSV files; return ``index.html``.

    ``on_page(pages_written, relative_path)`` is called after each page (progress).
    Raises :class:`~tracker.report.render.RenderError` when the site could not be
    written (the previous one is then left as it was), or when ``out_dir`` is a folder
    the tracker did not make and ``force`` does not take it over
    (:func:`~tracker.report.render.check_output_folder`).
    """
    with staged_site(out_dir, force=force) as stage:
        _render(data, PageWriter(stage.folder, on_page), generated_at=generated_at)
        stage.commit()
    return out_dir / "index.html"


def _render(data: ReportInput, out: PageWriter, *, generated_at: str) -> None:
    out.environment.globals["nav"] = site_nav(data)
    names = system_names(data)
    findings = finding_rows(data.findings, names, floor=data.efficiency_floor)
    points = cause_points(data.infos.values())
    issues = finding_issues(findings, points, first_page="findings.html")
    ctx = series_context(data, findings, names, generated_at=generated_at, issues=issues)
    with CsvFile(out.path("results.csv"), RESULTS_HEADER) as results:
        totals = _benchmark_pass(ctx, out, results)
    systems = _system_pass(ctx, out)
    example = totals.is_example
    with CsvFile(out.path("comparisons.csv"), COMPARISONS_HEADER) as csv:
        pairs, gains = _compare_pass(
            data, findings, names, out, csv, generated_at=generated_at, is_example=example
        )
    scaling = build_scaling_page(
        data, findings, names, generated_at=generated_at, is_example=example
    )
    out.page("scaling.html", "scaling.html", scaling)
    serving = build_serving_page(data, generated_at=generated_at, is_example=example)
    out.page("serving.html", "serving.html", serving)
    finding_pages = _findings_pass(
        data, findings, names, out, generated_at=generated_at, is_example=example
    )
    training = training_lines(data, names)
    training_index, training_pages = build_training_pages(
        data, names, training, generated_at=generated_at
    )
    out.page("training.html", "training_index.html", training_index)
    for href, training_page in training_pages:
        out.page(href, "training.html", training_page)
    platforms, rounds = _round_passes(data, names, out, generated_at=generated_at, example=example)
    counts = totals.counts()
    overview = build_overview_page(
        data,
        generated_at=generated_at,
        counts=counts,
        is_example=example,
        findings=findings,
        issues=issues,
        points=points,
        benchmarks=totals.benchmarks,
        systems=systems,
        pairs=pairs,
        gains=gains,
        training=training,
        platforms=platforms,
        rounds=rounds,
    )
    out.page("index.html", "index.html", overview)
    status: dict[str, int] = {}
    for f in findings:
        status[f.status] = status.get(f.status, 0) + 1
    text = report_json(
        title=data.title,
        generated_at=generated_at,
        is_example=example,
        counts=counts,
        overview=overview,
        pages={
            "benchmarks": dict(sorted(totals.benchmarks.items())),
            "systems": dict(sorted(systems.items())),
            "comparisons": {p.pages[0]: p.title for p in pairs},
            "findings": finding_pages,
            "training": {href: page.benchmark for href, page in training_pages},
            "platforms": platforms,
            "rounds": rounds,
        },
        comparisons=pairs,
        scaling=scaling,
        serving=serving,
        findings={
            "stored": data.findings_stored,
            "total": len(findings),
            "counts": dict(sorted(status.items())),
        },
    )
    out.text("report.json", text)
