"""What the gate reports: one item per series, the ``missing`` and ``invalid`` kinds, and the
items that share a cause as one issue.

What the gate reports: :class:`GateItem`, its states, and how a kind's verdict counts.

Used by :mod:`tracker.gate.decision` (which re-exports :class:`GateItem`).

The gate's items as issues: the items that share a cause, one line each.

Items are grouped by :func:`tracker.analyze.groupings.cause_of` (the points of one
sweep, the per-accelerator form of a metric, the series at the interactivity
target) when they are about the same version pair and went the same way: worse
(a regression, a suspect result, a target no longer reached), better, or
neither (inconclusive); measured and at-target items are one issue, invalid and
missing items issues of their own, and each scaling item is one. An issue's
state is the worst of its members' (one failing member fails it); its headline
is the member of that state with the smallest change (the most cautious figure).

The gate's ``missing`` kind: baseline series without a candidate result.

A benchmark that crashed, a job that ran half its suites, a folder left out of
the ingest: the candidate then has no result where the baseline had one, and
without this check the gate compares what is there and passes. Every such
series is an item of kind ``missing`` (not failing unless the policy's
``fail_on`` lists ``missing``), counted in the summary line. Only series of a
software that has the candidate version are looked at, and series the gate
reports otherwise (an invalid candidate result, a target no longer reached)
are not reported again.

The **missing label** case is named as such: a per-accelerator series
(``X_per_accelerator``) missing where the candidate has ``X`` of the same
series means the candidate was stored without an accelerator count
(``tracker ingest`` without ``--accelerators``), not that its runs are missing.

The gate's ``expected`` kind: an expected gain of the policy (``[[expect]]``,
:mod:`tracker.gate.policy`) that did not show. :func:`expectation_items` checks each
expectation that applies to the candidate against the comparisons of the pair: a matching
series shows the gain when its verdict is IMPROVEMENT and its measured gain reaches
``min_gain``; one that does not is a failing item with what was measured and whether the
family confirmed it, and an expectation no compared series matches is one failing item.
Over a range of candidates a series whose baseline already carries the gain (its level
against the last version before the range) is *retired*, not asked again.

The gate's ``invalid`` kind: candidate results stored as invalid where the baseline was valid.

The analysis reads valid samples only, so a series whose candidate run became
invalid (LoadGen's ``INVALID``, a checker's refusal, a throughput fallen to 0:
see :func:`tracker.formats.reader.require_positive`) would drop out of the
comparison without a word. :class:`InvalidWatch` looks at the samples of the
two versions as the analysis streams them (one pass over the store) and
:func:`invalid_items` makes one item per such series: failing by default, like
every kind the policy's ``fail_on`` lists, unless an acknowledgement covers it.
The reason (``extra["invalid_reason"]``) is looked up only when there are such
series, in the stored results of the candidate.

The gate's ``scaling`` kind: the candidate's scaling efficiency, judged like a regression.

For every scaling group of the candidate version (results that differ only in their
accelerator count: :mod:`tracker.stats.scaling`), each count past the smallest one is
an item when its efficiency ``E`` lies below its floor: the policy's
``efficiency_floor``, or the ``efficiency_floor`` of the last ``[[threshold]]`` whose
pattern matches the group's series key, benchmark or metric. An efficiency that fell
against an earlier version by more than the drop floor (the analysis' ``DROP``) is an
item too; both about one group and count are one issue. The baseline's efficiency at
the same counts is shown where it has one: ``E 0.97 → 0.84 (floor 0.90), 8 → 32
accelerators``. An accuracy variant repeating a lower variant's finding exactly counts
once (:func:`tracker.analyze.groupings.twin_scaling_findings`).

The item's key is the stored finding's series key
(:func:`tracker.analyze.findings.scaling_series_key`), so a stored finding's triage
and id reach the gate, and ``[[acknowledgement]]`` patterns written for
``tracker findings`` match it.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING

from tracker.analyze.findings import scaling_series_key
from tracker.analyze.groupings import (
    PER_ACCELERATOR,
    RUN_METRICS,
    Cause,
    cause_of,
    group_by,
    twin_scaling_findings,
    where,
)
from tracker.analyze.run import AnalysisOutcome
from tracker.analyze.summary import efficiency_text
from tracker.gate.policy import Acknowledgement, Expectation, GatePolicy
from tracker.records.findings import SeriesInfo
from tracker.records.keys import SeriesKey, VersionPair, system_label
from tracker.records.results import AnalysisSample
from tracker.stats.compare import Comparison, Verdict, sensitivity_words
from tracker.stats.scaling import (
    ScalingFinding,
    ScalingGroup,
    ScalingIssue,
    ScalingKey,
    efficiencies_by_step,
)
from tracker.stats.series import SeriesSamples, direction

if TYPE_CHECKING:
    from tracker.store.facade import Store

__all__ = [
    "CHECKS",
    "ExpectationCheck",
    "GateIssue",
    "GateItem",
    "InvalidCandidate",
    "InvalidWatch",
    "KIND_CONFIGURATION",
    "KIND_EXPECTED",
    "KIND_INVALID",
    "KIND_MISSING",
    "KIND_SCALING",
    "SCALING_METRIC",
    "NO_ACCELERATOR_COUNT",
    "STATE_ACKNOWLEDGED",
    "STATE_CONFIGURATION",
    "STATE_FAILING",
    "STATE_IMPROVEMENT",
    "STATE_INCONCLUSIVE",
    "STATE_NOT_GATED",
    "STATE_ORDER",
    "STATE_SUSPECT",
    "base_item",
    "baseline_series",
    "count_text",
    "expectation_items",
    "gate_issues",
    "invalid_items",
    "item_state",
    "missing_items",
    "scaling_items",
    "sweep_points",
    "with_reasons",
]


STATE_FAILING = "failing"
STATE_ACKNOWLEDGED = "acknowledged"
STATE_NOT_GATED = "not gated"
STATE_SUSPECT = "suspect"
STATE_INCONCLUSIVE = "inconclusive"
STATE_IMPROVEMENT = "improvement"
STATE_CONFIGURATION = "configuration changed"
KIND_CONFIGURATION = "configuration"
KIND_SCALING = "scaling"

CHECKS = {
    "regression": "measured",
    "target": "at target",
    "scaling": "scaling",
    "invalid": "invalid",
    "expected": "expected gain",
    "missing": "missing",
    "configuration": "configuration",
}
"""Each item kind (which check found it) in the words of the gate's "check" column."""

