"""Units and directions of generic benchmark results: what a metric is called, which way is better.

A unit is one of a known vocabulary (``docs/formats/generic-benchmark.md``):

* a time (``ns``, ``us``/``µs``, ``ms``, ``s``, ``min``): lower is better, always;
* a rate, any ``<what>/s`` (``ops/s``, ``items/s``, ``B/s``, ``tokens/s``): higher is
  better unless the result says ``lower_is_better`` (``misses/s``);
* a size (``B``, ``KB``, ``MB``, ``GB``, ``KiB``, ``MiB``, ``GiB``) or another quantity
  (``count``, ``%``, ``ratio``, ``score``, ``x``, ``W``, ``J``, ``cycles``,
  ``instructions``): the result must say which direction is better.

The metric's name carries its unit (house rule): ``latency`` in ``ms`` is
``latency_ms``, ``ops/s`` alone is ``ops_per_s``, ``file-size`` in ``B`` is
``file_size_B``.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from tracker.errors import ParseError
from tracker.records import MetricRecord

__all__ = [
    "DIRECTIONS",
    "HIGHER_IS_BETTER",
    "LOWER_IS_BETTER",
    "TIME_UNITS_NS",
    "UnitClass",
    "canonical_unit",
    "metric_for",
    "unit_class",
]

UnitClass = Literal["time", "rate", "other"]

LOWER_IS_BETTER: Final = "lower_is_better"
HIGHER_IS_BETTER: Final = "higher_is_better"
DIRECTIONS: Final = (LOWER_IS_BETTER, HIGHER_IS_BETTER)
"""The spellings of a direction a result may give."""

TIME_UNITS_NS: Final = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9, "min": 6e10}
"""Every time unit, in nanoseconds."""
_ALIASES: Final = {"µs": "us", "μs": "us"}  # micro sign and Greek mu
_OTHER_UNITS: Final = frozenset(
    {"B", "KB", "MB", "GB", "KiB", "MiB", "GiB"}
    | {"count", "%", "ratio", "score", "x", "W", "J", "cycles", "instructions"}
)
_RATE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}/s")
_MEASURE = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")
_KNOWN = (
    "a time (ns, us, ms, s, min), a rate '<what>/s' (ops/s, items/s, B/s), "
    f"or one of {', '.join(sorted(_OTHER_UNITS))}"
)


def canonical_unit(unit: str) -> str:
    """``unit`` in its one spelling (``µs`` → ``us``)."""
    return _ALIASES.get(unit, unit)


def unit_class(unit: str) -> UnitClass | None:
    """Whether ``unit`` (canonical) is a time, a rate or another known unit; ``None``: unknown."""
    if unit in TIME_UNITS_NS:
        return "time"
    if _RATE.fullmatch(unit):
        return "rate"
    return "other" if unit in _OTHER_UNITS else None


def metric_for(
    measure: str | None, unit: object, direction: object, *, path: str, field: str
) -> MetricRecord:
    """The metric of a result with this measure, unit and direction (``field`` is the
    dotted path of the result in its file, for the errors)."""
    if not isinstance(unit, str) or not unit:
        raise ParseError(path, f"field '{field}.unit' is missing: give the unit ({_KNOWN})")
    canonical = canonical_unit(unit)
    kind = unit_class(canonical)
    if kind is None:
        raise ParseError(path, f"field '{field}.unit' is {unit!r}, an unknown unit; use {_KNOWN}")
    higher = _higher_is_better(kind, canonical, direction, field=f"{field}.direction", path=path)
    if measure is not None and not _MEASURE.fullmatch(measure):
        raise ParseError(
            path,
            f"measure {measure!r} of '{field}' is not a name (a letter, then letters, "
            "digits, '_', '-' or '.'; at most 64 characters)",
        )
    return MetricRecord(_metric_name(measure, canonical, kind), canonical, higher)


def _higher_is_better(
    kind: UnitClass, unit: str, direction: object, *, field: str, path: str
) -> bool:
    if direction is None:
        if kind == "other":
            raise ParseError(
                path,
                f"field '{field}' is missing: unit {unit!r} does not say which way is better; "
                f"give {' or '.join(DIRECTIONS)}",
            )
        return kind == "rate"
    if direction not in DIRECTIONS:
        raise ParseError(
            path, f"field '{field}' is {direction!r}; expected {' or '.join(DIRECTIONS)}"
        )
    if kind == "time" and direction == HIGHER_IS_BETTER:
        raise ParseError(
            path,
            f"field '{field}' is {HIGHER_IS_BETTER!r} for a time in {unit!r}: a time is "
            "lower-is-better; give a rate (e.g. ops/s) if more is better",
        )
    return direction == HIGHER_IS_BETTER


def _unit_slug(unit: str) -> str:
    if unit.endswith("/s"):
        return unit[:-2] + "_per_s"
    return "pct" if unit == "%" else unit


def _metric_name(measure: str | None, unit: str, kind: UnitClass) -> str:
    slug = _unit_slug(unit)
    if measure is None:
        return slug if kind == "rate" else f"{'time' if kind == 'time' else 'value'}_{slug}"
    base = re.sub(r"[^A-Za-z0-9]+", "_", measure).strip("_")
    return base if base == slug or base.endswith(f"_{slug}") else f"{base}_{slug}"
