"""The gate's policy file and acknowledgements file (TOML), and stored triage as
acknowledgements.

The gate's policy file and its acknowledgements file (TOML), as frozen dataclasses.

A policy file (``tracker gate --policy gate.toml``)::

    [gate]
    q = 0.05                              # Benjamini-Hochberg level
    floor_repeats = 0.02                  # |g| floor with repeats on both sides
    floor_single = 0.05                   # |g| floor for one value per version
    target_tokens_per_s_per_user = 50.0   # where serving sweeps are read
    efficiency_floor = 0.90               # scaling efficiency below this is a finding
    fail_on = ["regression", "target", "scaling", "invalid", "expected"]  # + "missing"
    acknowledgements = "acknowledgements.toml"       # relative to this file

    [[threshold]]                         # per metric / benchmark / series pattern
    match = "*llama2-70b*"                # fnmatch on the series key, benchmark or metric
    floor = 0.03                          # optional: replaces both floors
    q = 0.01                              # optional: replaces q for these series
    efficiency_floor = 0.80               # optional: the scaling floor of matching groups

    [[expect]]                            # an expected gain (the mirror of an acknowledgement)
    match = "*llama*"                     # fnmatch on the series key, benchmark or metric
    candidate = "2.1.0"                   # the version that brings it; or a range "2.1.0..2.2.0"
    min_gain = 0.10                       # every matching series at least 10% better
    reason = "paged attention v2"         # optional

The last ``[[threshold]]`` that matches a series wins for each knob it sets.

An **expected change** (``[[expect]]``) fails the gate of its candidate where the gain
does not show: a matching series whose comparison is not an IMPROVEMENT confirmed by the
run's family with a measured gain of at least ``min_gain`` (``exp(g) − 1``, the way the
metric improves) is an item of kind ``expected``, failing like a regression; so is an
entry no compared series matches. Where every matching series shows the gain, the entry
is *met* and retires itself: it is bound to its candidate, and over a range it no longer
applies once a baseline inside the range already carries the gain against the last
version before the range (read from the series' levels), so later gates in the range do
not ask for the same gain again. Series of the gate's pair only; an acknowledgement does
not mute an expectation.
``fail_on`` kinds: ``regression`` (measured series), ``target`` (throughput at the
interactivity target, and a target the candidate no longer reaches) and
``scaling`` (the candidate's scaling efficiency below its floor, or fallen against an
earlier version: :mod:`tracker.gate.scaling`) and ``invalid`` (a
candidate result stored as invalid where the baseline's was valid) and
``expected`` (an expected gain that did not show, below) and
``missing`` (a baseline series without a candidate result). A kind left out is
reported, never failing; all but ``missing`` fail by default.

An acknowledgements file, kept under version control::

    [[acknowledgement]]
    series = "example-serving-stack|*|chat-*"   # fnmatch on the series key
    versions = "1.1.0..1.2.0"    # candidate versions, inclusive; "1.2.0", "1.2.0..", "..1.2.0"
    reason = "FP8 KV cache: a known trade-off"
    author = "perf-team"         # optional
    expires = 2027-01-31         # optional: ignored from that day on

A matching, unexpired acknowledgement turns a regression (or a suspect result)
into "acknowledged": reported, not failing. The gate also takes the stored
findings of the candidate triaged as acknowledged or expected
(above) as acknowledgements (``triage``); an entry of the
file wins over a stored triage of the same series.

Triage reaches the gate: stored findings as acknowledgements, and entries for the file.

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

import os
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, field
from datetime import date, datetime
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from tracker.analyze.groupings import cause_of
from tracker.analyze.settings import SeriesThresholds, Threshold, read_settings_file
from tracker.errors import ConfigError
from tracker.records.findings import StoredFinding
from tracker.records.keys import SeriesKey, join_key
from tracker.stats.defaults import EFFICIENCY_FLOOR, FLOOR_REPEATS, FLOOR_SINGLE, Q_LEVEL
from tracker.versions import version_place_key

__all__ = [
    "Acknowledgement",
    "DEFAULT_FAIL_ON",
    "Expectation",
    "GATE_KINDS",
    "GatePolicy",
    "TRIAGED",
    "Threshold",
    "acknowledgement_entries",
    "append_entries",
    "escape_pattern",
    "load_acknowledgements",
    "load_policy",
    "parse_acknowledgements",
    "parse_policy",
    "policy_warnings",
    "stored_triage",
]


GATE_KINDS = ("regression", "target", "scaling", "invalid", "expected", "missing")
DEFAULT_FAIL_ON = frozenset(GATE_KINDS) - {"missing"}
"""A partial candidate is listed and counted, not failed, unless ``fail_on`` says so."""
_GATE_KEYS = {
    "q",
    "floor_repeats",
    "floor_single",
    "target_tokens_per_s_per_user",
    "efficiency_floor",
    "fail_on",
    "acknowledgements",
}
_THRESHOLD_KEYS = {"match", "floor", "q", "efficiency_floor"}
_EXPECT_KEYS = {"match", "candidate", "min_gain", "reason"}
_ACK_KEYS = {"series", "versions", "reason", "author", "expires"}


@dataclass(frozen=True, slots=True)
class Acknowledgement:
    """A known regression: series pattern, candidate-version range, reason, optional expiry."""

    series: str
    versions: str
    reason: str
    author: str = ""
    expires: date | None = None
    source: str = ""
    """Where it comes from: the acknowledgements file, or ``finding N, status``."""

    def covers(self, key: str, candidate: str, *, today: date) -> bool:
        """Whether this entry mutes ``key`` at ``candidate`` on ``today``."""
        if self.expires is not None and today >= self.expires:
            return False
        matches = key == self.series or fnmatchcase(key, self.series)
        return matches and _in_range(candidate, self.versions)


@dataclass(frozen=True, slots=True)
class Expectation:
    """An expected gain: every series matching ``match`` at least ``min_gain`` better at a
    candidate in ``candidate`` (a version or a range, as acknowledgements' ``versions``)."""

    match: str
    candidate: str
    min_gain: float
    reason: str = ""
    source: str = ""

    def applies_to(self, candidate: str) -> bool:
        """Whether a gate of ``candidate`` checks this expectation."""
        return _in_range(candidate, self.candidate)

    def matches(self, key: str, benchmark: str, metric: str) -> bool:
        """fnmatch (case-sensitive) on the series key, the benchmark or the metric."""
        return Threshold(self.match).matches(key, benchmark, metric)

    @property
    def label(self) -> str:
        """``≥ +10% for *llama* at 2.1.0``."""
        return f"≥ {100.0 * self.min_gain:+.0f}% for {self.match} at {self.candidate}"


@dataclass(frozen=True, slots=True)
class GatePolicy:
    """Everything the gate is told; the defaults are the analysis defaults."""

    q_level: float = Q_LEVEL
    floor_repeats: float = FLOOR_REPEATS
    floor_single: float = FLOOR_SINGLE
    target_tokens_per_s_per_user: float = 50.0
    efficiency_floor: float = EFFICIENCY_FLOOR
    fail_on: frozenset[str] = DEFAULT_FAIL_ON
    thresholds: tuple[Threshold, ...] = ()
    acknowledgements: tuple[Acknowledgement, ...] = ()
    expectations: tuple[Expectation, ...] = ()
    source: str | None = None
    acknowledgements_source: str | None = None
    triage: tuple[Acknowledgement, ...] = field(default=(), compare=False)
    """Stored findings triaged as acknowledged or expected (after the file's entries)."""

    def series_thresholds(self) -> SeriesThresholds:
        """The policy's floors and q levels per series, as the analysis applies them."""
        return SeriesThresholds(self.q_level, self.thresholds)

    def acknowledgement_for(
        self, key: str, candidate: str, *, today: date
    ) -> Acknowledgement | None:
        """The first acknowledgement of the file that covers ``key`` at ``candidate``, else
        the first stored triage that does."""
        return next(
            (
                a
                for a in (*self.acknowledgements, *self.triage)
                if a.covers(key, candidate, today=today)
            ),
            None,
        )


def _in_range(version: str, spec: str) -> bool:
    if ".." not in spec:
        return spec.strip() in ("*", version)
    low, high = (part.strip() for part in spec.split("..", 1))
    key = version_place_key(version)  # 2.0, 2.0.0 and v2.0 are one place in a range
    return (not low or version_place_key(low) <= key) and (
        not high or key <= version_place_key(high)
    )


def _toml(data: bytes, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{source}: not valid TOML ({exc})") from exc


def _toml_type(value: Any) -> str:
    """What a TOML value is, in the words of the TOML spec (for messages)."""
    if isinstance(value, datetime):
        return "a date-time"
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}
    names |= {list: "an array", dict: "a table"}
    return names.get(type(value), f"a {type(value).__name__}")


def _unknown(table: dict[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise ConfigError(
            f"{where}: unknown key {extra[0]!r} (known: {', '.join(sorted(allowed))})"
        )


def _fraction(value: Any, where: str, *, upper: float = 1.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{where}: must be a number, got {value!r}")
    if not 0.0 < float(value) < upper:
        raise ConfigError(f"{where}: must lie between 0 and {upper:g}, got {value!r}")
    return float(value)


def _text(table: dict[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = table.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise ConfigError(f"{where}: {key!r} must be a non-empty string")
    return value


def _threshold(table: Any, where: str) -> Threshold:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    _unknown(table, _THRESHOLD_KEYS, where)
    floor = table.get("floor")
    q = table.get("q")
    efficiency = table.get("efficiency_floor")
    return Threshold(
        match=_text(table, "match", where),
        floor=None if floor is None else _fraction(floor, f"{where}.floor"),
        q=None if q is None else _fraction(q, f"{where}.q"),
        efficiency_floor=None
        if efficiency is None
        else _fraction(efficiency, f"{where}.efficiency_floor", upper=1.000001),
    )


def _expectation(table: Any, where: str, source: str) -> Expectation:
    """One ``[[expect]]`` entry; errors name the file and the entry."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    _unknown(table, _EXPECT_KEYS, where)
    if "min_gain" not in table:
        raise ConfigError(f"{where}: 'min_gain' is required (0.10 expects 10% better)")
    return Expectation(
        match=_text(table, "match", where),
        candidate=_text(table, "candidate", where),
        min_gain=_fraction(table["min_gain"], f"{where}.min_gain", upper=float("inf")),
        reason=_text(table, "reason", where, required=False),
        source=source,
    )


def _tables(doc: dict[str, Any], name: str, source: str) -> list[Any]:
    """The array of tables ``name`` of a TOML document (empty when absent)."""
    found = doc.get(name, [])
    if not isinstance(found, list):
        raise ConfigError(f"{source}: {name!r} must be an array of tables")
    return found


def _fail_on(value: Any, where: str) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: must be a list of kinds, e.g. {list(GATE_KINDS)}")
    unknown = sorted(set(value) - set(GATE_KINDS))
    if unknown:
        raise ConfigError(f"{where}: unknown kind {unknown[0]!r} (known: {', '.join(GATE_KINDS)})")
    return frozenset(value)


def parse_acknowledgements(data: bytes, *, source: str) -> tuple[Acknowledgement, ...]:
    """The ``[[acknowledgement]]`` entries of a TOML file; errors name ``source`` and entry."""
    doc = _toml(data, source)
    _unknown(doc, {"acknowledgement"}, source)
    entries = doc.get("acknowledgement", [])
    if not isinstance(entries, list):
        raise ConfigError(f"{source}: 'acknowledgement' must be an array of tables")
    found = []
    for n, entry in enumerate(entries, start=1):
        where = f"{source}: acknowledgement {n}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: must be a table")
        _unknown(entry, _ACK_KEYS, where)
        expires = entry.get("expires")
        if expires is not None and (not isinstance(expires, date) or isinstance(expires, datetime)):
            raise ConfigError(
                f"{where}: 'expires' must be a date such as 2027-01-31 (no time of day, "
                f"no quotes), got {_toml_type(expires)} {expires!r}"
            )
        found.append(
            Acknowledgement(
                series=_text(entry, "series", where),
                versions=_text(entry, "versions", where),
                reason=_text(entry, "reason", where),
                author=_text(entry, "author", where, required=False),
                expires=expires,
                source=source,
            )
        )
    return tuple(found)


def load_acknowledgements(path: Path) -> tuple[Acknowledgement, ...]:
    """Read an acknowledgements file (a regular file of bounded size: see
    :func:`~tracker.analyze.settings.read_settings_file`)."""
    data = read_settings_file(path, "acknowledgements file")
    return parse_acknowledgements(data, source=str(path))


def parse_policy(data: bytes, *, source: str, base_dir: Path) -> GatePolicy:
    """A policy from TOML bytes; ``acknowledgements`` is read relative to ``base_dir``."""
    doc = _toml(data, source)
    _unknown(doc, {"gate", "threshold", "expect"}, source)
    gate = doc.get("gate", {})
    if not isinstance(gate, dict):
        raise ConfigError(f"{source}: [gate] must be a table")
    _unknown(gate, _GATE_KEYS, f"{source}: [gate]")
    kw: dict[str, Any] = {"source": source}
    for key, name in (("q", "q_level"), ("floor_repeats", None), ("floor_single", None)):
        if key in gate:
            kw[name or key] = _fraction(gate[key], f"{source}: gate.{key}")
    if "efficiency_floor" in gate:
        kw["efficiency_floor"] = _fraction(
            gate["efficiency_floor"], f"{source}: gate.efficiency_floor", upper=1.000001
        )
    if "target_tokens_per_s_per_user" in gate:
        kw["target_tokens_per_s_per_user"] = _fraction(
            gate["target_tokens_per_s_per_user"],
            f"{source}: gate.target_tokens_per_s_per_user",
            upper=float("inf"),
        )
    if "fail_on" in gate:
        kw["fail_on"] = _fail_on(gate["fail_on"], f"{source}: gate.fail_on")
    thresholds = _tables(doc, "threshold", source)
    kw["thresholds"] = tuple(
        _threshold(t, f"{source}: threshold {n}") for n, t in enumerate(thresholds, start=1)
    )
    kw["expectations"] = tuple(
        _expectation(t, f"{source}: expect {n}", source)
        for n, t in enumerate(_tables(doc, "expect", source), start=1)
    )
    if "acknowledgements" in gate:
        ack_path = base_dir / _text(gate, "acknowledgements", f"{source}: [gate]")
        kw["acknowledgements"] = load_acknowledgements(ack_path)
        kw["acknowledgements_source"] = str(ack_path)
    return GatePolicy(**kw)


def policy_warnings(policy: GatePolicy) -> list[str]:
    """What the gate says about a policy under which it cannot do its job: a ``fail_on``
    that lists no kind passes everything (exit 0 whatever it finds)."""
    if policy.fail_on:
        return []
    return [
        f"{policy.source or 'the policy'}: fail_on is empty, so nothing can fail this gate "
        "(it exits 0 whatever it finds); list the kinds that must fail, e.g. "
        'fail_on = ["regression"], or leave fail_on out for the default'
    ]


def load_policy(path: Path) -> GatePolicy:
    """Read a policy file (and the acknowledgements file it names); both are regular files
    of bounded size (:func:`~tracker.analyze.settings.read_settings_file`)."""
    data = read_settings_file(path, "policy file")
    return parse_policy(data, source=str(path), base_dir=path.parent)


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
        key = SeriesKey.parse(f.series_key)
        if key is not None:
            cause = cause_of(*astuple(key))
            if cause.point:
                head = (key.software, key.system, key.benchmark, key.scenario)
                curve = f"{escape_pattern(cause.curve)}/*"
                out[join_key(*map(escape_pattern, head), curve, escape_pattern(key.metric))] = None
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
    the result must parse. Returns how many entries the file has now.

    The file must be a regular file (or missing); the new text is written under a
    temporary name beside it and renamed, so a failed write leaves it as it was."""
    exists = os.path.lexists(path)
    data = read_settings_file(path, "acknowledgements file") if exists else b""
    try:
        before = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: the acknowledgements file is not UTF-8 text") from None
    parse_acknowledgements(data, source=str(path))
    text = before + ("\n" if before and not before.endswith("\n") else "")
    text += ("\n" if text else "") + entries
    found = parse_acknowledgements(text.encode("utf-8"), source=str(path))
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        temporary.write_text(text, "utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise ConfigError(
            f"{path}: cannot write the acknowledgements file ({exc.strerror or exc}); "
            "it was left as it was"
        ) from None
    return len(found)