STATE_ORDER = {
    STATE_FAILING: 0,
    STATE_SUSPECT: 1,
    STATE_INCONCLUSIVE: 2,
    STATE_ACKNOWLEDGED: 3,
    STATE_NOT_GATED: 4,
    STATE_IMPROVEMENT: 5,
    STATE_CONFIGURATION: 6,
}
"""The states, worst first: how items and issues are sorted, and an issue's state."""


@dataclass(frozen=True, slots=True)
class GateItem(SeriesKey):
    """One series the gate reports: its labels, what it is, the evidence, and how it counts.

    ``delta_pct`` is the raw relative change (+5.0 = 5% higher); ``worse`` says whether
    that is worse for this metric. ``state`` is failing, acknowledged, not gated
    (a kind the policy does not fail on), suspect, inconclusive, improvement or
    configuration changed (its hardware part changed between the versions: the
    comparability rule; never failing). ``besides_software`` says what changed besides
    the software (``nothing but the software``, or the differences).
    """

    kind: str
    key: str
    unit: str
    baseline: str
    candidate: str
    verdict: str
    state: str
    worse: bool
    delta_pct: float | None = None
    ci_pct: tuple[float, float] | None = None
    p_value: float | None = None
    q_value: float | None = None
    method: str = ""
    n_baseline: int = 0
    n_candidate: int = 0
    floor: float | None = None
    q_level: float | None = None
    detail: str = ""
    acknowledgement: Acknowledgement | None = None
    besides_software: str = ""
    twins: tuple[str, ...] = ()
    """The series that are this very measurement under other names (counted once)."""
    detectable_pct: float | None = None
    """The smallest change (%, the worse way) the series could have confirmed (∞: none);
    ``None`` for items without a test."""
    under_powered: bool = False
    """Whether that lies past the series' floor."""
    finding_id: int | None = None
    """The stored finding of this series and version pair (``tracker findings``' id), if any."""

    @property
    def sensitivity(self) -> str:
        """``could detect ≥ 4.1%, under-powered`` (empty without a test)."""
        return sensitivity_words(self.detectable_pct, self.under_powered)


