"""The overview page: its first lines, versions and comparisons, open findings, gains and
losses, scaling.

The overview page: versions and comparisons, open findings, gains and losses, scaling.

It starts with one sentence per software about its newest pair, counting
issues (series that share a cause are one: :mod:`tracker.report.issues`), then
each software's versions and compared pairs with their verdict counts
(:class:`~tracker.report.pages.compare.PairSummary`, kept as the pairs stream
by), the open findings as issues, the largest software gains and losses of the
newest pair, one line per issue (with the geometric-mean gain per system as a
chart), and the scaling-efficiency warnings, and links every benchmark and
system page.

The overview's first lines: one sentence per software about its newest pair.

``1.2.0 against 1.1.0: 1 regression (example-llm-70b isl1024-osl1024, −8.0%),
2 improvements; 2 unchanged``. It counts issues (series that share a cause are
one, :mod:`tracker.report.issues`) and scaling warnings (one per group and size
step) as the gate does, from the :class:`~tracker.report.pages.compare.PairSummary`
of each software's newest pair; the comparison page of the pair starts with it too.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from tracker.analyze.groupings import cause_of, group_by, where
from tracker.records.findings import KIND_CONFIGURATION, KIND_SCALING, SeriesInfo
from tracker.records.results import finite_value
from tracker.report.charts import Chart, gain_bar_chart
from tracker.report.common import (
    FindingRow,
    Page,
    PageLink,
    SystemNames,
    benchmark_href,
    finding_rank,
    system_names,
)
from tracker.report.context import PageCounts
from tracker.report.filters import format_count, format_gain
from tracker.report.inputs import AnalysisCounts, PairRun, ReportInput, SettingsUsed
from tracker.report.issues import CausePoints, FindingIssue, issue_forms, scaling_issues
from tracker.report.pages.compare import PairOutline, PairSummary
from tracker.report.pages.training import MAX_OVERVIEW_LINES, TrainingLine
from tracker.stats.series import SeriesGain, bounded_exp

__all__ = [
    "CompareSummary",
    "GainRow",
    "Headline",
    "OverviewPage",
    "SoftwareSummary",
    "build_headlines",
    "build_overview_page",
    "finding_rank",
    "headline_text",
    "pair_gains",
    "pair_headline",
]


@dataclass(frozen=True, slots=True)
class Headline:
    """One software's answer: its newest pair of versions in one sentence."""

    software: str
    """Software name."""
    text: str
    """The sentence, e.g. '1.2.0 against 1.1.0: 1 regression …'."""
    href: str
    """The comparison page of the pair."""
    regressions: int
    """Regressions of the pair (the sentence leads with them)."""
    attention: int = 0
    """Regressions and scaling warnings: what needs a person."""


def _signed_pct(value: float) -> str:
    return f"{value:+.1f}%".replace("-", "\N{MINUS SIGN}")


def headline_text(
    counts: Mapping[str, int],
    baseline: str,
    candidate: str,
    worst: Sequence[tuple[str, float]],
    *,
    scaling: int = 0,
) -> str:
    """``1.2.0 against 1.1.0: 1 regression (chat, −8.0%), 2 improvements; 24 unchanged``.

    ``worst`` names the regressed workloads with their largest change, worst first;
    ``scaling`` scaling warnings come after the regressions (``2 scaling warnings``).
    """
    parts = []
    regressions = counts.get("regression", 0)
    if regressions:
        named = ", ".join(f"{name}, {_signed_pct(pct)}" for name, pct in worst[:3])
        more = f" and {len(worst) - 3} more" if len(worst) > 3 else ""
        parts.append(
            format_count(regressions, "regression") + (f" ({named}{more})" if named else "")
        )
    if scaling:
        parts.append(format_count(scaling, "scaling warning"))
    for verdict, noun in (("suspect", "suspect change"), ("improvement", "improvement")):
        if counts.get(verdict, 0) or verdict == "improvement":
            parts.append(format_count(counts.get(verdict, 0), noun))
    tail = [f"{counts.get('no_change', 0):,} unchanged"]
    if counts.get("inconclusive", 0):
        tail.append(f"{counts['inconclusive']:,} inconclusive")
    if counts.get("configuration_changed", 0):  # never a gain or loss: counted, not named
        tail.append(f"{counts['configuration_changed']:,} configuration changed (not compared)")
    return f"{candidate} against {baseline}: " + ", ".join(parts) + "; " + ", ".join(tail)


