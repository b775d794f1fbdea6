"""The generic benchmark format (and Bencher's Metric Format) → results, with the units and
directions every microbenchmark metric is named by.

The generic benchmark format (``--kind bench-json``) and Bencher's Metric Format → results.

Two shapes of one JSON file (``docs/formats/generic-benchmark.md``):

* the generic format: ``{"labels": {...}, "results": [{"name", "measure", "value" or
  "repeats", "unit", "direction", "labels", "lower_value", "upper_value"}, ...]}``;
* Bencher's Metric Format (BMF): ``{"<benchmark>": {"<measure>": {"value",
  "lower_value", "upper_value"}}}``. Bencher's built-in measures have known units
  (``latency`` ns, ``throughput`` ops/s, ``build-time`` s, ``file-size`` B); any other
  measure must say its ``unit`` (and ``direction`` where the unit does not imply one)
  beside ``value``, and may give ``repeats``, as in the generic format.

Each result is one series: its benchmark is ``name``, its metric ``<measure>_<unit>``
(:func:`tracker.formats.microbench.parse.bench_metric`), its workload the labels as
``key=value`` joined by commas, sorted by key. ``repeats`` are samples of the series
(``extra["repeat_index"]`` tells them apart); without them, ``value`` is one sample.

Units and directions of generic benchmark results: what a metric is called, which way is better.

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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from tracker.errors import ParseError
from tracker.formats.parse_json import JsonObject, as_number, decode_json
from tracker.records.results import ExtraValue, MetricRecord, ParsedResult

__all__ = [
    "BMF_MEASURES",
    "BenchmarksFile",
    "DIRECTIONS",
    "HIGHER_IS_BETTER",
    "LOWER_IS_BETTER",
    "TIME_UNITS_NS",
    "UnitClass",
    "bench_result",
    "canonical_unit",
    "looks_like_bmf",
    "looks_like_generic_bench",
    "bench_metric",
    "parse_generic_bench",
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


def bench_metric(
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


BMF_MEASURES: Mapping[str, tuple[str, str]] = {
    "latency": ("ns", "lower_is_better"),
    "throughput": ("ops/s", "higher_is_better"),
    "build-time": ("s", "lower_is_better"),
    "file-size": ("B", "lower_is_better"),
}
"""Bencher's built-in measures: the unit and direction a BMF file does not state."""

_RESULT_KEYS = frozenset(
    {"name", "measure", "value", "repeats", "unit", "direction", "labels"}
    | {"lower_value", "upper_value"}
)
_BMF_KEYS = frozenset({"value", "lower_value", "upper_value", "unit", "direction", "repeats"})
_TOP_KEYS = frozenset({"results", "labels"})
_LABEL_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_SNIFF = 5


def looks_like_generic_bench(doc: object) -> bool:
    """Whether a decoded JSON value is a generic-format document (a ``results`` list)."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("results"), list):
        return False
    results = doc["results"]
    return all(isinstance(r, Mapping) and "name" in r for r in results[:_SNIFF])


def looks_like_bmf(doc: object) -> bool:
    """Whether a decoded JSON value has the shape of Bencher's Metric Format."""
    if not isinstance(doc, Mapping) or not doc or "results" in doc:
        return False
    for measures in list(doc.values())[:_SNIFF]:
        if not isinstance(measures, Mapping) or not measures:
            return False
        if not all(isinstance(m, Mapping) and "value" in m for m in measures.values()):
            return False
    return True


@dataclass(frozen=True, slots=True)
class BenchmarksFile:
    """A tool's JSON file of ``benchmarks`` with a header object beside them (Google
    Benchmark's ``context``, pytest-benchmark's ``machine_info``)."""

    tool: str
    header: str
    hint: str
    """How to make the tool write the file."""

    def entries(self, doc: object) -> list[Any] | None:
        """The ``benchmarks`` list of a decoded document of this tool; ``None`` for another."""
        if not isinstance(doc, Mapping) or not isinstance(doc.get(self.header), Mapping):
            return None
        entries = doc.get("benchmarks")
        return entries if isinstance(entries, list) else None

    def document(self, data: bytes, *, path: str) -> JsonObject:
        """The object of such a file (one with ``benchmarks``), else a :class:`ParseError`."""
        doc = decode_json(data, path=path)
        if not isinstance(doc, Mapping) or "benchmarks" not in doc:
            expected = f"an object with '{self.header}' and 'benchmarks' ({self.hint})"
            raise ParseError(path, f"not {self.tool} output: expected {expected}")
        return doc


