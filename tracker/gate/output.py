"""The gate's verdict as Markdown (for the CI summary), JSON (for machines) and table cells.

Pure functions of a :class:`~tracker.gate.decision.GateResult`; the CLI prints them and
appends the Markdown to ``$GITHUB_STEP_SUMMARY``. Every issue about two versions of a
series says what changed besides the software (``nothing but the software``, or
``configuration changed: host CPU A → B; ...``): in the text table and the Markdown
after the issue, in the JSON as ``besides_software`` of each issue and item. With
``report`` (the report
folder, as the reader will reach it from where the output is shown) each series
links into the static report: the comparison page of the version pair when the
report has one (consecutive versions, or the first against the newest), else the
benchmark page.

Labels come from flags and files: in the Markdown every text goes through
:func:`tracker.text_safety.markdown_text` (no link, image, HTML or control
character of a label reaches the step summary) and each link target is
percent-encoded; the JSON escapes every control character, C1 and
bidirectional-override characters included (:func:`tracker.text_safety.json_text`).

The formats CI systems read (``--format junit|github``):

Pure functions of a :class:`~tracker.gate.decision.GateResult`, as
:mod:`tracker.gate.output`; the CLI prints them (``tracker gate --format junit|github``).

**JUnit XML** (:func:`gate_junit`): one ``<testsuite>`` for the version pair and one
``<testcase>`` per gated series: every series the gate compared, and every series it
reported otherwise (missing, invalid, a scaling step, an expectation). ``classname``
is the software and system, ``name`` the benchmark, scenario, workload and metric
(the series key is the ``file`` attribute's stand-in, in ``<properties>``: JUnit has
no better place). A failing series has a ``<failure>`` whose ``message`` is its
issue's verdict line (the text format's line); a suspect or inconclusive one fails
only under ``--strict`` (exit 3); one acknowledged or of a kind the policy does not
fail on is ``<skipped>`` with the reason. The layout is the one GitLab, Jenkins and
Buildkite read (``tests/data/junit/junit.xsd`` is the schema the tests validate against).

**GitHub annotations** (:func:`gate_github`): one workflow command per line —
``::error`` for each failing issue, ``::warning`` for suspect and inconclusive ones,
``::notice`` for the summary, acknowledged issues and the missing series (one per
benchmark). Messages are escaped as the runner expects (``%``, CR and LF; and ``:``
and ``,`` in properties), so a label never ends a command early.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import quote
from xml.sax.saxutils import escape, quoteattr

from tracker.gate.decision import GateIssue, GateItem, GateResult
from tracker.gate.items import (
    CHECKS,
    KIND_CONFIGURATION,
    KIND_MISSING,
    NO_ACCELERATOR_COUNT,
    STATE_ACKNOWLEDGED,
    STATE_FAILING,
    STATE_INCONCLUSIVE,
    STATE_NOT_GATED,
    STATE_ORDER,
    STATE_SUSPECT,
    ExpectationCheck,
)
from tracker.gate.policy import policy_warnings
from tracker.records.results import finite_value
from tracker.report.urls import benchmark_href, compare_href
from tracker.text_safety import is_safe_link, json_text, markdown_text, xml_text

__all__ = [
    "COMMENT_MARKER",
    "GATE_COLUMNS",
    "TextLine",
    "gate_github",
    "gate_json",
    "gate_junit",
    "gate_markdown",
    "gated_series",
    "gate_text",
    "issue_cells",
    "issue_line",
    "missing_summary",
    "plural",
    "item_link",
    "settings_lines",
    "verdict_line",
]

GATE_COLUMNS = ("verdict", "check", "change", "issue")
"""The text table's columns: the gate's verdict on the issue, which check found it."""

MARKDOWN_COLUMNS = (
    "verdict",
    "check",
    "issue",
    "versions",
    "Δ%",
    "CI (Δ%)",
    "p / q",
    "method, n; sensitivity",
)


def _has_page(order: Sequence[str], baseline: str, candidate: str) -> bool:
    if baseline not in order or candidate not in order:
        return False
    i, j = order.index(baseline), order.index(candidate)
    return j == i + 1 or (i == 0 and j == len(order) - 1)


def item_link(result: GateResult, item: GateItem, report: str | None) -> str | None:
    """A relative link into the report folder ``report`` for ``item`` (``None`` without one)."""
    if report is None or not is_safe_link(report):
        return None  # only http, https or relative links (the CLI refuses any other)
    base = report.rstrip("/") + "/"
    order = result.version_order.get(item.software, ())
    if item.kind != "scaling" and _has_page(order, item.baseline, item.candidate):
        return base + compare_href(item.software, item.baseline, item.candidate)
    if item.kind == "scaling":
        return base + "scaling.html"
    return base + benchmark_href(item.benchmark, item.scenario)


def _delta(issue: GateIssue) -> str:
    """The change in words: one figure, or the range over the members."""
    deltas = sorted(issue.deltas, key=abs)
    if not deltas:
        return "—"
    word = "worse" if issue.headline.worse else "better"
    if issue.kinds[0] == KIND_CONFIGURATION:
        word = "configuration changed, not a software change"
    low, high = f"{deltas[0]:+.1f}%", f"{deltas[-1]:+.1f}%"
    return f"{low} ({word})" if low == high else f"{low} to {high} ({word})"


def _ci(item: GateItem) -> str:
    if item.ci_pct is None:
        return "—"
    return f"[{item.ci_pct[0]:+.1f}%, {item.ci_pct[1]:+.1f}%]"


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.2g}"


def _pq(item: GateItem) -> str:
    return f"{_number(item.p_value)} / {_number(item.q_value)}"


def _method(item: GateItem) -> str:
    if not item.method:
        return "—"
    return f"{item.method}, n={item.n_baseline}/{item.n_candidate}"


def _method_cell(item: GateItem) -> str:
    """The method and counts, and what the test could have seen."""
    return _method(item) + (f"; {item.sensitivity}" if item.sensitivity else "")


def _versions(item: GateItem) -> str:
    return f"{item.baseline} → {item.candidate}"


def _acknowledged(issue: GateIssue) -> str:
    """Who and why, for an acknowledged issue (empty otherwise)."""
    acks = [m.acknowledgement for m in issue.members if m.acknowledgement is not None]
    if not acks:
        return ""
    ack = acks[0]
    source = ack.source.replace("\\", "/").rsplit("/", 1)[-1]
    who = "; ".join(p for p in (ack.author, source) if p)
    return f"acknowledged: {ack.reason}" + (f" ({who})" if who else "")


def issue_line(issue: GateIssue) -> str:
    """One line: ``example-llm-70b · concurrency · isl1024-osl1024: -8.0% (worse; CI
    [-9.3%, -5.4%]) at c2–c32 and at 50 tokens/s/user``, or the headline's detail."""
    h = issue.headline
    if issue.deltas and h.kind != "scaling":
        what = _delta(issue)
        if h.ci_pct is not None:
            what = what[:-1] + f"; CI {_ci(h)})"
    else:
        what = h.detail or h.verdict
    return " ".join(p for p in (f"{issue.title}: {what}", issue.where) if p)


