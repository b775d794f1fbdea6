"""The gate's verdict in the formats CI systems read: JUnit XML and GitHub annotations.

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
Buildkite read (``tests/data/junit.xsd`` is the schema the tests validate against).

**GitHub annotations** (:func:`gate_github`): one workflow command per line —
``::error`` for each failing issue, ``::warning`` for suspect and inconclusive ones,
``::notice`` for the summary, acknowledged issues and the missing series (one per
benchmark). Messages are escaped as the runner expects (``%``, CR and LF; and ``:``
and ``,`` in properties), so a label never ends a command early.
"""

from __future__ import annotations

from collections.abc import Iterator
from xml.sax.saxutils import escape, quoteattr

from tracker.gate.decision import GateIssue, GateResult
from tracker.gate.items import (
    KIND_MISSING,
    STATE_ACKNOWLEDGED,
    STATE_FAILING,
    STATE_INCONCLUSIVE,
    STATE_NOT_GATED,
    STATE_SUSPECT,
)
from tracker.gate.output import COMMENT_MARKER, issue_line, missing_summary
from tracker.text_safety import xml_text

__all__ = ["COMMENT_MARKER", "gate_github", "gate_junit"]

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