def bench_result(
    name: str,
    metric: MetricRecord,
    value: float,
    extra: Mapping[str, ExtraValue],
    *,
    path: str,
    is_valid: bool = True,
    workload: str = "",
) -> ParsedResult:
    """One sample of a microbenchmark: the file names its benchmark; there is no scenario."""
    return ParsedResult(
        scenario="",
        metric=metric,
        value=value,
        is_valid=is_valid,
        artifact_path=path,
        benchmark=name,
        workload=workload,
        extra=extra,
    )


def parse_generic_bench(data: bytes, *, path: str) -> list[ParsedResult]:
    """Every result of a generic-format or BMF file (one per repeat)."""
    doc = decode_json(data, path=path)
    if looks_like_generic_bench(doc):
        results = _parse_generic(doc, path=path)
    elif looks_like_bmf(doc):
        results = _parse_bmf(doc, path=path)
    else:
        raise ParseError(
            path,
            "not a generic benchmark file: expected an object with a 'results' array "
            "(docs/formats/generic-benchmark.md) or Bencher's Metric Format "
            '({"<benchmark>": {"<measure>": {"value": ...}}})',
        )
    _refuse_duplicates(results, path=path)
    return results


def _parse_generic(doc: JsonObject, *, path: str) -> list[ParsedResult]:
    _refuse_unknown(doc, _TOP_KEYS, path=path, field="", allowed="results, labels")
    shared = _labels(doc.get("labels"), path=path, field="labels")
    results: list[ParsedResult] = []
    for index, entry in enumerate(doc["results"]):
        field = f"results[{index}]"
        if not isinstance(entry, Mapping):
            raise ParseError(path, f"field '{field}' is not an object")
        _refuse_unknown(entry, _RESULT_KEYS, path=path, field=field, allowed=_listed(_RESULT_KEYS))
        name = _name(entry.get("name"), path=path, field=f"{field}.name")
        measure = entry.get("measure")
        if measure is not None and not isinstance(measure, str):
            raise ParseError(path, f"field '{field}.measure' is {measure!r}, expected a string")
        metric = bench_metric(
            measure, entry.get("unit"), entry.get("direction"), path=path, field=field
        )
        labels = {**shared, **_labels(entry.get("labels"), path=path, field=f"{field}.labels")}
        results.extend(_samples(entry, name, metric, labels, path=path, field=field))
    return results


def _parse_bmf(doc: JsonObject, *, path: str) -> list[ParsedResult]:
    results: list[ParsedResult] = []
    for name, measures in doc.items():
        if not isinstance(measures, Mapping):
            raise ParseError(path, f"field '{name}' is not an object of measures (BMF)")
        for measure, entry in measures.items():
            field = f"{name}.{measure}"
            if not isinstance(entry, Mapping):
                raise ParseError(path, f"field '{field}' is not an object with 'value' (BMF)")
            _refuse_unknown(entry, _BMF_KEYS, path=path, field=field, allowed=_listed(_BMF_KEYS))
            unit, direction = entry.get("unit"), entry.get("direction")
            if unit is None:
                if measure not in BMF_MEASURES:
                    raise ParseError(
                        path,
                        f"field '{field}.unit' is missing: {measure!r} is not one of Bencher's "
                        f"built-in measures ({', '.join(BMF_MEASURES)}); give its 'unit' "
                        "(and 'direction') beside 'value'",
                    )
                unit, direction = BMF_MEASURES[measure]
            metric = bench_metric(measure, unit, direction, path=path, field=field)
            benchmark = _name(name, path=path, field=field)
            results.extend(_samples(entry, benchmark, metric, {}, path=path, field=field))
    return results