def issue_cells(result: GateResult, issue: GateIssue) -> tuple[str, ...]:
    """One row of the text table (columns :data:`GATE_COLUMNS`); cells may hold lines."""
    h = issue.headline
    change = _delta(issue) + (f"\nCI {_ci(h)}" if h.ci_pct is not None else "")
    lines = [" ".join(p for p in (issue.title, issue.where) if p), issue.series]
    lines += [d for d in issue.details if not issue.deltas or d != h.detail][:2]
    if issue.besides_software and issue.besides_software not in issue.details:
        lines.append(f"besides the software: {issue.besides_software}")
    if h.twins:
        lines.append(f"the same measurement as {', '.join(h.twins)}")
    if not issue.deltas and not issue.details:
        lines.append(h.verdict)
    facts = [f"q {_number(h.q_value)}"] if h.q_value is not None else []
    facts += [_method(h)] if h.method else []
    facts += [h.sensitivity] if h.sensitivity else []
    if (h.baseline, h.candidate) != (result.baseline, result.candidate):
        facts.append(_versions(h))
    if len(issue.members) > 1:
        facts.append(f"{len(issue.members)} series")
    lines += [" · ".join(facts)] if facts else []
    lines += [_acknowledged(issue)] if _acknowledged(issue) else []
    return (issue.state, issue.check.replace(", ", ",\n"), change, "\n".join(lines))


