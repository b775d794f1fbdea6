"""Pieces every page shares: slugs and links, findings as rows, the series-key lookup.

Links are relative to the site root (``benchmark/<slug>.html``); a page in a
sub-folder gets ``root = "../"`` from the renderer and prefixes them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tracker.analyze_inputs import SeriesInfo
from tracker.records import FindingRecord, StoredFinding

__all__ = [
    "FindingRow",
    "PageLink",
    "benchmark_href",
    "compare_href",
    "finding_row",
    "key_lookup",
    "slug",
    "system_href",
]

_UNSAFE = re.compile(r"[^a-z0-9]+")


def slug(*parts: str) -> str:
    """A file-name-safe, deterministic slug of ``parts``, unique per distinct ``parts``.

    Readable ASCII (lower-case letters, digits and ``-``, at most 48 characters)
    followed by 10 hex digits of a SHA-256 of the exact parts, so names that
    differ only in case, punctuation or non-ASCII letters never share a file.
    """
    readable = _UNSAFE.sub("-", "-".join(parts).lower()).strip("-")[:48].strip("-")
    digest = hashlib.sha256(json.dumps(list(parts)).encode()).hexdigest()[:10]
    return f"{readable}-{digest}" if readable else digest


def benchmark_href(benchmark: str, scenario: str) -> str:
    """The page of one benchmark and scenario."""
    return f"benchmark/{slug(benchmark, scenario)}.html"


def system_href(system: str) -> str:
    """The page of one system (by name)."""
    return f"system/{slug(system)}.html"


def compare_href(software: str, baseline: str, candidate: str) -> str:
    """The comparison page of one version pair of one software."""
    return f"compare/{slug(software, baseline, candidate)}.html"


@dataclass(frozen=True, slots=True)
class PageLink:
    """A link to another page of the site."""

    text: str = field(metadata={"help": "Link text (from the data: escaped)."})
    href: str = field(metadata={"help": "Relative to the site root."})
    detail: str = field(default="", metadata={"help": "A short note shown beside the link."})


@dataclass(frozen=True, slots=True)
class FindingRow:
    """One finding, as the findings table and the series pages show it."""

    id: int | None = field(metadata={"help": "Stored id; None when the finding is not stored."})
    status: str = field(metadata={"help": "Triage state, or 'not stored' (run tracker analyze)."})
    kind: str = field(metadata={"help": "regression, suspect, improvement, change_point, …"})
    software: str = field(metadata={"help": "Software name."})
    system: str = field(metadata={"help": "System name (empty for scaling groups)."})
    benchmark: str = field(metadata={"help": "Benchmark name."})
    scenario: str = field(metadata={"help": "Scenario."})
    metric: str = field(metadata={"help": "Metric (or the finding's subject)."})
    series_key: str = field(metadata={"help": "The key of the series or group it is about."})
    baseline: str | None = field(metadata={"help": "Baseline version, when there is one."})
    candidate: str | None = field(metadata={"help": "Candidate version."})
    change_pct: float | None = field(metadata={"help": "Relative change in percent (raw)."})
    higher_is_better: bool = field(metadata={"help": "Direction of the metric."})
    method: str = field(metadata={"help": "How it was found."})
    ci_pct: tuple[float, float] | None = field(metadata={"help": "CI of the change, percent."})
    p_value: float | None = field(metadata={"help": "p-value, when tested."})
    q_value: float | None = field(metadata={"help": "Benjamini–Hochberg q-value, when tested."})
    note: str = field(metadata={"help": "Triage note or evidence note."})
    evidence: tuple[tuple[str, str], ...] = field(
        metadata={"help": "Every evidence item as (name, JSON text), sorted by name."}
    )
    href: str = field(metadata={"help": "The page of its benchmark (relative to the root)."})


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _ci(value: Any) -> tuple[float, float] | None:
    if isinstance(value, list | tuple) and len(value) == 2:
        low, high = _float(value[0]), _float(value[1])
        if low is not None and high is not None:
            return low, high
    return None


def finding_row(finding: StoredFinding | FindingRecord) -> FindingRow:
    """The row of a stored finding, or of a finding of an unsaved analysis run."""
    ev: Mapping[str, Any] = finding.evidence
    key = ev.get("key") if isinstance(ev.get("key"), Mapping) else {}
    assert isinstance(key, Mapping)
    benchmark = _text(ev.get("benchmark")) or _text(key.get("benchmark"))
    scenario = _text(ev.get("scenario")) or _text(key.get("scenario"))
    stored = isinstance(finding, StoredFinding)
    note = (finding.status_note or "") if isinstance(finding, StoredFinding) else ""
    return FindingRow(
        id=finding.id if isinstance(finding, StoredFinding) else None,
        status=finding.status if isinstance(finding, StoredFinding) else "not stored",
        kind=finding.kind,
        software=_text(ev.get("software")),
        system=_text(ev.get("system")).partition("/")[2] or _text(ev.get("system")),
        benchmark=benchmark,
        scenario=scenario,
        metric=_text(ev.get("metric")) or _text(key.get("metric")),
        series_key=finding.series_key,
        baseline=finding.baseline_version,
        candidate=finding.candidate_version,
        change_pct=finding.change_pct,
        higher_is_better=ev.get("higher_is_better") is not False,
        method=finding.method,
        ci_pct=_ci(ev.get("ci_pct")),
        p_value=_float(ev.get("p_value")),
        q_value=_float(ev.get("q_value")),
        note=note or _text(ev.get("note")) or ("" if stored else "run `tracker analyze` to triage"),
        evidence=tuple(
            (name, json.dumps(ev[name], sort_keys=True, ensure_ascii=False)) for name in sorted(ev)
        ),
        href=benchmark_href(benchmark, scenario) if benchmark else "findings.html",
    )


def finding_rows(findings: Iterable[StoredFinding | FindingRecord]) -> tuple[FindingRow, ...]:
    """Rows of ``findings``, open first, then by kind, software, versions and key."""
    rows = [finding_row(f) for f in findings]
    order = {"open": 0, "not stored": 0, "acknowledged": 1, "expected": 2, "fixed": 3}
    return tuple(
        sorted(
            rows,
            key=lambda r: (
                order.get(r.status, 4),
                r.kind,
                r.software,
                r.candidate or "",
                r.series_key,
                r.id or 0,
            ),
        )
    )


RowKey = tuple[str, str, str, str, str, str]
"""software, system name, benchmark, scenario, workload, metric."""


def key_lookup(infos: Mapping[str, SeriesInfo]) -> dict[RowKey, list[str]]:
    """Analysis series keys (version axis) by the labels a results-table row has."""
    out: dict[RowKey, list[str]] = defaultdict(list)
    for key in sorted(infos):
        info = infos[key]
        if info.axis != "version":
            continue
        name = info.system.partition("/")[2] or info.system
        out[
            (info.software, name, info.benchmark, info.scenario, info.workload, info.metric)
        ].append(key)
    return out
