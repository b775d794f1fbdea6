"""Findings, comparisons and gains that share a cause, shown as one issue with its members.

One change in a serving stack shows in many series: every point of a sweep, the
per-accelerator form of each metric and the derived series at the interactivity
target ("one issue, one line"). The report groups them exactly as
the gate and ``tracker findings`` do (:mod:`tracker.analyze.groupings`), so the
overview's sentence, its gains and losses and the findings pages count the
demo's planted −8% as one regression, named with its points
(``at c2–c32 and at 50 tokens/s/user``), its members one click away.

* :func:`finding_issues`: findings of one kind, triage state and version pair
  with one cause; the one shown (``head``) is the member with the smallest change
  (the most cautious figure, as the gate's headline);
* :func:`verdict_issues`: the series of one compared pair per cause and side
  (worse, better, inconclusive, unchanged), with the worst verdict of each;
* :func:`scaling_issues`: the scaling findings of one group and size step in one
  version (under the floor, fallen since the baseline) as one warning, as the gate
  counts them (the findings pages list both, as ``tracker findings``); the one
  shown has both efficiencies and the floor;
* :func:`cause_points`: per cause, every sweep point the analysis has (so a run
  of neighbours reads ``c2–c32`` and a gap is listed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from tracker.analyze.groupings import Cause, cause_of, group_by, point_order, where
from tracker.records.findings import SeriesInfo
from tracker.report.common import PAGE_ROWS, FindingRow, text_of
from tracker.report.urls import page_href

__all__ = [
    "CausePoints",
    "FindingIssue",
    "VerdictIssue",
    "cause_points",
    "finding_cause",
    "finding_issues",
    "issue_forms",
    "scaling_issues",
    "verdict_issues",
]

CausePoints = Mapping[tuple[str, ...], Sequence[str]]
"""Per cause key, every sweep point of it."""

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class FindingIssue:
    """Findings with one cause: ``head`` is the one shown, ``members`` every finding."""

    head: FindingRow
    """The member shown: the smallest change."""
    members: tuple[FindingRow, ...]
    """Every finding of the issue."""
    where: str
    """Its points: 'at c2–c32 and at 50 tokens/s/user'; empty for one."""
    forms: str
    """The metric, with 'and per accelerator' when both forms are members."""
    change_range: tuple[float, float] | None
    """Smallest and largest change of the members (%), when they differ."""


@dataclass(frozen=True, slots=True)
class VerdictIssue:
    """Compared series with one cause that went the same way: the worst verdict of them,
    its smallest change (direction-aware, %) and what it is about."""

    verdict: str
    name: str
    change_pct: float | None
    members: int


def finding_cause(row: FindingRow) -> Cause | None:
    """The cause of a finding from the labels of its evidence (``None``: it has none,
    such as a scaling finding, which is an issue of its own)."""
    ev: Mapping[str, Any] = row.evidence
    names = ("software", "system", "benchmark", "scenario", "workload", "metric")
    labels = [ev.get(k) for k in names]
    if not all(isinstance(v, str) for v in labels):
        return None
    return cause_of(*(text_of(v) for v in labels))


def cause_points(infos: Iterable[SeriesInfo]) -> dict[tuple[str, ...], list[str]]:
    """Per cause key, the sweep points of the analysis series (each once, in order)."""
    points: dict[tuple[str, ...], list[str]] = {}
    for info in infos:
        cause = cause_of(
            info.software, info.system, info.benchmark, info.scenario, info.workload, info.metric
        )
        if cause.point and cause.point not in points.get(cause.key, ()):
            points.setdefault(cause.key, []).append(cause.point)
    for found in points.values():
        found.sort(key=point_order)
    return points


def issue_forms(causes: Sequence[Cause], fallback: str) -> str:
    """``output_tokens_per_s and per accelerator`` when both forms are members, else the
    form there is (``fallback`` when every member is a derived at-target series)."""
    plain = {c.per_accelerator for c in causes if not c.target}
    if not plain:
        return fallback
    base = causes[0].metric
    if plain == {True, False}:
        return f"{base} and per accelerator"
    return f"{base}_per_accelerator" if True in plain else base


def _smallest(items: Sequence[T], change: Callable[[T], float | None]) -> T:
    def size(item: T) -> float:
        value = change(item)
        return float("inf") if value is None else abs(value)

    return min(items, key=size)


def _finding_issue(members: Sequence[FindingRow], every: CausePoints) -> FindingIssue:
    head = _smallest(members, lambda r: r.change_pct)
    causes = [finding_cause(m) for m in members]
    known = [c for c in causes if c is not None]
    changes = sorted(m.change_pct for m in members if m.change_pct is not None)
    grouped = len(members) > 1 and len(known) == len(members)
    return FindingIssue(
        head=head,
        members=tuple(members),
        where=where(known, every.get(known[0].key, ())) if grouped else "",
        forms=issue_forms(known, head.metric) if grouped else head.metric,
        change_range=(changes[0], changes[-1])
        if changes and changes[-1] - changes[0] >= 0.05
        else None,
    )


def _finding_key(row: FindingRow) -> tuple[object, ...]:
    """Findings of one kind, state, cause and pair (as ``tracker findings`` lists them)."""
    cause = finding_cause(row)
    about: object = row.series_key if cause is None else cause.key
    return (row.kind, row.status, about, row.baseline, row.candidate)


def finding_issues(
    rows: Sequence[FindingRow], points: CausePoints | None = None, *, first_page: str = ""
) -> tuple[FindingIssue, ...]:
    """``rows`` as issues, in the order of their first finding (``rows`` are ranked: open
    first, regressions first). With ``first_page`` (``findings.html``), each member's
    evidence link names the page of its issue (:data:`PAGE_ROWS` issues a page)."""
    issues = []
    for index, group in enumerate(group_by(rows, _finding_key)):
        if first_page:
            page = page_href(first_page, index // PAGE_ROWS + 1)
            group = [replace(m, evidence_href=page) for m in group]
        issues.append(_finding_issue(group, points or {}))
    return tuple(issues)


def scaling_issues(rows: Sequence[FindingRow]) -> tuple[FindingIssue, ...]:
    """Scaling findings (``rows``, ranked) as issues: one per group, size step and
    candidate, whatever their triage state (the gate's count); shown is the member
    against a baseline (``E 0.97 → 0.84 (floor 0.90)``) when there is one."""
    issues = []
    for group in group_by(rows, lambda r: (r.series_key, r.candidate)):
        head = next((m for m in group if m.baseline is not None), group[0])
        issues.append(FindingIssue(head, tuple(group), "", head.metric, None))
    return tuple(issues)


_SIDE = {
    "regression": "worse",
    "suspect": "worse",
    "improvement": "better",
    "inconclusive": "neither",
    "configuration_changed": "configuration",
    "no_change": "unchanged",
}
_WORST = (
    "regression",
    "suspect",
    "improvement",
    "inconclusive",
    "configuration_changed",
    "no_change",
)


def _name(cause: Cause) -> str:
    """What an issue is about in a few words: ``example-llm-70b isl1024-osl1024``."""
    benchmark, scenario, curve = cause.key[2], cause.key[3], cause.curve
    return " ".join(p for p in (benchmark, curve or scenario) if p)


def verdict_issues(
    software: str,
    rows: Iterable[tuple[str, str, str, str, str, str, float | None]],
) -> tuple[VerdictIssue, ...]:
    """The compared series of one pair of ``software`` as issues.

    ``rows``: (system key, benchmark, scenario, workload, metric, verdict,
    direction-aware change %) of each series. Series are one issue when they
    share a cause and a side (worse, better, inconclusive, unchanged).
    """
    found = [(cause_of(software, *row[:5]), row[5], row[6]) for row in rows]
    groups = group_by(found, lambda item: (_SIDE.get(item[1], item[1]), item[0].key))
    out = []
    for group in groups:
        verdict = min((v for _c, v, _d in group), key=lambda v: _WORST.index(v))
        worst = [item for item in group if item[1] == verdict]
        cause, _v, change = _smallest(worst, lambda item: item[2])
        out.append(VerdictIssue(verdict, _name(cause), change, len(group)))
    return tuple(out)
