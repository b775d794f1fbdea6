"""GenAI-Perf summaries (hand-made, in the documented structure): values as in the files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.serving_cli import counts, ingest, ingest_ok, load_json, primary_rows
from tracker.errors import ParseError
from tracker.formats.serving.parse_aiperf import parse_genai_perf_summary

DATA = Path(__file__).resolve().parents[2] / "data" / "genai-perf"
SUMMARIES = sorted(DATA.rglob("profile_export_genai_perf.json"))


def _concurrency(doc: dict) -> float:
    config = doc["input_config"]
    stimulus = config.get("perf_analyzer", {}).get("stimulus", config)
    return float(stimulus["concurrency"])


@pytest.mark.parametrize("path", SUMMARIES, ids=lambda p: p.parent.parent.parent.name)
def test_each_summary_stores_its_numbers(database_url: str, path: Path) -> None:
    doc = load_json(path)
    ingest_ok(database_url, path.parent, "--system", "node-a")
    [row] = primary_rows(database_url)
    extra = row["extra"]
    assert row["source_kind"] == "genai-perf"
    assert (row["value"], row["unit"]) == (doc["output_token_throughput"]["avg"], "tokens/s")
    assert row["concurrency"] == _concurrency(doc)
    assert row["benchmark"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert row["workload"] == f"isl550-osl128/c{int(_concurrency(doc))}"
    assert extra["tpot_p50_ms"] == doc["inter_token_latency"]["p50"]  # ITL is TPOT here too
    assert extra["ttft_p99_ms"] == doc["time_to_first_token"]["p99"]
    assert extra["e2e_latency_mean_ms"] == doc["request_latency"]["avg"]
    assert extra["output_tokens_per_s_per_user"] == doc["output_token_throughput_per_user"]["avg"]
    assert extra["tokens_per_s_per_user_statistic"] == "mean of per-request 1/TPOT"
    assert extra["requests_per_s"] == doc["request_throughput"]["avg"]
    assert extra["isl_measured"] == doc["input_sequence_length"]["avg"]
    assert extra["tool"] == "genai-perf"


def test_artifact_folders_form_one_sweep(database_url: str) -> None:
    result = ingest_ok(database_url, DATA / "sweep", "--system", "node-a")
    assert "2 runs (genai-perf), 2 results stored" in result.output
    rows = primary_rows(database_url)
    assert sorted(r["concurrency"] for r in rows) == [1.0, 8.0]
    assert len({r["sweep_key"] for r in rows}) == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"output_token_throughput": {"unit": "tokens/sec", "av', "not valid JSON"),
        ('{"input_config": {"concurrency": 2}}', "field 'output_token_throughput'"),
        (
            '{"output_token_throughput": {"unit": "tokens/sec", "avg": null}, '
            '"input_config": {"concurrency": 2}}',
            "field 'output_token_throughput.avg'",
        ),
        ('{"output_token_throughput": {"unit": "tokens/sec", "avg": 5}}', "field 'input_config'"),
        (
            '{"output_token_throughput": {"unit": "tokens/sec", "avg": 5}, "input_config": {}}',
            "neither a concurrency nor a request rate",
        ),
    ],
)
def test_malformed_summary_names_the_file_and_the_field(
    database_url: str, tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "run" / "profile_export_genai_perf.json"
    path.parent.mkdir()
    path.write_text(text)
    result = ingest(database_url, path.parent, "--system", "node-a")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {path}")
    assert message in result.stderr
    assert counts(database_url)["result"] == 0


def test_an_aiperf_file_is_not_taken_for_genai_perf() -> None:
    doc = {"aiperf_version": "0.13.0", "output_token_throughput": {"avg": 1}}
    with pytest.raises(ParseError, match="AIPerf summary"):
        parse_genai_perf_summary(json.dumps(doc).encode(), path="x_genai_perf.json")