def item_state(verdict: Verdict, kind: str, policy: GatePolicy, ack: Acknowledgement | None) -> str:
    """How an item of ``kind`` with ``verdict`` counts under ``policy`` (``ack``: it is known)."""
    if verdict is Verdict.IMPROVEMENT:
        return STATE_IMPROVEMENT
    if verdict is Verdict.REGRESSION:
        if ack is not None:
            return STATE_ACKNOWLEDGED
        return STATE_FAILING if kind in policy.fail_on else STATE_NOT_GATED
    if ack is not None:
        return STATE_ACKNOWLEDGED
    if kind not in policy.fail_on:
        return STATE_NOT_GATED
    return STATE_SUSPECT if verdict is Verdict.SUSPECT else STATE_INCONCLUSIVE


def base_item(info: SeriesInfo, key: str, kind: str, pair: VersionPair) -> GateItem:
    """An item of series ``key`` with its labels and versions, before its evidence."""
    return GateItem(
        *info.labels(),
        kind=kind,
        key=key,
        unit=info.unit,
        baseline=pair.baseline,
        candidate=pair.candidate,
        verdict="",
        state="",
        worse=False,
    )


KIND_MISSING = "missing"
NO_ACCELERATOR_COUNT = (
    "no per-accelerator result: the candidate's results have no accelerator count "
    "(ingested without --accelerators?)"
)


def baseline_series(outcome: AnalysisOutcome, baseline: str, softwares: Collection[str]) -> int:
    """How many series of ``softwares`` have a (valid) baseline result."""
    return sum(
        s.index(baseline) is not None and outcome.infos[s.key].software in softwares
        for s in outcome.series
        if s.key in outcome.infos
    )


def _without_accelerators(key: str, at_candidate: Collection[str]) -> bool:
    """Whether ``key`` is a per-accelerator series whose plain form has a candidate result."""
    series = SeriesKey.parse(key)
    if series is None or PER_ACCELERATOR not in series.metric:
        return False
    return str(series.with_metric(series.metric.replace(PER_ACCELERATOR, "", 1))) in at_candidate


def missing_items(
    outcome: AnalysisOutcome,
    policy: GatePolicy,
    *,
    pair: VersionPair,
    softwares: Collection[str],
    reported: Collection[str],
    today: date,
) -> list[GateItem]:
    """One ``missing`` item per series of ``softwares`` with a baseline result and no
    candidate result, but those in ``reported`` (see the module docstring)."""
    baseline, candidate = pair.baseline, pair.candidate
    at_candidate = {s.key for s in outcome.series if s.index(candidate) is not None}
    items: list[GateItem] = []
    for s in outcome.series:
        at = s.index(baseline)
        if at is None or s.key in at_candidate or s.key in reported:
            continue
        info = outcome.infos.get(s.key)
        if info is None or info.software not in softwares:
            continue
        ack = policy.acknowledgement_for(s.key, candidate, today=today)
        n = len(s.samples[at])
        detail = (
            NO_ACCELERATOR_COUNT
            if _without_accelerators(s.key, at_candidate)
            else f"no candidate result (the baseline has {n} value{'s' if n != 1 else ''})"
        )
        items.append(
            replace(
                base_item(info, s.key, KIND_MISSING, pair),
                verdict=KIND_MISSING,
                state=item_state(Verdict.REGRESSION, KIND_MISSING, policy, ack),
                worse=True,
                n_baseline=n,
                detail=detail,
                acknowledgement=ack,
            )
        )
    return items


def count_text(missing: Sequence[GateItem], total: int) -> str:
    """``3 of 25 baseline series missing`` (empty without missing series)."""
    if not missing:
        return ""
    return f"{len(missing)} of {total} baseline series missing"


KIND_INVALID = "invalid"


@dataclass(frozen=True, slots=True)
class InvalidCandidate:
    """A series with ``invalid`` of its ``total`` candidate results stored as invalid,
    where the baseline has ``baseline_valid`` valid results."""

    key: str
    invalid: int
    total: int
    baseline_valid: int
    reason: str = ""


