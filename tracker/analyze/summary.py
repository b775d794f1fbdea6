"""Plain-text and JSON renderings of an analysis run and of stored findings (for the CLI).

Nothing here prints: :mod:`tracker.cli` echoes the lines and draws the table.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from tracker.analyze.groupings import Cause, cause_of, group_by, where
from tracker.records.findings import KIND_SCALING, FindingRecord, StoredFinding
from tracker.records.keys import Selection, join_key, systems_of

if TYPE_CHECKING:  # the statistics (numpy, scipy) load only where a summary of a run needs them
    from tracker.analyze.run import AnalysisOutcome
    from tracker.stats import ComparisonRun

__all__ = [
    "FINDING_COLUMNS",
    "efficiency_text",
    "finding_cells",
    "group_finding_issues",
    "finding_json",
    "finding_lines",
    "finding_selected",
    "issue_head",
    "id_ranges",
    "issue_text",
    "scaling_text",
    "sensitivity_line",
    "summary_lines",
]

FINDING_COLUMNS = ("id", "status", "kind", "change", "versions", "q", "method", "series")
"""The columns of ``tracker findings``: one line per issue (its first finding's id)."""


def _pct(value: float | None) -> str:
    return "" if value is None or not math.isfinite(value) else f"{value:+.1f}%"


def _comparisons(outcome: AnalysisOutcome) -> list[str]:
    from tracker.stats.compare import FAMILIES, Verdict

    run = outcome.comparisons
    counts = run.counts()
    verdicts = ", ".join(f"{v.value} {counts[v]}" for v in Verdict)
    changed = outcome.configuration_changes
    lines = [
        f"Comparisons: {len(run.comparisons)} (each series' newest version against its previous "
        f"one, where nothing but the software changed): {verdicts}",
        f"Configuration changed: {len(changed)} series whose hardware, power mode, division or "
        "precision changed between the versions (not software gains or losses, not compared)",
        f"Multiple testing: {run.family_method.upper()} over {run.family_size} one-sided "
        f"p-values in each direction, each at q {run.q_level / FAMILIES:g}; confirmed when "
        f"q < {run.q_level:g}",
    ]
    return lines + ([sensitivity_line(run)] if run.comparisons else [])


def sensitivity_line(run: ComparisonRun, change: float | None = None) -> str:
    """The run's sensitivity: the share of series that could not see a ``change``
    (default :data:`~tracker.stats.defaults.SENSITIVITY_CHANGE`, 5%), how many are
    under-powered, and the median smallest change they could confirm."""
    from tracker.stats.defaults import SENSITIVITY_CHANGE

    change = SENSITIVITY_CHANGE if change is None else change
    blind = run.blind_share(change) or 0.0
    weak = sum(c.under_powered for c in run.comparisons)
    limits = sorted(c.detectable_pct for c in run.comparisons if c.detectable_pct is not None)
    median = limits[len(limits) // 2] if limits else None
    could = (
        ""
        if median is None
        else f"; the median series could detect ≥ {median:.1f}%"
        if math.isfinite(median)
        else "; the median series could detect no change"
    )
    return (
        f"Sensitivity: {blind:.0%} of the compared series could not see a {change:.0%} change; "
        f"{weak} under-powered (could not confirm a change at their floor){could}"
    )


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
    from tracker.stats.serving import Reach

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
        f"in {series} series and {len(outcome.stack_series)} software-stack groups "
        "(stacks of one platform within a version: ranked, no direction)",
        *_comparisons(outcome),
        _change_points(outcome),
        _scaling(outcome),
        *_gains(outcome),
        *_targets(outcome),
    ]
    kinds = ", ".join(f"{k} {n}" for k, n in outcome.finding_counts().items()) or "none"
    issues = len(group_by(outcome.findings, _run_issue_key))
    in_issues = f" (in {issues} issue{'' if issues == 1 else 's'})" if outcome.findings else ""
    lines.append(f"Findings: {kinds}{in_issues}")
    saved = outcome.saved
    if saved is not None:
        lines.append(
            f"Stored: {saved.new} new, {saved.updated} updated, {saved.reopened} reopened, "
            f"{saved.closed} closed as fixed, {saved.no_longer_found} triaged ones no longer found"
            + (
                f", {saved.superseded} superseded (made under other settings)"
                if saved.superseded
                else ""
            )
        )
    return lines


def _cause(finding: StoredFinding | FindingRecord) -> Cause | None:
    ev = finding.evidence
    names = ("software", "system", "benchmark", "scenario", "workload", "metric")
    labels = [ev.get(k) for k in names]
    if not all(isinstance(v, str) for v in labels):
        return None
    software, system, benchmark, scenario, workload, metric = (str(v) for v in labels)
    return cause_of(software, system, benchmark, scenario, workload, metric)


def _issue_key(finding: StoredFinding) -> tuple[object, ...]:
    cause = _cause(finding)
    about: object = finding.series_key if cause is None else cause.key
    return (
        finding.kind,
        finding.status,
        finding.is_current,
        about,
        finding.baseline_version,
        finding.candidate_version,
    )


def _run_issue_key(finding: FindingRecord) -> tuple[object, ...]:
    cause = _cause(finding)
    about: object = finding.series_key if cause is None else cause.key
    return (finding.kind, about, finding.baseline_version, finding.candidate_version)


def issue_head(members: Sequence[StoredFinding]) -> StoredFinding:
    """The finding an issue is known by: the member with the smallest change (the most
    cautious figure), the first of them on a tie, as the report and the gate pick it, so
    an issue has one id in ``tracker findings``, the gate, the report and the JSON."""
    return min(members, key=lambda m: float("inf") if m.change_pct is None else abs(m.change_pct))


def group_finding_issues(found: Sequence[StoredFinding]) -> list[list[StoredFinding]]:
    """``found`` as issues: findings of one kind, triage state and version pair that share a
    cause (:mod:`tracker.analyze.groupings`), in the order of their first finding; each
    issue's :func:`issue_head` first (its id is the issue's)."""
    issues = group_by(found, _issue_key)
    return [[issue_head(i), *(m for m in i if m is not issue_head(i))] for i in issues]


def issue_text(members: Sequence[StoredFinding]) -> str:
    """The series of one finding, or for an issue the curve, metric and points."""
    head = members[0]
    causes = [c for c in (_cause(m) for m in members) if c is not None]
    if len(members) == 1 or len(causes) != len(members):
        return head.series_key
    software, system, benchmark, scenario, curve, metric = causes[0].key
    plain = {c.per_accelerator for c in causes if not c.target}
    forms = {
        frozenset({True, False}): f"{metric} and per accelerator",
        frozenset({True}): f"{metric}_per_accelerator",
        frozenset({False}): metric,
    }.get(frozenset(plain), str(head.evidence.get("metric", metric)))
    at = where(causes)
    ids = id_ranges(m.id for m in members)
    text = join_key(software, system, benchmark, scenario, curve, forms)
    return f"{text} {at} ({len(members)} findings: {ids})".replace("  ", " ")


def id_ranges(ids: Iterable[int]) -> str:
    """``3–13, 15``: ids with runs of neighbours as ranges."""
    runs: list[list[int]] = []
    for n in sorted(set(ids)):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}–{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def finding_json(finding: StoredFinding, issue: Sequence[StoredFinding] = ()) -> dict[str, Any]:
    """One stored finding as a JSON object (``tracker findings --format json``); ``issue``:
    the findings of its issue (its ``issue`` names them)."""
    members = issue or (finding,)
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
        "change": scaling_text(finding) if finding.kind == KIND_SCALING else _change([finding]),
        "evidence": dict(finding.evidence),
        "issue": {
            "id": members[0].id,
            "members": [m.id for m in members],
            "series": issue_text(members),
        },
        "created_at": finding.created_at.isoformat(),
        "updated_at": finding.updated_at.isoformat(),
    }


