"""Microbenchmark files (issue 16): the generic format, BMF, Google Benchmark, pytest-benchmark.

The Google Benchmark and pytest-benchmark files are real output of the tools
(``tests/data/generic/README.md`` says how they were made); the generic and BMF
files are hand-made examples of ``docs/formats/generic-benchmark.md``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracker.errors import ParseError
from tracker.formats.microbench.parse import parse_generic_bench
from tracker.formats.microbench.parse_google import parse_google_benchmark
from tracker.formats.microbench.parse_pytest import parse_pytest_benchmark
from tracker.records.results import ParsedResult

DATA = Path(__file__).resolve().parents[2] / "data" / "generic"
Parse = Callable[..., list[ParsedResult]]


def _parse(parse: Parse, name: str) -> list[ParsedResult]:
    return parse((DATA / name).read_bytes(), path=name)


def _load(name: str) -> Any:
    return json.loads((DATA / name).read_text("utf-8"))


def _series(results: list[ParsedResult]) -> dict[tuple[str, str, str], list[float]]:
    series: dict[tuple[str, str, str], list[float]] = {}
    for r in results:
        series.setdefault((r.benchmark or "", r.workload, r.metric.name), []).append(r.value)
    return series


# --- every fixture: what it holds is what is stored ---------------------------------------


FIXTURES = [
    ("google_benchmark_repetitions.json", parse_google_benchmark, 4, 5),
    ("google_benchmark_repetitions_rerun.json", parse_google_benchmark, 4, 5),
    ("google_benchmark_single.json", parse_google_benchmark, 4, 1),
    ("google_benchmark_aggregates_only.json", parse_google_benchmark, 4, 1),
    ("pytest_benchmark.json", parse_pytest_benchmark, 3, 1),
]


@pytest.mark.parametrize(("name", "parse", "series", "repeats"), FIXTURES)
def test_each_tool_file_gives_every_series_its_samples(
    name: str, parse: Parse, series: int, repeats: int
) -> None:
    results = _parse(parse, name)
    valid = _series([r for r in results if r.is_valid])
    assert len(valid) == series  # the invalid "broken" benchmark apart
    assert {len(values) for values in valid.values()} == {repeats}
    for r in results:
        assert r.artifact_path == name and r.scenario == "" and r.metric.unit in {"ns", "s"}
        assert r.metric.higher_is_better is False  # times: lower is better
        assert all(isinstance(v, str | bool | int | float) for v in r.extra.values())


def test_google_benchmark_iterations_are_samples_in_ns_and_aggregates_are_not_read() -> None:
    doc = _load("google_benchmark_repetitions.json")
    results = _parse(parse_google_benchmark, "google_benchmark_repetitions.json")
    runs = [b for b in doc["benchmarks"] if b["run_name"] == "sort_shuffled"]
    iterations = [b for b in runs if b["run_type"] == "iteration"]
    real = [
        r for r in results if r.benchmark == "sort_shuffled" and r.metric.name == "real_time_ns"
    ]
    assert runs[0]["time_unit"] == "us" and len(iterations) == 5 < len(runs)
    assert [r.value for r in real] == [b["real_time"] * 1000 for b in iterations]
    assert [r.extra["repeat_index"] for r in real] == [0, 1, 2, 3, 4]
    assert real[0].extra["counter_comparisons"] == iterations[0]["comparisons"]
    assert real[0].extra["counter_rate"] == iterations[0]["rate"]
    assert real[0].extra["time_unit_reported"] == "us"
    assert real[0].extra["context_library_build_type"] == "release"
    assert "context_caches" not in str(sorted(real[0].extra))


def test_google_benchmark_rates_are_kept_beside_the_times() -> None:
    doc = _load("google_benchmark_single.json")
    [entry] = [b for b in doc["benchmarks"] if b["name"] == "copy_list/64"]
    results = [
        r
        for r in _parse(parse_google_benchmark, "google_benchmark_single.json")
        if r.benchmark == "copy_list/64"
    ]
    assert {r.metric.name: r.value for r in results} == {"real_time_ns": entry["real_time"]}
    assert results[0].extra["cpu_time_ns"] == entry["cpu_time"]  # secondary: never gated
    assert results[0].extra["primary_metric"] == "real_time_ns"
    assert results[0].extra["items_per_s"] == entry["items_per_second"]
    assert results[0].extra["bytes_per_s"] == entry["bytes_per_second"]


def test_a_google_benchmark_error_is_an_invalid_result_with_its_message() -> None:
    results = _parse(parse_google_benchmark, "google_benchmark_repetitions.json")
    broken = [r for r in results if r.benchmark == "broken"]
    assert len(broken) == 5 and not any(r.is_valid for r in broken)
    reason = "Google Benchmark error: the fixture file is missing"
    assert {r.extra["invalid_reason"] for r in broken} == {reason}


def test_google_benchmark_aggregates_alone_give_the_median() -> None:
    doc = _load("google_benchmark_aggregates_only.json")
    medians = {
        b["run_name"]: b["real_time"]
        for b in doc["benchmarks"]
        if b.get("aggregate_name") == "median" and b["time_unit"] == "ns"
    }
    results = _parse(parse_google_benchmark, "google_benchmark_aggregates_only.json")
    real = {r.benchmark: r for r in results if r.metric.name == "real_time_ns" and r.is_valid}
    assert {name: real[name].value for name in medians} == medians
    assert {r.extra["aggregate"] for r in real.values()} == {"median"}


def test_google_benchmark_judges_a_process_cpu_time_benchmark_by_its_cpu_time() -> None:
    doc = {
        "context": {"library_build_type": "release"},
        "benchmarks": [
            {"name": n, "run_name": n, "real_time": 9.0, "cpu_time": 30.0, "time_unit": "ns"}
            for n in ("BM_a/process_time", "BM_b/process_time/real_time", "BM_c")
        ],
    }
    results = parse_google_benchmark(json.dumps(doc).encode(), path="p.json")
    assert {(r.benchmark, r.metric.name, r.value) for r in results} == {
        ("BM_a/process_time", "cpu_time_ns", 30.0),
        ("BM_b/process_time/real_time", "real_time_ns", 9.0),
        ("BM_c", "real_time_ns", 9.0),
    }
    assert results[0].extra["real_time_ns"] == 9.0


def test_google_benchmark_files_without_run_name_name_aggregates_by_their_benchmark() -> None:
    def entry(name: str, ns: float, **more: Any) -> dict[str, Any]:
        return {"name": name, "real_time": ns, "cpu_time": ns, "time_unit": "ns", **more}

    doc = {
        "context": {"library_build_type": "release"},
        "benchmarks": [
            *(entry("BM_x", ns) for ns in (10.0, 11.0, 12.0)),
            entry("BM_x_mean", 11.0, aggregate_name="mean"),
            entry("BM_y_mean", 7.0, aggregate_name="mean"),
            entry("BM_y_median", 6.0, aggregate_name="median"),
        ],
    }
    results = parse_google_benchmark(json.dumps(doc).encode(), path="old.json")
    assert _series([r for r in results if r.metric.name == "real_time_ns"]) == {
        ("BM_x", "", "real_time_ns"): [10.0, 11.0, 12.0],
        ("BM_y", "", "real_time_ns"): [6.0],
    }


def test_pytest_benchmark_stores_the_median_round_and_keeps_the_rest() -> None:
    doc = _load("pytest_benchmark.json")
    results = {r.benchmark: r for r in _parse(parse_pytest_benchmark, "pytest_benchmark.json")}
    for entry in doc["benchmarks"]:
        result = results[entry["fullname"]]
        stats = entry["stats"]
        assert (result.metric.name, result.metric.unit) == ("time_s", "s")
        assert result.value == stats["median"]
        assert result.extra["time_mean_s"] == stats["mean"]
        assert result.extra["rounds"] == stats["rounds"]
        assert result.extra["ops_per_s"] == stats["ops"]
        assert result.extra["machine_node"] == doc["machine_info"]["node"]
        assert result.extra["commit_id"] == doc["commit_info"]["id"]
    assert results["test_pb.py::test_fib[15]"].extra["param_n"] == 15
    assert results["test_pb.py::test_sort_shuffled"].extra["group"] == "sorting"


def test_the_generic_format_maps_repeats_labels_units_and_directions() -> None:
    results = _parse(parse_generic_bench, "generic.json")
    series = _series(results)
    large = ("parse_config", "dataset=large,runner=ci-x86,threads=4", "latency_ms")
    assert series[large] == [12.4, 12.9, 12.6, 12.5, 12.7]
    assert series[("parse_config", "dataset=small,runner=ci-x86,threads=4", "latency_ms")] == [1.31]
    assert series[("encode_batch", "runner=ci-x86", "items_per_s")] == [48210.5]
    assert series[("binary", "runner=ci-x86", "file_size_MiB")] == [18.4]
    directions = {r.metric.name: (r.metric.unit, r.metric.higher_is_better) for r in results}
    assert directions == {
        "latency_ms": ("ms", False),
        "items_per_s": ("items/s", True),
        "file_size_MiB": ("MiB", False),
    }
    small = next(r for r in results if "dataset=small" in r.workload)
    assert (small.extra["lower_value"], small.extra["upper_value"]) == (1.28, 1.35)
    assert small.extra["label_threads"] == "4" and "repeat_index" not in small.extra


def test_bencher_metric_format_uses_the_units_of_bencher_measures() -> None:
    results = _parse(parse_generic_bench, "bmf.json")
    got = {(r.benchmark, r.metric): r.value for r in results}
    assert {(b, m.name, m.unit, m.higher_is_better) for b, m in got} == {
        ("bench_parse::large", "latency_ns", "ns", False),
        ("bench_parse::large", "throughput_ops_per_s", "ops/s", True),
        ("bench_parse::small", "latency_ns", "ns", False),
        ("release-build", "build_time_s", "s", False),
        ("release-build", "file_size_B", "B", False),
        ("cache_hits", "hit_rate_ratio", "ratio", True),
    }
    large = next(r for r in results if r.metric.name == "latency_ns")
    assert (large.value, large.extra["lower_value"], large.extra["upper_value"]) == (
        3064.0,
        2970.0,
        3180.0,
    )


# --- bad input: a ParseError naming the file and the field -----------------------------


def _generic(**result: Any) -> bytes:
    return json.dumps({"results": [{"name": "b", "unit": "ms", "value": 1.0, **result}]}).encode()


BAD = [
    (_generic(unit="parsecs"), "field 'results[0].unit' is 'parsecs', an unknown unit"),
    (_generic(unit=None), "field 'results[0].unit' is missing"),
    (b'{"results": [{"name": "b", "unit": "ms", "value": NaN}]}', "'results[0].value' is NaN"),
    (_generic(value=None, repeats=[1.0, "2"]), "field 'results[0].repeats[1]' is \"2\""),
    (_generic(value=None), "field 'results[0].value' is missing: give 'value' or 'repeats'"),
    (_generic(repeats=[]), "field 'results[0].repeats' is not a non-empty array"),
    (_generic(name=None), "field 'results[0].name' is missing: every result needs a name"),
    (_generic(name="  "), "field 'results[0].name' is '  ': every result needs a name"),
    (_generic(unit="MB"), "field 'results[0].direction' is missing: unit 'MB' does not say"),
    (_generic(direction="up"), "field 'results[0].direction' is 'up'; expected lower_is_better"),
    (_generic(direction="higher_is_better"), "'higher_is_better' for a time in 'ms'"),
    (_generic(directon="lower_is_better"), "field 'results[0].directon' is not part of"),
    (_generic(labels={"shape": "64,64"}), "field 'results[0].labels.shape' is '64,64'"),
    (_generic(labels={"a b": "x"}), "has label name 'a b'"),
    (_generic(measure="p99 latency"), "measure 'p99 latency' of 'results[0]' is not a name"),
    (
        json.dumps({"results": [{"name": "b", "unit": "ms", "value": 1}] * 2}).encode(),
        "result 'b' (time_ms) is given twice",
    ),
    (b'{"b": {"hit-rate": {"value": 0.9}}}', "field 'b.hit-rate.unit' is missing"),
    (b'{"b": {"latency": {"value": 1, "extra": 2}}}', "field 'b.latency.extra' is not part of"),
    (b"[1, 2]", "not a generic benchmark file"),
]


@pytest.mark.parametrize(("data", "message"), BAD)
def test_a_bad_generic_file_names_the_file_and_the_field(data: bytes, message: str) -> None:
    with pytest.raises(ParseError) as raised:
        parse_generic_bench(data, path="run/bench.json")
    assert raised.value.path == "run/bench.json"
    assert message in raised.value.message


def _google(**entry: Any) -> bytes:
    base = {"name": "BM_x", "run_type": "iteration", "real_time": 1.0, "cpu_time": 1.0}
    return json.dumps(
        {"context": {}, "benchmarks": [{**base, "time_unit": "ns", **entry}]}
    ).encode()


@pytest.mark.parametrize(
    ("parse", "data", "message"),
    [
        (parse_google_benchmark, _google(time_unit="fortnight"), "'benchmarks[0].time_unit' is"),
        (parse_google_benchmark, _google(real_time=None), "'benchmarks[0].real_time' is missing"),
        (parse_google_benchmark, _google(name=""), "'benchmarks[0].name' is '': every benchmark"),
        (parse_google_benchmark, _google(run_type="x"), "'benchmarks[0].run_type' is 'x'"),
        (parse_google_benchmark, b'{"context": {}}', "not Google Benchmark output"),
        (parse_pytest_benchmark, b'{"benchmarks": [{"name": "t", "stats": {}}]}', "median"),
        (parse_pytest_benchmark, b'{"benchmarks": [{"stats": {"median": 1}}]}', "fullname"),
        (parse_pytest_benchmark, b'{"machine_info": {}}', "not pytest-benchmark output"),
    ],
)
def test_a_bad_tool_file_names_the_file_and_the_field(
    parse: Parse, data: bytes, message: str
) -> None:
    with pytest.raises(ParseError) as raised:
        parse(data, path="out.json")
    assert raised.value.path == "out.json" and message in raised.value.message


# --- invariant: any valid generic document round-trips ------------------------------------

UNITS = {
    "ns": False,
    "us": False,
    "ms": False,
    "s": False,
    "ops/s": True,
    "items/s": True,
    "B/s": True,
    "MiB": None,
    "count": None,
    "%": None,
}
_text = st.text(
    st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp")), min_size=1, max_size=30
).filter(lambda s: s.strip() == s and s != "")
_value = st.floats(min_value=1e-12, max_value=1e15, allow_nan=False, allow_infinity=False)


@st.composite
def _results(draw: st.DrawFn) -> dict[str, Any]:
    unit = draw(st.sampled_from(sorted(UNITS)))
    implied = UNITS[unit]
    higher = draw(st.booleans()) if implied is None or implied else False
    direction = "higher_is_better" if higher else "lower_is_better"
    result: dict[str, Any] = {"name": draw(_text), "unit": unit}
    if implied is None or draw(st.booleans()):
        result["direction"] = direction
    if draw(st.booleans()):
        result["repeats"] = draw(st.lists(_value, min_size=1, max_size=5))
    else:
        result["value"] = draw(_value)
    keys = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
    labels = st.dictionaries(keys, _text.filter(lambda s: "," not in s), max_size=3)
    result["labels"] = draw(labels)
    return result


@given(st.lists(_results(), min_size=1, max_size=6, unique_by=lambda r: r["name"]))
def test_any_valid_generic_document_round_trips_name_value_unit_direction(
    entries: list[dict[str, Any]],
) -> None:
    parsed = parse_generic_bench(json.dumps({"results": entries}).encode(), path="g.json")
    expected = []
    for e in entries:
        implied = UNITS[e["unit"]]
        higher = e["direction"] == "higher_is_better" if "direction" in e else implied
        for value in e.get("repeats", [e.get("value")]):
            expected.append((e["name"], value, e["unit"], higher, e["labels"]))
    got = [
        (
            r.benchmark,
            r.value,
            r.metric.unit,
            r.metric.higher_is_better,
            {k.removeprefix("label_"): v for k, v in r.extra.items() if k.startswith("label_")},
        )
        for r in parsed
    ]
    assert got == expected
    assert all(r.metric.name.endswith(_slug(r.metric.unit)) for r in parsed)


def _slug(unit: str) -> str:
    return unit.replace("/s", "_per_s").replace("%", "pct")
