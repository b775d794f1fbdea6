"""vLLM ``--save-result`` files (InferenceX fork and upstream shape): values as in the files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_rows import stored_nothing
from tests.support.serving_cli import counts, ingest, ingest_ok, load_json, primary_rows
from tracker.errors import ParseError
from tracker.formats.serving.parse_vllm import parse_vllm_result

FORK = "vllm_bench_serving/inferencex_fork_fake_server"
FILES = [
    f"{FORK}/fake-llm_isl256_osl64_conc1.json",
    f"{FORK}/fake-llm_isl256_osl64_conc4.json",
    f"{FORK}/fake-llm_isl256_osl64_conc16.json",
    "inferencex/public_examples/glm47_conc16.vllm_bench_result.json",
]


@pytest.mark.parametrize("name", FILES)
def test_each_file_stores_the_numbers_it_holds(
    database_url: str, shared_data: Path, name: str
) -> None:
    path = shared_data / name
    doc = load_json(path)
    result = ingest_ok(database_url, path, "--system", "node-a")
    assert "1 run (vllm-bench), 1 result stored" in result.output
    [row] = primary_rows(database_url)
    extra = row["extra"]
    assert row["source_kind"] == "vllm-bench"
    assert (row["value"], row["unit"]) == (doc["output_throughput"], "tokens/s")
    assert row["concurrency"] == doc["max_concurrency"]
    assert row["scenario"] == "concurrency"
    assert row["benchmark"] == doc["model_id"]
    assert row["artifact_path"] == path.name
    assert extra["tpot_p50_ms"] == doc["median_tpot_ms"]
    assert extra["itl_p99_ms"] == doc["p99_itl_ms"]  # vLLM's ITL: pooled chunk gaps
    assert extra["ttft_mean_ms"] == doc["mean_ttft_ms"]
    assert extra["requests_per_s"] == doc["request_throughput"]
    assert extra["total_tokens_per_s"] == doc["total_token_throughput"]
    assert extra["duration_s"] == doc["duration"]
    assert extra["requests_completed"] == doc["completed"]
    assert extra["output_tokens_per_s_per_user"] == pytest.approx(1000 / doc["median_tpot_ms"])
    assert extra["tokens_per_s_per_user_statistic"] == "1/p50 TPOT"
    assert extra["osl_measured"] == doc["total_output_tokens"] / doc["completed"]
    goodput = doc["request_goodput:"]  # the fork's spelling, trailing colon
    assert extra.get("goodput_requests_per_s") == goodput
    if "mean_e2el_ms" in doc:
        achieved = doc["completed"] * doc["mean_e2el_ms"] / 1000 / doc["duration"]
        assert extra["concurrency_achieved"] == pytest.approx(achieved)
        assert extra["e2e_latency_p99_ms"] == doc["p99_e2el_ms"]


def test_the_folder_is_one_sweep_of_three_points(database_url: str, shared_data: Path) -> None:
    result = ingest_ok(database_url, shared_data / "vllm_bench_serving", "--system", "node-a")
    assert "3 runs (vllm-bench), 3 results stored" in result.output
    assert "name the workload with --benchmark" in result.output
    rows = primary_rows(database_url)
    assert sorted(r["concurrency"] for r in rows) == [1.0, 4.0, 16.0]
    assert len({r["sweep_key"] for r in rows}) == 1
    assert sorted(r["workload"] for r in rows) == ["c1", "c16", "c4"]


def test_upstream_spelling_and_appended_repeats(
    database_url: str, shared_data: Path, tmp_path: Path
) -> None:
    doc = load_json(shared_data / FORK / "fake-llm_isl256_osl64_conc4.json")
    doc["request_goodput"] = doc.pop("request_goodput:")
    doc.update({"failed": 0, "label": "nightly", "max_concurrent_requests": 4})
    again = {**doc, "output_throughput": doc["output_throughput"] * 0.98}
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(doc) + "\n" + json.dumps(again) + "\n")
    ingest_ok(database_url, path, "--system", "node-a", "--benchmark", "llama-1k1k")
    rows = primary_rows(database_url)
    assert [r["line"] for r in rows] == [1, 2]
    assert len({r["workload"] for r in rows}) == 1  # two samples of one point
    assert [r["value"] for r in rows] == [doc["output_throughput"], again["output_throughput"]]
    assert rows[0]["extra"]["goodput_requests_per_s"] == doc["request_goodput"]
    assert rows[0]["extra"]["max_concurrent_requests"] == 4


def test_a_request_rate_run_is_keyed_on_its_rate(tmp_path: Path, shared_data: Path) -> None:
    doc = load_json(shared_data / FORK / "fake-llm_isl256_osl64_conc4.json")
    doc.update({"request_rate": 8.0, "max_concurrency": None})
    [result] = parse_vllm_result(json.dumps(doc).encode(), path="r.json")
    assert (result.scenario, result.workload, result.concurrency) == ("request-rate", "r8", None)
    assert result.extra["request_rate_per_s"] == 8.0


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "result.json"
    path.write_text(text)
    return path


def _changed(shared_data: Path, change: Any) -> str:
    doc = load_json(shared_data / FORK / "fake-llm_isl256_osl64_conc16.json")
    change(doc)
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(output_throughput="n/a"), "field 'output_throughput'"),
        (lambda d: d.pop("output_throughput"), "field 'output_throughput' is missing"),
        (lambda d: d.update(max_concurrency="sixteen"), "field 'max_concurrency'"),
        (lambda d: d.update(request_rate="fast"), "field 'request_rate'"),
        (lambda d: d.update(max_concurrency=None), "field 'max_concurrency' is null"),
    ],
)
def test_malformed_file_names_the_file_and_the_field(
    database_url: str, shared_data: Path, tmp_path: Path, change: Any, message: str
) -> None:
    path = _write(tmp_path, _changed(shared_data, change))
    result = ingest(database_url, path, "--kind", "vllm-bench", "--system", "node-a")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {path}")
    assert message in result.stderr
    assert counts(database_url)["result"] == 0


def test_truncated_file_names_the_file_and_line(database_url: str, tmp_path: Path) -> None:
    path = _write(tmp_path, '{"date": "20261202-155703", "output_throughput": 6')
    result = ingest(database_url, path, "--kind", "vllm-bench", "--system", "node-a")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {path}: line 1: not valid JSON")
    with pytest.raises(ParseError):
        parse_vllm_result(b"[1, 2]", path="x.json")


def test_labels_are_required(database_url: str, shared_data: Path) -> None:
    result = ingest(database_url, shared_data / FORK / "fake-llm_isl256_osl64_conc1.json")
    assert result.exit_code == 2
    assert "do not name the system; pass --system" in result.stderr
    assert stored_nothing(database_url, Path(database_url[10:]).parent / "cache")
