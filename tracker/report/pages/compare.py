"""Version-vs-version comparison pages.

Each software gets a comparison for every consecutive pair of its versions and
one for its newest version against its first (the baseline), built by
:mod:`tracker.report.publish` with the gate's engine: every series with both versions,
its Δ%, CI, p and q (one Benjamini–Hochberg family per pair) and its verdict.
The pages list every series whose verdict is not "no change" (regressions,
suspects, improvements, inconclusive), worst first,
:data:`~tracker.report.common.PAGE_ROWS` rows a page, and count the unchanged
ones; ``comparisons.csv`` has every series, and each series' benchmark page
its history. Each page starts with the pair's sentence (as the overview's) and counts
issues, as the gate does: the series that share a cause (the points of a sweep,
the per-accelerator form, the series at the interactivity target) are one
(:mod:`tracker.report.issues`); beside them, the issues at the interactivity target
and the scaling warnings of its candidate (the gate fails on those kinds too),
listed in words. Pairs come one at a time; what the overview and report.json need
of each is kept (:class:`PairSummary`): the issues and series per verdict and the
regressed issues by name.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from tracker.analyze.groupings import NOTHING_BUT_SOFTWARE, ConfigurationChange
from tracker.records.findings import KIND_SCALING, SeriesInfo
from tracker.records.results import finite_value
from tracker.report.common import (
    PAGE_ROWS,
    FindingRow,
    Page,
    Pager,
    SeriesColumns,
    SystemNames,
    benchmark_href,
    compare_href,
    page_href,
    paginate,
)
from tracker.report.inputs import PairRun
from tracker.report.issues import FindingIssue, VerdictIssue, scaling_issues, verdict_issues
from tracker.stats import Comparison, Verdict

__all__ = [
    "ComparePage",
    "CompareRow",
    "PairOutline",
    "PairSummary",
    "VerdictCount",
    "build_compare_pages",
    "compare_rows",
    "pair_findings",
    "pair_summary",
]


_SEVERITY = {
    Verdict.REGRESSION: 0,
    Verdict.SUSPECT: 1,
    Verdict.IMPROVEMENT: 2,
    Verdict.INCONCLUSIVE: 3,
    Verdict.NO_CHANGE: 5,
}
CONFIGURATION_CHANGED = "configuration_changed"
"""The verdict of a series whose configuration changed: listed, never compared."""
_VERDICTS = (
    *(v.value for v in sorted(Verdict, key=lambda v: _SEVERITY[v]) if v is not Verdict.NO_CHANGE),
    CONFIGURATION_CHANGED,
    Verdict.NO_CHANGE.value,
)
"""Every verdict of a comparison page, worst first (the order of its counts)."""


@dataclass(frozen=True, slots=True)
class VerdictCount:
    """How many comparisons of a pair got one verdict."""

    verdict: str
    """regression, suspect, improvement, …"""
    count: int
    """Number of series with that verdict."""


@dataclass(frozen=True, slots=True)
class CompareRow(SeriesColumns):
    """One series compared between two versions."""

    baseline_value: float | None
    """Baseline median (or value)."""
    candidate_value: float | None
    """Candidate median (or value)."""
    delta_pct: float | None
    """Raw relative change in percent."""
    ci_pct: tuple[float, float] | None
    """CI of the change, percent."""
    p_value: float | None
    """p-value; None when untested."""
    q_value: float | None
    """q-value within the page's family."""
    method: str
    """Test used (welch_t, mann_whitney_u, …)."""
    n_baseline: int
    """Baseline samples (or history points)."""
    n_candidate: int
    """Candidate samples."""
    verdict: str
    """The verdict."""
    severity: int
    """Sort rank of the verdict (0 = regression)."""
    note: str
    """Why, when the evidence says."""
    href: str
    """The benchmark page (relative to the root)."""
    is_target: bool = False
    """Throughput at the interactivity target (a gate kind of its own)."""
    besides: str = ""
    """What changed besides the software: ``nothing but the software``, or the
    configuration's differences (then the verdict is ``configuration_changed``)."""
    twins: tuple[str, ...] = ()
    """The series that are this very measurement under other names (counted once)."""


@dataclass(frozen=True, slots=True)
class PairOutline:
    """What the overview and report.json both say of a compared pair: its versions, where
    it stands among the pairs, its issues."""

    baseline: str
    """Baseline version."""
    candidate: str
    """Candidate version."""
    is_latest: bool
    """The newest consecutive pair of the software."""
    is_baseline: bool
    """The newest version against the first."""
    issues: tuple[VerdictCount, ...]
    """Issues per verdict: the series that share a cause counted once."""
    target_issues: tuple[VerdictCount, ...]
    """Of those, the issues at the interactivity target (none: empty)."""
    scaling: int
    """Scaling warnings of the pair: one per group and size step."""


