"""Findings that share a cause, as one issue with members (the gate's, ``findings``' and the
report's lines).

One change in a serving stack shows in many series: every point of a sweep
(workload ``<curve>/c<N>`` or ``/r<rate>``), the per-accelerator form of each
metric (``X`` and ``X_per_accelerator``) and the derived series at the
interactivity target (``X at N tokens/s/user (...)``, workload ``<curve>``).
MLPerf's ``-99.9`` twins are already folded by the analysis; a twin's benchmark
is read as its ``-99`` here too. :func:`cause_of` says what a series is about;
series with the same :attr:`Cause.key` (software, system, benchmark, scenario,
curve, base metric) that changed in the same direction between the same
versions are one issue, and :func:`where` names its points:
``at c2–c32 and at 50 tokens/s/user``.

Pure over labels (no store, no analysis run): the gate (:mod:`tracker.gate.issues`),
``tracker findings`` (:mod:`tracker.analyze.summary`) and the report
(:mod:`tracker.report.issues`) group with it, so the three count one regression alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = [
    "PER_ACCELERATOR",
    "Cause",
    "cause_of",
    "group_by",
    "point_order",
    "twin_benchmark",
    "where",
]

PER_ACCELERATOR = "_per_accelerator"
_POINT = re.compile(r"^(?P<curve>.+)/(?P<point>(?:r\d[\d.]*-)?c\d[\d.]*|r\d[\d.]*)$")
_AT_TARGET = re.compile(r"^(?P<metric>\S+) at (?P<target>\d[\d.]*) tokens/s/user\b")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")

_TWIN_SUFFIX = "-99.9"
_PRIMARY_SUFFIX = "-99"

T = TypeVar("T")


def twin_benchmark(benchmark: str) -> str | None:
    """The ``-99`` benchmark a ``-99.9`` benchmark may be the twin of (else ``None``)."""
    if benchmark.endswith(_TWIN_SUFFIX):
        return benchmark[: -len(_TWIN_SUFFIX)] + _PRIMARY_SUFFIX
    return None


@dataclass(frozen=True, slots=True)
class Cause:
    """What one series is about: ``key`` is shared by the series of one cause; ``point``
    is the sweep point (``c16``; empty for the curve), ``target`` the interactivity
    target of a derived series (``50``; empty otherwise)."""

    key: tuple[str, str, str, str, str, str]
    point: str = ""
    target: str = ""
    per_accelerator: bool = False

    @property
    def curve(self) -> str:
        """The workload without the point."""
        return self.key[4]

    @property
    def metric(self) -> str:
        """The base metric (no per-accelerator suffix, no target)."""
        return self.key[5]


def cause_of(
    software: str, system: str, benchmark: str, scenario: str, workload: str, metric: str
) -> Cause:
    """The cause of the series with these labels."""
    point_match = _POINT.match(workload)
    curve, point = (point_match["curve"], point_match["point"]) if point_match else (workload, "")
    target_match = _AT_TARGET.match(metric)
    base, target = (
        (target_match["metric"], target_match["target"]) if target_match else (metric, "")
    )
    per_accelerator = base.endswith(PER_ACCELERATOR)
    if per_accelerator:
        base = base[: -len(PER_ACCELERATOR)]
    bench = twin_benchmark(benchmark) or benchmark
    return Cause((software, system, bench, scenario, curve, base), point, target, per_accelerator)


def group_by(items: Iterable[T], key: Callable[[T], Hashable]) -> list[list[T]]:
    """``items`` in groups of equal ``key``, each group and the groups in first-seen order."""
    groups: dict[Hashable, list[T]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return list(groups.values())


def point_order(point: str) -> tuple[float, ...]:
    """A sweep point's sort key: its numbers (``r2-c16`` → (2, 16))."""
    return tuple(float(n) for n in _NUMBER.findall(point))


def _points(points: Sequence[str], every: Sequence[str]) -> str:
    """``c2–c32`` when ``points`` are a run of neighbours in ``every``, else a list."""
    ordered = sorted(set(points), key=point_order)
    if len(ordered) == 1:
        return ordered[0]
    universe = sorted(set(every) | set(ordered), key=point_order)
    at = [universe.index(p) for p in ordered]
    if at[-1] - at[0] == len(at) - 1:
        return f"{ordered[0]}–{ordered[-1]}"
    return ", ".join(ordered)


def where(causes: Iterable[Cause], every_point: Sequence[str] = ()) -> str:
    """Where an issue shows: ``at c2–c32 and at 50 tokens/s/user`` (empty for one plain
    series); ``every_point``: the curve's points looked at, to tell a run from a list."""
    found = list(causes)
    points = [c.point for c in found if c.point]
    targets = sorted({c.target for c in found if c.target}, key=point_order)
    parts = []
    if points:
        parts.append(f"at {_points(points, every_point)}")
    parts += [f"at {t} tokens/s/user" for t in targets]
    return " and ".join(parts)
