"""InferenceX rows: per-GPU throughput scaled by the GPUs engaged, seconds → ms, labels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.serving_cli import (
    counts,
    export,
    ingest,
    ingest_ok,
    load_json,
    primary_rows,
    tracker,
)

AGG = "inferencex/agg_from_fake_server"
AGG_FILES = [f"{AGG}/agg_fake-llm_isl256_osl64_conc{n}.json" for n in (1, 4, 16)]
ROW_FILES = [
    *AGG_FILES,
    "inferencex/public_examples/api_v1_benchmarks_excerpt.json",
    "inferencex/public_examples/supplemental-bmk_excerpt.json",
]


def _rows(doc: Any) -> list[dict[str, Any]]:
    return doc if isinstance(doc, list) else [doc]


def _gpus(row: dict[str, Any]) -> int:
    if "num_decode_gpu" in row:
        return int(row["num_decode_gpu"])  # not disaggregated: prefill and decode share them
    return int(row["tp"]) * int(row.get("pp", 1)) * int(row.get("pcp_size", 1))


@pytest.mark.parametrize("name", ROW_FILES)
def test_each_row_stores_its_numbers(database_url: str, shared_data: Path, name: str) -> None:
    rows = _rows(load_json(shared_data / name))
    ingest_ok(database_url, shared_data / name)
    stored = {r["concurrency"]: r for r in primary_rows(database_url)}
    per_gpu = {
        r["concurrency"]: r
        for r in export(database_url)
        if r["metric"] == "output_tokens_per_s_per_accelerator"
    }
    assert len(stored) == len(per_gpu) == len(rows)
    for row in rows:
        metrics = row.get("metrics", row)
        gpus = _gpus(row)
        point, point_per_gpu = stored[row["conc"]], per_gpu[row["conc"]]
        extra = point["extra"]
        assert point["source_kind"] == "inferencex" and point["scenario"] == "concurrency"
        assert point["value"] == pytest.approx(metrics["output_tput_per_gpu"] * gpus)
        assert point_per_gpu["value"] == pytest.approx(metrics["output_tput_per_gpu"])
        assert point_per_gpu["unit"] == "tokens/s/accelerator"
        assert point["accelerators_total"] == extra["accelerators_total"] == gpus
        # InferenceX's tput_per_gpu counts input + output tokens: stored as the total, labelled
        assert extra["total_tokens_per_s_per_accelerator"] == pytest.approx(metrics["tput_per_gpu"])
        assert extra["tput_per_gpu"] == metrics["tput_per_gpu"]
        assert extra["output_tokens_per_s_per_user"] == metrics["median_intvty"]
        assert extra["tokens_per_s_per_user_statistic"] == "1/p50 TPOT"
        assert extra["ttft_p50_ms"] == pytest.approx(metrics["median_ttft"] * 1000)
        assert extra["tpot_p99_ms"] == pytest.approx(metrics["p99_tpot"] * 1000)
        assert extra["isl_requested"] == row["isl"] and extra["osl_requested"] == row["osl"]
        assert extra["precision"] == row["precision"]
        curve = f"isl{row['isl']}-osl{row['osl']}-{row['precision']}"
        assert point["workload"] == f"{curve}/c{row['conc']}"


def test_hardware_framework_and_image_label_the_results(
    database_url: str, shared_data: Path
) -> None:
    name = "inferencex/public_examples/api_v1_benchmarks_excerpt.json"
    result = tracker_ingest_without_version(database_url, shared_data / name)
    assert result.exit_code == 0, result.output
    rows = primary_rows(database_url)
    assert {(r["system"], r["software"], r["software_version"]) for r in rows} == {
        ("mi355x tp4", "sglang", "v0.5.9-rocm700-mi35x")
    }
    assert {r["benchmark"] for r in rows} == {"dsr1"}
    assert rows[0]["extra"]["upstream_url"].startswith("https://github.com/SemiAnalysisAI/")
    assert len({r["sweep_key"] for r in rows}) == 1


def tracker_ingest_without_version(database_url: str, path: Path) -> Any:
    return tracker(database_url, "ingest", str(path))


def test_a_row_without_image_needs_a_version(database_url: str, shared_data: Path) -> None:
    name = "inferencex/public_examples/supplemental-bmk_excerpt.json"
    result = tracker_ingest_without_version(database_url, shared_data / name)
    assert result.exit_code == 2
    assert "do not name a software version; pass --software-version" in result.stderr


def test_the_agg_folder_is_one_sweep(database_url: str, shared_data: Path) -> None:
    result = ingest_ok(database_url, shared_data / AGG)
    assert "3 runs (inferencex), 6 results stored" in result.output
    rows = primary_rows(database_url)
    assert sorted(r["concurrency"] for r in rows) == [1.0, 4.0, 16.0]
    assert len({r["sweep_key"] for r in rows}) == 1
    assert {r["system"] for r in rows} == {"h200 tp1"}
    assert "power_validation" not in " ".join(r["artifact_path"] for r in export(database_url))


def test_agentx_row(database_url: str, shared_data: Path) -> None:
    path = shared_data / "inferencex/public_examples/agentx_agg_h100-retry_attempt1.json"
    row = load_json(path)
    ingest_ok(database_url, path)
    [point] = primary_rows(database_url)
    extra, request = point["extra"], row["request_metrics"]
    assert point["scenario"] == "agentic"
    assert point["value"] == request["throughput"]["output"]["tokens_per_second"]
    assert point["accelerators_total"] == row["num_gpus"] == 8
    per_gpu = request["throughput"]["per_gpu"]
    assert extra["total_tokens_per_s_per_accelerator"] == pytest.approx(
        per_gpu["total_tput_tps"], rel=1e-4
    )
    assert extra["output_tokens_per_s_per_user"] == request["latency"]["intvty"]["p50"]
    assert extra["ttft_p90_ms"] == pytest.approx(request["latency"]["ttft"]["p90"] * 1000)
    assert extra["server_metrics_cache_gpu_cache_hit_rate"] == 0.36214
    assert extra["avg_power_w"] == row["avg_power_w"]
    assert point["workload"] == "semianalysisai/cc-traces-weka-062126-fp4-mtp/c4"


def test_public_examples_folder_skips_the_raw_vllm_file(
    database_url: str, shared_data: Path
) -> None:
    result = ingest_ok(database_url, shared_data / "inferencex/public_examples")
    assert "3 runs (inferencex), 8 results stored" in result.output
    assert "skipped 1 vLLM-style raw result" in result.output
    assert "glm47" not in " ".join(r["artifact_path"] for r in export(database_url))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.pop("output_tput_per_gpu"), "field 'output_tput_per_gpu'"),
        (lambda r: r.update(conc="four"), "field 'conc'"),
        (lambda r: r.update(tp=1.5), "field 'tp'"),
        (lambda r: r.pop("tp"), "field 'tp' is missing"),
    ],
)
def test_malformed_row_names_the_file_and_the_field(
    database_url: str, shared_data: Path, tmp_path: Path, change: Any, message: str
) -> None:
    row = load_json(shared_data / AGG_FILES[0])
    change(row)
    path = tmp_path / "agg_broken.json"
    path.write_text(json.dumps(row))
    result = ingest(database_url, path)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {path}: ")
    assert message in result.stderr
    assert counts(database_url)["result"] == 0
    truncated = tmp_path / "agg_truncated.json"
    truncated.write_text(json.dumps(row)[:100])
    assert ingest(database_url, truncated).stderr.startswith(f"Error: {truncated}: line 1: ")