def settings_lines(result: GateResult) -> list[str]:
    """The family size and the settings used (printed at the end of every format)."""
    p = result.policy
    family = (
        f"; family size {result.family_size} ({result.family_method.upper()})"
        if result.family_size
        else ""
    )
    of = f" of {', '.join(result.softwares)}" if result.softwares else ""
    chosen = f" (selected: {result.selection.text()})" if result.selection.text() else ""
    settings = [f"q {p.q_level:g}"]
    settings.append(
        f"floors {p.floor_repeats:.0%} with repeats, "
        f"{p.floor_single:.0%} single value (regression past 2× with no history)"
    )
    if result.has_sweeps:
        settings.append(f"target {p.target_tokens_per_s_per_user:g} tokens/s/user")
    if result.has_scaling:
        settings.append(f"efficiency floor {p.efficiency_floor:.0%}")
    settings.append(f"failing kinds: {', '.join(sorted(p.fail_on)) or 'none'}")
    settings += ["strict"] if result.strict else []
    lines = [
        f"Compared {plural(result.compared, 'series', 'series')}{of} "
        f"{result.baseline} → {result.candidate}{chosen}{family}"
        + (
            f"; {len(result.missing)} baseline series without a candidate result."
            if result.missing
            else "."
        ),
        f"Settings: {'; '.join(settings)}.",
        f"Policy: {p.source or 'defaults'}; {plural(len(p.thresholds), 'threshold')}; "
        f"acknowledgements: {p.acknowledgements_source or 'none'} "
        f"({plural(len(p.acknowledgements), 'entry', 'entries')}); stored triage: "
        f"{plural(len(p.triage), 'finding')} acknowledged or expected (the file wins where "
        f"both apply); expected gains: {len(p.expectations)}.",
    ]
    if result.sensitivity:
        lines.append(
            f"Sensitivity: {result.sensitivity_text()}; {result.under_powered} of "
            f"{len(result.sensitivity)} under-powered (could not confirm a change at their "
            f"floor); a series could detect what it would confirm 4 times in 5 at the level "
            f"the run's regression family asks of one more discovery."
        )
    lines += [_expectation_line(check) for check in result.expectations]
    return lines