def _samples(
    entry: JsonObject,
    name: str,
    metric: MetricRecord,
    labels: Mapping[str, str],
    *,
    path: str,
    field: str,
) -> list[ParsedResult]:
    extra: dict[str, ExtraValue] = {f"label_{k}": v for k, v in labels.items()}
    for key in ("lower_value", "upper_value"):
        if entry.get(key) is not None:
            extra[key] = as_number(entry[key], path=path, field=f"{field}.{key}")
    values = _values(entry, path=path, field=field)
    if "repeats" in entry and entry.get("value") is not None:
        extra["reported_value"] = as_number(entry["value"], path=path, field=f"{field}.value")
    workload = ",".join(f"{k}={labels[k]}" for k in sorted(labels))
    return [
        bench_result(
            name,
            metric,
            value,
            {**extra, "repeat_index": index} if index is not None else extra,
            path=path,
            workload=workload,
        )
        for index, value in values
    ]


def _values(entry: JsonObject, *, path: str, field: str) -> list[tuple[int | None, float]]:
    """``(repeat index, value)``: each repeat, else the value alone (index ``None``)."""
    repeats = entry.get("repeats")
    if repeats is None:
        if entry.get("value") is None:
            raise ParseError(path, f"field '{field}.value' is missing: give 'value' or 'repeats'")
        return [(None, as_number(entry["value"], path=path, field=f"{field}.value"))]
    if not isinstance(repeats, list) or not repeats:
        raise ParseError(path, f"field '{field}.repeats' is not a non-empty array of numbers")
    return [
        (i, as_number(v, path=path, field=f"{field}.repeats[{i}]")) for i, v in enumerate(repeats)
    ]


def _name(value: object, *, path: str, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        shown = "missing" if value is None else repr(value)
        raise ParseError(path, f"field '{field}' is {shown}: every result needs a name")
    return value.strip()


def _labels(value: object, *, path: str, field: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ParseError(path, f"field '{field}' is not an object of label names and values")
    labels = {}
    for key, raw in value.items():
        if not _LABEL_KEY.fullmatch(key):
            raise ParseError(
                path,
                f"field '{field}' has label name {key!r}: use letters, digits, '_', '-' or "
                "'.' (at most 64)",
            )
        labels[key] = _label_value(raw, path=path, field=f"{field}.{key}")
    return labels


def _label_value(raw: Any, *, path: str, field: str) -> str:
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, int) or (isinstance(raw, float) and raw.is_integer()):
        return str(int(raw))
    if isinstance(raw, float):
        return repr(raw)
    if not isinstance(raw, str) or not raw.strip():
        raise ParseError(path, f"field '{field}' is {raw!r}, expected a non-empty string")
    if "," in raw:
        raise ParseError(
            path,
            f"field '{field}' is {raw!r}: labels are joined with commas into the series' "
            "workload ('k=v,k=v'); use another separator",
        )
    return raw.strip()


def _refuse_unknown(
    obj: JsonObject, known: frozenset[str], *, path: str, field: str, allowed: str
) -> None:
    for key in obj:
        if key not in known:
            where = f"{field}.{key}" if field else key
            raise ParseError(path, f"field '{where}' is not part of the format (fields: {allowed})")


def _listed(keys: frozenset[str]) -> str:
    return ", ".join(sorted(keys))


def _refuse_duplicates(results: list[ParsedResult], *, path: str) -> None:
    """Two entries of one series (repeats of one entry share a key but not a repeat index)."""
    seen: dict[tuple[str | None, str, str], int | None] = {}
    for result in results:
        key = (result.benchmark, result.metric.name, result.workload)
        index = result.extra.get("repeat_index")
        repeat = index if isinstance(index, int) else None
        if key in seen and (repeat is None or repeat <= (seen[key] or 0)):
            labels = f" with labels {result.workload}" if result.workload else ""
            raise ParseError(
                path,
                f"result {result.benchmark!r} ({result.metric.name}{labels}) is given twice; "
                "put repeated measurements of one result in its 'repeats' array",
            )
        seen[key] = repeat
