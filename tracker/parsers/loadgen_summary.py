"""The rest of a LoadGen summary log, for runs read from the summary alone.

:mod:`tracker.parsers.loadgen` reads the primary metric and the main latency
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

import math
import re
from collections.abc import Mapping

from tracker.errors import ParseError
from tracker.records import ExtraValue

__all__ = ["complete_summary_extra"]

_NS_PER_MS = 1e6
_SUMMARY_PCT = r"(\d+(?:\.\d+)?)"
_PATTERNS: tuple[tuple[re.Pattern[str], str, float], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), name, divisor)
    for pattern, name, divisor in (
        (rf"{_SUMMARY_PCT} percentile latency \(ns\)", "latency_p{}_ms", _NS_PER_MS),
        (rf"{_SUMMARY_PCT}th percentile latency \(ns\)", "latency_p{}_ms", _NS_PER_MS),
        (rf"{_SUMMARY_PCT} percentile first token latency \(ns\)", "ttft_p{}_ms", _NS_PER_MS),
        (r"(min|max|mean) first token latency \(ns\)", "ttft_{}_ms", _NS_PER_MS),
        (rf"{_SUMMARY_PCT} percentile time to output token \(ns\)", "tpot_p{}_ms", _NS_PER_MS),
        (r"(min|max|mean) time (?:per|to) output token \(ns\)", "tpot_{}_ms", _NS_PER_MS),
        (
            rf"early stopping {_SUMMARY_PCT}th percentile estimate",
            "p{}_latency_early_stopping_ms",
            _NS_PER_MS,
        ),
    )
)
_NUMBERS: Mapping[str, tuple[str, float]] = {
    "Scheduled samples per second": ("scheduled_queries_per_s", 1.0),
    "QPS w/ loadgen overhead": ("queries_per_s_with_loadgen_overhead", 1.0),
    "QPS w/o loadgen overhead": ("queries_per_s_without_loadgen_overhead", 1.0),
    "samples_per_query": ("samples_per_query", 1.0),
    "target_qps": ("target_queries_per_s", 1.0),
    "target_latency (ns)": ("target_latency_ms", _NS_PER_MS),
    "ttft_latency (ns)": ("ttft_limit_ms", _NS_PER_MS),
    "tpot_latency (ns)": ("tpot_limit_ms", _NS_PER_MS),
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