def plural(n: int, one: str, many: str | None = None) -> str:
    """``1 finding``, ``2 findings``, ``1 entry``, ``3 entries``."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _expectation_line(check: ExpectationCheck) -> str:
    """``Expected ≥ +10% for *llama* at 2.1.0: met by 3 of 3 series (retired).``"""
    e = check.expectation
    why = f" ({e.reason})" if e.reason else ""
    if not check.matched:
        return f"Expected {e.label}{why}: no compared series matches."
    state = "met; retired" if check.met else "not met"
    already = f", {check.retired} had it already" if check.retired else ""
    return (
        f"Expected {e.label}{why}: shown by {check.shown} of {check.matched} series"
        f"{already} ({state})."
    )


_LINK_SAFE = "/#?=&%:;,.-_~+@!$'*"
"""Characters a Markdown link target keeps; anything else (spaces, parentheses,
brackets, control characters) is percent-encoded."""


COMMENT_MARKER = "<!-- tracker-gate -->"
"""The hidden first line of ``--format markdown --comment``: a CI step finds the pull
request comment that starts with it and updates it, so a pull request has one gate
comment, not one per push."""

COMMENT_ROWS = 20
"""A comment lists every failing, suspect and inconclusive issue, and at most this many
others (improvements, acknowledged ones, configuration changes)."""

_SERIOUS = ("failing", "suspect", "inconclusive")


def _markdown_issues(result: GateResult, comment: bool) -> tuple[list[GateIssue], list[str]]:
    """The issues a Markdown body has a row for, and the lines that stand for the rest
    (a comment: missing series per benchmark, and how many others were left out)."""
    if not comment:
        return list(result.issues), []
    shown = [i for i in result.issues if i.kinds[0] != "missing"]
    serious = [i for i in shown if i.state in _SERIOUS]
    rest = [i for i in shown if i.state not in _SERIOUS]
    notes = [
        f"- {markdown_text(line.text)}"
        for line in missing_summary([i for i in result.issues if i.kinds[0] == "missing"])
        if line.state or line.text.startswith("…")
    ]
    if len(rest) > COMMENT_ROWS:
        notes.append(
            f"- … and {plural(len(rest) - COMMENT_ROWS, 'more issue')} that do not fail "
            "(the step summary or `tracker gate --format markdown` lists them all)"
        )
    return serious + rest[:COMMENT_ROWS], notes


def gate_markdown(result: GateResult, *, report: str | None = None, comment: bool = False) -> str:
    """A Markdown summary: the verdict, a table of every issue, the settings. With
    ``comment``: a body for one sticky pull-request comment — :data:`COMMENT_MARKER`
    first, every issue that fails or is in doubt, a few others, the missing series
    per benchmark."""
    icon = {0: "✅", 1: "❌", 3: "⚠️"}.get(result.exit_code, "")
    out = [COMMENT_MARKER] if comment else []
    out += [f"## {icon} {markdown_text(result.summary)}".replace("  ", " "), ""]
    out += [f"> ⚠️ {markdown_text(warning)}\n" for warning in policy_warnings(result.policy)]
    rows, notes = _markdown_issues(result, comment)
    if rows:
        out.append("| " + " | ".join(MARKDOWN_COLUMNS) + " |")
        out.append("| " + " | ".join("---" for _ in MARKDOWN_COLUMNS) + " |")
        for issue in rows:
            out.append("| " + " | ".join(_markdown_cells(result, issue, report)) + " |")
        out.append("")
    elif not notes:
        out += ["No series changed past its floor.", ""]
    out += [*notes, ""] if notes else []
    out += [f"{markdown_text(line)}  " for line in settings_lines(result)]
    return "\n".join(out).rstrip() + "\n"


def _markdown_cells(result: GateResult, issue: GateIssue, report: str | None) -> list[str]:
    h = issue.headline
    what = " ".join(p for p in (issue.title, issue.where) if p)
    cell = markdown_text(what)
    link = item_link(result, h, report)
    if link is not None:
        cell = f"[{cell}]({quote(link, safe=_LINK_SAFE)})"
    notes = [issue.series, *issue.details[:2]]
    if issue.besides_software and issue.besides_software not in issue.details:
        notes.append(f"besides the software: {issue.besides_software}")
    if h.twins:
        notes.append(f"the same measurement as {', '.join(h.twins)}")
    if len(issue.members) > 1:
        notes.append(f"{len(issue.members)} series")
    if issue.finding_id is not None:
        notes.append(f"finding {issue.finding_id}")
    cell += " · " + markdown_text(" · ".join(notes))
    verdict = issue.state
    ack = _acknowledged(issue)
    if ack:
        reasons = [m.acknowledgement.reason for m in issue.members if m.acknowledgement]
        verdict += f" ({reasons[0]})"
        cell += " · " + markdown_text(ack)
    cells = [verdict, issue.check, cell, _versions(h), _delta(issue), _ci(h), _pq(h)]
    cells.append(_method_cell(h))
    return [c if i == 2 else markdown_text(c) for i, c in enumerate(cells)]


def _item_json(result: GateResult, item: GateItem, report: str | None) -> dict[str, Any]:
    doc = asdict(item)
    doc["ci_pct"] = list(item.ci_pct) if item.ci_pct is not None else None
    doc["acknowledgement"] = None
    if item.acknowledgement is not None:
        ack = asdict(item.acknowledgement)
        ack["expires"] = None if item.acknowledgement.expires is None else str(ack["expires"])
        doc["acknowledgement"] = ack
    doc["link"] = item_link(result, item, report)
    doc["detectable_pct"] = finite_value(item.detectable_pct)
    doc["sensitivity"] = item.sensitivity
    return doc


def _issue_json(result: GateResult, issue: GateIssue, report: str | None) -> dict[str, Any]:
    return {
        "state": issue.state,
        "check": issue.check,
        "kinds": list(issue.kinds),
        "line": issue_line(issue),
        "title": issue.title,
        "where": issue.where,
        "series": issue.series,
        "headline": issue.headline.key,
        "finding_id": issue.finding_id,
        "besides_software": issue.besides_software,
        "members": [m.key for m in issue.members],
        "link": item_link(result, issue.headline, report),
    }


def gate_json(result: GateResult, *, report: str | None = None) -> str:
    """The verdict as one JSON object (sorted keys): every item, and the issues they form."""
    p = result.policy
    doc = {
        "exit_code": result.exit_code,
        "summary": result.summary,
        "baseline": result.baseline,
        "candidate": result.candidate,
        "strict": result.strict,
        "compared": result.compared,
        "baseline_series": result.baseline_series,
        "missing": [i.key for i in result.missing],
        "family_size": result.family_size,
        "family_method": result.family_method,
        "issues": [_issue_json(result, i, report) for i in result.issues],
        "series": gated_series(result),
        "items": [_item_json(result, i, report) for i in result.items],
        "sensitivity": {
            "change_pct": 100.0 * result.sensitivity_change,
            "blind_share": result.blind_share,
            "under_powered": result.under_powered,
            "series": [
                {
                    "key": s.key,
                    "verdict": s.verdict,
                    "detectable_pct": finite_value(s.detectable_pct),
                    "under_powered": s.under_powered,
                }
                for s in result.sensitivity
            ],
        },
        "expectations": [
            {
                "match": c.expectation.match,
                "candidate": c.expectation.candidate,
                "min_gain": c.expectation.min_gain,
                "reason": c.expectation.reason,
                "matched": c.matched,
                "shown": c.shown,
                "retired": c.retired,
                "met": c.met,
            }
            for c in result.expectations
        ],
        "settings": {
            "q": p.q_level,
            "floor_repeats": p.floor_repeats,
            "floor_single": p.floor_single,
            "target_tokens_per_s_per_user": p.target_tokens_per_s_per_user,
            "efficiency_floor": p.efficiency_floor,
            "fail_on": sorted(p.fail_on),
            "policy": p.source,
            "acknowledgements": p.acknowledgements_source,
            "stored_triage": len(p.triage),
            "thresholds": [asdict(t) for t in p.thresholds],
        },
    }
    return json_text(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False))


MISSING_LINES = 10
"""At most this many per-benchmark lines summarise the missing series (``--show-missing``:
every series, one line each)."""

STATE_WIDTH = max(len(s) for s in STATE_ORDER) + 2
CHECK_WIDTH = max(len(c) for c in CHECKS.values()) + 2


@dataclass(frozen=True, slots=True)
class TextLine:
    """One physical line of the text gate: the state (for colour; empty for none) and the
    rest. ``str()`` is the whole line, never with trailing spaces."""

    state: str
    text: str

    def __str__(self) -> str:
        head = f"{self.state:<{STATE_WIDTH}}" if self.state else ""
        return (head + self.text).rstrip()


def _text_issue(issue: GateIssue) -> str:
    """``check  title: what where — software · system``: one issue, one line."""
    check = issue.check.ljust(CHECK_WIDTH - 1) + " "
    ack = _acknowledged(issue)
    found = f"#{issue.finding_id} " if issue.finding_id is not None else ""
    return f"{check}{found}{issue_line(issue)} — {issue.series}" + (f" — {ack}" if ack else "")


def _verbose_lines(result: GateResult, issue: GateIssue) -> list[TextLine]:
    """The issue's details, indented, for ``--verbose``: the table cell's lines but its first."""
    _state, _check, change, cell = issue_cells(result, issue)
    lines = cell.split("\n")[2:] + [f"change: {change.replace(chr(10), '; ')}"]
    return [TextLine("", "    " + line) for line in lines if line.strip()]


def missing_summary(issues: Sequence[GateIssue]) -> list[TextLine]:
    """The missing series of ``issues`` in a few lines: one per benchmark (how many series
    are missing, on how many systems), the first :data:`MISSING_LINES` benchmarks with
    the most, then what is left and how to see every series."""
    by_benchmark: dict[str, list[GateItem]] = {}
    for issue in issues:
        for m in issue.members:
            by_benchmark.setdefault(m.benchmark, []).append(m)
    ranked = sorted(by_benchmark.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    lines = []
    for benchmark, members in ranked[:MISSING_LINES]:
        state = min((m.state for m in members), key=lambda s: STATE_ORDER.get(s, 9))
        systems = sorted({m.system.removeprefix("/") for m in members})
        scenarios = ", ".join(sorted({m.scenario for m in members if m.scenario}))
        example = f"; e.g. {systems[0]}" + (f" ({scenarios})" if scenarios else "")
        if all(m.detail == NO_ACCELERATOR_COUNT for m in members):
            example += f"; {NO_ACCELERATOR_COUNT}"
        lines.append(
            TextLine(
                state,
                f"{benchmark}: "
                f"{plural(len(members), 'series', 'series')} without a candidate result on "
                f"{plural(len(systems), 'system')}{example}",
            )
        )
    rest = ranked[MISSING_LINES:]
    if rest:
        n = sum(len(m) for _b, m in rest)
        more = plural(len(rest), "more benchmark")
        lines.append(
            TextLine("", f"… and {more} with {plural(n, 'missing series', 'missing series')}")
        )
    if lines:
        lines.append(TextLine("", "(--show-missing lists every missing series, one line each)"))
    return lines


def gate_text(
    result: GateResult, *, verbose: bool = False, show_missing: bool = False
) -> list[TextLine]:
    """The text gate: the summary line, then one line per issue, what fails first; the
    missing series summarised per benchmark (every one with ``show_missing``); with
    ``verbose`` each issue's details indented below it; the settings last."""
    lines = [TextLine("", result.summary)]
    missing = [i for i in result.issues if i.kinds[0] == "missing"]
    for issue in (i for i in result.issues if i.kinds[0] != "missing"):
        lines.append(TextLine(issue.state, _text_issue(issue)))
        lines += _verbose_lines(result, issue) if verbose else []
    if show_missing:
        for issue in missing:
            lines.append(TextLine(issue.state, _text_issue(issue)))
            lines += _verbose_lines(result, issue) if verbose else []
    else:
        for line in missing_summary(missing):
            check = CHECKS["missing"].ljust(CHECK_WIDTH) if line.state else ""
            lines.append(TextLine(line.state, check + line.text))
    for warning in policy_warnings(result.policy):
        lines.append(TextLine("", f"Warning: {warning}"))
    lines += [TextLine("", line) for line in settings_lines(result)]
    return lines


