"""MLPerf LoadGen logs: ``mlperf_log_detail.txt`` and ``mlperf_log_summary.txt`` → results.

MLPerf LoadGen logs: ``mlperf_log_detail.txt`` and ``mlperf_log_summary.txt``.

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

LoadGen's machine log, ``mlperf_log_detail.txt``: one ``:::MLLOG {json}`` event per line.

Events are read line by line, the first occurrence of a key winning, as the
MLCommons checker reads them. Lines in LoadGen's own layout are read in place
(the key, then only the value is decoded), which keeps huge logs cheap; any
other line is decoded in full and reported with its number if it is not JSON.

The rest of a LoadGen summary log, for runs read from the summary alone.

This module reads the primary metric and the main latency
lines of ``mlperf_log_summary.txt``; this module completes the secondary
metrics so that a summary-only run keeps what its detail log would have given
(names as in the detail-log mapping, latencies in ms): every latency
percentile, min/max/mean of TTFT and TPOT (LoadGen 6 "Time per Output Token",
LoadGen 5 "Time to Output Token"), the early-stopping estimates, the validity
checks (``perf_constraints_met``, ``min_duration_met``, ...), the test
parameters, and the SUT name. MultiStream statistics are per query in the
summary, so they are named ``query_latency_*`` as in the detail log.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from tracker.errors import ParseError
from tracker.formats.parse_json import check_nesting
from tracker.records.results import ExtraValue, MetricRecord, ParsedResult

__all__ = [
    "decode_text",
    "NS_PER_MS",
    "DETAIL_LOG_NAME",
    "Entry",
    "SUMMARY_LOG_NAME",
    "complete_summary_extra",
    "detail_extras",
    "entry_number",
    "parse_detail_log",
    "parse_loadgen_run",
    "parse_summary_log",
]


_MARKER = b":::MLLOG"
_BOM = b"\xef\xbb\xbf"
_SKIPPED_KEYS = frozenset({"loaded_qsl_set", "loadgen_file_sha1", "loadgen_git_log_message"})


@dataclass(frozen=True, slots=True)
class Entry:
    """A value read from a log and the 1-based line it sits on."""

    value: object
    line: int


def parse_detail_log(
    lines: Iterable[bytes], *, path: str, keep: Callable[[str], bool] | None = None
) -> dict[str, Entry]:
    """Read a detail log line by line into ``{key: Entry}`` (first occurrence wins).

    The first non-empty line must be a ``:::MLLOG`` event, as the checker
    demands (a UTF-8 byte-order mark before it is skipped, as on the summary log);
    later lines without the marker are skipped, as its non-strict mode does.
    With ``keep``, only the keys it accepts are decoded and returned (the others
    are skipped unread, which is what makes huge logs cheap). When ``lines``
    also carries the whole file as a ``buffer`` attribute (a tree that read a
    small file at once), the lines are scanned in place, without copying them.
    """
    events = _DetailEvents(path, keep)
    buffer = getattr(lines, "buffer", None)
    if isinstance(buffer, bytes):
        position, number, size = len(_BOM) if buffer.startswith(_BOM) else 0, 0, len(buffer)
        while position < size:
            number += 1
            end = buffer.find(b"\n", position)
            end = size if end < 0 else end + 1
            events.take(buffer, position, end, number)
            position = end
    else:
        for number, raw in enumerate(lines, start=1):
            skip = len(_BOM) if number == 1 and raw.startswith(_BOM) else 0
            events.take(raw, skip, len(raw), number)
    if not events.seen:
        raise ParseError(path, "empty LoadGen detail log: no ':::MLLOG' events")
    return events.found


class _DetailEvents:
    """The events of one detail log, taken one line at a time."""

    __slots__ = ("found", "keep", "names", "path", "seen")

    def __init__(self, path: str, keep: Callable[[str], bool] | None) -> None:
        self.found: dict[str, Entry] = {}
        self.keep = keep
        self.names = _names(keep)
        self.path = path
        self.seen = False

    def _wanted(self, key: str) -> bool:
        return (
            key not in self.found
            and key not in _SKIPPED_KEYS
            and (self.keep is None or self.keep(key))
        )

    def _name(self, raw: bytes) -> str | None:
        """The key ``raw`` names, ``None`` when it is never wanted (remembered, up to a bound)."""
        key = raw.decode("utf-8", "replace")
        name = key if key not in _SKIPPED_KEYS and (self.keep is None or self.keep(key)) else None
        if len(self.names) < _MAX_NAMES:
            self.names[raw] = name
        return name

    def take(self, data: bytes, start: int, end: int, number: int) -> None:
        """The line ``data[start:end]``: an event in LoadGen's layout is read in place."""
        if data.startswith(_KEY_HEAD, start, end):
            self.seen = True
            quote = data.find(b'"', start + len(_KEY_HEAD), end)
            if quote > 0 and data.startswith(_VALUE_HEAD, quote, end):
                raw = data[start + len(_KEY_HEAD) : quote]
                try:
                    key = self.names[raw]
                except KeyError:  # not seen yet in any log: decode and judge it once
                    key = self._name(raw)
                if key is None or key in self.found:
                    return
                value = _fast_value(data, quote + len(_VALUE_HEAD), end)
                if value is not _NO_VALUE:
                    self.found[key] = Entry(value, number)
                    return
        line = data[start:end].strip()
        if not line:
            return
        if not line.startswith(_MARKER):
            if not self.seen:
                raise ParseError(
                    self.path, "not a LoadGen detail log: no ':::MLLOG' marker", line=number
                )
            return
        self.seen = True
        key, value = _decode_event(line, path=self.path, number=number)
        if self._wanted(key):
            self.found[key] = Entry(value, number)


