"""The LoadGen parser reads the primary metric as the MLCommons checker does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracker.errors import ParseError
from tracker.formats.loadgen.parse import (
    DETAIL_LOG_NAME,
    SUMMARY_LOG_NAME,
    parse_detail_log,
    parse_loadgen_run,
    parse_summary_log,
)

RUNS = [
    "MultiStream",
    "Offline",
    "Offline_tokens",
    "Server",
    "Server_invalid",
    "Server_tokens",
    "SingleStream",
]

# The value each run's summary prints as its result, in the unit the tracker stores.
SUMMARY_PATTERNS = {
    "Offline": (r"^Samples per second: ([\d.]+)$", 1.0, "samples_per_s"),
    "Offline_tokens": (r"^Tokens per second: ([\d.]+)$", 1.0, "tokens_per_s"),
    "Server": (r"^Completed samples per second\s*: ([\d.]+)$", 1.0, "queries_per_s"),
    "Server_invalid": (r"^Completed samples per second\s*: ([\d.]+)$", 1.0, "queries_per_s"),
    "Server_tokens": (r"^Completed tokens per second: ([\d.]+)$", 1.0, "tokens_per_s"),
    "SingleStream": (
        r"Early stopping 90.0th percentile estimate: (\d+)$",
        1e6,
        "p90_latency_early_stopping_ms",
    ),
    "MultiStream": (
        r"Early stopping 99.0th percentile estimate: (\d+)$",
        1e6,
        "p99_latency_early_stopping_ms",
    ),
}


def _printed_value(run_dir: Path) -> float:
    pattern, divisor, _ = SUMMARY_PATTERNS[run_dir.name]
    text = (run_dir / SUMMARY_LOG_NAME).read_text()
    match = re.search(pattern, text, flags=re.M)
    assert match, f"{run_dir.name}: summary has no result line"
    return float(match.group(1)) / divisor


def _parse(run_dir: Path, *, detail: bool = True) -> list:
    summary = (run_dir / SUMMARY_LOG_NAME).read_bytes()
    lines = (run_dir / DETAIL_LOG_NAME).read_bytes().splitlines(keepends=True) if detail else None
    return parse_loadgen_run(
        summary=summary,
        summary_path=f"{run_dir.name}/{SUMMARY_LOG_NAME}",
        detail_lines=lines,
        detail_path=f"{run_dir.name}/{DETAIL_LOG_NAME}",
    )


@pytest.mark.parametrize("run", RUNS)
def test_primary_metric_matches_the_value_printed_in_the_summary(
    loadgen_local: Path, run: str
) -> None:
    [result] = _parse(loadgen_local / run)
    printed = _printed_value(loadgen_local / run)
    assert result.metric.name == SUMMARY_PATTERNS[run][2]
    # The summary rounds (2 decimals for Server); the detail log keeps 6 digits.
    assert result.value == pytest.approx(printed, rel=2e-5, abs=0.006)


@pytest.mark.parametrize("run", RUNS)
def test_summary_alone_gives_the_same_metric_and_validity(loadgen_local: Path, run: str) -> None:
    [from_detail] = _parse(loadgen_local / run)
    [from_summary] = _parse(loadgen_local / run, detail=False)
    assert from_summary.metric == from_detail.metric
    assert from_summary.is_valid == from_detail.is_valid
    assert from_summary.value == pytest.approx(from_detail.value, rel=1e-4)
    assert from_summary.extra["primary_metric_from"] == "summary log"


@pytest.mark.parametrize("run", RUNS)
def test_validity_is_loadgens_verdict(loadgen_local: Path, run: str) -> None:
    [result] = _parse(loadgen_local / run)
    assert result.is_valid is (run != "Server_invalid")


def test_latency_metrics_are_lower_is_better_and_rates_higher(loadgen_local: Path) -> None:
    directions = {run: _parse(loadgen_local / run)[0].metric.higher_is_better for run in RUNS}
    assert directions == {run: run not in ("SingleStream", "MultiStream") for run in RUNS}


def test_secondary_metrics_are_kept_in_ms(loadgen_local: Path) -> None:
    [result] = _parse(loadgen_local / "Server_tokens")
    assert result.extra["ttft_p99_ms"] == pytest.approx(2.839844)
    assert result.extra["tpot_p50_ms"] == pytest.approx(0.019736)
    assert result.extra["latency_p99.9_ms"] == pytest.approx(4.515295)
    assert result.extra["queries_per_s"] == pytest.approx(198.7)
    assert result.extra["query_count"] == 600
    assert "tokens_per_s" not in result.extra  # it is the primary value


def test_invalid_run_keeps_its_reason(loadgen_local: Path) -> None:
    [result] = _parse(loadgen_local / "Server_invalid")
    assert result.extra["invalid_reason"] == "Reduce target QPS to improve latency."
    assert result.extra["perf_constraints_met"] is False


def test_result_points_at_the_line_it_came_from(loadgen_local: Path) -> None:
    [result] = _parse(loadgen_local / "Offline")
    lines = (loadgen_local / "Offline" / DETAIL_LOG_NAME).read_text().splitlines()
    assert '"result_samples_per_second"' in lines[result.line - 1]


def test_llm_benchmark_name_selects_tokens_per_second() -> None:
    detail = [
        b':::MLLOG {"key": "effective_scenario", "value": "Offline"}\n',
        b':::MLLOG {"key": "result_validity", "value": "VALID"}\n',
        b':::MLLOG {"key": "result_samples_per_second", "value": 10.5}\n',
        b':::MLLOG {"key": "result_tokens_per_second", "value": 2500}\n',
    ]
    kwargs = {"summary": None, "summary_path": "s", "detail_path": "d"}
    [plain] = parse_loadgen_run(detail_lines=detail, benchmark="resnet50", **kwargs)
    [llm] = parse_loadgen_run(detail_lines=detail, benchmark="llama2-70b-99", **kwargs)
    assert (plain.metric.name, plain.value) == ("samples_per_s", 10.5)
    assert (llm.metric.name, llm.value) == ("tokens_per_s", 2500.0)


def test_accuracy_run_has_no_performance_result() -> None:
    detail = [
        b':::MLLOG {"key": "effective_scenario", "value": "Offline"}\n',
        b':::MLLOG {"key": "effective_test_mode", "value": "AccuracyOnly"}\n',
    ]
    assert (
        parse_loadgen_run(summary=None, summary_path="s", detail_lines=detail, detail_path="d")
        == []
    )


@pytest.mark.parametrize(
    ("lines", "message", "line"),
    [
        ([b"hello\n"], "no ':::MLLOG' marker", 1),
        ([b"\n", b":::MLLOG {not json\n"], "not valid JSON", 2),
        ([b':::MLLOG {"value": 1}\n'], "no 'key'", 1),
        ([], "empty LoadGen detail log", None),
    ],
)
def test_malformed_detail_log_names_file_and_line(
    lines: list[bytes], message: str, line: int | None
) -> None:
    with pytest.raises(ParseError) as caught:
        parse_detail_log(lines, path="run/mlperf_log_detail.txt")
    assert caught.value.path == "run/mlperf_log_detail.txt"
    assert caught.value.line == line
    assert message in str(caught.value)
    assert str(caught.value).startswith("run/mlperf_log_detail.txt: ")


def test_detail_log_without_result_key_is_an_error() -> None:
    detail = [b':::MLLOG {"key": "effective_scenario", "value": "Server"}\n']
    with pytest.raises(ParseError, match="result_completed_samples_per_sec"):
        parse_loadgen_run(summary=None, summary_path="s", detail_lines=detail, detail_path="d")


def test_unknown_scenario_is_an_error() -> None:
    detail = [b':::MLLOG {"key": "effective_scenario", "value": "Batch"}\n']
    with pytest.raises(ParseError, match="unknown LoadGen scenario 'Batch'"):
        parse_loadgen_run(summary=None, summary_path="s", detail_lines=detail, detail_path="d")


def test_summary_that_is_not_a_loadgen_summary_is_an_error() -> None:
    with pytest.raises(ParseError, match="not a LoadGen summary"):
        parse_summary_log(b"No warnings encountered during test.\n", path="x/summary.txt")


def test_summary_that_is_not_utf8_is_an_error() -> None:
    with pytest.raises(ParseError, match="not UTF-8"):
        parse_summary_log(b"Scenario : Offline\n\xff\xfe", path="x/summary.txt")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400), st.booleans())
def test_random_bytes_give_a_parse_error_or_a_result(data: bytes, as_detail: bool) -> None:
    try:
        if as_detail:
            parse_loadgen_run(
                summary=None,
                summary_path="s",
                detail_lines=data.splitlines(keepends=True),
                detail_path="d",
            )
        else:
            parse_loadgen_run(summary=data, summary_path="s", detail_lines=None, detail_path="d")
    except ParseError as error:
        assert error.path in ("s", "d")


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_truncated_real_logs_give_a_parse_error_or_a_result(
    loadgen_local: Path, data: st.DataObject
) -> None:
    run = data.draw(st.sampled_from(RUNS))
    detail = (loadgen_local / run / DETAIL_LOG_NAME).read_bytes()
    cut = data.draw(st.integers(min_value=0, max_value=len(detail)))
    try:
        results = parse_loadgen_run(
            summary=None,
            summary_path="s",
            detail_lines=detail[:cut].splitlines(keepends=True),
            detail_path="d",
        )
    except ParseError:
        return
    assert len(results) == 1