class InvalidWatch:
    """Counts, per series, the valid baseline results and the candidate results (and how
    many of those are invalid) of the samples streamed through :meth:`samples`."""

    def __init__(self, pair: VersionPair) -> None:
        self.pair = pair
        self._baseline_valid: dict[str, int] = {}
        self._candidate: dict[str, list[int]] = {}
        """Series key → [invalid, total] at the candidate."""

    def samples(self, samples: Iterable[AnalysisSample]) -> Iterator[AnalysisSample]:
        """``samples``, unchanged, noted on the way."""
        for sample in samples:
            if sample.version in self.pair and sample.metric not in RUN_METRICS:
                self._note(sample)
            yield sample

    def _note(self, s: AnalysisSample) -> None:
        key = str(s.series_key)
        if s.version == self.pair.candidate:
            counts = self._candidate.setdefault(key, [0, 0])
            counts[0] += 0 if s.is_valid else 1
            counts[1] += 1
        elif s.is_valid:
            self._baseline_valid[key] = self._baseline_valid.get(key, 0) + 1

    def found(self) -> tuple[InvalidCandidate, ...]:
        """The series with an invalid candidate result and a valid baseline one, by key."""
        return tuple(
            InvalidCandidate(key, invalid, total, self._baseline_valid[key])
            for key, (invalid, total) in sorted(self._candidate.items())
            if invalid and key in self._baseline_valid
        )


def with_reasons(
    store: Store,
    candidate: str,
    found: Sequence[InvalidCandidate],
    infos: Mapping[str, SeriesInfo],
) -> tuple[InvalidCandidate, ...]:
    """``found`` with the stored reason of each (the first one stored), where there is one.

    Reads every stored result once: only ever run when the gate has invalid
    candidates to report. A stored result is matched to its series by its labels
    and its system (the series' system key is ``submitter/name``, then the division
    in brackets where the store adds it).
    """
    wanted: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for f in found:
        if f.key in infos:
            i = infos[f.key]
            labels = (i.software, i.benchmark, i.scenario, i.workload, i.metric)
            wanted.setdefault(labels, []).append((f.key, i.system))
    reasons: dict[str, str] = {}
    for row in store.iter_export_rows() if wanted else ():
        if row.valid or row.software_version != candidate:
            continue
        labels = (row.software, row.benchmark, row.scenario, row.workload, row.metric)
        reason = row.extra.get("invalid_reason")
        if labels not in wanted or not isinstance(reason, str) or not reason:
            continue
        system = f"{row.submitter or ''}/{row.system}"
        for key, system_key in wanted[labels]:
            if system_key == system or system_key.startswith(f"{system} ["):
                reasons.setdefault(key, reason.strip())
    return tuple(replace(f, reason=reasons.get(f.key, "")) for f in found)


def invalid_items(
    found: Iterable[InvalidCandidate],
    infos: Mapping[str, SeriesInfo],
    policy: GatePolicy,
    *,
    pair: VersionPair,
    today: date,
) -> list[GateItem]:
    """One ``invalid`` item per series of ``found`` (see the module docstring)."""
    items = []
    for f in found:
        if f.key not in infos:
            continue
        ack = policy.acknowledgement_for(f.key, pair.candidate, today=today)
        what = "result" if f.total == 1 else f"{f.invalid} of {f.total} results"
        detail = f"candidate {what} invalid" + (f": {f.reason}" if f.reason else "")
        items.append(
            replace(
                base_item(infos[f.key], f.key, KIND_INVALID, pair),
                verdict=KIND_INVALID,
                state=item_state(Verdict.REGRESSION, KIND_INVALID, policy, ack),
                worse=True,
                n_baseline=f.baseline_valid,
                n_candidate=f.total - f.invalid,
                detail=detail,
                acknowledgement=ack,
            )
        )
    return items