_KEY_HEAD = _MARKER + b' {"key": "'
_VALUE_HEAD = b'", "value": '
_TIME_HEAD = b', "time_ms": '
_NO_VALUE = object()
_JSON_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_PLAIN_STRING = re.compile(rb'"([^"\\\x00-\x1f]*)"')
"""A JSON string without escapes or control characters: its bytes are its text."""
_LITERALS = {b"true": True, b"false": False, b"null": None}
_MAX_NAMES = 4096
_NAMES: dict[Callable[[str], bool] | None, dict[bytes, str | None]] = {}


def _names(keep: Callable[[str], bool] | None) -> dict[bytes, str | None]:
    """The keys already judged under ``keep``: LoadGen logs share their ~100 keys."""
    if keep not in _NAMES and len(_NAMES) >= 8:
        _NAMES.clear()  # many different filters (none in the tracker itself): start again
    return _NAMES.setdefault(keep, {})


def _fast_value(data: bytes, start: int, end: int) -> object:
    """The value of an event in LoadGen's exact layout, decoding only the value.

    The value runs to the last ``, "time_ms": `` of a line that ends in ``}}``.
    Returns ``_NO_VALUE`` for anything else (a backslash in the key, a cut
    line), which is then decoded in full and reported if it is not valid JSON.
    """
    tail = data.rfind(_TIME_HEAD, start, end)
    if tail < 0 or data.rfind(b"}}", tail, end) < 0:
        return _NO_VALUE
    text = data[start:tail]
    try:
        if text.isdigit() and (text[0] != 48 or len(text) == 1):  # no leading zero (48: "0")
            return int(text)  # the common case, without the regular expression
        if text in _LITERALS:
            return _LITERALS[text]
        plain = _PLAIN_STRING.fullmatch(text)
        if plain is not None:
            return plain.group(1).decode("utf-8", "surrogatepass")  # as json.loads decodes
        number = _JSON_NUMBER.fullmatch(text)
        if number is not None:
            return float(text) if number.group(1) or number.group(2) else int(text)
        value = json.loads(text)
    except (ValueError, RecursionError):  # ValueError: also an int of over 4300 digits
        return _NO_VALUE
    return _NO_VALUE if isinstance(value, list | dict) else value  # nesting is checked in full


def _decode_event(line: bytes, *, path: str, number: int) -> tuple[str, object]:
    try:
        event = json.loads(line[len(_MARKER) :])
    except (ValueError, RecursionError) as error:
        raise ParseError(path, f"event is not valid JSON ({error})", line=number) from None
    if not isinstance(event, dict) or not isinstance(event.get("key"), str):
        raise ParseError(path, "event has no 'key' string", line=number)
    check_nesting(event, path=path, line=number)
    return event["key"], event.get("value")


