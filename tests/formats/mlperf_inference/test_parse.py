"""The pure MLPerf parsers: system JSONs, the checker's metric rules, tables, accuracy, power."""

from __future__ import annotations

import json

import pytest

from tracker.errors import ParseError
from tracker.formats.loadgen.parse import Entry
from tracker.formats.mlperf_inference.parse import (
    PrimaryMetric,
    metric_for,
    mlperf_model,
    primary_metric,
    round_key,
)
from tracker.formats.mlperf_inference.parse_logs import (
    compliance_outcome,
    parse_accuracy,
    parse_power_samples,
    parse_verify,
    power_metric,
    summary_as_detail,
)
from tracker.formats.mlperf_inference.parse_table import (
    ParsedSystem,
    normalize_location,
    parse_results_table,
    parse_system_json,
)


def _system(**fields: object) -> bytes:
    base: dict[str, object] = {
        "submitter": "Acme",
        "status": "available",
        "system_name": "Acme box",
        "system_type": "datacenter",
        "number_of_nodes": 1,
        "accelerators_per_node": 8,
        "accelerator_model_name": "NVIDIA H200-SXM-141GB",
        "host_processor_model_name": "Intel Xeon",
        "framework": "TensorRT 10.11, CUDA 12.9",
        "other_software_stack": "TensorRT 10.11, CUDA 12.9, Driver 570",
    }
    return json.dumps({**base, **fields}).encode()


def _parse_system(data: bytes) -> ParsedSystem:
    return parse_system_json(
        data, path="systems/box.json", platform="box", submitter="Acme", division="closed"
    )


@pytest.mark.parametrize(
    ("fields", "nodes", "per_node", "total", "stated"),
    [
        ({"number_of_nodes": 18, "accelerators_per_node": 4}, 18, 4, 72, None),
        ({"number_of_nodes": "18", "accelerators_per_node": "4"}, 18, 4, 72, None),
        ({"number_of_nodes": "1", "accelerators_per_node": "0"}, 1, 0, 0, None),
        (
            {
                "number_of_nodes": 3,
                "accelerators_per_node": 8,
                "accelerator_model_name": "AMD MI325X 256GB (x16), AMD MI300X 192GB (x8)",
            },
            3,
            8,
            24,
            None,
        ),
        # the checker's count (nodes x per node) drives per-accelerator figures; the
        # description's own "(x87)" is kept beside it
        ({"number_of_nodes": 11, "accelerator_model_name": "NVIDIA H100 (x87)"}, 11, 8, 88, 87),
        ({"number_of_nodes": 2, "accelerator_model_name": "NVIDIA H100 (x8)"}, 2, 8, 16, None),
    ],
)
def test_system_counts_by_the_checkers_rule_with_the_stated_count_beside(
    fields: dict[str, object], nodes: int, per_node: int, total: int, stated: int | None
) -> None:
    record = _parse_system(_system(**fields)).record
    assert (record.nodes, record.accelerators_per_node, record.accelerators_total) == (
        nodes,
        per_node,
        total,
    )
    assert record.accelerators_stated == stated
    assert record.key == "Acme/box"


def test_cpu_only_system_has_no_accelerator() -> None:
    description = _parse_system(_system(accelerators_per_node="0", accelerator_model_name="N/A"))
    assert description.record.accelerator is None
    assert description.record.accelerators_total == 0


@pytest.mark.parametrize(
    ("status", "expected"),
    [("available", "available"), ("Preview", "preview"), ("RDI", "rdi"), ("Research", "rdi")],
)
def test_availability_category(status: str, expected: str) -> None:
    assert _parse_system(_system(status=status)).record.availability == expected


def test_software_stack_keeps_framework_and_stack_object() -> None:
    data = _system(other_software_stack={"cuda_version": "12.9", "vllm": "0.15.1"})
    assert _parse_system(data).software_stack == (
        "TensorRT 10.11, CUDA 12.9; cuda_version 12.9, vllm 0.15.1"
    )


