"""Pieces every page shares: what every page context holds (:class:`Page`), system names,
findings as rows, the key lookup, and long tables split into linked pages.

Pieces every page shares: system names, findings as rows, the key lookup.

A system is identified by its key (``submitter/name``): two submitters' systems
of one name get a page each and are labelled with their submitter
(:class:`SystemNames`). The slugs and links of :mod:`tracker.report.urls` are
importable from here too.

Long tables split into pages of at most :data:`PAGE_ROWS` rows, linked to each other.

A comparison of 10,000 series or 30,000 findings is one page per thousand rows:
the first keeps the page's usual path (``compare/<slug>.html``,
``findings.html``), the next ones add ``-2``, ``-3``… (:func:`page_href`), and
every page links to all of them with relative links. Rows keep their order
across pages (worst first, open first); a click on a column sorts one page.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from tracker.records.findings import (
    KIND_SCALING,
    KIND_SLA_MISS,
    FindingRecord,
    SeriesInfo,
    StoredFinding,
)
from tracker.records.results import numeric_value
from tracker.report.filters import format_point, format_scaling, format_workload
from tracker.report.urls import benchmark_href, compare_href, page_href, slug, system_href

if TYPE_CHECKING:
    from tracker.report.inputs import ReportInput

__all__ = [
    "FindingRow",
    "PAGE_ROWS",
    "Page",
    "PageLink",
    "Pager",
    "SystemName",
    "SystemNames",
    "benchmark_href",
    "compare_href",
    "finding_rank",
    "finding_row",
    "finding_rows",
    "key_lookup",
    "page_href",
    "paginate",
    "slug",
    "system_href",
    "system_names",
    "text_of",
]


PAGE_ROWS = 1000
"""Rows on one page of a paginated table (comparisons, findings)."""


@dataclass(frozen=True, slots=True)
class Page:
    """What every page's context holds, whatever its content (``base.html`` shows it)."""

    title: str
    """Page title."""
    generated_at: str
    """When the report was built, as given."""
    is_example: bool
    """True when any result shown is example data."""


@dataclass(frozen=True, slots=True)
class SystemName:
    """How one system (by identity) is named and linked."""

    key: str
    """Identity: submitter/name."""
    name: str
    """System name."""
    submitter: str
    """Submitter; empty when unknown."""
    label: str
    """The name, with the submitter where another system has the name."""
    href: str
    """The system page (relative to the root)."""


@dataclass(frozen=True, slots=True)
class SeriesColumns:
    """The columns that name a series in a table row: its system (label, identity, page)
    and its labels."""

    system: str
    """Name of the system under test; with its submitter where names collide."""
    system_key: str
    """The system's identity (submitter/name)."""
    system_href: str
    """The system's page (relative to the root)."""
    benchmark: str
    """Benchmark (model) name."""
    scenario: str
    """Scenario, e.g. Offline or Server."""
    workload: str
    """Workload label; empty when there is none."""
    metric: str
    """Metric name."""
    unit: str
    """Unit of every value in the row."""
    higher_is_better: bool
    """Direction of improvement."""


def _name_of_key(key: str) -> str:
    return key.partition("/")[2] or key


class SystemNames:
    """Labels and pages of systems: by key, with the submitter where names collide."""

    def __init__(self, systems: Iterable[tuple[str, str]]) -> None:
        """``systems``: (key, name) of every system of the report."""
        keys: dict[str, set[str]] = defaultdict(set)
        for key, name in systems:
            keys[name].add(key or name)
        self._shared = {name for name, found in keys.items() if len(found) > 1}
        self._known: dict[str, SystemName] = {}

    def of(self, key: str, name: str | None = None) -> SystemName:
        """The system ``key`` (``name``: its name, else read from the key)."""
        key = key or name or ""
        found = self._known.get(key)
        if found is None:
            name = name if name is not None else _name_of_key(key)
            submitter = key.removesuffix("/" + name) if key.endswith("/" + name) else ""
            label = f"{name} ({submitter})" if submitter and name in self._shared else name
            found = SystemName(key, name, submitter, label, system_href(key))
            self._known[key] = found
        return found


def system_names(data: ReportInput) -> SystemNames:
    """The systems' labels: from ``data.systems``, else from the points in memory."""
    if data.systems:
        return SystemNames((s.key or s.name, s.name) for s in data.systems)
    return SystemNames((p.system_key or p.system, p.system) for p in data.points)


@dataclass(frozen=True, slots=True)
class PageLink:
    """A link to another page of the site."""

    text: str
    """Link text (from the data: escaped)."""
    href: str
    """Relative to the site root."""
    detail: str = ""
    """A short note shown beside the link."""


