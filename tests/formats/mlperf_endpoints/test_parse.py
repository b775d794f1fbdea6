"""MLPerf Endpoints points: ns → ms; system_tps and tps_per_user as the rules define them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.serving_cli import counts, export, ingest, ingest_ok, load_json, primary_rows

POINT = "mlperf_endpoints/public_examples/sub_g_r256"
BUNDLE = "mlperf_endpoints/mlperf_viz_bundle_sub_g_r256.json"


@pytest.fixture(scope="module")
def point_dir(shared_data: Path) -> Path:
    return shared_data / POINT


def _check_point(row: dict[str, Any], point_dir: Path) -> None:
    summary = load_json(point_dir / "result_summary.json")
    point = yaml.safe_load((point_dir / "point.yaml").read_text())
    system = load_json(point_dir / "system_desc.json")
    extra = row["extra"]
    seconds = summary["duration_ns"] / 1e9
    assert row["source_kind"] == "mlperf-endpoints"
    assert row["value"] == pytest.approx(summary["output_sequence_lengths"]["total"] / seconds)
    assert row["value"] == pytest.approx(summary["system_tps"], abs=0.005)  # the file's rounding
    assert row["unit"] == "tokens/s" and row["concurrency"] == point["concurrency"]
    tpot_p90_ms = summary["tpot"]["percentiles"]["90"] / 1e6
    assert extra["tpot_p90_ms"] == pytest.approx(tpot_p90_ms)
    assert extra["output_tokens_per_s_per_user"] == pytest.approx(1000 / tpot_p90_ms)
    assert extra["output_tokens_per_s_per_user"] == pytest.approx(summary["tps_per_user"], abs=1e-4)
    assert extra["tokens_per_s_per_user_statistic"] == "1/p90 TPOT"
    assert extra["ttft_p50_ms"] == pytest.approx(summary["ttft"]["percentiles"]["50"] / 1e6)
    assert extra["requests_per_s"] == pytest.approx(summary["n_samples_completed"] / seconds)
    assert extra["model"] == point["model_name"] == row["benchmark"]
    assert extra["precision"] == point["model_precision"]
    node = system["node_types"][0]
    gpus = node["number_of_nodes"] * node["accelerator_info"][0]["accelerators_per_node"]
    assert row["accelerators_total"] == extra["accelerators_total"] == gpus == 8
    assert row["system"] == system["system_name"] and row["submitter"] == "Submitter-G"
    assert row["accelerator"] == node["accelerator_info"][0]["accelerator_model_name"]
    assert extra["point_warmup_duration_s"] == point["warmup"]["duration_s"]


def test_point_folder(database_url: str, point_dir: Path) -> None:
    result = ingest_ok(database_url, point_dir)
    assert "1 run (mlperf-endpoints), 2 results stored" in result.output
    [row] = primary_rows(database_url)
    _check_point(row, point_dir)
    assert row["software"] == "vLLM"  # the system's serving framework, as no --software was given
    [per_gpu] = [r for r in export(database_url) if r["metric"].endswith("_per_accelerator")]
    assert per_gpu["value"] == pytest.approx(row["value"] / 8)


def test_whole_folder_reads_the_point_and_skips_the_bundle(
    database_url: str, shared_data: Path, point_dir: Path
) -> None:
    result = ingest_ok(database_url, shared_data / "mlperf_endpoints")
    assert "skipped the mlperf-viz bundle" in result.output
    [row] = primary_rows(database_url)
    _check_point(row, point_dir)


def test_viz_bundle(database_url: str, shared_data: Path) -> None:
    bundle = load_json(shared_data / BUNDLE)
    ingest_ok(database_url, shared_data / BUNDLE)
    [row] = primary_rows(database_url)
    [run] = bundle["runs"]
    derived, direct = run["run"]["derived_fields"], run["run"]["direct_fields"]
    assert row["value"] == derived["system_tps"]
    assert row["concurrency"] == direct["concurrency"]
    assert row["extra"]["output_tokens_per_s_per_user"] == derived["tps_per_user"]
    assert row["extra"]["tpot_p90_ms"] == direct["measured_latency_tpot_p90"]
    assert row["accelerators_total"] == 8


def _copy(point_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "results" / "sys" / "llama3-70b" / "r256"
    shutil.copytree(point_dir, target)
    return target


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("result_summary.json", '{"n_samples_issued": 24576, "n_sam', "line 1: not valid JSON"),
        ("result_summary.json", '{"duration_ns": 1e9}', "field 'n_samples_completed'"),
        (
            "result_summary.json",
            '{"n_samples_completed": 1, "duration_ns": "1s"}',
            "field 'duration_ns'",
        ),
        ("point.yaml", "concurrency: [256\nmodel_name: x\n", "not valid YAML"),
        ("point.yaml", "concurrency: lots\n", "field 'concurrency'"),
    ],
)
def test_malformed_point_names_the_file_and_the_field(
    database_url: str, point_dir: Path, tmp_path: Path, name: str, text: str, message: str
) -> None:
    target = _copy(point_dir, tmp_path)
    (target / name).write_text(text)
    result = ingest(database_url, tmp_path)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {target / name}")
    assert message in result.stderr
    assert counts(database_url)["result"] == 0


def test_points_of_one_model_folder_are_one_sweep(
    database_url: str, point_dir: Path, tmp_path: Path
) -> None:
    target = _copy(point_dir, tmp_path)
    other = target.parent / "r64"
    shutil.copytree(target, other)
    point = yaml.safe_load((other / "point.yaml").read_text())
    point["concurrency"] = 64
    (other / "point.yaml").write_text(yaml.safe_dump(point))
    summary = load_json(other / "result_summary.json")
    summary["output_sequence_lengths"]["total"] /= 3
    (other / "result_summary.json").write_text(json.dumps(summary))
    ingest_ok(database_url, tmp_path)
    rows = primary_rows(database_url)
    assert sorted(r["concurrency"] for r in rows) == [64.0, 256.0]
    assert len({r["sweep_key"] for r in rows}) == 1
