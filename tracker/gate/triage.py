"""Triage reaches the gate: stored findings as acknowledgements, and entries for the file.

``tracker findings set-status ID acknowledged|expected --note WHY`` marks a
known regression in the database; :func:`stored_triage` turns every such
finding of the candidate (its series, at that candidate version) into an
:class:`~tracker.gate.policy.Acknowledgement` whose reason is the status note,
so the gate lists it as acknowledged (with the finding's id) instead of failing
on it. The acknowledgements file wins where both cover a series: it is the
reviewed, version-controlled record (with author and expiry), the stored triage
the quick one. :func:`acknowledgement_entries` writes a triaged issue as TOML
entries of that file (``set-status --acknowledgements FILE``), so the triage
can be committed; :func:`append_entries` appends them after checking that the
file still parses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from tracker.analysis.issues import cause_of
from tracker.analysis_records import StoredFinding
from tracker.errors import ConfigError
from tracker.gate.policy import Acknowledgement, parse_acknowledgements

__all__ = [
    "TRIAGED",
    "acknowledgement_entries",
    "append_entries",
    "escape_pattern",
    "stored_triage",
]

TRIAGED = ("acknowledged", "expected")
"""The triage states that make a stored finding an acknowledgement in the gate."""

_SPECIAL = re.compile(r"([*?\[])")


def escape_pattern(text: str) -> str:
    """``text`` as an fnmatch pattern that matches only itself."""
    return _SPECIAL.sub(r"[\1]", text)


def stored_triage(findings: Iterable[StoredFinding], candidate: str) -> tuple[Acknowledgement, ...]:
    """The findings at ``candidate`` triaged as acknowledged or expected, as acknowledgements."""
    return tuple(
        Acknowledgement(
            series=escape_pattern(f.series_key),
            versions=candidate,
            reason=(f.status_note or "").strip() or f"{f.status}, no note",
            source=f"finding {f.id}, {f.status}",
        )
        for f in findings
        if f.status in TRIAGED and f.candidate_version == candidate
    )


def _patterns(findings: Sequence[StoredFinding]) -> list[str]:
    """One pattern per metric of the points of a sweep (``curve/*|metric``), else the key."""
    out: dict[str, None] = {}
    for f in findings:
        head, _, metric = f.series_key.rpartition("|")
        labels = head.split("|")
        if len(labels) == 5:
            cause = cause_of(labels[0], labels[1], labels[2], labels[3], labels[4], metric)
            if cause.point:
                prefix = "|".join(labels[:4])
                out[
                    f"{escape_pattern(prefix)}|{escape_pattern(cause.curve)}/*|{escape_pattern(metric)}"
                ] = None
                continue
        out[escape_pattern(f.series_key)] = None
    return list(out)


def _toml_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in escaped) + '"'


def acknowledgement_entries(
    findings: Sequence[StoredFinding], *, reason: str, title: str = ""
) -> str:
    """TOML ``[[acknowledgement]]`` entries for ``findings`` (one issue) at their candidate."""
    if not reason.strip():
        raise ConfigError("an acknowledgement needs a reason: give --note")
    versions = sorted({f.candidate_version for f in findings if f.candidate_version})
    if not versions:
        raise ConfigError("these findings name no candidate version to acknowledge")
    head = findings[0]
    lines = [f"# {title}" if title else f"# finding {head.id}: {head.series_key}"]
    for version in versions:
        for pattern in _patterns([f for f in findings if f.candidate_version == version]):
            lines += [
                "[[acknowledgement]]",
                f"series = {_toml_string(pattern)}",
                f"versions = {_toml_string(version)}",
                f"reason = {_toml_string(reason.strip())}",
                "",
            ]
    return "\n".join(lines)


def append_entries(path: Path, entries: str) -> int:
    """Append ``entries`` to the acknowledgements file ``path`` (made when missing);
    the result must parse. Returns how many entries the file has now."""
    try:
        before = path.read_text("utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the acknowledgements file ({exc})") from exc
    parse_acknowledgements(before.encode("utf-8"), source=str(path))
    text = before + ("\n" if before and not before.endswith("\n") else "")
    text += ("\n" if text else "") + entries
    found = parse_acknowledgements(text.encode("utf-8"), source=str(path))
    try:
        path.write_text(text, "utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the acknowledgements file ({exc})") from exc
    return len(found)