def efficiency_text(
    efficiency: float,
    *,
    floor: float | None,
    base_accelerators: int,
    accelerators: int,
    before: float | None = None,
) -> str:
    """A scaling finding in words: ``E 0.97 → 0.84 (floor 0.90), 8 → 32 accelerators``
    (``before``: the efficiency at the same counts in the baseline version, if any).

    >>> efficiency_text(0.84, floor=0.9, base_accelerators=8, accelerators=32, before=0.97)
    'E 0.97 → 0.84 (floor 0.90), 8 → 32 accelerators'
    """
    then = f"{before:.2f} \N{RIGHTWARDS ARROW} " if before is not None else ""
    limit = f" (floor {floor:.2f})" if floor is not None else ""
    counts = f"{base_accelerators} \N{RIGHTWARDS ARROW} {accelerators} accelerators"
    return f"E {then}{efficiency:.2f}{limit}, {counts}"


def scaling_text(finding: StoredFinding) -> str:
    """A stored scaling finding in words: ``E 0.97 → 0.84 (floor 0.90), 8 → 32 accelerators``
    (empty when its evidence lacks the efficiencies)."""
    ev = finding.evidence
    e, n0, n = ev.get("efficiency"), ev.get("base_accelerators"), ev.get("accelerators")
    if not isinstance(e, int | float) or not isinstance(n0, int) or not isinstance(n, int):
        return ""
    before = ev.get("baseline_efficiency")
    floor = ev.get("threshold") if ev.get("issue") == "efficiency_below_floor" else None
    return efficiency_text(
        float(e),
        floor=float(floor) if isinstance(floor, int | float) else None,
        base_accelerators=n0,
        accelerators=n,
        before=float(before) if isinstance(before, int | float) else None,
    )