@dataclass(frozen=True, slots=True)
class GateIssue:
    """Items with one cause: ``members`` (every item, as the gate decided each) and their
    ``headline``; ``where`` names the points (``at c2–c32 and at 50 tokens/s/user``)."""

    members: tuple[GateItem, ...]
    headline: GateItem
    state: str
    where: str
    forms: str
    """The metric, and ``and per accelerator`` when both forms are members."""

    @property
    def finding_id(self) -> int | None:
        """The id of the issue's stored finding: the headline's, else its members' first
        (``None`` when the analysis stored none, e.g. for missing series)."""
        ids = [m.finding_id for m in (self.headline, *self.members) if m.finding_id is not None]
        return ids[0] if ids else None

    @property
    def kinds(self) -> tuple[str, ...]:
        """The members' kinds, each once, in their order."""
        return tuple(dict.fromkeys(m.kind for m in self.members))

    @property
    def check(self) -> str:
        """Which checks found it, in words: ``measured, at target``."""
        return ", ".join(CHECKS.get(k, k) for k in self.kinds)

    @property
    def title(self) -> str:
        """``example-llm-70b · concurrency · isl1024-osl1024``: what changed (and the
        metric, for one series: ``resnet50 · Server · queries_per_s``)."""
        h = self.headline
        if not self.where:
            return " · ".join(p for p in (h.benchmark, h.scenario, h.workload, h.metric) if p)
        cause = _cause(h)
        return " · ".join(p for p in (cause.key[2], h.scenario, cause.curve) if p)

    @property
    def series(self) -> str:
        """The software, system (and metric, for a sweep): where it was measured."""
        h = self.headline
        forms = self.forms if self.where else ""
        system = h.system.removeprefix("/")  # a system without a submitter: its name alone
        return " · ".join(p for p in (h.software, system, forms) if p)

    @property
    def details(self) -> tuple[str, ...]:
        """The members' details (reasons), each once."""
        return tuple(dict.fromkeys(m.detail for m in self.members if m.detail))

    @property
    def besides_software(self) -> str:
        """What changed besides the software, as the headline says (empty: not about
        two versions of one series, such as a scaling step)."""
        return self.headline.besides_software

    @property
    def deltas(self) -> tuple[float, ...]:
        """The members' changes (%), where they have one."""
        return tuple(m.delta_pct for m in self.members if m.delta_pct is not None)


def _cause(item: GateItem) -> Cause:
    return cause_of(
        item.software, item.system, item.benchmark, item.scenario, item.workload, item.metric
    )


def _side(item: GateItem) -> str:
    if item.verdict == "improvement":
        return "better"
    if item.verdict == "inconclusive" or item.kind == KIND_CONFIGURATION:
        return "neither"
    return "worse"


def _family(item: GateItem) -> str:
    if item.kind in ("regression", "target"):
        return "performance"
    return item.key if item.kind == "scaling" else item.kind


def _forms(members: Sequence[GateItem]) -> str:
    causes = [_cause(m) for m in members]
    plain = [c for c in causes if not c.target]
    if not plain:
        return members[0].metric
    kinds = {c.per_accelerator for c in plain}
    base = plain[0].metric
    if kinds == {True, False}:
        return f"{base} and per accelerator"
    return f"{base}_per_accelerator" if True in kinds else base


def _issue(members: Sequence[GateItem], every_point: Sequence[str]) -> GateIssue:
    state = min((m.state for m in members), key=lambda s: STATE_ORDER.get(s, 9))
    worst = [m for m in members if m.state == state]
    headline = min(worst, key=lambda m: float("inf") if m.delta_pct is None else abs(m.delta_pct))
    return GateIssue(
        members=tuple(members),
        headline=headline,
        state=state,
        where=where((_cause(m) for m in members), every_point),
        forms=_forms(members),
    )


def gate_issues(
    items: Sequence[GateItem], points: Mapping[tuple[str, ...], Sequence[str]] | None = None
) -> tuple[GateIssue, ...]:
    """``items`` as issues, worst first (see the module docstring); ``points``: per
    cause key, every sweep point the gate looked at (to write a run as ``c2–c32``)."""

    def key(item: GateItem) -> tuple[str, ...]:
        return (
            _side(item),
            _family(item),
            *_cause(item).key,
            item.baseline,
            item.candidate,
        )

    every = points or {}
    issues = [_issue(group, every.get(_cause(group[0]).key, ())) for group in group_by(items, key)]
    issues.sort(key=lambda i: (STATE_ORDER.get(i.state, 9), i.kinds[0], i.title, i.series))
    return tuple(issues)


