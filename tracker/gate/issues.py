"""The gate's items as issues: the items that share a cause, one line each.

Items are grouped by :func:`tracker.analysis.issues.cause_of` (the points of one
sweep, the per-accelerator form of a metric, the series at the interactivity
target) when they are about the same version pair and went the same way: worse
(a regression, a suspect result, a target no longer reached), better, or
neither (inconclusive); measured and at-target items are one issue, invalid and
missing items issues of their own, and each scaling item is one. An issue's
state is the worst of its members' (one failing member fails it); its headline
is the member of that state with the smallest change (the most cautious figure).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tracker.analysis.issues import Cause, cause_of, group_by, where
from tracker.analyze.run import AnalysisOutcome
from tracker.gate.items import CHECKS, STATE_ORDER, GateItem

__all__ = ["GateIssue", "gate_issues", "sweep_points"]


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
        return " · ".join(p for p in (h.software, h.system, forms) if p)

    @property
    def details(self) -> tuple[str, ...]:
        """The members' details (reasons), each once."""
        return tuple(dict.fromkeys(m.detail for m in self.members if m.detail))

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
    if item.verdict == "inconclusive":
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


def sweep_points(
    outcome: AnalysisOutcome, baseline: str, candidate: str
) -> dict[tuple[str, ...], list[str]]:
    """Per cause, the sweep points with a result at either version."""
    points: dict[tuple[str, ...], list[str]] = {}
    for s in outcome.series:
        info = outcome.infos.get(s.key)
        if info is None or (s.index(baseline) is None and s.index(candidate) is None):
            continue
        cause = cause_of(
            info.software, info.system, info.benchmark, info.scenario, info.workload, info.metric
        )
        if cause.point:
            points.setdefault(cause.key, []).append(cause.point)
    return points