@dataclass(frozen=True, slots=True)
class PairSummary(PairOutline):
    """One compared pair as report.json lists it: its counts and pages, not its rows."""

    software: str
    """Software name."""
    title: str
    """Software and version pair."""
    family_size: int
    """p-values in the pair's BH family."""
    q_level: float
    """q below which a change is confirmed."""
    counts: tuple[VerdictCount, ...]
    """Series per verdict."""
    regressions: tuple[VerdictIssue, ...]
    """The regressed issues, largest loss first."""
    rows: int
    """Series compared (rows in comparisons.csv)."""
    listed: int
    """Series listed on its pages (all but no change)."""
    pages: tuple[str, ...]
    """Its pages, first to last."""

    @property
    def unchanged(self) -> int:
        """Series with no change: counted, not listed."""
        return self.rows - self.listed


@dataclass(frozen=True, slots=True)
class ComparePage(Page):
    """The context of ``compare.html``: one page of one compared pair (the title names the
    software and the version pair)."""

    pair: PairSummary
    """The pair: its versions, counts and pages."""
    headline: str
    """The pair in one sentence, as on the overview."""
    scaling: tuple[FindingIssue, ...]
    """Scaling warnings of the candidate (not fixed): one per group, step."""
    pager: Pager
    """This page among the pair's pages."""
    rows: tuple[CompareRow, ...]
    """The page's series, worst first (over the pages: all but no change)."""


def _row(
    c: Comparison,
    info: SeriesInfo | None,
    names: SystemNames,
    targets: frozenset[str],
    pair: PairRun | None = None,
) -> CompareRow:
    ev = c.evidence
    if info is None:
        info = SeriesInfo("", ev.key, "", "", "", "", "", ev.higher_is_better)
    system = names.of(info.system)
    return CompareRow(
        system=system.label,
        benchmark=info.benchmark,
        scenario=info.scenario,
        workload=info.workload,
        metric=info.metric,
        unit=info.unit,
        higher_is_better=ev.higher_is_better,
        baseline_value=finite_value(ev.baseline_level),
        candidate_value=finite_value(ev.candidate_level),
        delta_pct=finite_value(ev.delta_pct),
        ci_pct=ev.ci_pct,
        p_value=finite_value(ev.p_value),
        q_value=finite_value(c.q_value),
        method=ev.method.value,
        n_baseline=ev.n_baseline,
        n_candidate=ev.n_candidate,
        verdict=c.verdict.value,
        severity=_SEVERITY[c.verdict],
        note=ev.note,
        href=benchmark_href(info.benchmark, info.scenario),
        system_href=system.href,
        system_key=system.key,
        is_target=c.key in targets,
        besides=pair.besides.get(c.key, NOTHING_BUT_SOFTWARE) if pair else NOTHING_BUT_SOFTWARE,
        twins=tuple(pair.twins.get(c.key, ())) if pair else (),
    )


def _changed_row(
    change: ConfigurationChange, info: SeriesInfo | None, names: SystemNames
) -> CompareRow:
    """A series whose configuration changed: its values and Δ% for information only."""
    if info is None:
        info = SeriesInfo("", change.key, "", "", "", "", "", True)
    system = names.of(info.system)
    gain = change.change
    return CompareRow(
        system=system.label,
        benchmark=info.benchmark,
        scenario=info.scenario,
        workload=info.workload,
        metric=info.metric,
        unit=info.unit,
        higher_is_better=info.higher_is_better,
        baseline_value=None if gain is None else finite_value(gain.baseline_level),
        candidate_value=None if gain is None else finite_value(gain.candidate_level),
        delta_pct=finite_value(change.delta_pct),
        ci_pct=None,
        p_value=None,
        q_value=None,
        method="comparability_rule",
        n_baseline=0,
        n_candidate=0,
        verdict=CONFIGURATION_CHANGED,
        severity=4,
        note=change.besides.text,
        href=benchmark_href(info.benchmark, info.scenario),
        system_href=system.href,
        system_key=system.key,
        besides=change.besides.text,
        twins=change.twins,
    )


def _counts(pair: PairRun) -> tuple[VerdictCount, ...]:
    counts = {v.value: n for v, n in pair.run.counts().items()}
    counts[CONFIGURATION_CHANGED] = len(pair.changes)
    return tuple(VerdictCount(v, counts.get(v, 0)) for v in _VERDICTS)


