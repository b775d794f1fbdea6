"""The scaling and findings pages.

* **Scaling**: per scaling group (results that differ only in accelerator
  count), efficiency ``E(N)`` against the accelerator count, one line per
  version, the floor drawn; the points as a table, flagged ones marked. The
  :data:`MAX_PANELS` groups of lowest efficiency are drawn; every group is
  listed in one line (lowest efficiency, points under the floor).
* **Findings**: every finding with its evidence and triage state, those that
  share a cause as one issue with its members in a details row (the points of
  one sweep, the per-accelerator form, the at-target series: the gate's issues),
  :data:`~tracker.report.common.PAGE_ROWS` issues a page (``findings.html``,
  ``findings-2.html``…), open first, regressions first, improvements last;
  filtered on the page by kind, status, software and system (``static/report.js``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tracker.records.findings import KIND_SCALING
from tracker.report.charts import Chart, hline, line_trace, version_color, xy_chart
from tracker.report.common import FindingRow, Page, Pager, SystemNames, benchmark_href, paginate
from tracker.report.filters import format_efficiency, format_kind
from tracker.report.inputs import ReportInput
from tracker.report.issues import FindingIssue, cause_points, finding_issues
from tracker.stats import ScalingGroup, ScalingKey

__all__ = [
    "FilterOption",
    "FindingsFilter",
    "FindingsPage",
    "ScalingGroupSummary",
    "ScalingPage",
    "ScalingPanel",
    "ScalingRow",
    "StatusCount",
    "build_findings_pages",
    "build_scaling_page",
]


MAX_PANELS = 100
"""Scaling groups drawn on the page, lowest efficiency first (the page lists them all)."""

MAX_WARNINGS = 100
"""Scaling findings listed on the scaling page (the findings pages list them all)."""


@dataclass(frozen=True, slots=True)
class ScalingRow:
    """One accelerator count of one group at one version."""

    version: str
    """Version."""
    accelerators: int
    """Total accelerators N."""
    value: float
    """Median primary value at N."""
    efficiency: float
    """E(N) against the group's smallest count."""
    below_floor: bool
    """E(N) is under the floor."""
    systems: str
    """The systems measured at N, comma-separated."""


@dataclass(frozen=True, slots=True)
class ScalingPanel:
    """One scaling group across versions: its chart and table."""

    title: str
    """Software, submitter, accelerator, benchmark, …"""
    software: str
    """Software name."""
    metric: str
    """Metric whose efficiency is shown."""
    unit: str
    """Unit of the values."""
    higher_is_better: bool
    """Direction of the metric."""
    href: str
    """The benchmark page."""
    chart: Chart
    """Efficiency against accelerator count."""
    rows: tuple[ScalingRow, ...]
    """By version, then count."""
    flagged: int
    """Rows under the floor."""


@dataclass(frozen=True, slots=True)
class ScalingGroupSummary:
    """One scaling group in a line: its lowest efficiency and the points under the floor."""

    title: str
    """Software, submitter, accelerator, benchmark, …"""
    metric: str
    """Metric whose efficiency is shown."""
    href: str
    """The benchmark page."""
    lowest: float
    """Lowest efficiency E(N) over versions and counts."""
    flagged: int
    """Points under the floor."""
    points: int
    """Points (version and accelerator count)."""
    drawn: bool
    """Whether the page draws it as a panel."""


@dataclass(frozen=True, slots=True)
class ScalingPage(Page):
    """The context of ``scaling.html``."""

    floor: float
    """Efficiency floor (a fraction)."""
    panels: tuple[ScalingPanel, ...]
    """Lowest efficiency first; the first :data:`MAX_PANELS` groups."""
    more_panels: int
    """Groups not drawn (listed in `groups`)."""
    groups: tuple[ScalingGroupSummary, ...]
    """Every group, lowest efficiency first."""
    warnings: tuple[FindingIssue, ...]
    """Scaling findings, the first :data:`MAX_WARNINGS`."""
    warnings_total: int
    """How many scaling findings there are."""


@dataclass(frozen=True, slots=True)
class StatusCount:
    """How many findings (issues) have one triage state."""

    status: str
    """Triage state."""
    count: int
    """Number of findings, those with one cause as one."""


@dataclass(frozen=True, slots=True)
class FilterOption:
    """One choice of a findings filter."""

    value: str
    """The value the rows carry (data-* attribute)."""
    text: str
    """The choice as shown, with its count."""


@dataclass(frozen=True, slots=True)
class FindingsFilter:
    """One filter of the findings pages (kind, status, software, system)."""

    name: str
    """The row attribute it filters on (data-<name>)."""
    label: str
    """The filter's label."""
    options: tuple[FilterOption, ...]
    """Its choices, by value."""


@dataclass(frozen=True, slots=True)
class FindingsPage(Page):
    """The context of ``findings.html`` (and of its next pages)."""

    stored: bool
    """False: not stored, run `tracker analyze`."""
    counts: tuple[StatusCount, ...]
    """Findings per triage state (one per issue)."""
    members: int
    """Findings in all, every member of every issue."""
    filters: tuple[FindingsFilter, ...]
    """Kind, status, software and system, with the counts over all pages."""
    pager: Pager
    """This page among the findings pages."""
    rows: tuple[FindingIssue, ...]
    """The page's findings, one per issue: open first, regressions first."""


def _key_title(software: str, key: ScalingKey) -> str:
    parts = [software, key.submitter, key.accelerator, key.benchmark, key.scenario, key.workload]
    head = " · ".join(p for p in parts if p)
    stack = f" ({key.division}, {key.software_stack})" if key.software_stack else ""
    return f"{head}{stack}"