def finding_selected(finding: StoredFinding, selection: Selection) -> bool:
    """Whether ``selection`` (``--software``, ``--benchmark``, ``--system``) picks ``finding``:
    by the labels of its evidence (a scaling finding: its group's, and its systems)."""
    if selection.is_everything:
        return True
    ev = finding.evidence
    key = ev.get("key")
    group = key if isinstance(key, dict) else {}
    software = str(ev.get("software") or "")
    benchmark = str(ev.get("benchmark") or group.get("benchmark") or "")
    systems = [str(ev.get("system") or "")]
    if group:
        systems.append(f"{group.get('submitter', '')} {group.get('accelerator', '')}".strip())
        systems.append(str(group.get("accelerator") or ""))
        for side in ("at_version", "at_baseline"):
            values = ev.get(side)
            if isinstance(values, dict):
                systems += [
                    str(v) for v in values.get("systems", []) + values.get("base_systems", [])
                ]
    names = [n for system in systems for n in systems_of(system)]
    return selection.matches(software, benchmark, names)


def _change(members: Sequence[StoredFinding]) -> str:
    if members[0].kind == KIND_SCALING and scaling_text(members[0]):
        return scaling_text(members[0]).split(" (", 1)[0].split(",", 1)[0]  # E 0.97 → 0.84
    values = sorted({_pct(m.change_pct) for m in members} - {""})
    if len(values) <= 1:
        return values[0] if values else ""
    ordered = sorted((m.change_pct for m in members if m.change_pct is not None), key=abs)
    return f"{_pct(ordered[0])}..{_pct(ordered[-1])}"


def finding_cells(members: Sequence[StoredFinding]) -> tuple[str, ...]:
    """One issue (its findings) as the cells of :data:`FINDING_COLUMNS`; the series of a
    finding about a version pair ends with what changed besides the software."""
    finding = members[0]
    versions = " -> ".join(v for v in (finding.baseline_version, finding.candidate_version) if v)
    q = finding.evidence.get("q_value")
    now = finding.is_current or finding.status == "superseded"
    status = finding.status if now else f"{finding.status} (not found now)"
    besides = finding.evidence.get("besides_software")
    return (
        str(finding.id),
        status,
        finding.kind,
        _change(members),
        versions,
        f"{q:.3g}" if isinstance(q, int | float) else "",
        finding.method,
        (f"{scaling_text(finding)} · " if finding.kind == KIND_SCALING else "").lstrip(" ·")
        + issue_text(members)
        + (f" — {besides}" if isinstance(besides, str) and besides else ""),
    )


def _plural(n: int, one: str) -> str:
    return f"{n} {one}{'' if n == 1 else 's'}"


def _fit(rows: list[tuple[str, ...]], width: int | None) -> list[tuple[str, ...]]:
    """``rows`` without the method, then the q column while the columns before the series
    leave it under 30 characters of ``width``."""
    for drop in ("method", "q", "versions"):
        head = sum(max(len(r[c]) for r in rows) + 2 for c in range(len(rows[0]) - 1))
        if width is None or width - head >= 30:
            break
        at = rows[0].index(drop)
        rows = [r[:at] + r[at + 1 :] for r in rows]
    return rows


def finding_lines(
    found: Sequence[StoredFinding], status: str, width: int | None = None
) -> list[str]:
    """``tracker findings``: a title, then one line per issue, columns aligned; the series
    is last. ``width`` (a terminal's): every line fits it (the method and q columns go
    first, then the series is cut with ``…``); ``None``: never cut (a long series runs
    on, for grep and pipes)."""
    issues = group_finding_issues(found)
    title = f"{_plural(len(found), 'finding')} ({status}), {_plural(len(issues), 'issue')}"
    rows = _fit([FINDING_COLUMNS, *(finding_cells(i) for i in issues)], width)
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]) - 1)]
    lines = [title]
    for row in rows if issues else ():
        cells = [cell.ljust(w) for cell, w in zip(row, widths, strict=False)]
        line = "  ".join([*cells, row[-1]]).rstrip()
        if width is not None and len(line) > width:
            line = line[: max(width - 1, 1)].rstrip() + "…"
        lines.append(line)
    return lines
