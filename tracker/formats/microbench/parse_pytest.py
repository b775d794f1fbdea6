"""pytest-benchmark's JSON (``pytest --benchmark-json=FILE``, or a saved run) → results.

The file holds ``machine_info``, ``commit_info``, ``datetime``, ``version`` and
``benchmarks``: one entry per benchmarked test, with ``name``, ``fullname``
(``tests/test_x.py::test_sort[100]``), ``group``, ``params`` and ``stats`` in seconds
(``min``, ``max``, ``mean``, ``stddev``, ``median``, ``iqr``, ``ops``, ``rounds``,
``iterations``, and ``data``, the time of every round). Mapped:

=========================  ==========================================================
pytest-benchmark           stored as
=========================  ==========================================================
``fullname`` (or ``name``)  the benchmark
``stats.median``            ``time_s`` (s, lower is better): one sample per file
other ``stats``             ``extra`` (``time_min_s``, ``time_mean_s``, ``ops_per_s``, …)
``params``, ``group``       ``param_<name>``, ``group`` in ``extra``
``machine_info``            ``machine_node``, ``machine_python_version``, ``machine_cpu``
``commit_info``             ``commit_id``, ``commit_branch``, ``commit_dirty``
=========================  ==========================================================

The rounds of one run are not independent repeats (they share the process, its
warm-up and its machine state), so a file is one sample: its median round. Repeats
are several runs: one ``--benchmark-json`` file per run, in one folder.
"""

from __future__ import annotations

from collections.abc import Mapping

from tracker.errors import ParseError
from tracker.formats.microbench.parse import BenchmarksFile, bench_result
from tracker.formats.parse_json import (
    JsonObject,
    as_number,
    get_mapping,
    get_sequence,
    is_number,
)
from tracker.records.results import ExtraValue, MetricRecord, ParsedResult

__all__ = ["TIME_S", "looks_like_pytest_benchmark", "parse_pytest_benchmark"]


TIME_S = MetricRecord("time_s", "s", False)
_STATS = {
    "min": "time_min_s",
    "max": "time_max_s",
    "mean": "time_mean_s",
    "stddev": "time_stddev_s",
    "iqr": "time_iqr_s",
    "ops": "ops_per_s",
    "rounds": "rounds",
    "iterations": "iterations",
}
_MACHINE = {"node": "machine_node", "python_version": "machine_python_version"}
_COMMIT = {"id": "commit_id", "branch": "commit_branch", "dirty": "commit_dirty"}
_FILE = BenchmarksFile("pytest-benchmark", "machine_info", "run pytest with --benchmark-json=FILE")


def looks_like_pytest_benchmark(doc: object) -> bool:
    """Whether a decoded JSON value is pytest-benchmark output (``machine_info`` and
    ``benchmarks`` whose entries have ``stats``)."""
    entries = _FILE.entries(doc)
    if entries is None:
        return False
    return not entries or (isinstance(entries[0], Mapping) and "stats" in entries[0])


def parse_pytest_benchmark(data: bytes, *, path: str) -> list[ParsedResult]:
    """One result per benchmark of a pytest-benchmark JSON file (its median round)."""
    doc = _FILE.document(data, path=path)
    shared = _run_extra(doc, path=path)
    results = []
    seen: set[str] = set()
    for index, entry in enumerate(get_sequence(doc, "benchmarks", path=path, field="benchmarks")):
        field = f"benchmarks[{index}]"
        if not isinstance(entry, Mapping):
            raise ParseError(path, f"field '{field}' is not an object")
        name = _name(entry, path=path, field=field)
        if name in seen:
            raise ParseError(path, f"benchmark {name!r} appears twice ({field})")
        seen.add(name)
        stats = get_mapping(entry, "stats", path=path, field=f"{field}.stats")
        median = as_number(stats.get("median"), path=path, field=f"{field}.stats.median")
        extra = {**shared, **_entry_extra(entry, stats)}
        results.append(bench_result(name, TIME_S, median, extra, path=path))
    return results


def _name(entry: JsonObject, *, path: str, field: str) -> str:
    name = entry.get("fullname") or entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ParseError(
            path, f"field '{field}.fullname' is {name!r}: every benchmark needs a name"
        )
    return name.strip()


def _entry_extra(entry: JsonObject, stats: JsonObject) -> dict[str, ExtraValue]:
    extra: dict[str, ExtraValue] = {
        name: stats[key] for key, name in _STATS.items() if is_number(stats.get(key))
    }
    group = entry.get("group")
    if isinstance(group, str) and group:
        extra["group"] = group
    params = entry.get("params")
    for key, value in (params if isinstance(params, Mapping) else {}).items():
        if isinstance(value, str | bool) or is_number(value):
            extra[f"param_{key}"] = value
    return extra


def _run_extra(doc: JsonObject, *, path: str) -> dict[str, ExtraValue]:
    machine = get_mapping(doc, "machine_info", path=path, field="machine_info", required=False)
    commit = get_mapping(doc, "commit_info", path=path, field="commit_info", required=False)
    extra: dict[str, ExtraValue] = {}
    for source, names in ((machine, _MACHINE), (commit, _COMMIT)):
        for key, name in names.items():
            value = source.get(key)
            if isinstance(value, str | bool) and value != "":
                extra[name] = value
    cpu = machine.get("cpu")
    if isinstance(cpu, Mapping) and isinstance(cpu.get("brand_raw"), str):
        extra["machine_cpu"] = cpu["brand_raw"]
    for key in ("datetime", "version"):
        if isinstance(doc.get(key), str):
            extra["started_at" if key == "datetime" else "pytest_benchmark_version"] = doc[key]
    return extra