_DOUBTS = (STATE_SUSPECT, STATE_INCONCLUSIVE)


def verdict_line(issue: GateIssue) -> str:
    """``failing: <issue line> — <software · system>``: what an issue's series fails with."""
    found = f" (finding {issue.finding_id})" if issue.finding_id is not None else ""
    return f"{issue.state}: {issue_line(issue)} — {issue.series}{found}"


def _cases(result: GateResult) -> dict[str, tuple[str, str, GateIssue | None]]:
    """Series key → (classname, name, its issue or ``None`` when it passed quietly)."""
    cases: dict[str, tuple[str, str, GateIssue | None]] = {}
    for issue in result.issues:
        for m in issue.members:
            classname = ".".join(p for p in (m.software, m.system.removeprefix("/")) if p)
            name = " · ".join(p for p in (m.benchmark, m.scenario, m.workload, m.metric) if p)
            cases.setdefault(m.key, (classname, name, issue))
    for s in result.sensitivity:
        if s.key not in cases:
            parts = s.key.split("|")
            parts += [""] * (6 - len(parts))
            name = " · ".join(p for p in parts[2:6] if p)
            cases[s.key] = (".".join(p for p in parts[:2] if p.strip("/")), name, None)
    return cases


def _outcome(result: GateResult, issue: GateIssue | None) -> str:
    """``failure``, ``skipped`` or ``passed`` for a series in ``issue``."""
    if issue is None:
        return "passed"
    if issue.state == STATE_FAILING or (result.strict and issue.state in _DOUBTS):
        return "failure"
    if issue.state in (STATE_ACKNOWLEDGED, STATE_NOT_GATED):
        return "skipped"
    return "passed"