def _panel(
    software: str,
    key: ScalingKey,
    groups: Sequence[ScalingGroup],
    floor: float,
    index: int,
    unit: str,
    names: SystemNames,
) -> ScalingPanel:
    rows = [
        ScalingRow(
            version=g.version,
            accelerators=p.accelerators,
            value=p.value,
            efficiency=p.efficiency,
            below_floor=p.efficiency < floor,
            systems=", ".join(names.of(lbl).label for lbl in p.labels),
        )
        for g in groups
        for p in g.points
    ]
    counts = sorted({r.accelerators for r in rows})
    traces = [
        line_trace(
            g.version,
            [p.accelerators for p in g.points],
            [p.efficiency for p in g.points],
            index=i,
            line_color=version_color(i, len(groups)),
            hover="N=%{x}: <b>%{y:.1%}</b> efficiency",
        )
        for i, g in enumerate(groups)
    ]
    chart = xy_chart(
        f"chart-{index}",
        "Efficiency against accelerator count",
        traces,
        x_title="accelerators (log scale)",
        y_title="scaling efficiency E(N)",
        x_axis={"type": "log", "tickvals": counts, "ticktext": [str(n) for n in counts]},
        y_axis={"tickformat": ".0%", "rangemode": "tozero"},
        shapes=[hline(floor, f"floor {format_efficiency(floor)}")],
        height=320,
    )
    return ScalingPanel(
        title=_key_title(software, key),
        software=software,
        metric=key.metric,
        unit=unit,
        higher_is_better=groups[0].higher_is_better,
        href=benchmark_href(key.benchmark, key.scenario),
        chart=chart,
        rows=tuple(rows),
        flagged=sum(r.below_floor for r in rows),
    )


def build_scaling_page(
    data: ReportInput,
    findings: Sequence[FindingRow],
    names: SystemNames,
    *,
    generated_at: str,
    is_example: bool,
) -> ScalingPage:
    """Every scaling group, lowest efficiency first; the first :data:`MAX_PANELS` drawn."""
    grouped: dict[tuple[str, ScalingKey], list[ScalingGroup]] = defaultdict(list)
    for software, group in data.scaling:
        grouped[(software, group.key)].append(group)
    floor = data.efficiency_floor
    ranked = sorted(
        (
            min((p.efficiency for g in groups for p in g.points), default=1.0),
            _key_title(software, key),
            software,
            key,
        )
        for (software, key), groups in grouped.items()
    )
    order = {(v.software, v.version): i for i, v in enumerate(data.versions)}
    units = {(i.software, i.metric): i.unit for i in data.infos.values()}
    panels = []
    for index, (_lowest, _title, software, key) in enumerate(ranked[:MAX_PANELS]):
        groups = sorted(grouped[(software, key)], key=lambda g: order.get((software, g.version), 0))
        unit = units.get((software, key.metric), "")
        panels.append(_panel(software, key, groups, floor, index + 1, unit, names))
    summaries = tuple(
        ScalingGroupSummary(
            title=title,
            metric=key.metric,
            href=benchmark_href(key.benchmark, key.scenario),
            lowest=lowest,
            flagged=sum(p.efficiency < floor for g in grouped[(sw, key)] for p in g.points),
            points=sum(len(g.points) for g in grouped[(sw, key)]),
            drawn=index < MAX_PANELS,
        )
        for index, (lowest, title, sw, key) in enumerate(ranked)
    )
    warnings = finding_issues([f for f in findings if f.kind == KIND_SCALING])
    return ScalingPage(
        title="Scaling efficiency",
        generated_at=generated_at,
        is_example=is_example,
        floor=floor,
        panels=tuple(panels),
        more_panels=max(0, len(ranked) - MAX_PANELS),
        groups=summaries,
        warnings=tuple(warnings[:MAX_WARNINGS]),
        warnings_total=len(warnings),
    )


_FILTERS = (("kind", "Kind"), ("status", "Status"), ("software", "Software"), ("system", "System"))


def _filters(issues: Sequence[FindingIssue]) -> tuple[FindingsFilter, ...]:
    out = []
    for name, text in _FILTERS:
        counts = Counter(str(getattr(i.head, name)) for i in issues)
        shown = {"kind": format_kind}.get(name, lambda v: v or "(none)")
        options = tuple(
            FilterOption(value, f"{shown(value)} ({n:,})") for value, n in sorted(counts.items())
        )
        out.append(FindingsFilter(name, text, options))
    return tuple(out)


def build_findings_pages(
    data: ReportInput,
    findings: Sequence[FindingRow],
    *,
    generated_at: str,
    is_example: bool,
    issues: Sequence[FindingIssue] | None = None,
) -> Iterator[tuple[str, FindingsPage]]:
    """(path, context) of each findings page: every finding in the order of ``findings``
    (open first, regressions first), one row per issue (``issues``: ``findings`` grouped,
    else grouped here), a page per 1,000 issues."""
    if issues is None:
        points = cause_points(data.infos.values())
        issues = finding_issues(findings, points, first_page="findings.html")
    counts = Counter(i.head.status for i in issues)
    status = tuple(StatusCount(s, n) for s, n in sorted(counts.items()))
    filters = _filters(issues)
    for href, pager, rows in paginate(issues, "findings.html"):
        yield (
            href,
            FindingsPage(
                title="Findings" if pager.count == 1 else f"Findings, page {pager.number}",
                generated_at=generated_at,
                is_example=is_example,
                stored=data.findings_stored,
                counts=status,
                members=sum(len(i.members) for i in issues),
                filters=filters,
                pager=pager,
                rows=tuple(rows),
            ),
        )