def sweep_points(outcome: AnalysisOutcome, pair: VersionPair) -> dict[tuple[str, ...], list[str]]:
    """Per cause, the sweep points with a result at either version."""
    points: dict[tuple[str, ...], list[str]] = {}
    for s in outcome.series:
        info = outcome.infos.get(s.key)
        if info is None or (s.index(pair.baseline) is None and s.index(pair.candidate) is None):
            continue
        cause = cause_of(
            info.software, info.system, info.benchmark, info.scenario, info.workload, info.metric
        )
        if cause.point:
            points.setdefault(cause.key, []).append(cause.point)
    return points


KIND_EXPECTED = "expected"


@dataclass(frozen=True, slots=True)
class ExpectationCheck:
    """What a gate made of one expectation: how many compared series it matched, how many
    showed the gain, and how many had it already (retired over a range)."""

    expectation: Expectation
    matched: int
    shown: int
    retired: int = 0

    @property
    def met(self) -> bool:
        """Whether every matching series showed the gain (or had it already)."""
        return self.matched > 0 and self.shown + self.retired == self.matched


def _shows(c: Comparison, expectation: Expectation) -> bool:
    """Whether ``c`` is a confirmed improvement of at least the expected gain."""
    g = c.evidence.g
    return (
        c.verdict is Verdict.IMPROVEMENT
        and g is not None
        and math.expm1(g) >= expectation.min_gain - 1e-12
    )


def _carried(series: SeriesSamples | None, expectation: Expectation, pair: VersionPair) -> bool:
    """Whether the baseline, inside the expectation's range, already carries the gain
    against the series' last version before the range."""
    if series is None or not expectation.applies_to(pair.baseline):
        return False
    inside = [expectation.applies_to(v) for v in series.versions]
    first, at = inside.index(True), series.index(pair.baseline)
    if first == 0 or at is None:
        return False
    levels = series.levels()
    before, now = levels[first - 1], levels[at]
    if not (before > 0.0 and now > 0.0):
        return False
    gain = math.expm1(direction(series.higher_is_better) * math.log(now / before))
    return gain >= expectation.min_gain - 1e-12


def _expected_item(
    c: Comparison, info: SeriesInfo, expectation: Expectation, policy: GatePolicy
) -> GateItem:
    """The failing item of a matching series that did not show the expected gain."""
    ev = c.evidence
    seen = "no usable values" if ev.delta_pct is None else f"measured {ev.delta_pct:+.1f}%"
    confirmed = "confirmed" if c.verdict is Verdict.IMPROVEMENT else f"verdict {c.verdict.value}"
    why = f" ({expectation.reason})" if expectation.reason else ""
    return replace(
        base_item(info, ev.key, KIND_EXPECTED, VersionPair(ev.baseline, ev.candidate)),
        verdict="gain_not_shown",
        state=item_state(Verdict.REGRESSION, KIND_EXPECTED, policy, None),
        worse=ev.g is not None and ev.g < 0.0,
        delta_pct=ev.delta_pct,
        ci_pct=ev.ci_pct,
        p_value=ev.p_value,
        q_value=c.q_value,
        method=ev.method.value,
        n_baseline=ev.n_baseline,
        n_candidate=ev.n_candidate,
        floor=ev.floor,
        q_level=c.q_level,
        detail=f"expected {expectation.label}{why}: {seen}, {confirmed}",
        detectable_pct=c.detectable_pct,
        under_powered=c.under_powered,
    )


def _unmatched_item(expectation: Expectation, pair: VersionPair, policy: GatePolicy) -> GateItem:
    """The failing item of an expectation no compared series matches."""
    info = SeriesInfo("", "", expectation.match, "", "", "", "", True)
    return replace(
        base_item(info, expectation.match, KIND_EXPECTED, pair),
        verdict="not_measured",
        state=item_state(Verdict.REGRESSION, KIND_EXPECTED, policy, None),
        worse=True,
        detail=f"expected {expectation.label}: no compared series matches",
    )