NS_PER_MS = 1e6
"""LoadGen writes its latencies in nanoseconds; the tracker stores milliseconds."""
_SUMMARY_PCT = r"(\d+(?:\.\d+)?)"
_PATTERNS: tuple[tuple[re.Pattern[str], str, float], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), name, divisor)
    for pattern, name, divisor in (
        (rf"{_SUMMARY_PCT} percentile latency \(ns\)", "latency_p{}_ms", NS_PER_MS),
        (rf"{_SUMMARY_PCT}th percentile latency \(ns\)", "latency_p{}_ms", NS_PER_MS),
        (rf"{_SUMMARY_PCT} percentile first token latency \(ns\)", "ttft_p{}_ms", NS_PER_MS),
        (r"(min|max|mean) first token latency \(ns\)", "ttft_{}_ms", NS_PER_MS),
        (rf"{_SUMMARY_PCT} percentile time to output token \(ns\)", "tpot_p{}_ms", NS_PER_MS),
        (r"(min|max|mean) time (?:per|to) output token \(ns\)", "tpot_{}_ms", NS_PER_MS),
        (
            rf"early stopping {_SUMMARY_PCT}th percentile estimate",
            "p{}_latency_early_stopping_ms",
            NS_PER_MS,
        ),
    )
)
_NUMBERS: Mapping[str, tuple[str, float]] = {
    "Scheduled samples per second": ("scheduled_queries_per_s", 1.0),
    "QPS w/ loadgen overhead": ("queries_per_s_with_loadgen_overhead", 1.0),
    "QPS w/o loadgen overhead": ("queries_per_s_without_loadgen_overhead", 1.0),
    "samples_per_query": ("samples_per_query", 1.0),
    "target_qps": ("target_queries_per_s", 1.0),
    "target_latency (ns)": ("target_latency_ms", NS_PER_MS),
    "ttft_latency (ns)": ("ttft_limit_ms", NS_PER_MS),
    "tpot_latency (ns)": ("tpot_limit_ms", NS_PER_MS),
    "min_duration (ms)": ("min_duration_ms", 1.0),
    "min_query_count": ("min_query_count", 1.0),
    "performance_sample_count": ("performance_sample_count", 1.0),
}
_FLAGS: Mapping[str, str] = {
    "Performance constraints satisfied": "perf_constraints_met",
    "Min duration satisfied": "min_duration_met",
    "Min queries satisfied": "min_queries_met",
    "Early stopping satisfied": "early_stopping_met",
}


def complete_summary_extra(
    extra: Mapping[str, ExtraValue],
    fields: Mapping[str, tuple[str, int]],
    *,
    scenario: str,
    primary_label: str,
    path: str,
) -> dict[str, ExtraValue]:
    """``extra`` completed with every other value of the summary ``fields`` (label → text, line)."""
    done = dict(extra)
    for label, (text, line) in fields.items():
        if label == primary_label:
            continue
        if label in _FLAGS:
            done.setdefault(_FLAGS[label], text.strip().lower() == "yes")
        elif label == "SUT name" and text.strip():
            done.setdefault("sut_name", text.strip())
        else:
            named = _name(label)
            if named is not None:
                name, divisor = named
                done.setdefault(name, _number(text, label=label, line=line, path=path) / divisor)
    if scenario == "MultiStream":
        done = {_per_query(key): value for key, value in done.items()}
    return dict(sorted(done.items()))


def _name(label: str) -> tuple[str, float] | None:
    if label in _NUMBERS:
        return _NUMBERS[label]
    for pattern, template, divisor in _PATTERNS:
        match = pattern.fullmatch(label)
        if match:
            word = match.group(1).lower()
            return template.format(word.rstrip("0").rstrip(".") if "." in word else word), divisor
    return None


def _per_query(key: str) -> str:
    return f"query_{key}" if key.startswith("latency_") else key


def _number(text: str, *, label: str, line: int, path: str) -> float:
    try:
        number = float(text)
    except ValueError:
        raise ParseError(path, f"'{label}' is {text!r}, not a number", line=line) from None
    if not math.isfinite(number):
        raise ParseError(path, f"'{label}' is {text!r}, not a finite number", line=line)
    return number