def _issues(pair: PairRun, rows: Sequence[CompareRow]) -> tuple[VerdictIssue, ...]:
    """The series of ``rows`` as issues (:func:`~tracker.report.issues.verdict_issues`)."""
    return verdict_issues(
        pair.software,
        (
            (
                r.system_key,
                r.benchmark,
                r.scenario,
                r.workload,
                r.metric,
                r.verdict,
                None if r.delta_pct is None else r.delta_pct * (1 if r.higher_is_better else -1),
            )
            for r in rows
        ),
    )


def _issue_counts(issues: Sequence[VerdictIssue]) -> tuple[VerdictCount, ...]:
    return tuple(VerdictCount(v, sum(i.verdict == v for i in issues)) for v in _VERDICTS)


def _target_issues(pair: PairRun, rows: Sequence[CompareRow]) -> tuple[VerdictCount, ...]:
    """The issues of the throughput-at-target series per verdict, worst first (only the
    verdicts they got; none: empty)."""
    counts = _issue_counts(_issues(pair, [r for r in rows if r.is_target]))
    return tuple(c for c in counts if c.count)


def pair_findings(pair: PairRun, findings: Sequence[FindingRow]) -> tuple[FindingRow, ...]:
    """The scaling findings of ``pair`` that are not fixed: of its candidate, against its
    baseline or about the candidate alone (under the floor)."""
    return tuple(
        f
        for f in findings
        if f.kind == KIND_SCALING
        and f.status != "fixed"
        and f.software == pair.software
        and f.candidate == pair.candidate
        and f.baseline in (None, pair.baseline)
    )


def compare_rows(
    pair: PairRun,
    infos: Mapping[str, SeriesInfo],
    names: SystemNames,
    targets: frozenset[str] = frozenset(),
) -> list[CompareRow]:
    """Every series of ``pair``, worst first (verdict, then Δ%, then system): the compared
    ones, and those whose configuration changed (listed after them, never compared).

    ``targets``: the keys of the throughput-at-target series.
    """
    rows = [_row(c, infos.get(c.key), names, targets, pair) for c in pair.run.comparisons]
    rows += [_changed_row(change, infos.get(change.key), names) for change in pair.changes]
    return sorted(
        rows,
        key=lambda r: (r.severity, r.delta_pct if r.delta_pct is not None else 0.0, r.system),
    )


def _listed(rows: Sequence[CompareRow]) -> list[CompareRow]:
    return [r for r in rows if r.verdict != Verdict.NO_CHANGE.value]


def build_compare_pages(
    pair: PairSummary,
    rows: Sequence[CompareRow],
    *,
    generated_at: str,
    is_example: bool,
    scaling: Sequence[FindingRow] = (),
    headline: str = "",
) -> Iterator[tuple[str, ComparePage]]:
    """(path, context) of each page of one compared pair (:func:`pair_summary`; ``rows``:
    every series, ``scaling``: its scaling findings, :func:`pair_findings`; ``headline``:
    its sentence, :func:`~tracker.report.pages.overview.pair_headline`)."""
    warnings = scaling_issues(scaling)
    for href, pager, chunk in paginate(_listed(rows), pair.pages[0]):
        yield (
            href,
            ComparePage(
                title=pair.title,
                generated_at=generated_at,
                is_example=is_example,
                pair=pair,
                headline=headline,
                scaling=warnings,
                pager=pager,
                rows=tuple(chunk),
            ),
        )


def pair_summary(
    pair: PairRun, rows: Sequence[CompareRow], scaling: Sequence[FindingRow] = ()
) -> PairSummary:
    """What the overview and report.json keep of one compared pair (``rows``: every series,
    ``scaling``: its scaling findings)."""
    first = compare_href(pair.software, pair.baseline, pair.candidate)
    listed = len(_listed(rows))
    pages = max(1, -(-listed // PAGE_ROWS))
    issues = _issues(pair, rows)
    regressed = [i for i in issues if i.verdict == Verdict.REGRESSION.value]
    return PairSummary(
        software=pair.software,
        baseline=pair.baseline,
        candidate=pair.candidate,
        title=f"{pair.software}: {pair.baseline} → {pair.candidate}",
        is_latest=pair.is_latest,
        is_baseline=pair.is_baseline,
        family_size=pair.run.family_size,
        q_level=pair.run.q_level,
        counts=_counts(pair),
        target_issues=_target_issues(pair, rows),
        scaling=len(scaling_issues(scaling)),
        issues=_issue_counts(issues),
        regressions=tuple(sorted(regressed, key=lambda i: (i.change_pct or 0.0, i.name))),
        rows=len(rows),
        listed=listed,
        pages=tuple(page_href(first, n) for n in range(1, pages + 1)),
    )
