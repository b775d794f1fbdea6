"""The gate's ``scaling`` kind: the candidate's scaling efficiency, judged like a regression.

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

from dataclasses import replace
from datetime import date

from tracker.analyze.findings import scaling_series_key
from tracker.analyze.groupings import twin_scaling_findings
from tracker.analyze.run import AnalysisOutcome
from tracker.gate.items import KIND_SCALING, GateItem, base_item, item_state
from tracker.gate.policy import GatePolicy
from tracker.records.findings import SeriesInfo
from tracker.records.keys import VersionPair, system_label
from tracker.stats.compare import Verdict
from tracker.stats.scaling import (
    ScalingFinding,
    ScalingGroup,
    ScalingIssue,
    ScalingKey,
    efficiency_text,
)

__all__ = ["scaling_items"]

SCALING_METRIC = "scaling_efficiency"


def _efficiencies(groups: tuple[ScalingGroup, ...], version: str) -> dict[object, float]:
    return {
        (g.key, g.base_accelerators, p.accelerators): p.efficiency
        for g in groups
        if g.version == version
        for p in g.points[1:]
    }


def _below_floor(
    software: str, groups: tuple[ScalingGroup, ...], policy: GatePolicy, pair: VersionPair
) -> list[ScalingFinding]:
    """Every count of the candidate's groups below its (per-pattern) floor."""
    before = _efficiencies(groups, pair.baseline)
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