def expectation_items(
    outcome: AnalysisOutcome,
    policy: GatePolicy,
    pair: VersionPair,
    comparisons: Sequence[Comparison],
) -> tuple[list[GateItem], tuple[ExpectationCheck, ...]]:
    """The ``expected`` items of the policy's expectations at ``pair`` (module docstring),
    and what became of each expectation that applies."""
    series = {s.key: s for s in outcome.series}
    items: list[GateItem] = []
    checks = []
    for expectation in policy.expectations:
        if not expectation.applies_to(pair.candidate):
            continue
        matched = [
            c
            for c in comparisons
            if c.key in outcome.infos
            and expectation.matches(
                c.key, outcome.infos[c.key].benchmark, outcome.infos[c.key].metric
            )
        ]
        shown = sum(_shows(c, expectation) for c in matched)
        rest = [c for c in matched if not _shows(c, expectation)]
        kept = [c for c in rest if not _carried(series.get(c.key), expectation, pair)]
        items += [_expected_item(c, outcome.infos[c.key], expectation, policy) for c in kept]
        if not matched:
            items.append(_unmatched_item(expectation, pair, policy))
        checks.append(ExpectationCheck(expectation, len(matched), shown, len(rest) - len(kept)))
    return items, tuple(checks)


SCALING_METRIC = "scaling_efficiency"


def _below_floor(
    software: str, groups: tuple[ScalingGroup, ...], policy: GatePolicy, pair: VersionPair
) -> list[ScalingFinding]:
    """Every count of the candidate's groups below its (per-pattern) floor."""
    before = efficiencies_by_step(groups, pair.baseline)
    rules = policy.series_thresholds()
    found = []
    for g in groups:
        if g.version != pair.candidate:
            continue
        for p in g.points[1:]:
            f = ScalingFinding(
                ScalingIssue.BELOW_FLOOR, g.key, g.version, p.accelerators, g.base_accelerators,
                p.efficiency, policy.efficiency_floor,
            )  # fmt: skip
            key = scaling_series_key(software, f)
            floor = rules.efficiency_floor_for(
                key, g.key.benchmark, g.key.metric, policy.efficiency_floor
            )
            if p.efficiency < floor:
                old = before.get((g.key, g.base_accelerators, p.accelerators))
                baseline = pair.baseline if old is not None else None
                found.append(replace(f, threshold=floor, baseline_version=baseline,
                                     baseline_efficiency=old))  # fmt: skip
    return found


def _label(key: ScalingKey) -> str:
    return system_label(key.submitter, key.accelerator)


def _item(
    software: str, f: ScalingFinding, policy: GatePolicy, baseline: str, today: date
) -> GateItem:
    k = f.key
    key = scaling_series_key(software, f)
    ack = policy.acknowledgement_for(key, f.version, today=today)
    before = f.baseline_efficiency
    info = SeriesInfo(
        software, _label(k), k.benchmark, k.scenario, k.workload, SCALING_METRIC, "fraction", True
    )
    floor = f.threshold if f.issue is ScalingIssue.BELOW_FLOOR else None
    text = efficiency_text(
        f.efficiency,
        floor=floor,
        base_accelerators=f.base_accelerators,
        accelerators=f.accelerators,
        before=before,
    )
    if f.issue is ScalingIssue.DROP and before is not None:
        text += f" (fell more than {before - f.threshold:.2f} since {f.baseline_version})"
    pair = VersionPair(f.baseline_version or baseline, f.version)
    return replace(
        base_item(info, key, KIND_SCALING, pair),
        verdict=Verdict.REGRESSION.value,
        state=item_state(Verdict.REGRESSION, KIND_SCALING, policy, ack),
        worse=True,
        delta_pct=None if not before else 100.0 * (f.efficiency / before - 1.0),
        floor=floor,
        detail=text,
        acknowledgement=ack,
    )


def scaling_items(
    outcome: AnalysisOutcome, policy: GatePolicy, pair: VersionPair, today: date
) -> list[GateItem]:
    """The ``scaling`` items of the candidate (see the module docstring)."""
    items = []
    for software in sorted(outcome.scaling):
        groups = outcome.scaling[software]
        found = _below_floor(software, groups, policy, pair)
        found += [
            f
            for f in outcome.scaling_issues.get(software, ())
            if f.issue is ScalingIssue.DROP and f.version == pair.candidate
        ]
        repeated = twin_scaling_findings(found)
        items += [
            _item(software, f, policy, pair.baseline, today) for f in found if f not in repeated
        ]
    return items
