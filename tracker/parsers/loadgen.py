"""MLPerf LoadGen logs: ``mlperf_log_detail.txt`` and ``mlperf_log_summary.txt``.

The primary metric follows the MLCommons submission checker
(``performance_check.py``): the detail-log key chosen by LoadGen's effective
scenario, the summary log as a fallback.

==============  ===========================================  ==================
scenario        detail-log key                               stored as
==============  ===========================================  ==================
Offline         ``result_samples_per_second``                samples/s
Offline, LLM    ``result_tokens_per_second``                 tokens/s
Server          ``result_completed_samples_per_sec``         queries/s
Server, LLM     ``result_completed_tokens_per_second``       tokens/s
SingleStream    ``early_stopping_latency_ss`` (ns)           ms, lower better
MultiStream     ``early_stopping_latency_ms`` (ns, sic)      ms, lower better
==============  ===========================================  ==================

Tables below give the divisor that turns the logged number into the stored one.
A run is "LLM" when LoadGen ran with ``use_token_latencies`` (the checker
decides by benchmark name; a local run's benchmark name is only a label, so the
log's own setting decides here, and known LLM benchmark names force it too).
Every other number of the log is kept as a secondary metric, latencies in ms.
Validity is LoadGen's ``result_validity``; an INVALID run is stored as invalid.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from tracker.errors import ParseError
from tracker.parsers.loadgen_detail import Entry, parse_detail_log
from tracker.parsers.loadgen_summary import complete_summary_extra
from tracker.records import ExtraValue, MetricRecord, ParsedResult

__all__ = [
    "DETAIL_LOG_NAME",
    "SUMMARY_LOG_NAME",
    "Entry",
    "detail_extras",
    "entry_number",
    "parse_detail_log",
    "parse_loadgen_run",
    "parse_summary_log",
]

DETAIL_LOG_NAME = "mlperf_log_detail.txt"
SUMMARY_LOG_NAME = "mlperf_log_summary.txt"
_NS_PER_MS = 1e6
_SCENARIOS = ("Offline", "Server", "SingleStream", "MultiStream")
_LLM_BENCHMARKS = (
    "llama2-70b",
    "mixtral-8x7b",
    "llama3.1-405b",
    "llama3.1-8b",
    "deepseek-r1",
    "gpt-oss-120b",
    "gptj",
)

SAMPLES_PER_S = MetricRecord("samples_per_s", "samples/s", True)
QUERIES_PER_S = MetricRecord("queries_per_s", "queries/s", True)
TOKENS_PER_S = MetricRecord("tokens_per_s", "tokens/s", True)
P90_LATENCY_MS = MetricRecord("p90_latency_early_stopping_ms", "ms", False)
P99_LATENCY_MS = MetricRecord("p99_latency_early_stopping_ms", "ms", False)


def parse_summary_log(data: bytes, *, path: str) -> dict[str, Entry]:
    """Read a summary log into ``{label: Entry}`` with string values.

    Bullet lines such as `` * Early stopping 90.0th percentile estimate: 3515``
    are read too, under their label without the bullet.
    """
    text = _decode_text(data, path=path)
    fields: dict[str, Entry] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        label, sep, value = line.strip().lstrip("* ").partition(":")
        label = label.strip()
        if sep and label and label not in fields:
            fields[label] = Entry(value.strip(), number)
    if "Scenario" not in fields or "Result is" not in fields:
        raise ParseError(path, "not a LoadGen summary: no 'Scenario' or 'Result is' line")
    return fields


def _decode_text(data: bytes, *, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ParseError(path, f"not UTF-8 text (byte {error.start})") from None


def parse_loadgen_run(
    *,
    summary: bytes | None,
    summary_path: str,
    detail_lines: Iterable[bytes] | None,
    detail_path: str,
    benchmark: str | None = None,
) -> list[ParsedResult]:
    """The primary metric of one LoadGen run, with its secondary metrics.

    Returns an empty list for an accuracy-mode run (no performance numbers).
    The detail log is preferred; the summary is the fallback.
    """
    if detail_lines is not None:
        detail = parse_detail_log(detail_lines, path=detail_path)
        return _from_detail(detail, path=detail_path, benchmark=benchmark)
    if summary is not None:
        fields = parse_summary_log(summary, path=summary_path)
        return _from_summary(fields, path=summary_path, benchmark=benchmark)
    raise ParseError(summary_path, f"neither {SUMMARY_LOG_NAME} nor {DETAIL_LOG_NAME} was found")


def _is_llm(benchmark: str | None, token_latencies: bool) -> bool:
    if token_latencies:
        return True
    name = (benchmark or "").lower()
    return any(name.startswith(prefix) for prefix in _LLM_BENCHMARKS) and not name.endswith("-edge")


def _scenario(value: object, *, path: str, line: int | None) -> str:
    for scenario in _SCENARIOS:
        if isinstance(value, str) and value.strip().lower() == scenario.lower():
            return scenario
    raise ParseError(path, f"unknown LoadGen scenario {value!r}", line=line)


# --- detail log -------------------------------------------------------------

_DETAIL_PRIMARY: Mapping[tuple[str, bool], tuple[tuple[str, ...], MetricRecord, float]] = {
    ("Offline", False): (("result_samples_per_second",), SAMPLES_PER_S, 1.0),
    ("Offline", True): (
        ("result_tokens_per_second", "result_inferred_tokens_per_second"),
        TOKENS_PER_S,
        1.0,
    ),
    ("Server", False): (
        ("result_completed_samples_per_sec", "result_scheduled_samples_per_sec"),
        QUERIES_PER_S,
        1.0,
    ),
    ("Server", True): (
        (
            "result_completed_tokens_per_second",
            "result_inferred_completed_tokens_per_second",
        ),
        TOKENS_PER_S,
        1.0,
    ),
    ("SingleStream", False): (("early_stopping_latency_ss",), P90_LATENCY_MS, _NS_PER_MS),
    ("MultiStream", False): (("early_stopping_latency_ms",), P99_LATENCY_MS, _NS_PER_MS),
}


def _from_detail(
    detail: Mapping[str, Entry], *, path: str, benchmark: str | None
) -> list[ParsedResult]:
    scenario_entry = detail.get("effective_scenario") or detail.get("requested_scenario")
    if scenario_entry is None:
        raise ParseError(path, "no 'effective_scenario' event: is the log complete?")
    scenario = _scenario(scenario_entry.value, path=path, line=scenario_entry.line)
    mode = detail.get("effective_test_mode")
    if mode is not None and mode.value == "AccuracyOnly":
        return []
    token_latencies = _entry_value(detail, "requested_use_token_latencies") is True
    llm = _is_llm(benchmark, token_latencies) and scenario in ("Offline", "Server")
    keys, metric, divisor = _DETAIL_PRIMARY[(scenario, llm)]
    found = next((k for k in keys if k in detail), None)
    if found is None:
        raise ParseError(path, f"no '{keys[0]}' event for a {scenario} run: is the log complete?")
    validity = _entry_value(detail, "result_validity")
    if validity not in ("VALID", "INVALID"):
        raise ParseError(path, f"'result_validity' is {validity!r}, expected VALID or INVALID")
    value = _primary_number(detail[found], key=found, path=path) / divisor
    extra = detail_extras(detail, primary_key=found, path=path)
    return [
        ParsedResult(
            scenario=scenario,
            metric=metric,
            value=value,
            is_valid=validity == "VALID",
            artifact_path=path,
            line=detail[found].line,
            extra=extra,
        )
    ]


def _entry_value(fields: Mapping[str, Entry], key: str) -> object:
    entry = fields.get(key)
    return None if entry is None else entry.value


def entry_number(entry: Entry, *, key: str, path: str) -> float:
    """The value of ``entry`` as a finite float, or a ParseError naming ``key`` and its line."""
    value = entry.value
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ParseError(path, f"'{key}' is {value!r}, not a number", line=entry.line)
    try:
        number = float(value)
    except ValueError:
        raise ParseError(path, f"'{key}' is {value!r}, not a number", line=entry.line) from None
    except OverflowError:  # a whole number beyond the range of a double
        number = float("inf")
    if number != number or number in (float("inf"), float("-inf")):
        raise ParseError(path, f"'{key}' is {value!r}, not a finite number", line=entry.line)
    return number


def _primary_number(entry: Entry, *, key: str, path: str) -> float:
    number = entry_number(entry, key=key, path=path)
    if number < 0:
        raise ParseError(path, f"'{key}' is {entry.value!r}, a negative result", line=entry.line)
    return number


_FINITE_INT = 2**1023
"""Whole numbers below this in size are finite as floats."""
_PCT = r"(\d+\.\d+)"
_DETAIL_EXTRA_PATTERNS: tuple[tuple[re.Pattern[str], str, float], ...] = tuple(
    (re.compile(pattern), name, divisor)
    for pattern, name, divisor in (
        (rf"result_{_PCT}_percentile_latency_ns", "latency_p{}_ms", _NS_PER_MS),
        (r"result_(min|max|mean)_latency_ns", "latency_{}_ms", _NS_PER_MS),
        (rf"result_{_PCT}_percentile_per_query_latency_ns", "query_latency_p{}_ms", _NS_PER_MS),
        (r"result_(min|max|mean)_query_latency_ns", "query_latency_{}_ms", _NS_PER_MS),
        (rf"result_first_token_{_PCT}_percentile_latency_ns", "ttft_p{}_ms", _NS_PER_MS),
        (r"result_first_token_(min|max|mean)_latency_ns", "ttft_{}_ms", _NS_PER_MS),
        (rf"result_time_per_output_token_{_PCT}_percentile_ns", "tpot_p{}_ms", _NS_PER_MS),
        (r"result_time_to_output_token_(min|max|mean)", "tpot_{}_ms", _NS_PER_MS),
    )
)
_DETAIL_EXTRA_KEYS: Mapping[str, tuple[str, float]] = {
    "result_samples_per_second": ("samples_per_s", 1.0),
    "result_tokens_per_second": ("tokens_per_s", 1.0),
    "result_inferred_tokens_per_second": ("inferred_tokens_per_s", 1.0),
    "result_completed_samples_per_sec": ("queries_per_s", 1.0),
    "result_scheduled_samples_per_sec": ("scheduled_queries_per_s", 1.0),
    "result_completed_tokens_per_second": ("tokens_per_s", 1.0),
    "result_inferred_completed_tokens_per_second": ("inferred_tokens_per_s", 1.0),
    "result_qps_with_loadgen_overhead": ("queries_per_s_with_loadgen_overhead", 1.0),
    "result_qps_without_loadgen_overhead": ("queries_per_s_without_loadgen_overhead", 1.0),
    "early_stopping_latency_ss": ("p90_latency_early_stopping_ms", _NS_PER_MS),
    "early_stopping_latency_ms": ("p99_latency_early_stopping_ms", _NS_PER_MS),
    "result_query_count": ("query_count", 1.0),
    "result_overlatency_query_count": ("overlatency_query_count", 1.0),
    "effective_samples_per_query": ("samples_per_query", 1.0),
    "effective_target_qps": ("target_queries_per_s", 1.0),
    "effective_target_latency_ns": ("target_latency_ms", _NS_PER_MS),
    "requested_server_ttft_latency": ("ttft_limit_ms", _NS_PER_MS),
    "requested_server_tpot_latency": ("tpot_limit_ms", _NS_PER_MS),
    "effective_min_duration_ms": ("min_duration_ms", 1.0),
    "effective_min_query_count": ("min_query_count", 1.0),
    "effective_performance_sample_count": ("performance_sample_count", 1.0),
    "num_errors": ("error_count", 1.0),
}
_DETAIL_EXTRA_TEXT: Mapping[str, str] = {
    "loadgen_version": "loadgen_version",
    "sut_name": "sut_name",
    "test_datetime": "test_datetime",
    "result_invalid_reason": "invalid_reason",
    "result_perf_constraints_met": "perf_constraints_met",
    "result_min_duration_met": "min_duration_met",
    "result_min_queries_met": "min_queries_met",
    "early_stopping_met": "early_stopping_met",
    "requested_use_token_latencies": "use_token_latencies",
}


def detail_extras(
    detail: Mapping[str, Entry], *, primary_key: str, path: str
) -> dict[str, ExtraValue]:
    """Every known number of a detail log except the primary one, under its stored name."""
    extra: dict[str, ExtraValue] = {}
    for key, entry in detail.items():
        if key == primary_key:
            continue
        if key in _DETAIL_EXTRA_TEXT:
            if isinstance(entry.value, str | bool | int | float):
                extra[_DETAIL_EXTRA_TEXT[key]] = _clean_scalar(entry.value)
            continue
        named = _extra_name(key)
        value = entry.value
        if named is not None and not isinstance(value, bool):
            name, divisor = named
            # The common cases, spared a call per value: float(value) / divisor is
            # entry_number's answer for a finite float and a whole number of this size.
            if type(value) is float and value - value == 0:
                number = value / divisor
            elif type(value) is int and -_FINITE_INT < value < _FINITE_INT:
                number = value / divisor
            else:
                number = entry_number(entry, key=key, path=path) / divisor
            extra[name] = int(number) if isinstance(value, int) and divisor == 1 else number
    return dict(sorted(extra.items()))


@lru_cache(maxsize=4096)  # bounded: a malformed log may hold any number of keys
def _extra_name(key: str) -> tuple[str, float] | None:
    if key in _DETAIL_EXTRA_KEYS:
        return _DETAIL_EXTRA_KEYS[key]
    for pattern, template, divisor in _DETAIL_EXTRA_PATTERNS:
        match = pattern.fullmatch(key)
        if match:
            return template.format(_short_percentile(match.group(1))), divisor
    return None


def _short_percentile(text: str) -> str:
    """``"99.00"`` → ``"99"``, ``"99.90"`` → ``"99.9"``; other words unchanged."""
    return text.rstrip("0").rstrip(".") if "." in text else text


def _clean_scalar(value: str | bool | int | float) -> ExtraValue:
    return value.strip() if isinstance(value, str) else value


# --- summary log (fallback) ---------------------------------------------------

_SUMMARY_PRIMARY: Mapping[tuple[str, bool], tuple[tuple[str, ...], MetricRecord, float]] = {
    ("Offline", False): (("Samples per second",), SAMPLES_PER_S, 1.0),
    ("Offline", True): (
        ("Tokens per second", "Tokens per second (inferred)"),
        TOKENS_PER_S,
        1.0,
    ),
    ("Server", False): (
        ("Completed samples per second", "Scheduled samples per second"),
        QUERIES_PER_S,
        1.0,
    ),
    ("Server", True): (
        ("Completed tokens per second", "Completed tokens per second (inferred)"),
        TOKENS_PER_S,
        1.0,
    ),
    ("SingleStream", False): (
        ("Early stopping 90.0th percentile estimate",),
        P90_LATENCY_MS,
        _NS_PER_MS,
    ),
    ("MultiStream", False): (
        ("Early stopping 99.0th percentile estimate",),
        P99_LATENCY_MS,
        _NS_PER_MS,
    ),
}
_SUMMARY_EXTRA: Mapping[str, tuple[str, float]] = {
    "Min latency (ns)": ("latency_min_ms", _NS_PER_MS),
    "Max latency (ns)": ("latency_max_ms", _NS_PER_MS),
    "Mean latency (ns)": ("latency_mean_ms", _NS_PER_MS),
    "50.00 percentile latency (ns)": ("latency_p50_ms", _NS_PER_MS),
    "90.00 percentile latency (ns)": ("latency_p90_ms", _NS_PER_MS),
    "99.00 percentile latency (ns)": ("latency_p99_ms", _NS_PER_MS),
    "Samples per second": ("samples_per_s", 1.0),
    "Completed samples per second": ("queries_per_s", 1.0),
    "Tokens per second": ("tokens_per_s", 1.0),
    "Completed tokens per second": ("tokens_per_s", 1.0),
    "50.00 percentile first token latency (ns)": ("ttft_p50_ms", _NS_PER_MS),
    "99.00 percentile first token latency (ns)": ("ttft_p99_ms", _NS_PER_MS),
    "50.00 percentile time to output token (ns)": ("tpot_p50_ms", _NS_PER_MS),
    "99.00 percentile time to output token (ns)": ("tpot_p99_ms", _NS_PER_MS),
}


def _from_summary(
    fields: Mapping[str, Entry], *, path: str, benchmark: str | None
) -> list[ParsedResult]:
    scenario = _scenario(fields["Scenario"].value, path=path, line=fields["Scenario"].line)
    if _entry_value(fields, "Mode") == "AccuracyOnly":
        return []
    token_latencies = any("token" in label.lower() for label in fields)
    llm = _is_llm(benchmark, token_latencies) and scenario in ("Offline", "Server")
    labels, metric, divisor = _SUMMARY_PRIMARY[(scenario, llm)]
    found = next((label for label in labels if label in fields), None)
    if found is None:
        raise ParseError(path, f"no '{labels[0]}' line for a {scenario} run")
    validity = fields["Result is"]
    if validity.value not in ("VALID", "INVALID"):
        raise ParseError(path, f"'Result is' says {validity.value!r}", line=validity.line)
    extra: dict[str, ExtraValue] = {"primary_metric_from": "summary log"}
    for label, (name, factor) in _SUMMARY_EXTRA.items():
        if label in fields and label != found:
            extra[name] = entry_number(fields[label], key=label, path=path) / factor
    texts = {label: (str(entry.value), entry.line) for label, entry in fields.items()}
    extra = complete_summary_extra(extra, texts, scenario=scenario, primary_label=found, path=path)
    return [
        ParsedResult(
            scenario=scenario,
            metric=metric,
            value=_primary_number(fields[found], key=found, path=path) / divisor,
            is_valid=validity.value == "VALID",
            artifact_path=path,
            line=fields[found].line,
            extra=dict(sorted(extra.items())),
        )
    ]
