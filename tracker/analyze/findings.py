"""Analysis results as findings to store: kinds, fingerprints and evidence.

=====================  ============================================  ==========================
kind                   made from                                     fingerprint (sha256 of)
=====================  ============================================  ==========================
``regression``         a comparison verdict REGRESSION               "comparison", "worse",
``suspect``            SUSPECT (worse past the floor, unconfirmed)   series key, baseline,
                                                                     candidate
``improvement``        IMPROVEMENT (a significant software gain)     … "better", …
``configuration_       a series whose configuration changed between  "configuration", key,
changed``              two versions (the comparability rule: never   baseline, candidate
                       a software gain or loss; every such pair)
``change_point``       a change point of a series' history           "change_point", key,
                                                                     version before, after
``drift``              a steady trend over a series' history that    "drift", key, direction
                       fits better than a step (its change points
                       inside the drift are not reported)
``scaling_efficiency`` efficiency below the floor, or a drop of it   "scaling", issue, key,
                       against the previous version                  N0, N, versions
``sla_miss``           no sweep of a curve's version meets the       "sla_miss", key, version
                       interactivity target
=====================  ============================================  ==========================

Every finding about a version pair says what changed besides the software
(``evidence.besides_software``: ``nothing but the software`` or ``configuration changed:
host CPU A → B; ...``; :func:`tracker.analyze.groupings.besides_software`) and names the
twins it stands for (``evidence.twins``).

A fingerprint hashes what a finding is *about*, never its numbers, so the same
finding found again keeps its triage state. REGRESSION and SUSPECT share one
(a suspect that later confirms is the same finding, and keeps its triage).
Evidence is plain JSON: versions, Δ%, CI, p and q, method, family size, and
whatever else the kind has; values that are not finite become ``null``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, fields
from typing import Any

from tracker.analyze.groupings import (
    NOTHING_BUT_SOFTWARE,
    PERFORMANCE,
    Besides,
    ConfigurationChange,
)
from tracker.records.findings import (
    AXIS_STACK,
    KIND_CHANGE_POINT,
    KIND_CONFIGURATION,
    KIND_DRIFT,
    KIND_SCALING,
    KIND_SLA_MISS,
    FindingRecord,
    SeriesInfo,
    SweepTarget,
)
from tracker.records.keys import VersionPair, join_key
from tracker.stats import (
    ChangePointResult,
    Comparison,
    ComparisonRun,
    DriftResult,
    ScalingFinding,
    ScalingGroup,
    ScalingIssue,
    Verdict,
)

__all__ = [
    "COMPARISON_KINDS",
    "KIND_CHANGE_POINT",
    "KIND_CONFIGURATION",
    "KIND_DRIFT",
    "KIND_SCALING",
    "KIND_SLA_MISS",
    "change_point_findings",
    "drift_findings",
    "comparison_findings",
    "configuration_findings",
    "fingerprint",
    "scaling_findings_of",
    "scaling_series_key",
    "sla_findings",
]

_REPORTED = {Verdict.REGRESSION, Verdict.SUSPECT, Verdict.IMPROVEMENT}
COMPARISON_KINDS = frozenset(v.value for v in _REPORTED)


def fingerprint(*parts: object) -> str:
    """A stable hash of what a finding is about."""
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()


def _json(value: Any) -> Any:
    """``value`` with every non-finite float replaced by ``None`` (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return value


_INFO_FIELDS = tuple(f.name for f in fields(SeriesInfo))


def _labels(info: SeriesInfo) -> dict[str, Any]:
    """What the evidence says of the series: every field of its :class:`SeriesInfo` (its
    fields are plain values: no deep copy as ``asdict`` makes)."""
    return {name: getattr(info, name) for name in _INFO_FIELDS}


def _annotation(
    kind: str,
    method: str,
    key: str,
    info: SeriesInfo,
    evidence: Mapping[str, Any],
    change_pct: float | None,
    *identity: object,
) -> FindingRecord:
    """A finding that annotates series ``key`` (a change point, a drift; not part of a BH
    family): its versions are the ``evidence``'s baseline and candidate; ``identity``
    tells it apart from the series' other findings of its kind across runs."""
    return FindingRecord(
        fingerprint=fingerprint(kind, key, *identity),
        kind=kind,
        series_key=key,
        method=method,
        software=info.software,
        baseline_version=evidence["baseline"],
        candidate_version=evidence["candidate"],
        change_pct=_json(change_pct),
        evidence=_json({**_labels(info), **evidence}),
    )


def _sided(p_value: float | None, g: float | None) -> str | None:
    """What the p-value tests: one-sided, in the direction of the change."""
    if p_value is None or g is None:
        return None
    return "one-sided, worse" if g < 0.0 else "one-sided, better"


def _comparison(
    c: Comparison,
    run: ComparisonRun,
    info: SeriesInfo,
    twins: Sequence[str] = (),
    besides: Besides | None = None,
) -> FindingRecord:
    ev = c.evidence
    side = "better" if c.verdict is Verdict.IMPROVEMENT else "worse"
    ci = ev.ci_pct
    evidence = {
        **_labels(info),
        "baseline": ev.baseline,
        "candidate": ev.candidate,
        "verdict": c.verdict.value,
        "method": ev.method.value,
        "delta_pct": ev.delta_pct,
        "g": ev.g,
        "ci_pct": list(ci) if ci else None,
        "p_value": ev.p_value,
        "q_value": c.q_value,
        "family_size": run.family_size,
        "family_method": run.family_method,
        "q_level": run.q_level,
        "floor": ev.floor,
        "n_baseline": ev.n_baseline,
        "n_candidate": ev.n_candidate,
        "p_sided": _sided(ev.p_value, ev.g),
        "advised_repeats": ev.advised_repeats,
        "detectable_pct": c.detectable_pct,
        "under_powered": c.under_powered,
        "sensitivity": c.sensitivity_text(),
        "baseline_level": ev.baseline_level,
        "candidate_level": ev.candidate_level,
        "note": ev.note,
        "besides_software": besides.text if besides is not None else NOTHING_BUT_SOFTWARE,
    }
    if besides is not None and besides.noted:
        evidence["noted"] = list(besides.noted)
    if twins:
        evidence["twins"] = list(twins)  # the same measurement under other names
    stack_axis = info.axis == AXIS_STACK
    return FindingRecord(
        fingerprint=fingerprint("comparison", side, ev.key, ev.baseline, ev.candidate),
        kind=c.verdict.value,
        series_key=ev.key,
        method=ev.method.value,
        software=info.software,
        baseline_version=info.version if stack_axis else ev.baseline,
        candidate_version=info.version if stack_axis else ev.candidate,
        change_pct=_json(ev.delta_pct),
        evidence=_json(evidence),
    )


def comparison_findings(
    run: ComparisonRun,
    infos: Mapping[str, SeriesInfo],
    twins: Mapping[str, Sequence[str]] | None = None,
    besides: Mapping[tuple[str, VersionPair], Besides] | None = None,
) -> list[FindingRecord]:
    """Regressions, suspects and improvements of a run (no-change and inconclusive are not).

    ``twins`` names, per series key, the twin series it stands for (their evidence
    lists them; the twins themselves were not compared); ``besides`` what changed
    besides the software, per series and pair (software changes only: the rule).
    """
    folded, said = twins or {}, besides or {}
    return [
        _comparison(
            c,
            run,
            infos[c.key],
            folded.get(c.key, ()),
            said.get((c.key, VersionPair(c.evidence.baseline, c.evidence.candidate))),
        )
        for c in run.comparisons
        if c.verdict in _REPORTED
    ]


def configuration_findings(
    changes: Iterable[ConfigurationChange], infos: Mapping[str, SeriesInfo]
) -> list[FindingRecord]:
    """One finding per series whose configuration changed between two versions: the
    values and the differences, never a software gain or loss (no verdict, no p-value)."""
    out = []
    for change in changes:
        info = infos[change.key]
        gain = change.change
        evidence = {
            **_labels(info),
            "baseline": change.baseline,
            "candidate": change.candidate,
            "besides_software": change.besides.text,
            "changed": list(change.besides.changed),
            "noted": list(change.besides.noted),
            "delta_pct": change.delta_pct,
            "baseline_level": None if gain is None else gain.baseline_level,
            "candidate_level": None if gain is None else gain.candidate_level,
        }
        if change.twins:
            evidence["twins"] = list(change.twins)
        parts = ("configuration", change.key, change.baseline, change.candidate)
        out.append(
            FindingRecord(
                fingerprint=fingerprint(*parts),
                kind=KIND_CONFIGURATION,
                series_key=change.key,
                method="comparability_rule",
                software=info.software,
                baseline_version=change.baseline,
                candidate_version=change.candidate,
                change_pct=_json(change.delta_pct),
                evidence=_json(evidence),
            )
        )
    return out


def change_point_findings(
    results: Iterable[ChangePointResult], infos: Mapping[str, SeriesInfo]
) -> list[FindingRecord]:
    """One finding per change point (report annotations; not part of the BH family)."""
    out = []
    for result in results:
        info = infos[result.key]
        for cp in result.change_points:
            evidence = {
                "baseline": cp.version_before,
                "candidate": cp.version_after,
                "direction": "worse" if cp.is_regression else "better",
                "delta_pct": cp.delta_pct,
                "g": cp.g,
                "level_before": cp.level_before,
                "level_after": cp.level_after,
                "p_value": cp.p_value,
                "n_points": result.n_points,
                "spikes": list(result.spikes),
            }
            versions = (cp.version_before, cp.version_after)
            method = "e_divisive_means"
            out.append(
                _annotation(
                    KIND_CHANGE_POINT, method, result.key, info, evidence, cp.delta_pct, *versions
                )
            )
    return out


def drift_findings(
    results: Iterable[DriftResult], infos: Mapping[str, SeriesInfo]
) -> list[FindingRecord]:
    """One finding per drifting series (report annotations; not part of the BH families)."""
    out = []
    for result in results:
        d = result.drift
        if d is None:
            continue
        info = infos[result.key]
        side = "worse" if d.is_regression else "better"
        moving = "down" if d.slope < 0.0 else "up"
        message = (
            f"drifting {moving} about {abs(d.slope_pct):.2f}% per version since "
            f"{d.version_start} ({d.total_pct:+.1f}% over {d.span} versions)"
        )
        evidence = {
            "baseline": d.version_start,
            "candidate": d.version_end,
            "direction": side,
            "slope_pct_per_version": d.slope_pct,
            "total_pct": d.total_pct,
            "g_per_version": d.g_per_version,
            "span": d.span,
            "p_value": d.p_value,
            "q_value": d.q_value,
            "n_points": result.n_points,
            "note": message,
        }
        method = "mann_kendall_theil_sen"
        out.append(_annotation(KIND_DRIFT, method, result.key, info, evidence, d.total_pct, side))
    return out


def scaling_series_key(software: str, finding: ScalingFinding) -> str:
    k = finding.key
    parts = (software, k.submitter, k.accelerator, k.benchmark, k.scenario, k.workload, k.metric)
    capped = k.power_mode if k.power_mode and k.power_mode != PERFORMANCE else ""
    tail = " ".join(p for p in (k.division, k.software_stack, k.host_cpu, capped, k.family) if p)
    return join_key(*parts, tail, f"x{finding.base_accelerators}->x{finding.accelerators}")


def _scaling_values(
    groups: Mapping[tuple[Any, str], ScalingGroup], finding: ScalingFinding, version: str | None
) -> dict[str, Any] | None:
    group = groups.get((finding.key, version or ""))
    if group is None:
        return None
    counts = {p.accelerators: p for p in group.points}
    base, point = counts.get(finding.base_accelerators), counts.get(finding.accelerators)
    if base is None or point is None:
        return None
    return {
        "base_value": base.value,
        "value": point.value,
        "base_systems": list(base.labels),
        "systems": list(point.labels),
    }


def scaling_findings_of(
    software: str, findings: Iterable[ScalingFinding], groups: Sequence[ScalingGroup]
) -> list[FindingRecord]:
    """Scaling-efficiency findings of one software's groups."""
    by_key = {(group.key, group.version): group for group in groups}
    out = []
    for f in findings:
        key = scaling_series_key(software, f)
        change = (
            f.efficiency / f.baseline_efficiency
            if f.issue is ScalingIssue.DROP and f.baseline_efficiency
            else f.efficiency
        )
        evidence = {
            "software": software,
            "issue": f.issue.value,
            "baseline": f.baseline_version,
            "candidate": f.version,
            "efficiency": f.efficiency,
            "threshold": f.threshold,
            "baseline_efficiency": f.baseline_efficiency,
            "accelerators": f.accelerators,
            "base_accelerators": f.base_accelerators,
            "key": asdict(f.key),
            "at_version": _scaling_values(by_key, f, f.version),
            "at_baseline": _scaling_values(by_key, f, f.baseline_version),
        }
        parts = (f.issue.value, key, f.base_accelerators, f.accelerators)
        out.append(
            FindingRecord(
                fingerprint=fingerprint("scaling", *parts, f.baseline_version, f.version),
                kind=KIND_SCALING,
                series_key=key,
                method=f.issue.value,
                software=software,
                baseline_version=f.baseline_version,
                candidate_version=f.version,
                change_pct=_json(100.0 * (change - 1.0)),
                evidence=_json(evidence),
            )
        )
    return out


def sla_findings(targets: Iterable[SweepTarget]) -> list[FindingRecord]:
    """A finding per curve and version none of whose sweeps meets the target."""
    by_version: dict[tuple[str, str], list[SweepTarget]] = defaultdict(list)
    for t in targets:
        by_version[(t.key, t.version)].append(t)
    out = []
    for (key, version), found in sorted(by_version.items()):
        if not all(t.is_sla_miss for t in found):
            continue
        head = found[0]
        result = head.result
        evidence = {
            "software": head.software,
            "system": head.system,
            "benchmark": head.benchmark,
            "scenario": head.scenario,
            "workload": head.curve_workload,
            "candidate": version,
            "target_tokens_per_s_per_user": result.target_tokens_per_s_per_user,
            "statistic": result.statistic,
            "most_interactive_tokens_per_s_per_user": max(t.result.front[-1][0] for t in found),
            "front": [list(p) for p in result.front],
            "sweeps": [t.sweep_key for t in found],
            "reason": result.reason,
        }
        out.append(
            FindingRecord(
                fingerprint=fingerprint(KIND_SLA_MISS, key, version),
                kind=KIND_SLA_MISS,
                series_key=key,
                method=f"pareto_front_{result.method}",
                software=head.software,
                candidate_version=version,
                evidence=_json(evidence),
            )
        )
    return out