def pair_headline(pair: PairSummary) -> Headline:
    """The sentence of one compared pair, counting its issues and scaling warnings."""
    worst = [(i.name, i.change_pct) for i in pair.regressions if i.change_pct is not None]
    counts = {c.verdict: c.count for c in pair.issues}
    text = headline_text(counts, pair.baseline, pair.candidate, worst, scaling=pair.scaling)
    regressions = counts.get("regression", 0)
    return Headline(pair.software, text, pair.pages[0], regressions, regressions + pair.scaling)


def build_headlines(pairs: Sequence[PairSummary]) -> tuple[Headline, ...]:
    """One sentence per software about its newest pair, those with regressions first."""
    out = [pair_headline(p) for p in pairs if p.is_latest]
    return tuple(sorted(out, key=lambda h: (h.regressions == 0, h.attention == 0, h.software)))


@dataclass(frozen=True, slots=True)
class CompareSummary(PairOutline):
    """A link to one comparison page with its verdict counts."""

    href: str
    """The comparison page."""
    series: int
    """Series compared."""


@dataclass(frozen=True, slots=True)
class SoftwareSummary:
    """One software: its versions and its comparisons."""

    software: str
    """Software name."""
    versions: tuple[str, ...]
    """Its versions, in explicit order."""
    comparisons: tuple[CompareSummary, ...]
    """Newest pair and newest vs first first, then older pairs, newest first."""


@dataclass(frozen=True, slots=True)
class GainRow:
    """The software gain of one series between the newest two versions."""

    software: str
    """Software name."""
    system: str
    """System name."""
    series: str
    """Benchmark, scenario, workload and metric."""
    baseline: str
    """Baseline version."""
    candidate: str
    """Candidate version."""
    gain: float
    """Direction-aware factor: above 1 is better."""
    href: str
    """The benchmark page."""
    series_key: str = ""
    """The analysis series."""
    members: int = 1
    """Series of the issue (one cause): the smallest gain shown."""


@dataclass(frozen=True, slots=True)
class OverviewPage(Page):
    """The context of ``index.html``; its title is the site's."""

    counts: PageCounts
    """Totals for the summary line."""
    headlines: tuple[Headline, ...]
    """One sentence per software (newest pair), those with regressions first."""
    software: tuple[SoftwareSummary, ...]
    """Per software, by name."""
    has_analysis: bool
    """Whether any series could be compared."""
    findings_stored: bool
    """Whether `tracker analyze` stored findings."""
    open_findings: tuple[FindingIssue, ...]
    """Open findings (one per issue, with its members), first 20."""
    open_findings_total: int
    """How many issues are open."""
    gains: tuple[GainRow, ...]
    """Largest gains of the newest pairs, one per issue."""
    losses: tuple[GainRow, ...]
    """Largest losses of the newest pairs, one per issue."""
    gains_chart: tuple[Chart, ...]
    """Geometric-mean gain per system, newest pairs (none without pairs)."""
    scaling_warnings: tuple[FindingRow, ...]
    """Scaling warnings not fixed, one per group and size step (the finding with both
    efficiencies), first 20."""
    scaling_warnings_total: int
    """How many warnings there are."""
    benchmarks: tuple[PageLink, ...]
    """Every benchmark page."""
    systems: tuple[PageLink, ...]
    """Every system page."""
    platforms: tuple[PageLink, ...] = ()
    """Every round's platform comparison per accelerator, by round."""
    rounds: tuple[PageLink, ...] = ()
    """Every round at a glance (its accelerator × benchmark matrix), by round."""
    training: tuple[TrainingLine, ...] = ()
    """MLPerf Training gains and scaling in words, the first 20."""
    training_total: int = 0
    """How many Training sentences."""
    settings: SettingsUsed | None = None
    """The analysis settings used and where they came from."""
    analysis: AnalysisCounts | None = None
    """What ``tracker analyze`` counts, said in the same numbers (``None``: not given)."""
    has_gains: bool = False
    """Whether any series was compared across two versions (gains or losses to show)."""
    has_scaling: bool = True
    """Whether any results form a scaling group (else the scaling page is not linked)."""


def _software(data: ReportInput, pairs: Sequence[PairSummary]) -> tuple[SoftwareSummary, ...]:
    versions: dict[str, list[str]] = defaultdict(list)
    for info in data.versions:
        versions[info.software].append(info.version)
    by_software: dict[str, list[PairSummary]] = defaultdict(list)
    for pair in pairs:
        by_software[pair.software].append(pair)
    out = []
    for software in sorted(versions):
        order = {v: i for i, v in enumerate(versions[software])}
        ranked = sorted(
            by_software[software],
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
                        href=p.pages[0],
                        issues=p.issues,
                        target_issues=p.target_issues,
                        scaling=p.scaling,
                        series=p.rows,
                        is_latest=p.is_latest,
                        is_baseline=p.is_baseline,
                    )
                    for p in ranked
                ),
            )
        )
    return tuple(out)


