"""What the gate reports: :class:`GateItem`, its states, and how a kind's verdict counts.

Used by :mod:`tracker.gate.decision` (which re-exports :class:`GateItem`) and
:mod:`tracker.gate.invalid`.
"""

from __future__ import annotations

from dataclasses import dataclass

from tracker.analysis.verdicts import Verdict
from tracker.analysis_records import SeriesInfo
from tracker.gate.policy import Acknowledgement, GatePolicy

__all__ = [
    "STATE_ACKNOWLEDGED",
    "STATE_FAILING",
    "STATE_IMPROVEMENT",
    "STATE_INCONCLUSIVE",
    "STATE_NOT_GATED",
    "STATE_ORDER",
    "STATE_SUSPECT",
    "CHECKS",
    "GateItem",
    "base_item",
    "item_state",
]

STATE_FAILING = "failing"
STATE_ACKNOWLEDGED = "acknowledged"
STATE_NOT_GATED = "not gated"
STATE_SUSPECT = "suspect"
STATE_INCONCLUSIVE = "inconclusive"
STATE_IMPROVEMENT = "improvement"

CHECKS = {
    "regression": "measured",
    "target": "at target",
    "scaling": "scaling",
    "invalid": "invalid",
    "missing": "missing",
}
"""Each item kind (which check found it) in the words of the gate's "check" column."""

STATE_ORDER = {
    STATE_FAILING: 0,
    STATE_SUSPECT: 1,
    STATE_INCONCLUSIVE: 2,
    STATE_ACKNOWLEDGED: 3,
    STATE_NOT_GATED: 4,
    STATE_IMPROVEMENT: 5,
}
"""The states, worst first: how items and issues are sorted, and an issue's state."""


@dataclass(frozen=True, slots=True)
class GateItem:
    """One series the gate reports: what it is, the evidence, and how it counts.

    ``delta_pct`` is the raw relative change (+5.0 = 5% higher); ``worse`` says whether
    that is worse for this metric. ``state`` is failing, acknowledged, not gated
    (a kind the policy does not fail on), suspect, inconclusive or improvement.
    """

    kind: str
    key: str
    software: str
    system: str
    benchmark: str
    scenario: str
    workload: str
    metric: str
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


def base_item(info: SeriesInfo, key: str, kind: str, baseline: str, candidate: str) -> GateItem:
    """An item of series ``key`` with its labels and versions, before its evidence."""
    return GateItem(
        kind=kind,
        key=key,
        software=info.software,
        system=info.system,
        benchmark=info.benchmark,
        scenario=info.scenario,
        workload=info.workload,
        metric=info.metric,
        unit=info.unit,
        baseline=baseline,
        candidate=candidate,
        verdict="",
        state="",
        worse=False,
    )
