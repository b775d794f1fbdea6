"""A LoadGen run read from its summary alone keeps what its detail log would have given."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.formats.loadgen.test_parse import RUNS
from tracker.errors import ParseError
from tracker.formats.loadgen.parse import DETAIL_LOG_NAME, SUMMARY_LOG_NAME, parse_loadgen_run


def _both(run_dir: Path) -> tuple[dict, dict]:
    with (run_dir / DETAIL_LOG_NAME).open("rb") as lines:
        [detail] = parse_loadgen_run(
            summary=None, summary_path="s", detail_lines=lines, detail_path="d"
        )
    [summary] = parse_loadgen_run(
        summary=(run_dir / SUMMARY_LOG_NAME).read_bytes(),
        summary_path="s",
        detail_lines=None,
        detail_path="d",
    )
    return dict(detail.extra), dict(summary.extra)


@pytest.mark.parametrize("run", RUNS)
def test_summary_extra_agrees_with_the_detail_log(loadgen_local: Path, run: str) -> None:
    detail, summary = _both(loadgen_local / run)
    shared = set(detail) & set(summary)
    for name in sorted(shared):
        if isinstance(detail[name], float | int) and not isinstance(detail[name], bool):
            assert summary[name] == pytest.approx(detail[name], rel=1e-3, abs=1e-6), name
        else:
            assert summary[name] == detail[name], name
    # what a summary holds is all kept: latencies, TTFT/TPOT, checks, settings, SUT name
    not_in_summary = {"error_count", "loadgen_version", "query_count", "test_datetime"}
    not_in_summary |= {"overlatency_query_count", "invalid_reason", "use_token_latencies"}
    not_in_summary |= {"target_latency_ms"}
    if run == "MultiStream":
        not_in_summary |= {key for key in detail if key.startswith("latency_")}
    assert set(detail) - set(summary) <= not_in_summary


def test_token_latencies_and_checks_from_the_summary(loadgen_local: Path) -> None:
    _detail, summary = _both(loadgen_local / "Server_tokens")
    assert summary["ttft_p99.9_ms"] == 3880223 / 1e6
    assert summary["tpot_mean_ms"] == 20151 / 1e6  # LoadGen 6: "Mean Time per Output Token"
    assert summary["perf_constraints_met"] is True and summary["sut_name"] == "PySUT"
    assert summary["ttft_limit_ms"] == 2000.0


def test_a_bad_number_in_the_summary_names_its_line(loadgen_local: Path) -> None:
    text = (loadgen_local / "Server" / SUMMARY_LOG_NAME).read_text()
    text = text.replace("Max latency (ns)                : ", "Max latency (ns)                : x")
    with pytest.raises(ParseError, match=r"line \d+: 'Max latency \(ns\)'"):
        parse_loadgen_run(
            summary=text.encode(), summary_path="s", detail_lines=None, detail_path="d"
        )