def test_system_json_that_is_not_json_names_the_file() -> None:
    with pytest.raises(ParseError, match=r"systems/box.json: not a valid system description"):
        _parse_system(b"{ not json")


def test_raw_json_is_kept_verbatim() -> None:
    data = _system()
    assert _parse_system(data).record.raw_json == data.decode()


@pytest.mark.parametrize(
    ("folder", "mapping", "model"),
    [
        ("resnet50", None, "resnet"),
        ("llama3_1-8b", None, "llama3.1-8b"),
        ("llama2-70b-99.9", None, "llama2-70b-99.9"),
        ("llama3_1-405b_pruned", {"llama3_1-405b_pruned": "llama3.1-405b"}, "llama3.1-405b"),
        ("efficientnet-lite", None, "resnet"),
        ("my-own-model", None, "my-own-model"),
    ],
)
def test_benchmark_folders_map_to_official_models(
    folder: str, mapping: dict[str, str] | None, model: str
) -> None:
    assert mlperf_model(folder, mapping) == model


def _log(**values: object) -> dict[str, Entry]:
    defaults: dict[str, object] = {
        "result_validity": "VALID",
        "early_stopping_met": True,
        "effective_min_duration_ms": 600000,
    }
    return {key: Entry(value, n) for n, (key, value) in enumerate({**defaults, **values}.items())}


def _primary(log: dict[str, Entry], model: str, scenario: str, **kwargs: str) -> PrimaryMetric:
    options = {"round_label": "v5.1", "system_type": "datacenter", **kwargs}
    return primary_metric(log, model=model, scenario=scenario, path="log", **options)


def test_llm_server_uses_completed_tokens_per_second() -> None:
    log = _log(
        effective_scenario="Server",
        result_completed_samples_per_sec=361.3,
        result_completed_tokens_per_second=99123.0,
    )
    primary = _primary(log, "llama2-70b-99", "Server")
    assert (primary.metric.name, primary.value) == ("tokens_per_s", 99123.0)
    assert primary.metric.higher_is_better and not primary.invalid_reasons


def test_interactive_folder_holds_a_server_run_and_is_not_inferred() -> None:
    log = _log(effective_scenario="Server", result_completed_tokens_per_second=59545.4)
    primary = _primary(log, "llama2-70b-99", "Interactive")
    assert (primary.value, primary.inferred, primary.loadgen_scenario) == (59545.4, False, "Server")


def test_gptj_uses_inferred_tokens() -> None:
    log = _log(
        effective_scenario="Offline",
        result_samples_per_second=37.3842,
        result_inferred_tokens_per_second=2579.51,
    )
    primary = _primary(log, "gptj-99", "Offline", round_label="v4.1")
    assert (primary.metric.name, primary.value) == ("tokens_per_s", 2579.51)


def test_singlestream_is_the_early_stopping_estimate_in_ms() -> None:
    log = _log(
        effective_scenario="SingleStream",
        early_stopping_latency_ss=513395,
        result_90_percentile=513380,
    )
    primary = _primary(log, "resnet", "SingleStream")
    assert primary.value == pytest.approx(0.513395)
    assert not primary.metric.higher_is_better


def test_llama_edge_singlestream_is_the_plain_p90() -> None:
    log = _log(
        effective_scenario="SingleStream",
        early_stopping_latency_ss=1,
        **{"result_90.00_percentile_latency_ns": 4145546277},
    )
    primary = _primary(log, "llama3.1-8b-edge", "SingleStream")
    assert primary.metric.name == "p90_latency_ms"
    assert primary.value == pytest.approx(4145.546277)


def test_wan_singlestream_is_in_seconds() -> None:
    log = _log(effective_scenario="SingleStream", early_stopping_latency_ss=30910508163)
    primary = _primary(log, "wan-2.2-t2v-a14b", "SingleStream", round_label="v6.0")
    assert primary.metric.unit == "s"
    assert primary.value == pytest.approx(30.910508163)


