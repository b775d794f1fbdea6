"""The inputs the fuzz tests (``test_fuzz.py``) found or aimed at, kept as regressions.

Each case is a real file with one field (or line) changed, the target that
reads it (:data:`tests.support.fuzz_targets.TARGETS`) and what must come out: a
ParseError whose message holds the given words, or a result (whose numbers
:func:`tests.support.fuzz_targets.run_target` checks). Before the fixes, each raised
the exception named in its comment, or stored the value named there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.fuzz_targets import (
    TARGETS,
    encode,
    nested,
    raw,
    replaced,
    run_target,
    seeds_of,
)
from tracker.errors import ParseError
from tracker.formats.loadgen import parse as loadgen
from tracker.formats.loadgen.parse import parse_detail_log
from tracker.formats.mlperf_inference import parse_logs as mlperf_logs
from tracker.formats.mlperf_inference.parse import round_key
from tracker.formats.mlperf_inference.parse_logs import power_metric
from tracker.formats.parse_json import MAX_NESTING, decode_json, is_number

RESULT = ""
BIG = raw("9" * 5000)  # more digits than int() converts
HUGE = 10**400  # beyond the range of a double
Make = Callable[[Path], bytes]


def field(target: str, path: tuple[object, ...], value: object, seed: int = 0) -> Make:
    """The ``seed``-th real file of ``target`` with the value at ``path`` replaced."""

    def make(root: Path) -> bytes:
        _origin, data = seeds_of(target, root)[seed]
        return encode(replaced(json.loads(data), path, value))

    return make


def line(kind: str, old: bytes, new: bytes, name: str = "mlperf_log_detail.txt") -> Make:
    """A LoadGen log of ``loadgen-local/<kind>`` with ``old`` replaced by ``new``, once."""

    def make(root: Path) -> bytes:
        data = (root / "loadgen-local" / kind / name).read_bytes()
        assert old in data
        return data.replace(old, new, 1)

    return make


def text(content: str) -> Make:
    return lambda root: content.encode()


OFFLINE_VALUE = b'"value": 309778,'
SUMMARY = "mlperf_log_summary.txt"
CASES: list[tuple[str, str, Make, str]] = [
    # ValueError from json.loads: an integer of over 4300 digits
    ("aiperf", "5000 digits", field("aiperf", ("benchmark_id",), BIG), "not valid JSON"),
    ("viz-bundle", "5000 digits", field("viz-bundle", ("bundle_version",), BIG), "not valid JSON"),
    # OverflowError from math.isfinite / float(): an integer beyond a double
    ("aiperf", "400 digits", field("aiperf", ("request_latency", "avg"), HUGE), "finite number"),
    ("inferencex", "400 digits", field("inferencex", ("mean_ttft",), HUGE), RESULT),
    ("vllm-bench", "400 digits", field("vllm-bench", ("completed",), HUGE), "finite number"),
    ("endpoints-system", "400 digits", field("endpoints-system", ("x",), HUGE), RESULT),
    ("mlperf-table", "400 digits", field("mlperf-table", (0, "Performance_Result"), HUGE), RESULT),
    # ZeroDivisionError: no GPUs, or a duration that underflows to 0 s
    ("inferencex", "tp 0", field("inferencex", ("tp",), 0), "give 0 GPUs"),
    ("endpoints-summary", "5e-324 ns", field("endpoints-summary", ("duration_ns",), 5e-324), "≥ 1"),
    # TypeError / AttributeError: unhashable ids, a model_metadata that is not an object
    ("viz-bundle", "list id", field("viz-bundle", ("submissions", 0, "id"), [1]), RESULT),
    ("viz-bundle", "dict ref", field("viz-bundle", ("runs", 0, "submission_id"), {}), RESULT),
    (
        "viz-bundle",
        "list metadata",
        field("viz-bundle", ("submissions", 0, "combined_submission", "model_metadata"), [1]),
        RESULT,
    ),
    # ValueError from int(): "²" passes str.isdigit(); 5000 digits
    (
        "endpoints-system",
        "superscript count",
        field("endpoints-system", ("node_types", 0, "number_of_nodes"), "\u00b2"),
        "whole number",
    ),
    (
        "mlperf-system",
        "5000-digit count",
        field("mlperf-system", ("number_of_nodes",), "9" * 5000),
        "not a count",
    ),
    (
        "mlperf-system",
        "(x 5000 digits)",
        field("mlperf-system", ("accelerator_model_name",), "H100 (x" + "9" * 5000 + ")"),
        RESULT,
    ),
    (
        "mlperf-table",
        "5000-digit version",
        field("mlperf-table", (0, "version"), "v" + "9" * 5000 + ".1"),
        RESULT,
    ),
    ("mlperf-table", "5000-digit count", field("mlperf-table", (0, "Nodes"), "9" * 5000), RESULT),
    (
        "mlperf-table",
        "v6.1 key ²",
        lambda root: seeds_of("mlperf-table", root)[1][1].replace(b'"0"', '"\u00b2"'.encode(), 1),
        RESULT,
    ),
    (
        "loadgen-detail",
        "5000 digits",
        line("Offline", OFFLINE_VALUE, b'"value": ' + b"9" * 5000 + b","),
        "not valid JSON",
    ),
    (
        "mlperf-detail",
        "5000 digits",
        line("Offline", OFFLINE_VALUE, b'"value": ' + b"9" * 5000 + b","),
        "not valid JSON",
    ),
    (
        "loadgen-detail",
        "400 digits",
        line("Offline", OFFLINE_VALUE, b'"value": ' + b"9" * 400 + b","),
        "finite number",
    ),
    # stored silently: negative results, counts and throughputs
    (
        "loadgen-detail",
        "negative",
        line("Offline", OFFLINE_VALUE, b'"value": -309778,'),
        "negative result",
    ),
    (
        "mlperf-detail",
        "negative",
        line("Offline", OFFLINE_VALUE, b'"value": -1,'),
        "not a result ≥ 0",
    ),
    (
        "mlperf-summary",
        "negative",
        line("Offline", b"Samples per second: 309778", b"Samples per second: -5", SUMMARY),
        "not a result ≥ 0",
    ),
    (
        "aiperf",
        "negative",
        field("aiperf", ("output_token_throughput", "avg"), -5),
        "output tokens/s is -5.0",
    ),
    (
        "vllm-bench",
        "negative",
        field("vllm-bench", ("output_throughput",), -1),
        "output tokens/s is -1.0",
    ),
    ("inferencex", "tp -1", field("inferencex", ("tp",), -1), "give -1 GPUs"),
    (
        "endpoints-system",
        "-2 nodes",
        field("endpoints-system", ("node_types", 0, "number_of_nodes"), -2),
        "whole number ≥ 0",
    ),
    ("endpoints-point", "-4", text("concurrency: -4\n"), "expected ≥ 0"),
    (
        "mlperf-system",
        "-1 per node",
        field("mlperf-system", ("accelerators_per_node",), -1),
        "not a count",
    ),
    (
        "mlperf-system",
        "10**20 nodes",
        field("mlperf-system", ("number_of_nodes",), 10**20),
        "not a count",
    ),
    (
        "mlperf-table",
        "negative result",
        field("mlperf-table", (0, "Performance_Result"), -3),
        RESULT,
    ),
    ("mlperf-table", "-1 nodes", field("mlperf-table", (0, "Nodes"), -1), RESULT),
    # stored silently: NaN and infinities
    ("vllm-bench", "NaN date", field("vllm-bench", ("date",), float("nan")), RESULT),
    ("vllm-bench", "NaN duration", field("vllm-bench", ("duration",), float("nan")), RESULT),
    ("endpoints-summary", "1e-300 ns", field("endpoints-summary", ("duration_ns",), 1e-300), "≥ 1"),
    (
        "loadgen-summary",
        "nan",
        line("Offline", b"target_qps : 1e+06", b"target_qps : nan", SUMMARY),
        RESULT,
    ),
    (
        "mlperf-table",
        "accuracy 1e999",
        field("mlperf-table", (0, "Accuracy"), "mAP: 1e999"),
        RESULT,
    ),
    ("accuracy", "400 digits", text("accuracy=" + "9" * 400 + "%, good=1, total=2\n"), RESULT),
    (
        "power-samples",
        "inf W",
        text("Time,07-28-2025 08:09:12.507,Watts,inf,Volts,1\n"),
        "not a power sample",
    ),
    (
        "power-samples",
        "2 × 1e308 W",
        text("Time,07-28-2025 08:09:12.507,Watts,1e308,V,1\n" * 2),
        "out of range",
    ),
    # YAML: values the loader cannot build, nesting, aliases (RecursionError, a hang)
    ("endpoints-point", "13th month", text("concurrency: 4\nwhen: 2024-13-45\n"), "month must be"),
    (
        "endpoints-point",
        "5000 digits",
        text("concurrency: " + "9" * 5000 + "\n"),
        "a number too long",
    ),
    (
        "endpoints-point",
        "deep",
        text("concurrency: 4\nx: " + "[" * 5000 + "]" * 5000),
        "too deeply",
    ),
    (
        "endpoints-point",
        "recursive alias",
        text("concurrency: 4\nr: &r {self: *r}\n"),
        f"nested more than {MAX_NESTING} deep",
    ),
    (
        "endpoints-point",
        "alias bomb",
        text(
            "concurrency: 4\na: &a {x: 1, y: 1}\n"
            + "".join(
                f"{chr(98 + i)}: &{chr(98 + i)} {{p: *{chr(97 + i)}, q: *{chr(97 + i)}}}\n"
                for i in range(22)
            )
        ),
        "aliases",
    ),
    # TypeError from json.dumps in the message about a date, bytes or a set
    ("endpoints-point", "date", text("concurrency: 2001-01-01\n"), "datetime.date(2001, 1, 1)"),
    ("endpoints-point", "bytes", text("concurrency: !!binary aGVsbG8=\n"), "b'hello'"),
    ("endpoints-point", "set", text("concurrency: !!set {a}\n"), "{'a'}"),
    # nesting: walked and printed without limit before
    (
        "mlperf-system",
        "deep stack",
        field("mlperf-system", ("other_software_stack",), raw(nested(900))),
        "deep",
    ),
    ("vllm-bench", "deep rate", field("vllm-bench", ("request_rate",), raw(nested(900))), "deep"),
    (
        "loadgen-detail",
        "deep scenario",
        line("Offline", b'"value": "Offline",', b'"value": ' + nested(900).encode() + b","),
        "deep",
    ),
]


@pytest.mark.parametrize(
    ("target", "make", "expected"),
    [pytest.param(t, make, expected, id=f"{t}: {label}") for t, label, make, expected in CASES],
)
def test_fuzzed_input(target: str, make: Make, expected: str, shared_data: Path) -> None:
    answer = run_target(TARGETS[target], make(shared_data), shared_data)
    if expected:
        assert isinstance(answer, ParseError), answer
        assert expected in answer.message
    else:
        assert not isinstance(answer, ParseError), answer


def test_numbers_beyond_a_double_are_not_numbers() -> None:
    assert not is_number(HUGE) and is_number(2**1000) and not is_number(float("nan"))
    with pytest.raises(ParseError, match="nested more than 64 deep"):
        decode_json(nested(MAX_NESTING + 1).encode(), path="x.json")
    assert decode_json(nested(MAX_NESTING).encode(), path="x.json")


def test_a_round_label_of_5000_digits_sorts_as_the_newest() -> None:
    assert round_key("v" + "9" * 5000 + ".1") == (999, 0) and round_key("v5.1") == (5, 1)


def test_power_needs_a_positive_query_count() -> None:
    samples = [(b"20250728081000000000", 900.0)]
    window = {"begin": "07-28-2025 08:09:00.000", "end": "07-28-2025 08:11:00.000"}
    with pytest.raises(ParseError, match="result_query_count"):
        power_metric(
            samples, **window, scenario="SingleStream", loadgen_scenario="SingleStream",
            query_count=-5.0, path="spl.txt",
        )  # fmt: skip


def test_the_caches_of_log_keys_stay_bounded() -> None:
    """Keys are cached by name; a log of a million distinct keys must not keep them all."""
    event = ':::MLLOG {{"key": "result_{}_percentile_latency_ns", "value": 1, "time_ms": 0}}\n'
    lines = [event.format(n).encode() for n in range(6000)]
    log = parse_detail_log(lines, path="d", keep=mlperf_logs.keep_detail_key)
    loadgen.detail_extras(log, primary_key="", path="d")
    for cached in (loadgen._extra_name, mlperf_logs.keep_detail_key, mlperf_logs._detail_key):
        info = cached.cache_info()
        assert info.maxsize is not None and info.currsize <= info.maxsize
