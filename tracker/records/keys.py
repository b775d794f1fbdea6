"""Keys: what a series is (:class:`SeriesKey`) and which two versions a comparison is about.

A series is one metric of one benchmark point on one system of one software, across
versions. Its key is written ``software|system|benchmark|scenario|workload|metric``
(the form stored with findings, shown by ``tracker findings`` and matched by the gate's
policy and acknowledgement patterns); :func:`join_key` and :func:`split_key` are the
one place that form is written and read. Other keys (a scaling group's, a stack
comparison's) are joined the same way, with parts of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KEY_SEPARATOR", "SeriesKey", "VersionPair", "join_key", "split_key", "system_label"]

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