@dataclass(frozen=True, slots=True)
class FindingRow:
    """One finding, as the findings table and the series pages show it."""

    id: int | None
    """Stored id; None when the finding is not stored."""
    status: str
    """Triage state, or 'not stored' (run tracker analyze)."""
    kind: str
    """regression, suspect, improvement, change_point, …"""
    software: str
    """Software name."""
    system: str
    """System name, with its submitter where names collide; a scaling group's submitter and
    accelerator."""
    benchmark: str
    """Benchmark name."""
    scenario: str
    """Scenario."""
    metric: str
    """Metric (or the finding's subject)."""
    workload: str
    """Workload (without its sweep point); may be empty."""
    point: str
    """Where on the workload: 'concurrency 16', '8 → 32 accelerators', …"""
    summary: str
    """The finding in words where a change % says too little (scaling)."""
    system_key: str
    """The system's identity (empty for groups)."""
    series_key: str
    """The key of the series or group it is about."""
    baseline: str | None
    """Baseline version, when there is one."""
    candidate: str | None
    """Candidate version."""
    change_pct: float | None
    """Relative change in percent (raw)."""
    higher_is_better: bool
    """Direction of the metric."""
    method: str
    """How it was found."""
    ci_pct: tuple[float, float] | None
    """CI of the change, percent."""
    p_value: float | None
    """p-value, when tested."""
    q_value: float | None
    """Benjamini–Hochberg q-value, when tested."""
    note: str
    """Triage note or evidence note."""
    evidence: Mapping[str, Any]
    """The evidence (JSON-ready); shown through the evidence_items filter."""
    href: str
    """The page of its benchmark (relative to the root)."""
    evidence_href: str = "findings.html"
    """The findings page that shows its evidence (relative to the root)."""
    besides: str = ""
    """What changed besides the software between its versions (a finding about a version
    pair): ``nothing but the software``, or ``configuration changed: ...``; empty
    otherwise."""


def text_of(value: Any) -> str:
    """``value`` when it is a string, else empty (evidence read back from JSON)."""
    return value if isinstance(value, str) else ""


def _ci(value: Any) -> tuple[float, float] | None:
    if isinstance(value, list | tuple) and len(value) == 2:
        low, high = numeric_value(value[0]), numeric_value(value[1])
        if low is not None and high is not None:
            return low, high
    return None


def _summary(kind: str, ev: Mapping[str, Any], floor: float | None) -> str:
    """A scaling finding in words: ``E 0.97 → 0.84 (floor 0.90)``; empty for other kinds."""
    if kind != KIND_SCALING:
        return ""
    if floor is None and ev.get("issue") == "efficiency_below_floor":
        floor = numeric_value(ev.get("threshold"))
    return format_scaling(
        numeric_value(ev.get("baseline_efficiency")), numeric_value(ev.get("efficiency")), floor
    )


def _group(key: Mapping[str, Any]) -> str:
    """Who a scaling group is (its submitter and accelerator): it has no one system."""
    return " ".join(
        t for t in (text_of(key.get("submitter")), text_of(key.get("accelerator"))) if t
    )


def finding_row(
    finding: StoredFinding | FindingRecord,
    names: SystemNames | None = None,
    *,
    floor: float | None = None,
) -> FindingRow:
    """The row of a stored finding, or of a finding of an unsaved analysis run.

    ``floor`` is the scaling-efficiency floor the report was analysed with.
    """
    ev: Mapping[str, Any] = finding.evidence
    key = ev.get("key") if isinstance(ev.get("key"), Mapping) else {}
    assert isinstance(key, Mapping)
    benchmark = text_of(ev.get("benchmark")) or text_of(key.get("benchmark"))
    scenario = text_of(ev.get("scenario")) or text_of(key.get("scenario"))
    note = (finding.status_note or "") if isinstance(finding, StoredFinding) else ""
    system = text_of(ev.get("system"))
    label = (names or SystemNames(())).of(system).label if system else _group(key)
    metric = text_of(ev.get("metric")) or text_of(key.get("metric"))
    return FindingRow(
        id=finding.id if isinstance(finding, StoredFinding) else None,
        status=finding.status if isinstance(finding, StoredFinding) else "not stored",
        kind=finding.kind,
        software=text_of(ev.get("software")),
        system=label,
        benchmark=benchmark,
        scenario=scenario,
        metric=metric,
        workload=format_workload(finding.series_key) or text_of(ev.get("workload")).split("/")[0],
        point=format_point(finding.series_key, metric),
        summary=_summary(finding.kind, ev, floor),
        system_key=system,
        series_key=finding.series_key,
        baseline=finding.baseline_version,
        candidate=finding.candidate_version,
        change_pct=finding.change_pct,
        higher_is_better=ev.get("higher_is_better") is not False,
        method=finding.method,
        ci_pct=_ci(ev.get("ci_pct")),
        p_value=numeric_value(ev.get("p_value")),
        q_value=numeric_value(ev.get("q_value")),
        note=note or text_of(ev.get("note")),
        evidence=ev,
        href=benchmark_href(benchmark, scenario) if benchmark else "findings.html",
        besides=text_of(ev.get("besides_software")),
    )