def test_whisper_offline_is_tokens_per_second() -> None:
    assert metric_for("whisper", "Offline", round_key("v5.1")).name == "tokens_per_s"


@pytest.mark.parametrize(
    ("folder", "loadgen", "values", "expected", "metric"),
    [
        (
            "Offline",
            "SingleStream",
            {"result_qps_without_loadgen_overhead": 1973.57},
            1973.57,
            "samples_per_s",
        ),
        (
            "MultiStream",
            "SingleStream",
            {"early_stopping_latency_ms": 528172},
            8 * 0.528172,
            "p99_latency_early_stopping_ms",
        ),
        (
            "Offline",
            "MultiStream",
            {"result_mean_query_latency_ns": 4_000_000, "effective_samples_per_query": 8},
            2000.0,
            "samples_per_s",
        ),
    ],
)
def test_inferred_edge_results(
    folder: str, loadgen: str, values: dict[str, object], expected: float, metric: str
) -> None:
    log = _log(effective_scenario=loadgen, **values)
    primary = _primary(log, "resnet", folder, system_type="edge")
    assert primary.inferred and not primary.invalid_reasons
    assert primary.metric.name == metric
    assert primary.value == pytest.approx(expected)
    datacenter = _primary(log, "resnet", folder, system_type="datacenter")
    assert "edge systems only" in datacenter.invalid_reasons[0]


def test_invalid_reasons_are_kept() -> None:
    log = _log(
        effective_scenario="Server",
        result_validity="INVALID",
        early_stopping_met=False,
        effective_min_duration_ms=1000,
        result_completed_tokens_per_second=1.0,
        **{"result_first_token_99.00_percentile_latency_ns": 3e9},
    )
    reasons = _primary(log, "llama2-70b-99", "Server").invalid_reasons
    assert [r.split(" ")[0] for r in reasons] == ["LoadGen", "early", "min", "TTFT"]


def test_a_log_without_the_metric_key_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="no 'result_samples_per_second' for a Offline run"):
        _primary(_log(effective_scenario="Offline"), "resnet", "Offline")


SUMMARY = b"""================================================
MLPerf Results Summary
================================================
SUT name : LWIS_Server
Scenario : MultiStream
Mode     : PerformanceOnly
99.0th percentile latency (ns) : 1482562
Result is : VALID
  Min duration satisfied : Yes
  Min queries satisfied : Yes
  Early stopping satisfied: Yes
Early Stopping Result:
 * Early stopping 99.0th percentile estimate: 1482812

================================================
Additional Stats
================================================
Per-query latency:
Mean latency (ns)               : 1400000
99.00 percentile latency (ns)   : 1482562

================================================
Test Parameters Used
================================================
samples_per_query : 8
min_duration (ms): 600000
"""


def test_summary_log_translates_to_detail_keys() -> None:
    log = summary_as_detail(SUMMARY, path="summary")
    assert log["early_stopping_latency_ms"].value == "1482812"
    assert log["early_stopping_met"].value is True
    assert log["result_mean_query_latency_ns"].value == "1400000"
    assert log["result_99.00_percentile_per_query_latency_ns"].value == "1482562"
    primary = _primary(log, "resnet", "MultiStream")
    assert primary.value == pytest.approx(1.482812)


def test_table_locations_are_normalised_to_the_scenario_folder() -> None:
    assert (
        normalize_location("./closed/Dell/results/S/yolo-95/offline/performance/run_1")
        == "closed/Dell/results/S/yolo-95/offline"
    )
    assert (
        normalize_location("build/submission/closed/NVIDIA/results/S/dlrm-v3/Offline")
        == "closed/NVIDIA/results/S/dlrm-v3/Offline"
    )


