"""Google Benchmark's JSON output (``--benchmark_format=json`` / ``--benchmark_out``) → results.

The file holds ``context`` (host, CPU, library build) and ``benchmarks``: one entry per
run. With ``--benchmark_repetitions=N`` each benchmark has N ``iteration`` entries
(``repetition_index`` 0…N-1) and ``aggregate`` entries (``mean``, ``median``,
``stddev``, ``cv``, and ``BigO``/``RMS`` for complexity fits). Mapped:

==========================  =====================================================
Google Benchmark            stored as
==========================  =====================================================
``run_name`` (or ``name``)  the benchmark (``BM_copy/64/threads:8``)
``real_time``               ``real_time_ns`` (ns, lower is better; ``time_unit`` read):
                            the primary metric, a series of its own
``cpu_time``                ``cpu_time_ns`` in ``extra`` (ns), a secondary metric; the
                            primary one instead where the run says so (below)
``items_per_second``        ``items_per_s`` in ``extra`` (items/s; see below)
``bytes_per_second``        ``bytes_per_s`` in ``extra`` (B/s)
user counters               ``counter_<name>`` in ``extra`` (the file has no direction)
``iterations``, ``threads`` ``extra``; ``context`` as ``context_<key>`` in ``extra``
==========================  =====================================================

**One primary metric per benchmark.** A benchmark's two times measure the same runs, so
two series would count one slowdown twice. The primary one is ``real_time`` (wall
time: what the benchmark's user waits for); it is ``cpu_time`` where the run says
so: a benchmark that measures its process' CPU time and not the wall clock (its name
has ``/process_time`` and no ``/real_time``, Google Benchmark's suffixes for
``MeasureProcessCPUTime()`` and ``UseRealTime()``). The other time is kept in
``extra`` (``cpu_time_ns`` or ``real_time_ns``), beside the primary one: shown, never
a gated series.

The two rates are computed from the time of the same run (items or bytes per iteration
over its time), so they change exactly when a time does: stored as series they would
repeat one regression as three findings; they are kept beside the times instead.

Every iteration entry is one sample (its place among its benchmark's entries in
``extra["repeat_index"]``), so N repetitions are N samples of each series and the
aggregates are not read. A benchmark reported by its aggregates alone
(``--benchmark_report_aggregates_only``) is one sample: its ``median`` (else ``mean``),
with ``extra["aggregate"]`` saying which. An entry with ``error_occurred`` is stored
as invalid with the error message; one skipped on purpose (``error_occurred`` false,
a message given) is left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tracker.errors import ParseError
from tracker.formats.microbench.parse import (
    TIME_UNITS_NS,
    BenchmarksFile,
    bench_result,
)
from tracker.formats.parse_json import (
    JsonObject,
    as_number,
    flatten_scalars,
    get_mapping,
    get_sequence,
    is_number,
)
from tracker.records.results import ExtraValue, MetricRecord, ParsedResult

__all__ = ["looks_like_google_benchmark", "parse_google_benchmark"]


REAL_TIME_NS = MetricRecord("real_time_ns", "ns", False)
CPU_TIME_NS = MetricRecord("cpu_time_ns", "ns", False)
_RATES = {"items_per_second": "items_per_s", "bytes_per_second": "bytes_per_s"}
_NOT_COUNTERS = frozenset(
    {"name", "run_name", "run_type", "family_index", "per_family_instance_index"}
    | {"repetitions", "repetition_index", "threads", "iterations", "real_time", "cpu_time"}
    | {"time_unit", "aggregate_name", "aggregate_unit", "error_occurred", "error_message"}
    | {"label", "big_o", "rms", *_RATES}
)
_KEPT = ("iterations", "threads", "repetitions", "repetition_index", "label")
_CONTEXT_SKIPPED = frozenset({"caches", "load_avg"})
_FILE = BenchmarksFile(
    "Google Benchmark",
    "context",
    "run the binary with --benchmark_format=json or --benchmark_out=FILE",
)


def looks_like_google_benchmark(doc: object) -> bool:
    """Whether a decoded JSON value is Google Benchmark output (``context`` + ``benchmarks``
    whose entries have a ``time_unit`` or ``run_type``)."""
    entries = _FILE.entries(doc)
    if entries is None:
        return False
    first = entries[0] if entries else None
    return first is None or (
        isinstance(first, Mapping) and ("time_unit" in first or "run_type" in first)
    )


def parse_google_benchmark(data: bytes, *, path: str) -> list[ParsedResult]:
    """Every sample of every benchmark of a Google Benchmark JSON file."""
    doc = _FILE.document(data, path=path)
    context = get_mapping(doc, "context", path=path, field="context", required=False)
    shared = {
        f"context_{k}": v
        for k, v in flatten_scalars(context, skip=_CONTEXT_SKIPPED).items()
        if not k.startswith("caches")
    }
    entries = get_sequence(doc, "benchmarks", path=path, field="benchmarks")
    iterations, aggregates = _split(entries, path=path)
    results: list[ParsedResult] = []
    counts: dict[str, int] = {}
    for index, entry in iterations:
        name = _run_name(entry, path=path, index=index)
        repeat = _repeat_index(counts, name)
        results.extend(_results(entry, name, {**shared, "repeat_index": repeat}, path, index))
    done = {r.benchmark for r in results} | _skipped_names(iterations, path=path)
    for name, (index, entry) in _aggregate_samples(aggregates, path=path).items():
        if name not in done:
            extra = {**shared, "aggregate": str(entry.get("aggregate_name"))}
            results.extend(_results(entry, name, extra, path, index))
    return results


def _split(
    entries: Sequence[Any], *, path: str
) -> tuple[list[tuple[int, JsonObject]], list[tuple[int, JsonObject]]]:
    iterations, aggregates = [], []
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise ParseError(path, f"field 'benchmarks[{index}]' is not an object")
        run_type = entry.get("run_type", "aggregate" if "aggregate_name" in entry else "iteration")
        if run_type == "iteration":
            iterations.append((index, entry))
        elif run_type == "aggregate":
            aggregates.append((index, entry))
        else:
            raise ParseError(
                path,
                f"field 'benchmarks[{index}].run_type' is {run_type!r}, "
                "expected 'iteration' or 'aggregate'",
            )
    return iterations, aggregates


def _run_name(entry: JsonObject, *, path: str, index: int) -> str:
    """The benchmark an entry is of: ``run_name``, else ``name`` (less an aggregate's
    ``_mean``/``_median`` suffix: files before run_name was written)."""
    name = entry.get("run_name", entry.get("name"))
    if not isinstance(name, str) or not name.strip():
        raise ParseError(
            path, f"field 'benchmarks[{index}].name' is {name!r}: every benchmark needs a name"
        )
    suffix = f"_{entry.get('aggregate_name')}"
    if "run_name" not in entry and "aggregate_name" in entry and name.endswith(suffix):
        name = name[: -len(suffix)]
    return name.strip()


def _repeat_index(counts: dict[str, int], name: str) -> int:
    """The entry's place among the entries of its benchmark: what tells its samples apart
    (the file's ``repetition_index`` is kept as it is in ``extra``)."""
    place = counts.get(name, 0)
    counts[name] = place + 1
    return place


def _skipped(entry: JsonObject) -> bool:
    return entry.get("error_occurred") is False and bool(entry.get("error_message"))


def _skipped_names(iterations: list[tuple[int, JsonObject]], *, path: str) -> set[str]:
    return {_run_name(e, path=path, index=i) for i, e in iterations if _skipped(e)}


def _aggregate_samples(
    aggregates: list[tuple[int, JsonObject]], *, path: str
) -> dict[str, tuple[int, JsonObject]]:
    """Per benchmark reported by aggregates: its median entry, else its mean."""
    chosen: dict[str, tuple[int, JsonObject]] = {}
    for index, entry in aggregates:
        which = entry.get("aggregate_name")
        name = _run_name(entry, path=path, index=index)
        if which == "median" or (which == "mean" and name not in chosen):
            chosen[name] = (index, entry)
    return chosen


def _results(
    entry: JsonObject, name: str, extra: dict[str, ExtraValue], path: str, index: int
) -> list[ParsedResult]:
    if _skipped(entry):
        return []
    field = f"benchmarks[{index}]"
    scale = _ns_per_unit(entry, path=path, field=field)
    extra = {**extra, **_entry_extra(entry)}
    valid = entry.get("error_occurred") is not True
    if not valid:
        extra["invalid_reason"] = f"Google Benchmark error: {entry.get('error_message') or '?'}"
    times = {
        key: as_number(entry.get(key), path=path, field=f"{field}.{key}") * scale
        for key in ("real_time", "cpu_time")
    }
    primary, metric = _primary(name)
    secondary = "cpu_time" if primary == "real_time" else "real_time"
    extra[f"{secondary}_ns"] = times[secondary]
    extra["primary_metric"] = metric.name
    return [bench_result(name, metric, times[primary], extra, path=path, is_valid=valid)]


def _primary(name: str) -> tuple[str, MetricRecord]:
    """The time a benchmark is judged by (see the module docstring): ``real_time``, or
    ``cpu_time`` for one measuring its process' CPU time and not the wall clock."""
    parts = name.split("/")
    if "process_time" in parts and "real_time" not in parts:
        return "cpu_time", CPU_TIME_NS
    return "real_time", REAL_TIME_NS


def _ns_per_unit(entry: JsonObject, *, path: str, field: str) -> float:
    unit = entry.get("time_unit", "ns")
    if not isinstance(unit, str) or unit not in TIME_UNITS_NS:
        raise ParseError(
            path, f"field '{field}.time_unit' is {unit!r}, expected one of ns, us, ms, s"
        )
    return TIME_UNITS_NS[unit]


def _entry_extra(entry: JsonObject) -> dict[str, ExtraValue]:
    extra: dict[str, ExtraValue] = {k: entry[k] for k in _KEPT if _scalar(entry.get(k))}
    extra["time_unit_reported"] = str(entry.get("time_unit", "ns"))
    extra.update({name: entry[key] for key, name in _RATES.items() if is_number(entry.get(key))})
    for key, value in entry.items():
        if key not in _NOT_COUNTERS and is_number(value):
            extra[f"counter_{key}"] = value
    return extra


def _scalar(value: object) -> bool:
    return isinstance(value, str | bool) or is_number(value)
