"""Keys: what a series is (:class:`SeriesKey`) and which two versions a comparison is about.

A series is one metric of one benchmark point on one system of one software, across
versions. Its key is written ``software|system|benchmark|scenario|workload|metric``
(the form stored with findings, shown by ``tracker findings`` and matched by the gate's
policy and acknowledgement patterns); :func:`join_key` and :func:`split_key` are the
one place that form is written and read. Other keys (a scaling group's, a stack
comparison's) are joined the same way, with parts of their own.

:class:`Selection` says which series a command looks at: ``--software``, ``--benchmark``
and ``--system``. Each option repeats and takes shell-style globs (``fnmatch``,
case-sensitive: ``mylib``, ``llama2-70b-*``, ``*GB300*``); a series is selected when
every option that was given has a pattern matching it (patterns of one option are
alternatives). A system matches by its name or its key (``submitter/name``, the
division in brackets where there is one), so ``NVIDIA/*`` and ``*GB300*`` both work.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

__all__ = [
    "KEY_SEPARATOR",
    "Selection",
    "SeriesKey",
    "VersionPair",
    "join_key",
    "split_key",
    "system_label",
    "systems_of",
]

KEY_SEPARATOR = "|"
"""Between the parts of a key."""


def join_key(*parts: str) -> str:
    """A key written from its parts."""
    return KEY_SEPARATOR.join(parts)


def split_key(key: str) -> list[str]:
    """A key's parts."""
    return key.split(KEY_SEPARATOR)


@dataclass(frozen=True, slots=True, order=True)
class SeriesKey:
    """The labels that make a series: its identity everywhere in the tracker.

    Records that describe a series extend it with what they add (the series' unit and
    direction: :class:`~tracker.records.findings.SeriesInfo`; the gate's evidence:
    :class:`~tracker.gate.items.GateItem`).
    """

    software: str
    system: str
    """The system's key, ``submitter/name`` (``/name`` without a submitter)."""
    benchmark: str
    scenario: str
    workload: str
    """Empty where the benchmark has one workload; ``<curve>/c<N>`` for a sweep's point."""
    metric: str

    def __str__(self) -> str:
        return join_key(*self.labels())

    def labels(self) -> tuple[str, str, str, str, str, str]:
        """The six labels in the key's order (a record that extends the key has more fields)."""
        return (*self._point(), self.metric)

    def _point(self) -> tuple[str, str, str, str, str]:
        """The labels of the benchmark point: all but the metric."""
        return (self.software, self.system, self.benchmark, self.scenario, self.workload)

    @classmethod
    def parse(cls, key: str) -> SeriesKey | None:
        """The series key written as ``key``; ``None`` for a key of another kind."""
        parts = split_key(key)
        if len(parts) != 6:
            return None
        software, system, benchmark, scenario, workload, metric = parts
        return cls(software, system, benchmark, scenario, workload, metric)

    def with_metric(self, metric: str) -> SeriesKey:
        """The same point's series of another metric."""
        return SeriesKey(*self._point(), metric)


@dataclass(frozen=True, slots=True, order=True)
class VersionPair:
    """The two versions of one comparison: ``baseline`` → ``candidate``."""

    baseline: str
    candidate: str

    def __str__(self) -> str:
        return f"{self.baseline} \N{RIGHTWARDS ARROW} {self.candidate}"

    def __contains__(self, version: object) -> bool:
        return version in (self.baseline, self.candidate)


def system_label(submitter: str | None, accelerator: str | None) -> str:
    """A submitter's accelerator model in words: ``HPE NVIDIA GB200``, but ``NVIDIA GB300``
    for NVIDIA's (never ``NVIDIA NVIDIA GB300``)."""
    who, what = (submitter or "").strip(), (accelerator or "").strip()
    if not who or what.casefold().startswith(who.casefold()):
        return what or who
    return f"{who} {what}".strip()


# --- selection: which series a command looks at ---------------------------------------


def _any(patterns: tuple[str, ...], texts: Iterable[str]) -> bool:
    names = [t for t in texts if t]
    return any(fnmatchcase(name, p) for p in patterns for name in names)


@dataclass(frozen=True, slots=True)
class Selection:
    """Glob patterns per label; an empty tuple selects every value of that label."""

    software: tuple[str, ...] = ()
    benchmark: tuple[str, ...] = ()
    system: tuple[str, ...] = ()

    @property
    def is_everything(self) -> bool:
        """Whether no option was given (every series is selected)."""
        return not (self.software or self.benchmark or self.system)

    def matches(self, software: str, benchmark: str, systems: Iterable[str]) -> bool:
        """Whether a series of ``software`` and ``benchmark`` on a system known by any of
        ``systems`` (its name, its key) is selected."""
        if self.software and not _any(self.software, (software,)):
            return False
        if self.benchmark and not _any(self.benchmark, (benchmark,)):
            return False
        return not self.system or _any(self.system, systems)

    def text(self) -> str:
        """``software mylib; benchmark llama*`` (empty when everything is selected)."""
        parts = (
            ("software", self.software),
            ("benchmark", self.benchmark),
            ("system", self.system),
        )
        return "; ".join(f"{name} {', '.join(p)}" for name, p in parts if p)


def systems_of(system_key: str, name: str = "") -> tuple[str, ...]:
    """The names a system answers to: ``name``, its key, the key without the division in
    brackets, and the part after ``submitter/``."""
    plain = system_key.split(" [", 1)[0]
    return tuple(dict.fromkeys(t for t in (name, system_key, plain, plain.split("/", 1)[-1]) if t))