def test_v61_summary_json_rows_and_power_rows_are_merged() -> None:
    row = {
        "Organization": "Acme",
        "Division": "closed",
        "SystemType": "datacenter",
        "Platform": "box",
        "Model": "llama2-70b-99",
        "MlperfModel": "llama2-70b-99",
        "Scenario": "Offline",
        "Result": "1000.5",
        "Units": "Tokens/s",
        "Location": "closed/Acme/results/box/llama2-70b-99/Offline/performance/run_1",
        "version": "v6.1",
        "number_of_nodes": "1",
        "accelerators_per_node": "8",
        "total_accelerators": "8",
    }
    power = {**row, "Result": "5000", "Units": "Watts"}
    table = parse_results_table(json.dumps({"0": row, "1": power}).encode(), path="summary.json")
    [parsed] = table.rows
    assert (parsed.value, parsed.power_value, parsed.power_unit) == (1000.5, 5000.0, "Watts")
    assert (parsed.location, parsed.accelerators_total) == (
        "closed/Acme/results/box/llama2-70b-99/Offline",
        8,
    )


def test_a_bad_table_row_is_reported_with_its_number() -> None:
    rows = [{"Location": "closed/A/results/s/resnet/Offline", "version": "v5.1"}]
    table = parse_results_table(json.dumps(rows).encode(), path="summary_results.json")
    assert not table.rows
    assert str(table.problems[0]) == "summary_results.json: row 1: no 'Performance_Result'"


@pytest.mark.parametrize(
    ("text", "model", "expected"),
    [
        (
            "{'rouge1': 44.5347, 'rouge2': 22.1351, 'rougeL': 28.7615, 'tokens_per_sample': 293.1}",
            "llama2-70b-99",
            {
                "accuracy_rouge1": 44.5347,
                "accuracy_rouge2": 22.1351,
                "accuracy_rougel": 28.7615,
                "accuracy_tokens_per_sample": 293.1,
            },
        ),
        ("mAP=37.338%", "retinanet", {"accuracy_map": 37.338}),
        ("accuracy=76.078%, good=38039, total=50000", "resnet", {"accuracy_acc": 76.078}),
        (
            "Word Error Rate: 2.16%, accuracy=97.83206600873645%",
            "whisper",
            {"accuracy_accuracy": 97.83206600873645},
        ),
    ],
)
def test_accuracy_patterns(text: str, model: str, expected: dict[str, float]) -> None:
    assert parse_accuracy(f"{text}\nhash=abc\n".encode(), path="a", model=model) == expected


def test_compliance_verdicts() -> None:
    assert parse_verify(b"num_missing_qsl_idxs = 0\nTEST PASS\n", path="v") is True
    assert parse_verify(b"TEST FAIL\n", path="v") is False
    assert parse_verify(b"First token check pass: Skipped\nEOS check pass: True\n", path="v")
    assert parse_verify(b"EOS check pass: False\n", path="v") is False
    baseline = b"Word Error Rate: 2.2%, accuracy=97.76392632524707%\n"
    assert compliance_outcome([False], model="whisper", baseline=baseline, compliance=baseline)
    assert compliance_outcome([False], model="whisper") == "fail"
    assert compliance_outcome([None], model="resnet") is None


def test_power_is_the_mean_watts_inside_the_run() -> None:
    spl = b"".join(
        f"Time,07-28-2025 08:09:{second:02d}.500,Watts,{watts},Volts,211.0\n".encode()
        for second, watts in ((10, 100.0), (11, 200.0), (12, 300.0), (13, -1.0), (14, 999.0))
    )
    samples = parse_power_samples(spl, path="spl.txt")
    found = power_metric(
        samples,
        begin="07-28-2025 08:09:10.600",
        end="07-28-2025 08:09:14.000",
        scenario="Offline",
        loadgen_scenario="Offline",
        query_count=None,
        path="p",
    )
    assert found == ("power_w", 250.0)
    energy = power_metric(
        samples,
        begin="07-28-2025 08:09:10.600",
        end="07-28-2025 08:09:14.000",
        scenario="MultiStream",
        loadgen_scenario="SingleStream",
        query_count=100,
        path="p",
    )
    assert energy is not None and energy[0] == "energy_per_query_mj"
    assert energy[1] == pytest.approx(250.0 * 3.4 * 8 * 1000 / 100)