def pair_gains(pair: PairRun, infos: Mapping[str, SeriesInfo], names: SystemNames) -> list[GainRow]:
    """The direction-aware software gain of every series of ``pair`` that has one."""
    out = []
    for c in pair.run.comparisons:
        g = finite_value(c.evidence.g)
        info = infos.get(c.key)
        if g is None or info is None:
            continue
        versions = (pair.baseline, pair.candidate)
        out.append(_gain_row(pair.software, c.key, info, names, versions, bounded_exp(g)))
    return out


def _gain_row(
    software: str,
    key: str,
    info: SeriesInfo,
    names: SystemNames,
    versions: tuple[str, str],
    gain: float,
) -> GainRow:
    """The row of series ``key``'s gain from ``versions[0]`` to ``versions[1]``."""
    series = " ".join(x for x in (info.benchmark, info.scenario, info.workload) if x)
    return GainRow(
        software=software,
        system=names.of(info.system).label,
        series=f"{series} · {info.metric}",
        baseline=versions[0],
        candidate=versions[1],
        gain=gain,
        href=benchmark_href(info.benchmark, info.scenario),
        series_key=key,
    )


def series_gains(
    gains: Sequence[SeriesGain], infos: Mapping[str, SeriesInfo], names: SystemNames
) -> list[GainRow]:
    """The gain of each compared series, its newest version against the previous one (the
    gains ``tracker analyze`` reports; twins are compared once, so listed once)."""
    out = []
    for g in gains:
        info = infos.get(g.key)
        gain = finite_value(g.gain)
        if info is None or gain is None or gain <= 0:
            continue
        out.append(_gain_row(info.software, g.key, info, names, (g.baseline, g.candidate), gain))
    return out


MIN_SHOWN_PCT = 1.0
"""A gain or loss smaller than this (in %) is not listed among the largest: it reads as
no change (its verdict says whether it is one)."""
MAX_PER_SYSTEM = 3
"""Rows of one system among the largest gains (or losses) at most: the others are in its
geometric mean on the chart and on its page."""


def _shown(rows: Sequence[GainRow], *, better: bool, limit: int = 10) -> tuple[GainRow, ...]:
    """The first ``limit`` rows that are a gain (or a loss) of :data:`MIN_SHOWN_PCT` or more:
    never "no change" among them; at most :data:`MAX_PER_SYSTEM` of one system."""
    out: list[GainRow] = []
    per_system: dict[str, int] = defaultdict(int)
    for row in rows:
        pct = round(100.0 * (row.gain - 1.0), 1)
        if (
            (pct > 0) != better
            or abs(pct) < MIN_SHOWN_PCT
            or per_system[row.system] >= MAX_PER_SYSTEM
        ):
            continue
        per_system[row.system] += 1
        out.append(row)
        if len(out) == limit:
            break
    return tuple(out)


def _gain_issues(
    gains: Sequence[GainRow], infos: Mapping[str, SeriesInfo], points: CausePoints
) -> list[GainRow]:
    """One row per issue: the gains of one pair with one cause that went the same way;
    the smallest change stands for them (the gate's most cautious figure)."""

    def cause(row: GainRow) -> tuple[object, ...]:
        info = infos.get(row.series_key)
        if info is None:
            return (row.series_key,)
        labels = (info.system, info.benchmark, info.scenario, info.workload, info.metric)
        return cause_of(info.software, *labels).key

    out = []
    for group in group_by(gains, lambda r: (r.gain > 1.0, r.baseline, r.candidate, cause(r))):
        head = min(group, key=lambda r: abs(math.log(r.gain)))
        infos_of = [infos[r.series_key] for r in group if r.series_key in infos]
        if len(group) == 1 or len(infos_of) != len(group):
            out.append(head)
            continue
        causes = [
            cause_of(i.software, i.system, i.benchmark, i.scenario, i.workload, i.metric)
            for i in infos_of
        ]
        first = causes[0]
        at = where(causes, points.get(first.key, ()))
        about = " ".join(p for p in (first.key[2], first.key[3], first.curve) if p)
        forms = issue_forms(causes, infos_of[0].metric)
        series = f"{about} · {forms}" + (f" {at}" if at else "")
        out.append(replace(head, series=series, members=len(group)))
    return out