_KIND_ORDER = ("regression", "suspect", KIND_SCALING, "target", KIND_SLA_MISS)
"""Findings that need a person first, in this order; the others after, improvements last."""
_STATUS_ORDER = {"open": 0, "not stored": 0, "acknowledged": 1, "expected": 2, "fixed": 3}


def finding_rank(row: FindingRow) -> tuple[int, str, str]:
    """Sort key: regressions first, then improvements, configuration changes (never a
    software gain or loss) last, then software and series."""
    if row.kind in _KIND_ORDER:
        rank = _KIND_ORDER.index(row.kind)
    else:
        last = {"improvement": 1, "configuration_changed": 2}
        rank = len(_KIND_ORDER) + last.get(row.kind, 0)
    return rank, row.software, row.series_key


def finding_rows(
    findings: Iterable[StoredFinding | FindingRecord],
    names: SystemNames | None = None,
    *,
    floor: float | None = None,
) -> tuple[FindingRow, ...]:
    """Rows of ``findings``: open first, then regressions first and improvements last
    (:func:`finding_rank`), then by software, versions and key.

    Each links to the findings page that lists it (:data:`PAGE_ROWS` a page).
    ``floor``: the scaling-efficiency floor (shown with scaling findings).
    """
    names = names or SystemNames(())
    rows = [finding_row(f, names, floor=floor) for f in findings]
    rows.sort(
        key=lambda r: (
            _STATUS_ORDER.get(r.status, 4),
            finding_rank(r)[0],
            r.software,
            r.candidate or "",
            r.series_key,
            r.id or 0,
        )
    )
    return tuple(
        replace(row, evidence_href=page_href("findings.html", i // PAGE_ROWS + 1))
        if i >= PAGE_ROWS
        else row
        for i, row in enumerate(rows)
    )


RowKey = tuple[str, str, str, str, str, str]
"""software, system key, benchmark, scenario, workload, metric."""


def key_lookup(infos: Mapping[str, SeriesInfo]) -> dict[RowKey, list[str]]:
    """Analysis series keys (version axis) by the labels a results-table row has."""
    out: dict[RowKey, list[str]] = defaultdict(list)
    for key in sorted(infos):
        info = infos[key]
        if info.axis != "version":
            continue
        out[
            (info.software, info.system, info.benchmark, info.scenario, info.workload, info.metric)
        ].append(key)
    return out


_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Pager:
    """Where one page is among the pages of a table."""

    number: int
    """This page's number, from 1."""
    count: int
    """How many pages the table has (at least 1)."""
    first_row: int
    """Number of the page's first row, from 1."""
    last_row: int
    """Number of its last row."""
    total_rows: int
    """Rows over all pages."""
    links: tuple[PageLink, ...]
    """Every page (text: its number), relative to this page's folder."""
    previous: str
    """The page before, or empty on the first."""
    next: str
    """The page after, or empty on the last."""


def _local(href: str) -> str:
    """A path relative to the site root, as seen from a page in the same folder."""
    return href.rpartition("/")[2]


def paginate(
    rows: Sequence[_T], first: str, *, size: int = PAGE_ROWS
) -> Iterator[tuple[str, Pager, Sequence[_T]]]:
    """(path, pager, rows) of each page of ``rows``; ``first`` is the first page's path.

    No rows still give one (empty) page.
    """
    count = max(1, -(-len(rows) // size))
    hrefs = [page_href(first, n) for n in range(1, count + 1)]
    links = tuple(PageLink(str(n), _local(h)) for n, h in enumerate(hrefs, start=1))
    for index, href in enumerate(hrefs):
        chunk = rows[index * size : (index + 1) * size]
        pager = Pager(
            number=index + 1,
            count=count,
            first_row=index * size + 1 if chunk else 0,
            last_row=index * size + len(chunk),
            total_rows=len(rows),
            links=links,
            previous=_local(hrefs[index - 1]) if index else "",
            next=_local(hrefs[index + 1]) if index + 1 < count else "",
        )
        yield href, pager, chunk
