"""AIPerf runs and sweeps: stored values equal the numbers in the real aiperf 0.13.0 files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.serving_cli import counts, export, ingest, ingest_ok, load_json, primary_rows
from tracker.errors import ParseError
from tracker.formats.serving.parse_aiperf import parse_aiperf_summary
from tracker.store.facade import Store

RUNS = [
    "concurrency_1",
    "concurrency_4",
    "concurrency_16",
    "extras/single_run_c2",
    "extras/multiturn_prefix_cache_c4_raw",
]
SUMMARY = "profile_export_aiperf.json"


@pytest.fixture(scope="module")
def aiperf(shared_data: Path) -> Path:
    return shared_data / "aiperf"


def _profiling_concurrency(doc: dict[str, Any]) -> float:
    (phase,) = [p for p in doc["input_config"]["phases"] if p["kind"] == "profiling"]
    return float(phase["concurrency"])


@pytest.mark.parametrize("run", RUNS)
def test_each_run_stores_the_numbers_of_its_summary(
    database_url: str, aiperf: Path, run: str
) -> None:
    doc = load_json(aiperf / run / SUMMARY)
    ingest_ok(database_url, aiperf / run, "--system", "node-a")
    [row] = primary_rows(database_url)
    extra = row["extra"]
    assert row["source_kind"] == "aiperf"
    assert (row["metric"], row["unit"], row["higher_is_better"]) == (
        "output_tokens_per_s",
        "tokens/s",
        True,
    )
    assert row["value"] == doc["output_token_throughput"]["avg"]
    assert row["concurrency"] == _profiling_concurrency(doc)
    assert row["scenario"] == "concurrency"
    assert row["benchmark"] == doc["input_config"]["models"]["items"][0]["name"]
    assert row["valid"] is True
    assert row["artifact_path"] == SUMMARY
    # AIPerf's "inter_token_latency" is TPOT; its "inter_chunk_latency" is vLLM's ITL
    assert extra["tpot_p50_ms"] == doc["inter_token_latency"]["p50"]
    assert extra["tpot_mean_ms"] == doc["inter_token_latency"]["avg"]
    assert extra["itl_p50_ms"] == doc["inter_chunk_latency"]["p50"]
    assert extra["ttft_p99_ms"] == doc["time_to_first_token"]["p99"]
    assert extra["e2e_latency_p90_ms"] == doc["request_latency"]["p90"]
    per_user = doc["output_token_throughput_per_user"]
    assert extra["output_tokens_per_s_per_user"] == per_user["avg"]
    assert extra["tokens_per_s_per_user_statistic"] == "mean of per-request 1/TPOT"
    assert extra["output_tokens_per_s_per_user_p50"] == per_user["p50"]
    assert extra["requests_per_s"] == doc["request_throughput"]["avg"]
    assert extra["total_tokens_per_s"] == doc["total_token_throughput"]["avg"]
    assert extra["duration_s"] == doc["benchmark_duration"]["avg"]
    assert extra["concurrency_achieved"] == doc["effective_concurrency"]["avg"]
    assert extra["isl_requested"] == doc["input_config"]["datasets"][0]["prompts"]["isl"]["mean"]
    assert extra["isl_measured"] == doc["input_sequence_length"]["avg"]
    assert extra["osl_measured"] == doc["output_sequence_length"]["avg"]
    assert extra["model"] == row["benchmark"] and extra["tool"] == "aiperf 0.13.0"
    # every other block is kept, with its unit in the name
    assert extra["http_req_waiting_p50_ms"] == doc["http_req_waiting"]["p50"]
    assert extra["total_output_tokens"] == doc["total_output_tokens"]["avg"]


def test_warmup_requests_are_not_counted(database_url: str, aiperf: Path) -> None:
    doc = load_json(aiperf / "concurrency_16" / SUMMARY)
    ingest_ok(database_url, aiperf / "concurrency_16", "--system", "node-a")
    rows = export(database_url)
    assert [row["artifact_path"] for row in rows] == [SUMMARY]  # not phases/warmup/...
    extra = rows[0]["extra"]
    profiling = [p for p in doc["input_config"]["phases"] if p["kind"] == "profiling"][0]
    assert extra["requests_completed"] == profiling["requests"] == 64
    assert not any(key.startswith("warmup") for key in extra)


def test_the_sweep_is_one_curve_of_three_points_and_reingest_changes_nothing(
    database_url: str, aiperf: Path
) -> None:
    ingest_ok(database_url, aiperf, "--system", "node-a")
    rows = [r for r in primary_rows(database_url) if r["extra"]["curve_workload"] == "isl256-osl64"]
    assert sorted(r["concurrency"] for r in rows) == [1.0, 4.0, 16.0]
    assert len({r["sweep_key"] for r in rows}) == 1
    assert sorted(r["workload"] for r in rows) == [
        "isl256-osl64/c1",
        "isl256-osl64/c16",
        "isl256-osl64/c4",
    ]
    before = (counts(database_url), export(database_url))
    again = ingest_ok(database_url, aiperf, "--system", "node-a")
    assert "unchanged, already stored" in again.output
    assert (counts(database_url), export(database_url)) == before


def test_a_second_software_version_makes_a_second_curve(database_url: str, aiperf: Path) -> None:
    for version in ("2.0.12", "2.0.13"):
        ingest_ok(database_url, aiperf, "--system", "node-a", version=version)
    rows = [r for r in primary_rows(database_url) if r["extra"]["curve_workload"] == "isl256-osl64"]
    curves: dict[str, set[str]] = {}
    for row in rows:
        curves.setdefault(row["software_version"], set()).add(row["sweep_key"])
    assert {version: len(keys) for version, keys in curves.items()} == {"2.0.12": 1, "2.0.13": 1}
    assert curves["2.0.12"] != curves["2.0.13"]
    assert len(rows) == 6


def test_the_other_runs_of_the_folder_are_separate_curves(database_url: str, aiperf: Path) -> None:
    result = ingest_ok(database_url, aiperf, "--system", "node-a")
    assert "5 runs (aiperf), 5 results stored" in result.output
    by_curve = {r["extra"]["curve_workload"]: r for r in primary_rows(database_url)}
    assert set(by_curve) == {"isl256-osl64", "isl128-osl32", "isl256-osl32-turns3"}
    multi_turn = by_curve["isl256-osl32-turns3"]
    assert multi_turn["workload"] == "isl256-osl32-turns3/c4"
    assert multi_turn["extra"]["turns_requested"] == 3.0
    assert multi_turn["extra"]["overall_usage_prompt_cache_read_pct"] == pytest.approx(47.924297)


def test_accelerators_from_the_command_line_add_the_per_accelerator_series(
    database_url: str, aiperf: Path
) -> None:
    ingest_ok(database_url, aiperf / "concurrency_16", "--system", "node-a", "--accelerators", "4")
    rows = {row["metric"]: row for row in export(database_url)}
    assert set(rows) == {"output_tokens_per_s", "output_tokens_per_s_per_accelerator"}
    per_gpu = rows["output_tokens_per_s_per_accelerator"]
    assert per_gpu["unit"] == "tokens/s/accelerator"
    assert per_gpu["value"] == pytest.approx(rows["output_tokens_per_s"]["value"] / 4)
    assert per_gpu["accelerators_total"] == 4 and per_gpu["extra"]["accelerators_total"] == 4
    assert per_gpu["sweep_key"] == rows["output_tokens_per_s"]["sweep_key"]


def test_repeated_runs_of_one_point_are_samples_not_duplicates(
    database_url: str, aiperf: Path, tmp_path: Path
) -> None:
    runs = tmp_path / "repeats"
    for n, factor in ((1, 1.0), (2, 1.01)):
        doc = load_json(aiperf / "concurrency_4" / SUMMARY)
        doc["output_token_throughput"]["avg"] *= factor
        (runs / f"run_{n}").mkdir(parents=True)
        (runs / f"run_{n}" / SUMMARY).write_text(json.dumps(doc))
    ingest_ok(database_url, runs, "--system", "node-a")
    ingest_ok(database_url, runs / "run_1", "--system", "node-a")  # reached again: no duplicate
    rows = primary_rows(database_url)
    assert len(rows) == 2 and len({r["workload"] for r in rows}) == 1
    with Store.open(database_url) as store:
        [point] = [p for p in store.iter_series_points() if p.metric == "output_tokens_per_s"]
    assert sorted(point.values) == sorted(r["value"] for r in rows)


def test_only_aggregates_is_refused_with_a_hint(database_url: str, aiperf: Path) -> None:
    result = ingest(database_url, aiperf / "aggregate", "--system", "node-a")
    assert result.exit_code == 2
    assert "aggregate files" in result.stderr and "concurrency_N" in result.stderr


def _broken(aiperf: Path, tmp_path: Path, change: Any) -> Path:
    doc = load_json(aiperf / "concurrency_4" / SUMMARY)
    text = change(doc)
    folder = tmp_path / "run"
    folder.mkdir()
    truncated = isinstance(text, str) and text.startswith("{")
    (folder / SUMMARY).write_text(text if truncated else json.dumps(doc))
    return folder


def _set(doc: dict[str, Any], keys: tuple[str, ...], value: Any) -> None:
    for key in keys[:-1]:
        doc = doc[key]
    doc[keys[-1]] = value


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: json.dumps(d)[:5000], "not valid JSON"),
        (
            lambda d: _set(d, ("output_token_throughput", "avg"), "fast"),
            "output_token_throughput.avg",
        ),
        (lambda d: d.pop("output_token_throughput"), "field 'output_token_throughput'"),
        (lambda d: _set(d, ("inter_token_latency", "p50"), [1]), "inter_token_latency.p50"),
        (
            lambda d: _set(d, ("inter_token_latency", "unit"), "furlongs"),
            "inter_token_latency.unit",
        ),
        (lambda d: _set(d, ("input_config", "phases"), []), "input_config.loadgen"),
        (lambda d: d.pop("aiperf_version"), "aiperf_version"),
    ],
)
def test_malformed_summary_names_the_file_and_the_field(
    database_url: str, aiperf: Path, tmp_path: Path, change: Any, message: str
) -> None:
    folder = _broken(aiperf, tmp_path, change)
    result = ingest(database_url, folder, "--kind", "aiperf", "--system", "node-a")
    assert result.exit_code == 2
    assert f"Error: {folder / SUMMARY}" in result.stderr
    assert message in result.stderr
    assert counts(database_url)["result"] == 0


def test_truncated_summary_error_has_a_line() -> None:
    with pytest.raises(ParseError) as raised:
        parse_aiperf_summary(b'{\n  "aiperf_version": "0.13.0",\n  "request', path="x.json")
    assert raised.value.path == "x.json" and raised.value.line == 3


def test_one_bad_run_of_a_sweep_leaves_the_others_stored(
    database_url: str, aiperf: Path, tmp_path: Path
) -> None:
    sweep = tmp_path / "sweep"
    for run in ("concurrency_1", "concurrency_4"):
        (sweep / run).mkdir(parents=True)
        shutil.copy(aiperf / run / SUMMARY, sweep / run / SUMMARY)
    (sweep / "concurrency_4" / SUMMARY).write_text("{")
    result = ingest(database_url, sweep, "--system", "node-a")
    assert result.exit_code == 2 and "concurrency_4" in result.stderr
    assert [r["concurrency"] for r in primary_rows(database_url)] == [1.0]
    strict = ingest(database_url, sweep, "--system", "node-a", "--strict", version="9")
    assert strict.exit_code == 2
    assert counts(database_url)["result"] == 1