def _case(result: GateResult, key: str, case: tuple[str, str, GateIssue | None]) -> str:
    classname, name, issue = case
    head = f'    <testcase classname={_attr(classname)} name={_attr(name)} time="0">'
    props = f'      <properties><property name="series" value={_attr(key)}/></properties>'
    outcome = _outcome(result, issue)
    lines = [head, props]
    if issue is not None and outcome == "failure":
        kind = issue.kinds[0]
        detail = "\n".join(issue.details)
        lines.append(
            f"      <failure message={_attr(verdict_line(issue))} type={_attr(kind)}>"
            f"{escape(xml_text(detail))}</failure>"
        )
    elif issue is not None and outcome == "skipped":
        lines.append(f"      <skipped message={_attr(verdict_line(issue))}/>")
    elif issue is not None:
        lines.append(f"      <system-out>{escape(xml_text(verdict_line(issue)))}</system-out>")
    lines.append("    </testcase>")
    return "\n".join(lines)


def _attr(text: str) -> str:
    return quoteattr(xml_text(text))


def gated_series(result: GateResult) -> list[dict[str, Any]]:
    """Every gated series (the JUnit test cases), unchanged ones included: its key, its
    state (``no change`` for a compared series the gate has nothing to say about), its
    JUnit outcome (``passed``, ``failure``, ``skipped``) and its issue's finding id."""
    return [
        {
            "key": key,
            "state": issue.state if issue is not None else "no change",
            "outcome": _outcome(result, issue),
            "finding_id": issue.finding_id if issue is not None else None,
        }
        for key, (_classname, _name, issue) in sorted(_cases(result).items())
    ]


