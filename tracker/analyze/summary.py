"""Plain-text and JSON renderings of an analysis run and of stored findings (for the CLI).

Nothing here prints: :mod:`tracker.cli` echoes the lines and draws the table.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from tracker.analysis import Reach, Verdict
from tracker.analysis_records import StoredFinding
from tracker.analyze.run import AnalysisOutcome

__all__ = ["FINDING_COLUMNS", "finding_cells", "finding_json", "summary_lines"]

FINDING_COLUMNS = ("id", "status", "kind", "series", "versions", "change", "q", "method")


def _pct(value: float | None) -> str:
    return "" if value is None or not math.isfinite(value) else f"{value:+.1f}%"


def _comparisons(outcome: AnalysisOutcome) -> list[str]:
    run = outcome.comparisons
    counts = run.counts()
    verdicts = ", ".join(f"{v.value} {counts[v]}" for v in Verdict)
    return [
        f"Comparisons: {len(run.comparisons)} (each series' newest version against its previous "
        f"one, and software stacks within a version): {verdicts}",
        f"Multiple testing: one {run.family_method.upper()} family of {run.family_size} "
        f"p-values, q < {run.q_level:g}",
    ]


def _change_points(outcome: AnalysisOutcome) -> str:
    results = outcome.change_points
    skipped = sum(r.is_skipped for r in results)
    found = sum(len(r.change_points) for r in results)
    minimum = outcome.settings.change_points.min_points
    return (
        f"Change points: {found} in {len(results) - skipped} series searched; {skipped} series "
        f"with fewer than {minimum} versions skipped"
    )


def _scaling(outcome: AnalysisOutcome) -> str:
    issues = [f for found in outcome.scaling_issues.values() for f in found]
    kinds = Counter(f.issue.value for f in issues)
    detail = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items())) or "none"
    return (
        f"Scaling: {len(outcome.groups())} groups; findings: {detail} "
        f"(floor {outcome.settings.efficiency_floor:g})"
    )


def _gains(outcome: AnalysisOutcome) -> list[str]:
    if not outcome.gains:
        return ["Software gains: none (no series has two versions)"]
    best = max(outcome.gains, key=lambda g: g.gain)
    worst = min(outcome.gains, key=lambda g: g.gain)
    return [
        f"Software gains: {len(outcome.gains)} series; best {best.gain:.2f}x ({best.key}, "
        f"{best.baseline} -> {best.candidate}); worst {worst.gain:.2f}x ({worst.key})",
    ]


def _targets(outcome: AnalysisOutcome) -> list[str]:
    targets = outcome.targets
    target = outcome.settings.target_tokens_per_s_per_user
    if not targets:
        return [f"Throughput at {target:g} tokens/s/user: no sweeps"]
    reached = sum(t.result.reach is Reach.REACHED for t in targets)
    statistics = ", ".join(sorted({t.result.statistic for t in targets}))
    lines = [
        f"Throughput at {target:g} tokens/s/user ({statistics}; {targets[0].result.method}, "
        f"no extrapolation): {len(targets)} sweeps, {reached} reached, "
        f"{len(targets) - reached} not reached"
    ]
    priced = [t.cost_at_target.usd_per_million_tokens for t in targets if t.cost_at_target]
    peaks = [t.cost_at_peak.usd_per_million_tokens for t in targets if t.cost_at_peak]
    if peaks:
        at_target = f"${min(priced):.3g}-${max(priced):.3g} at the target, " if priced else ""
        lines.append(
            f"Cost per 1M output tokens: {len(peaks)} of {len(targets)} sweeps priced; "
            f"{at_target}${min(peaks):.3g}-${max(peaks):.3g} at peak"
        )
    return lines


def summary_lines(outcome: AnalysisOutcome) -> list[str]:
    """The summary ``tracker analyze`` prints."""
    series = len(outcome.series)
    lines = [
        f"Analysed {outcome.samples} results ({outcome.invalid_samples} invalid, not used) "
        f"in {series} series and {len(outcome.stack_series)} software-stack groups",
        *_comparisons(outcome),
        _change_points(outcome),
        _scaling(outcome),
        *_gains(outcome),
        *_targets(outcome),
    ]
    kinds = ", ".join(f"{k} {n}" for k, n in outcome.finding_counts().items()) or "none"
    lines.append(f"Findings: {kinds}")
    saved = outcome.saved
    if saved is not None:
        lines.append(
            f"Stored: {saved.new} new, {saved.updated} updated, {saved.reopened} reopened, "
            f"{saved.closed} closed as fixed, {saved.no_longer_found} triaged ones no longer found"
        )
    return lines


def finding_json(finding: StoredFinding) -> dict[str, Any]:
    """One stored finding as a JSON object (``tracker findings --format json``)."""
    return {
        "id": finding.id,
        "fingerprint": finding.fingerprint,
        "kind": finding.kind,
        "status": finding.status,
        "status_note": finding.status_note,
        "is_current": finding.is_current,
        "series_key": finding.series_key,
        "method": finding.method,
        "baseline_version": finding.baseline_version,
        "candidate_version": finding.candidate_version,
        "change_pct": finding.change_pct,
        "evidence": dict(finding.evidence),
        "created_at": finding.created_at.isoformat(),
        "updated_at": finding.updated_at.isoformat(),
    }


def finding_cells(finding: StoredFinding) -> tuple[str, ...]:
    """One stored finding as the cells of :data:`FINDING_COLUMNS`."""
    versions = " -> ".join(v for v in (finding.baseline_version, finding.candidate_version) if v)
    q = finding.evidence.get("q_value")
    status = finding.status if finding.is_current else f"{finding.status} (not found now)"
    return (
        str(finding.id),
        status,
        finding.kind,
        finding.series_key,
        versions,
        _pct(finding.change_pct),
        f"{q:.3g}" if isinstance(q, int | float) else "",
        finding.method,
    )
