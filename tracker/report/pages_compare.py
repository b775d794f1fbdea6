"""Version-vs-version comparison pages, and the overview that summarises them.

Each software gets a comparison page for every consecutive pair of its
versions and one for its newest version against its first (the baseline),
built by :mod:`tracker.publish` with the gate's engine: every series with both
versions, its Δ%, CI, p and q (one Benjamini–Hochberg family per page) and its
verdict. The overview shows the versions, the newest comparison's counts, the
open findings, the largest software gains and losses of the newest pair and
the scaling-efficiency warnings.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tracker.analysis import Comparison, Verdict
from tracker.analyze_inputs import SeriesInfo
from tracker.report.charts import Chart, bar_chart
from tracker.report.common import (
    FindingRow,
    PageLink,
    benchmark_href,
    compare_href,
    system_href,
)
from tracker.report.context import PageCounts
from tracker.report.filters import format_gain
from tracker.report.inputs import PairRun, ReportInput

__all__ = [
    "ComparePage",
    "CompareRow",
    "CompareSummary",
    "GainRow",
    "OverviewPage",
    "SoftwareSummary",
    "VerdictCount",
    "build_compare_pages",
    "build_overview_page",
]

_SEVERITY = {
    Verdict.REGRESSION: 0,
    Verdict.SUSPECT: 1,
    Verdict.IMPROVEMENT: 2,
    Verdict.INCONCLUSIVE: 3,
    Verdict.NO_CHANGE: 4,
}


@dataclass(frozen=True, slots=True)
class VerdictCount:
    """How many comparisons of a pair got one verdict."""

    verdict: str = field(metadata={"help": "regression, suspect, improvement, …"})
    count: int = field(metadata={"help": "Number of series with that verdict."})


@dataclass(frozen=True, slots=True)
class CompareRow:
    """One series compared between two versions."""

    system: str = field(metadata={"help": "System name."})
    benchmark: str = field(metadata={"help": "Benchmark."})
    scenario: str = field(metadata={"help": "Scenario."})
    workload: str = field(metadata={"help": "Workload; empty when none."})
    metric: str = field(metadata={"help": "Metric."})
    unit: str = field(metadata={"help": "Unit of the two values."})
    higher_is_better: bool = field(metadata={"help": "Direction of the metric."})
    baseline_value: float | None = field(metadata={"help": "Baseline median (or value)."})
    candidate_value: float | None = field(metadata={"help": "Candidate median (or value)."})
    delta_pct: float | None = field(metadata={"help": "Raw relative change in percent."})
    ci_pct: tuple[float, float] | None = field(metadata={"help": "CI of the change, percent."})
    p_value: float | None = field(metadata={"help": "p-value; None when untested."})
    q_value: float | None = field(metadata={"help": "q-value within the page's family."})
    method: str = field(metadata={"help": "Test used (welch_t, mann_whitney_u, …)."})
    n_baseline: int = field(metadata={"help": "Baseline samples (or history points)."})
    n_candidate: int = field(metadata={"help": "Candidate samples."})
    verdict: str = field(metadata={"help": "The verdict."})
    severity: int = field(metadata={"help": "Sort rank of the verdict (0 = regression)."})
    note: str = field(metadata={"help": "Why, when the evidence says."})
    href: str = field(metadata={"help": "The benchmark page (relative to the root)."})
    system_href: str = field(metadata={"help": "The system page (relative to the root)."})


@dataclass(frozen=True, slots=True)
class ComparePage:
    """The context of ``compare.html``: one software, baseline → candidate."""

    title: str = field(metadata={"help": "Software and version pair."})
    generated_at: str = field(metadata={"help": "When the report was built, as given."})
    is_example: bool = field(metadata={"help": "True when any result shown is example data."})
    software: str = field(metadata={"help": "Software name."})
    baseline: str = field(metadata={"help": "Baseline version."})
    candidate: str = field(metadata={"help": "Candidate version."})
    is_latest: bool = field(metadata={"help": "The newest consecutive pair of the software."})
    is_baseline: bool = field(metadata={"help": "The newest version against the first."})
    family_size: int = field(metadata={"help": "p-values in the page's BH family."})
    q_level: float = field(metadata={"help": "q below which a change is confirmed."})
    counts: tuple[VerdictCount, ...] = field(metadata={"help": "Series per verdict."})
    rows: tuple[CompareRow, ...] = field(metadata={"help": "Every series, worst first."})


@dataclass(frozen=True, slots=True)
class CompareSummary:
    """A link to one comparison page with its verdict counts."""

    baseline: str = field(metadata={"help": "Baseline version."})
    candidate: str = field(metadata={"help": "Candidate version."})
    href: str = field(metadata={"help": "The comparison page."})
    counts: tuple[VerdictCount, ...] = field(metadata={"help": "Series per verdict."})
    is_latest: bool = field(metadata={"help": "The newest consecutive pair."})
    is_baseline: bool = field(metadata={"help": "The newest version against the first."})


@dataclass(frozen=True, slots=True)
class SoftwareSummary:
    """One software: its versions and its comparisons."""

    software: str = field(metadata={"help": "Software name."})
    versions: tuple[str, ...] = field(metadata={"help": "Its versions, in explicit order."})
    comparisons: tuple[CompareSummary, ...] = field(
        metadata={"help": "Newest pair and newest vs first first, then older pairs, newest first."}
    )


@dataclass(frozen=True, slots=True)
class GainRow:
    """The software gain of one series between the newest two versions."""

    software: str = field(metadata={"help": "Software name."})
    system: str = field(metadata={"help": "System name."})
    series: str = field(metadata={"help": "Benchmark, scenario, workload and metric."})
    baseline: str = field(metadata={"help": "Baseline version."})
    candidate: str = field(metadata={"help": "Candidate version."})
    gain: float = field(metadata={"help": "Direction-aware factor: above 1 is better."})
    href: str = field(metadata={"help": "The benchmark page."})


@dataclass(frozen=True, slots=True)
class OverviewPage:
    """The context of ``index.html``."""

    title: str = field(metadata={"help": "Site title."})
    generated_at: str = field(metadata={"help": "When the report was built, as given."})
    is_example: bool = field(metadata={"help": "True when any result shown is example data."})
    counts: PageCounts = field(metadata={"help": "Totals for the summary line."})
    software: tuple[SoftwareSummary, ...] = field(metadata={"help": "Per software, by name."})
    has_analysis: bool = field(metadata={"help": "Whether any series could be compared."})
    findings_stored: bool = field(metadata={"help": "Whether `tracker analyze` stored findings."})
    open_findings: tuple[FindingRow, ...] = field(metadata={"help": "Open findings, first 20."})
    open_findings_total: int = field(metadata={"help": "How many findings are open."})
    gains: tuple[GainRow, ...] = field(metadata={"help": "Largest gains of the newest pairs."})
    losses: tuple[GainRow, ...] = field(metadata={"help": "Largest losses of the newest pairs."})
    gains_chart: tuple[Chart, ...] = field(
        metadata={"help": "Geometric-mean gain per system, newest pairs (none without pairs)."}
    )
    scaling_warnings: tuple[FindingRow, ...] = field(
        metadata={"help": "Scaling-efficiency findings that are not fixed, first 20."}
    )
    scaling_warnings_total: int = field(metadata={"help": "How many there are in all."})
    benchmarks: tuple[PageLink, ...] = field(metadata={"help": "Every benchmark page."})
    systems: tuple[PageLink, ...] = field(metadata={"help": "Every system page."})


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _row(c: Comparison, info: SeriesInfo | None) -> CompareRow:
    ev = c.evidence
    if info is None:
        info = SeriesInfo("", ev.key, "", "", "", "", "", ev.higher_is_better)
    system = info.system.partition("/")[2] or info.system
    return CompareRow(
        system=system,
        benchmark=info.benchmark,
        scenario=info.scenario,
        workload=info.workload,
        metric=info.metric,
        unit=info.unit,
        higher_is_better=ev.higher_is_better,
        baseline_value=_finite(ev.baseline_level),
        candidate_value=_finite(ev.candidate_level),
        delta_pct=_finite(ev.delta_pct),
        ci_pct=ev.ci_pct,
        p_value=_finite(ev.p_value),
        q_value=_finite(c.q_value),
        method=ev.method.value,
        n_baseline=ev.n_baseline,
        n_candidate=ev.n_candidate,
        verdict=c.verdict.value,
        severity=_SEVERITY[c.verdict],
        note=ev.note,
        href=benchmark_href(info.benchmark, info.scenario),
        system_href=system_href(system),
    )


def _counts(pair: PairRun) -> tuple[VerdictCount, ...]:
    counts = pair.run.counts()
    ranked = sorted(Verdict, key=lambda v: _SEVERITY[v])
    return tuple(VerdictCount(v.value, counts[v]) for v in ranked)


def build_compare_pages(
    data: ReportInput, *, generated_at: str, is_example: bool
) -> dict[str, ComparePage]:
    """One page per compared pair, by its path relative to the site root."""
    pages = {}
    for pair in data.pairs:
        rows = sorted(
            (_row(c, data.infos.get(c.key)) for c in pair.run.comparisons),
            key=lambda r: (r.severity, r.delta_pct if r.delta_pct is not None else 0.0, r.system),
        )
        pages[compare_href(pair.software, pair.baseline, pair.candidate)] = ComparePage(
            title=f"{pair.software}: {pair.baseline} → {pair.candidate}",
            generated_at=generated_at,
            is_example=is_example,
            software=pair.software,
            baseline=pair.baseline,
            candidate=pair.candidate,
            is_latest=pair.is_latest,
            is_baseline=pair.is_baseline,
            family_size=pair.run.family_size,
            q_level=pair.run.q_level,
            counts=_counts(pair),
            rows=tuple(rows),
        )
    return pages


def _software(data: ReportInput) -> tuple[SoftwareSummary, ...]:
    versions: dict[str, list[str]] = defaultdict(list)
    for info in data.versions:
        versions[info.software].append(info.version)
    pairs: dict[str, list[PairRun]] = defaultdict(list)
    for pair in data.pairs:
        pairs[pair.software].append(pair)
    out = []
    for software in sorted(versions):
        order = {v: i for i, v in enumerate(versions[software])}
        ranked = sorted(
            pairs[software],
            key=lambda p: (not p.is_latest, not p.is_baseline, -order.get(p.candidate, 0)),
        )
        out.append(
            SoftwareSummary(
                software=software,
                versions=tuple(versions[software]),
                comparisons=tuple(
                    CompareSummary(
                        baseline=p.baseline,
                        candidate=p.candidate,
                        href=compare_href(p.software, p.baseline, p.candidate),
                        counts=_counts(p),
                        is_latest=p.is_latest,
                        is_baseline=p.is_baseline,
                    )
                    for p in ranked
                ),
            )
        )
    return tuple(out)


def _gains(data: ReportInput) -> list[GainRow]:
    out = []
    for pair in data.pairs:
        if not pair.is_latest:
            continue
        for c in pair.run.comparisons:
            g = _finite(c.evidence.g)
            info = data.infos.get(c.key)
            if g is None or info is None:
                continue
            series = " ".join(x for x in (info.benchmark, info.scenario, info.workload) if x)
            out.append(
                GainRow(
                    software=pair.software,
                    system=info.system.partition("/")[2] or info.system,
                    series=f"{series} · {info.metric}",
                    baseline=pair.baseline,
                    candidate=pair.candidate,
                    gain=math.exp(g),
                    href=benchmark_href(info.benchmark, info.scenario),
                )
            )
    return sorted(out, key=lambda r: (-r.gain, r.software, r.system, r.series))


def _gains_chart(gains: Sequence[GainRow]) -> tuple[Chart, ...]:
    by_system: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for row in gains:
        by_system[(row.software, row.system, row.baseline, row.candidate)].append(
            math.log(row.gain)
        )
    if not by_system:
        return ()
    ranked = sorted(
        ((math.exp(sum(v) / len(v)), key, len(v)) for key, v in by_system.items()),
        key=lambda t: (-t[0], t[1]),
    )[:40]
    names = [f"{sw} · {system}" for _, (sw, system, _b, _c), _n in ranked]
    values = [100.0 * (gain - 1.0) for gain, _key, _n in ranked]
    hover = [
        f"{sw} · {system}, {b} → {c}: {format_gain(gain)}, geometric mean of {n} series"
        for gain, (sw, system, b, c), n in ranked
    ]
    chart = bar_chart(
        "chart-gains",
        "Software gain per system, newest pair of versions (geometric mean; → better)",
        names,
        values,
        x_title="change, % (direction-aware: positive is better)",
        hover=hover,
    )
    return (chart,)


def build_overview_page(
    data: ReportInput,
    *,
    generated_at: str,
    counts: PageCounts,
    is_example: bool,
    findings: Sequence[FindingRow],
    benchmarks: Mapping[str, str],
    systems: Mapping[str, str],
) -> OverviewPage:
    """The overview; ``benchmarks`` and ``systems`` map page paths to their titles."""
    gains = _gains(data)
    open_rows = [f for f in findings if f.status in ("open", "not stored")]
    warnings = [f for f in findings if f.kind == "scaling_efficiency" and f.status != "fixed"]
    return OverviewPage(
        title=data.title,
        generated_at=generated_at,
        is_example=is_example,
        counts=counts,
        software=_software(data),
        has_analysis=bool(data.pairs),
        findings_stored=data.findings_stored,
        open_findings=tuple(open_rows[:20]),
        open_findings_total=len(open_rows),
        gains=tuple(g for g in gains[:10] if g.gain > 1.0),
        losses=tuple(g for g in reversed(gains[-10:]) if g.gain < 1.0),
        gains_chart=_gains_chart(gains),
        scaling_warnings=tuple(warnings[:20]),
        scaling_warnings_total=len(warnings),
        benchmarks=tuple(PageLink(t, h) for h, t in sorted(benchmarks.items(), key=_by_text)),
        systems=tuple(PageLink(t, h) for h, t in sorted(systems.items(), key=_by_text)),
    )


def _by_text(item: tuple[str, str]) -> tuple[str, str]:
    return item[1], item[0]