def _gains_chart(gains: Sequence[GainRow]) -> tuple[Chart, ...]:
    by_system: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for row in gains:
        by_system[(row.software, row.system, row.baseline, row.candidate)].append(
            math.log(row.gain)
        )
    if not by_system:
        return ()
    ranked = sorted(
        ((bounded_exp(sum(v) / len(v)), key, len(v)) for key, v in by_system.items()),
        key=lambda t: (-t[0], t[1]),
    )[:40]
    names = [f"{system} ({b} → {c})" for _, (_sw, system, b, c), _n in ranked]
    hover = [
        f"{sw} · {system}, {b} → {c}: {format_gain(gain)}, geometric mean of {n} series"
        for gain, (sw, system, b, c), n in ranked
    ]
    chart = gain_bar_chart(
        "chart-gains",
        "Software gain per system and pair of versions (geometric mean; → better)",
        names,
        [gain for gain, _key, _n in ranked],
        x_title="gain, × (ratio, log scale; right of 1× is better)",
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
    pairs: Sequence[PairSummary],
    gains: Sequence[GainRow],
    issues: Sequence[FindingIssue] = (),
    points: CausePoints | None = None,
    training: Sequence[TrainingLine] = (),
    platforms: Mapping[str, str] | None = None,
    rounds: Mapping[str, str] | None = None,
) -> OverviewPage:
    """The overview; ``benchmarks`` and ``systems`` map page paths to their titles.

    ``pairs`` summarise every compared pair, ``gains`` are those of the newest pairs;
    ``issues`` are ``findings`` grouped (:func:`~tracker.report.issues.finding_issues`),
    ``points`` every sweep point per cause (:func:`~tracker.report.issues.cause_points`).
    """
    ranked, by_issue = _ranked_gains(data, gains, points or {})
    open_rows = sorted((i for i in issues if _headline(i)), key=lambda i: finding_rank(i.head))
    warnings = scaling_issues(
        [f for f in findings if f.kind == KIND_SCALING and f.status != "fixed"]
    )
    return OverviewPage(
        title=data.title,
        generated_at=generated_at,
        is_example=is_example,
        counts=counts,
        headlines=build_headlines(pairs),
        software=_software(data, pairs),
        has_analysis=bool(pairs),
        findings_stored=data.findings_stored,
        open_findings=tuple(open_rows[:20]),
        open_findings_total=len(open_rows),
        gains=_shown(by_issue, better=True),
        losses=_shown(by_issue[::-1], better=False),
        gains_chart=_gains_chart(ranked),
        scaling_warnings=tuple(w.head for w in warnings[:20]),
        scaling_warnings_total=len(warnings),
        benchmarks=tuple(PageLink(t, h) for h, t in sorted(benchmarks.items(), key=_by_text)),
        systems=tuple(PageLink(t, h) for h, t in sorted(systems.items(), key=_by_text)),
        training=tuple(training[:MAX_OVERVIEW_LINES]),
        platforms=tuple(PageLink(t, h) for h, t in (platforms or {}).items()),
        rounds=tuple(PageLink(t, h) for h, t in (rounds or {}).items()),
        training_total=len(training),
        settings=data.settings,
        analysis=data.analysis,
        has_gains=bool(ranked),
        has_scaling=bool(data.scaling or data.scaling_issues),
    )


def _ranked_gains(
    data: ReportInput, gains: Sequence[GainRow], points: CausePoints
) -> tuple[list[GainRow], list[GainRow]]:
    """The gains (analyze's, else those of the newest pairs) largest first: per series, and
    per issue (one cause, one row)."""
    if data.gains:
        gains = series_gains(data.gains, data.infos, system_names(data))
    ranked = sorted(gains, key=lambda r: (-r.gain, r.software, r.system, r.series))
    by_issue = sorted(
        _gain_issues(ranked, data.infos, points),
        key=lambda r: (-r.gain, r.software, r.system, r.series),
    )
    return ranked, by_issue


def _headline(issue: FindingIssue) -> bool:
    """Whether an issue is among the overview's open findings: open, and not a configuration
    change (no software gain or loss, so never in a headline)."""
    return issue.head.status in ("open", "not stored") and issue.head.kind != KIND_CONFIGURATION


def _by_text(item: tuple[str, str]) -> tuple[str, str]:
    return item[1], item[0]