DETAIL_LOG_NAME = "mlperf_log_detail.txt"
SUMMARY_LOG_NAME = "mlperf_log_summary.txt"
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
    text = decode_text(data, path=path)
    fields: dict[str, Entry] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        label, sep, value = line.strip().lstrip("* ").partition(":")
        label = label.strip()
        if sep and label and label not in fields:
            fields[label] = Entry(value.strip(), number)
    if "Scenario" not in fields or "Result is" not in fields:
        raise ParseError(path, "not a LoadGen summary: no 'Scenario' or 'Result is' line")
    return fields


def decode_text(data: bytes, *, path: str) -> str:
    """``data`` as UTF-8 text; a :class:`ParseError` naming ``path`` and the byte otherwise."""
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
    ("SingleStream", False): (("early_stopping_latency_ss",), P90_LATENCY_MS, NS_PER_MS),
    ("MultiStream", False): (("early_stopping_latency_ms",), P99_LATENCY_MS, NS_PER_MS),
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
        (rf"result_{_PCT}_percentile_latency_ns", "latency_p{}_ms", NS_PER_MS),
        (r"result_(min|max|mean)_latency_ns", "latency_{}_ms", NS_PER_MS),
        (rf"result_{_PCT}_percentile_per_query_latency_ns", "query_latency_p{}_ms", NS_PER_MS),
        (r"result_(min|max|mean)_query_latency_ns", "query_latency_{}_ms", NS_PER_MS),
        (rf"result_first_token_{_PCT}_percentile_latency_ns", "ttft_p{}_ms", NS_PER_MS),
        (r"result_first_token_(min|max|mean)_latency_ns", "ttft_{}_ms", NS_PER_MS),
        (rf"result_time_per_output_token_{_PCT}_percentile_ns", "tpot_p{}_ms", NS_PER_MS),
        (r"result_time_to_output_token_(min|max|mean)", "tpot_{}_ms", NS_PER_MS),
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
    "early_stopping_latency_ss": ("p90_latency_early_stopping_ms", NS_PER_MS),
    "early_stopping_latency_ms": ("p99_latency_early_stopping_ms", NS_PER_MS),
    "result_query_count": ("query_count", 1.0),
    "result_overlatency_query_count": ("overlatency_query_count", 1.0),
    "effective_samples_per_query": ("samples_per_query", 1.0),
    "effective_target_qps": ("target_queries_per_s", 1.0),
    "effective_target_latency_ns": ("target_latency_ms", NS_PER_MS),
    "requested_server_ttft_latency": ("ttft_limit_ms", NS_PER_MS),
    "requested_server_tpot_latency": ("tpot_limit_ms", NS_PER_MS),
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
        NS_PER_MS,
    ),
    ("MultiStream", False): (
        ("Early stopping 99.0th percentile estimate",),
        P99_LATENCY_MS,
        NS_PER_MS,
    ),
}
_SUMMARY_EXTRA: Mapping[str, tuple[str, float]] = {
    "Min latency (ns)": ("latency_min_ms", NS_PER_MS),
    "Max latency (ns)": ("latency_max_ms", NS_PER_MS),
    "Mean latency (ns)": ("latency_mean_ms", NS_PER_MS),
    "50.00 percentile latency (ns)": ("latency_p50_ms", NS_PER_MS),
    "90.00 percentile latency (ns)": ("latency_p90_ms", NS_PER_MS),
    "99.00 percentile latency (ns)": ("latency_p99_ms", NS_PER_MS),
    "Samples per second": ("samples_per_s", 1.0),
    "Completed samples per second": ("queries_per_s", 1.0),
    "Tokens per second": ("tokens_per_s", 1.0),
    "Completed tokens per second": ("tokens_per_s", 1.0),
    "50.00 percentile first token latency (ns)": ("ttft_p50_ms", NS_PER_MS),
    "99.00 percentile first token latency (ns)": ("ttft_p99_ms", NS_PER_MS),
    "50.00 percentile time to output token (ns)": ("tpot_p50_ms", NS_PER_MS),
    "99.00 percentile time to output token (ns)": ("tpot_p99_ms", NS_PER_MS),
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
