"""One view of a published run's LoadGen logs, whichever of the two is present.

The checker reads only ``mlperf_log_detail.txt``. Where a round's copy lacks it
(the fixtures here drop big ones), the summary is the fallback: its labels are
translated to the detail-log keys they print, so the checker's rules
(:mod:`tracker.parsers.mlperf_rules`) run unchanged on either. Summary numbers
are rounded for display (Server QPS to 2 decimals), hence the wider tolerance
for summary-only results.

A summary of an accuracy run holds no results: only LoadGen's closing lines
("No warnings encountered during test." ...) or a ``Mode : AccuracyOnly`` line.
It is read as ``effective_test_mode`` ``AccuracyOnly`` so the rules can name
it, rather than refused as no summary at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

from tracker.errors import ParseError
from tracker.parsers.loadgen import Entry, parse_summary_log

__all__ = ["keep_detail_key", "summary_as_detail"]

_KEPT_KEYS = frozenset(
    {
        "loadgen_version",
        "test_datetime",
        "sut_name",
        "num_errors",
        "power_begin",
        "power_end",
        "requested_scenario",
        "requested_use_token_latencies",
        "requested_server_ttft_latency",
        "requested_server_tpot_latency",
        "effective_scenario",
        "effective_test_mode",
        "effective_samples_per_query",
        "effective_target_qps",
        "effective_target_latency_ns",
        "effective_min_duration_ms",
        "effective_min_query_count",
        "effective_performance_sample_count",
    }
)
_KEPT_PREFIXES = ("result_", "early_stopping")
_UNUSED = frozenset(  # text nobody reads, and result_token_throughput is garbage (§10.7)
    {
        "early_stopping_result",
        "early_stopping_ttft_result",
        "early_stopping_tpot_result",
        "result_token_throughput",
        "result_token_throughput_with_loadgen_overhead",
    }
)


@lru_cache(maxsize=4096)  # bounded: a malformed log may hold any number of keys
def keep_detail_key(key: str) -> bool:
    """Whether a detail-log key matters to the primary metric, validity or extras."""
    return key in _KEPT_KEYS or (key.startswith(_KEPT_PREFIXES) and key not in _UNUSED)


_LABELS: Mapping[str, str] = {
    "SUT name": "sut_name",
    "Scenario": "effective_scenario",
    "Mode": "effective_test_mode",
    "Result is": "result_validity",
    "Samples per second": "result_samples_per_second",
    "Tokens per second": "result_tokens_per_second",
    "Tokens per second (inferred)": "result_inferred_tokens_per_second",
    "Completed samples per second": "result_completed_samples_per_sec",
    "Scheduled samples per second": "result_scheduled_samples_per_sec",
    "Completed tokens per second": "result_completed_tokens_per_second",
    "Completed tokens per second (inferred)": "result_inferred_completed_tokens_per_second",
    "Early stopping 90.0th percentile estimate": "early_stopping_latency_ss",
    "Early stopping 99.0th percentile estimate": "early_stopping_latency_ms",
    "QPS w/ loadgen overhead": "result_qps_with_loadgen_overhead",
    "QPS w/o loadgen overhead": "result_qps_without_loadgen_overhead",
    "samples_per_query": "effective_samples_per_query",
    "target_qps": "effective_target_qps",
    "target_latency (ns)": "effective_target_latency_ns",
    "ttft_latency (ns)": "requested_server_ttft_latency",
    "tpot_latency (ns)": "requested_server_tpot_latency",
    "min_duration (ms)": "effective_min_duration_ms",
    "min_query_count": "effective_min_query_count",
    "performance_sample_count": "effective_performance_sample_count",
    "Min First Token latency (ns)": "result_first_token_min_latency_ns",
    "Max First Token latency (ns)": "result_first_token_max_latency_ns",
    "Mean First Token latency (ns)": "result_first_token_mean_latency_ns",
    "Min Time to Output Token (ns)": "result_time_to_output_token_min",
    "Max Time to Output Token (ns)": "result_time_to_output_token_max",
    "Mean Time to Output Token (ns)": "result_time_to_output_token_mean",
    "Min Time per Output Token (ns)": "result_time_to_output_token_min",
    "Max Time per Output Token (ns)": "result_time_to_output_token_max",
    "Mean Time per Output Token (ns)": "result_time_to_output_token_mean",
}
_FLAGS: Mapping[str, str] = {
    "Early stopping satisfied": "early_stopping_met",
    "Min duration satisfied": "result_min_duration_met",
    "Min queries satisfied": "result_min_queries_met",
    "Performance constraints satisfied": "result_perf_constraints_met",
}
_PERCENTILES = (
    (re.compile(r"(\d+\.\d+) percentile latency \(ns\)"), "result_{}_percentile_latency_ns"),
    (
        re.compile(r"(\d+\.\d+) percentile first token latency \(ns\)"),
        "result_first_token_{}_percentile_latency_ns",
    ),
    (
        re.compile(r"(\d+\.\d+) percentile time to output token \(ns\)"),
        "result_time_per_output_token_{}_percentile_ns",
    ),
)
_PLAIN_LATENCIES = {
    "Min latency (ns)": "min",
    "Max latency (ns)": "max",
    "Mean latency (ns)": "mean",
}


def summary_as_detail(data: bytes, *, path: str) -> dict[str, Entry]:
    """A summary log's fields under the detail-log keys they print.

    MultiStream summaries print per-query latencies, which the detail log keeps
    under ``result_*_query_latency_ns`` names; token-latency settings imply
    ``requested_use_token_latencies``. An accuracy run's summary gives only
    ``effective_test_mode`` (``AccuracyOnly``).
    """
    try:
        fields = parse_summary_log(data, path=path)
    except ParseError:
        accuracy = _accuracy_run(data)
        if accuracy is None:
            raise
        return accuracy
    multistream = str(fields["Scenario"].value).strip().lower() == "multistream"
    detail: dict[str, Entry] = {}
    for label, entry in fields.items():
        key = _detail_key(label, multistream=multistream)
        if key is not None and key not in detail:
            detail[key] = entry
        elif label in _FLAGS:
            detail[_FLAGS[label]] = Entry(str(entry.value).lower() == "yes", entry.line)
    if "ttft_latency (ns)" in fields or "Completed tokens per second" in fields:
        detail["requested_use_token_latencies"] = Entry(True, fields["Scenario"].line)
    if "Tokens per second" in fields:
        detail["requested_use_token_latencies"] = Entry(True, fields["Scenario"].line)
    return detail


_CLOSING = re.compile(
    r"(?:no|\d+) (?:warnings?|errors?) encountered(?: during test)?\.?(?: see detailed log\.?)?"
)
_MODE = re.compile(r"\*?\s*mode\s*:\s*accuracyonly", re.IGNORECASE)


def _accuracy_run(data: bytes) -> dict[str, Entry] | None:
    """The fields of an accuracy run's summary (no ``Result is`` line), else ``None``."""
    try:
        lines = [line.strip() for line in data.decode("utf-8").splitlines()]
    except UnicodeDecodeError:
        return None
    for number, line in enumerate(lines, start=1):
        if _MODE.fullmatch(line):
            return {"effective_test_mode": Entry("AccuracyOnly", number)}
    told = [(n, line) for n, line in enumerate(lines, start=1) if line.strip("= ")]
    if told and all(_CLOSING.fullmatch(line.lower()) for _, line in told):
        return {"effective_test_mode": Entry("AccuracyOnly", told[0][0])}
    return None


@lru_cache(maxsize=4096)
def _detail_key(label: str, *, multistream: bool) -> str | None:
    if label in _LABELS:
        return _LABELS[label]
    if label in _PLAIN_LATENCIES:
        word = _PLAIN_LATENCIES[label]
        return f"result_{word}_query_latency_ns" if multistream else f"result_{word}_latency_ns"
    for pattern, template in _PERCENTILES:
        match = pattern.fullmatch(label)
        if match:
            key = template.format(match.group(1))
            if multistream and template.startswith("result_{}_percentile_latency"):
                return key.replace("_latency_ns", "_per_query_latency_ns")
            return key
    return None
