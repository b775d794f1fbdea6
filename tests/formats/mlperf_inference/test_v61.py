"""MLPerf Inference v6.1 (issue #13): Endpoints results inside the round, its ``summary.json``.

The round folder of the shared data holds the whole results table (492 rows)
and three MLPerf Endpoints result folders of NVIDIA's Vera Rubin NVL72
(deepseek-r1 Offline, Server, Interactive); ``tables/v6.0`` the whole v6.0 table.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_rows import export as exported
from tests.support.cli_rows import tracker
from tracker.formats.mlperf_endpoints.parse_result import (
    parse_endpoints_accuracy,
    parse_endpoints_result,
)
from tracker.formats.mlperf_inference.parse import canonical_benchmark, canonical_scenario

VR = "closed/NVIDIA/results/VR-NVL72_VR-288GB_aarch64x72_TRT/deepseek-r1"
Row = dict[str, Any]


def table_rows(shared_data: Path) -> dict[str, Row]:
    """``summary.json``'s rows by scenario folder (its ``Location`` less ``./`` and run_1)."""
    data = json.loads((shared_data / "mlperf-inference/v6.1/summary.json").read_text())
    return {
        row["Location"].removeprefix("./").removesuffix("/performance/run_1"): row
        for row in data.values()
    }


def test_endpoints_results_inside_the_round_match_the_table(
    database_url: str, shared_data: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    result = tracker(database_url, cache, "ingest", str(shared_data / "mlperf-inference/v6.1"))
    assert result.exit_code == 0, result.output
    assert "3 results stored" in result.stdout
    assert "489 results table rows have no logs here" in result.stdout
    assert "without a stored result" not in result.stdout
    assert result.stdout.count("no logs here") == 1
    rows = table_rows(shared_data)
    stored = {r["location"]: r for r in exported(database_url, cache)}
    assert sorted(stored) == [f"{VR}/{s}" for s in ("Interactive", "Offline", "Server")]
    for location, r in stored.items():
        official = rows[location]
        assert math.isclose(r["value"], official["Result"], rel_tol=1e-6), location
        assert (r["round"], r["division"], r["submitter"]) == ("v6.1", "closed", "NVIDIA")
        assert (r["accelerators_total"], r["nodes"]) == (72, 18)
        assert (r["benchmark"], r["metric"], r["unit"]) == (
            "deepseek-r1",
            "tokens_per_s",
            "tokens/s",
        )
        assert r["scenario"] == location.rsplit("/", 1)[1]
        assert r["valid"] is True
        extra = r["extra"]
        assert extra["model_name"] == "DeepSeek-R1-NVFP4-v2-mlpinf"
        assert math.isclose(extra["accuracy"], float(official["Accuracy"]), rel_tol=1e-9)
        assert "official_value" not in extra
    server = stored[f"{VR}/Server"]["extra"]
    # the legacy LoadGen window, not the whole run: 1,175,890 tokens/s, not 981,183
    assert server["measurement_window"] == "legacy LoadGen window"
    assert server["ttft_p99_ms"] == pytest.approx(303.546985)
    assert server["tpot_early_stopping_p99_ms"] == pytest.approx(48.2240732417795)
    assert server["accuracy_deepseek_r1_accuracy_math500"] == 95.59
    offline = stored[f"{VR}/Offline"]["extra"]
    assert offline["measurement_window"] == "whole run"


def test_the_v61_table_alone_stores_every_row_as_given(
    database_url: str, shared_data: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    table = shared_data / "mlperf-inference/v6.1/summary.json"
    result = tracker(database_url, cache, "ingest", str(table))
    assert result.exit_code == 0, result.output
    assert "492 results stored" in result.stdout
    rows = table_rows(shared_data)
    stored = exported(database_url, cache)
    assert len(stored) == len(rows) == 492
    units = {"tasks/s": 0, "s": 0}
    for r in stored:
        row = rows[r["location"]]
        assert r["value"] == float(row["Result"]), r["location"]
        assert r["benchmark"] == canonical_benchmark(row["Model"])
        assert r["scenario"] == canonical_scenario(row["Scenario"])
        assert (r["submitter"], r["system"]) == (row["Organization"], row["Platform"])
        assert r["accelerators_total"] == row["total_accelerators"]
        if r["unit"] in units:
            units[r["unit"]] += 1
            assert r["higher_is_better"] is (r["unit"] == "tasks/s")
    assert units == {"tasks/s": 1, "s": 15}
    lower = [r for r in stored if r["extra"].get("scenario_as_named") == "offline"]
    assert len(lower) == 4 and {r["scenario"] for r in lower} == {"Offline"}
    renamed = [r for r in stored if r["extra"].get("benchmark_as_named") == "llama3_1-8b"]
    assert len(renamed) == 24 and {r["benchmark"] for r in renamed} == {"llama3.1-8b"}
    bare = next(r for r in stored if r["location"] == f"{VR}/Server")
    assert bare["extra"]["accuracy"] == pytest.approx(81.42661804922516)


def test_two_rounds_of_tables_give_one_series_per_canonical_name(
    database_url: str, shared_data: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    tables = (
        shared_data / "mlperf-inference/tables/v6.0/summary_results.json",
        shared_data / "mlperf-inference/v6.1/summary.json",
    )
    result = tracker(database_url, cache, "ingest", *map(str, tables))
    assert result.exit_code == 0, result.output
    stored = exported(database_url, cache)
    pairs = {(r["benchmark"], r["scenario"]) for r in stored}
    folded = {(b.lower().replace("_", "."), s.lower()) for b, s in pairs}
    assert len(folded) == len(pairs), sorted(pairs)
    assert {r["round"] for r in stored if r["benchmark"] == "llama3.1-8b"} == {"v6.0", "v6.1"}


def test_result_files_of_other_formats_are_counted_per_kind(
    database_url: str, shared_data: Path, tmp_path: Path
) -> None:
    round_dir = tmp_path / "v6.1"
    shutil.copytree(shared_data / "mlperf-inference/v6.1/closed", round_dir / "closed")
    for scenario in ("Offline", "Server"):
        run = round_dir / f"open/Acme/results/box/llama3.1-8b/{scenario}/performance/run_1"
        run.mkdir(parents=True)
        (run / "results.json").write_text('{"tokens_per_second": 1}')
    result = tracker(database_url, tmp_path / "cache", "ingest", str(round_dir))
    assert result.exit_code == 0, result.output
    assert "3 results stored" in result.stdout
    line = "2 results in a format the tracker does not read: performance/run_1/results.json"
    assert result.stdout.count(line) == 1


SUMMARY = {
    "version": "0.1.0",
    "n_samples_issued": 1000,
    "n_samples_completed": 1000,
    "n_samples_failed": 0,
    "duration_ns": 1_000e9,
    "state": "complete",
    "complete": True,
    "output_sequence_lengths": {"total": 2_000_000},
    "ttft": {"percentiles": {"99.0": 100e6}},
    "tpot": {"percentiles": {"99.0": 10e6}},
    "legacy_loadgen_window_duration_ns": 800e9,
    "qps": 999 / 800,
    "tps": 2_000_000 / 800,
    "run_config": {"load_pattern": {"type": "poisson", "use_legacy_loadgen_qps_metrics": True}},
}


def parse(doc: dict[str, Any], model: str = "deepseek-r1", scenario: str = "Server") -> Any:
    return parse_endpoints_result(
        json.dumps(doc).encode(), path="s.json", model=model, scenario=scenario, round_label="v6.1"
    )


def test_the_window_and_the_metric_follow_the_checker() -> None:
    legacy = parse(SUMMARY)
    assert (legacy.metric.name, legacy.value, legacy.key) == ("tokens_per_s", 2500.0, "tps")
    assert legacy.invalid_reasons == () and legacy.disagreements == ()
    native = {**SUMMARY, "run_config": {"load_pattern": {"type": "poisson"}}}
    native.pop("tps")
    assert parse(native).value == 2000.0  # the whole run, computed from the totals
    queries = parse(SUMMARY, model="qwen3-vl-235b-a22b")
    assert (queries.metric.name, queries.value) == ("queries_per_s", 999 / 800)
    wrong = parse({**SUMMARY, "tps": 2000.0})
    assert wrong.value == 2000.0 and "disagree" in wrong.disagreements[0]


def test_validity_comes_from_the_run_itself() -> None:
    bad = parse(
        {
            **SUMMARY,
            "state": "interrupted",
            "complete": False,
            "n_samples_completed": 990,
            "n_samples_failed": 10,
            "duration_ns": 100e9,
            "tpot": {"percentiles": {"99.0": 20e6}},
        },
        scenario="Interactive",
    )
    reasons = " | ".join(bad.invalid_reasons)
    for part in ("did not complete", "10 samples failed", "990 of 1000", "min duration", "TPOT"):
        assert part in reasons


def test_endpoints_accuracy_scores() -> None:
    doc = {"accuracy_scores": [{"dataset_name": "gpqa set", "score": 70.5, "total_samples": 9}]}
    found = parse_endpoints_accuracy(json.dumps(doc).encode(), path="a.json")
    assert found == {"accuracy": 70.5, "accuracy_gpqa_set": 70.5, "accuracy_gpqa_set_samples": 9}


@pytest.mark.parametrize(
    ("name", "canonical"),
    [("llama3_1-8b", "llama3.1-8b"), ("LLAMA3_1-405B", "llama3.1-405b"), ("resnet50", "resnet50")],
)
def test_canonical_benchmark_names(name: str, canonical: str) -> None:
    assert canonical_benchmark(name) == canonical


def test_canonical_scenario_names() -> None:
    assert [canonical_scenario(s) for s in ("offline", "multistream", "online", "odd")] == [
        "Offline",
        "MultiStream",
        "Server",
        "odd",
    ]