def gate_junit(result: GateResult) -> str:
    """The verdict as JUnit XML (see the module docstring): counts in both the
    ``<testsuites>`` and the ``<testsuite>`` element."""
    cases = _cases(result)
    outcomes = [_outcome(result, issue) for _c, _n, issue in cases.values()]
    counts = (
        f'tests="{len(cases)}" failures="{outcomes.count("failure")}" errors="0" '
        f'skipped="{outcomes.count("skipped")}" time="0"'
    )
    suite = f"tracker gate {result.baseline} → {result.candidate}"
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f"<testsuites name={_attr('tracker gate')} {counts}>",
        f"  <testsuite name={_attr(suite)} {counts}>",
        "    <properties>",
        f'      <property name="summary" value={_attr(result.summary)}/>',
        f'      <property name="exit_code" value="{result.exit_code}"/>',
        "    </properties>",
        *(_case(result, key, case) for key, case in sorted(cases.items())),
        "  </testsuite>",
        "</testsuites>",
    ]
    return "\n".join(out) + "\n"


def _data(text: str) -> str:
    """A workflow command's message, escaped as the runner unescapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _command(level: str, title: str, message: str) -> str:
    return f"::{level} title={_property(title)}::{_data(message)}"


def _github_lines(result: GateResult) -> Iterator[str]:
    yield _command("notice", "tracker gate", result.summary)
    levels = {STATE_FAILING: "error", STATE_SUSPECT: "warning", STATE_INCONCLUSIVE: "warning"}
    for issue in result.issues:
        if issue.kinds[0] == KIND_MISSING:
            continue
        level = levels.get(issue.state, "notice" if issue.state == STATE_ACKNOWLEDGED else "")
        if level:
            title = f"{issue.state}: {issue.check}"
            yield _command(level, title, f"{issue_line(issue)} — {issue.series}")
    missing = [i for i in result.issues if i.kinds[0] == KIND_MISSING]
    for line in missing_summary(missing):
        level = "error" if line.state == STATE_FAILING else "notice"
        yield _command(level, "missing" if line.state else "tracker gate", line.text)


def gate_github(result: GateResult) -> str:
    """The verdict as GitHub Actions workflow commands, one per line (module docstring)."""
    return "\n".join(_github_lines(result)) + "\n"
