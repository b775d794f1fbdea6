"""MLPerf Endpoints points → serving points.

A point is a folder with ``result_summary.json`` (the client's report; times in
**nanoseconds**) and, in a submission or run folder, ``point.yaml``
(concurrency, model, precision, load pattern) and ``system_desc.json``
(system, accelerators, software strings). The metrics follow the Endpoints
rules, as the checker and ``mlperf-viz`` compute them:

* ``output_tokens_per_s`` = ``output_sequence_lengths.total`` / duration
  (``system_tps``; the file's own ``system_tps``/``tps`` is used only when the
  totals are missing);
* tokens/s/user = 1000 / TPOT p90 in ms ("1/p90 TPOT", the v1.0 rule);
* ``requests_per_s`` = completed samples / duration; latency blocks
  ``ttft``/``tpot``/``latency`` become ``ttft_*``/``tpot_*``/``e2e_latency_*`` in ms
  (percentile keys ``"90"`` and ``"90.0"`` both accepted; ``mean`` = ``avg``, or
  ``total`` / completed samples when the reduced corpus file has no ``avg``).

``point.yaml`` is YAML; the caller decodes it (this module imports only the
standard library) and passes the mapping. An ``mlperf-viz --export`` bundle
holds already-derived points: :func:`parse_viz_bundle` reads its runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracker.errors import ParseError
from tracker.formats.parse_json import (
    JsonObject,
    decode_json,
    flatten_scalars,
    get_int,
    get_mapping,
    get_number,
    get_sequence,
    is_number,
)
from tracker.formats.serving.parse import (
    LOAD_AGENTIC,
    LOAD_CONCURRENCY,
    MS_PER_UNIT,
    STAT_INVERSE_P90_TPOT,
    ServingPoint,
    point_results,
    stat_name,
)
from tracker.records.results import ExtraValue, ParsedResult

__all__ = [
    "POINT_NAME",
    "SUMMARY_NAME",
    "SYSTEM_NAME",
    "looks_like_viz_bundle",
    "parse_endpoints_point",
    "parse_system_desc",
    "parse_viz_bundle",
]


SUMMARY_NAME = "result_summary.json"
POINT_NAME = "point.yaml"
SYSTEM_NAME = "system_desc.json"
_NS_TO_MS = MS_PER_UNIT["ns"]
_MAX_COUNT = 2**31 - 1  # counts are INTEGER columns
_BLOCKS = {"ttft": "ttft", "tpot": "tpot", "latency": "e2e_latency"}
_LENGTHS = {"output_sequence_lengths": "osl", "input_sequence_lengths": "isl"}
_SOFTWARE_KEYS = (
    "inference_backend",
    "container_link",
    "other_software_stack",
    "driver",
    "sw_notes",
)


def parse_endpoints_point(
    summary: bytes,
    *,
    summary_path: str,
    point: Mapping[str, Any] | None,
    point_path: str,
    system: Mapping[str, ExtraValue] | None = None,
) -> list[ParsedResult]:
    """The point of one ``result_summary.json`` with its ``point.yaml`` and system facts."""
    doc = decode_json(summary, path=summary_path)
    if not isinstance(doc, Mapping):
        raise ParseError(summary_path, "not an Endpoints result summary: not a JSON object")
    completed = get_number(
        doc, "n_samples_completed", path=summary_path, field="n_samples_completed"
    )
    duration_ns = get_number(doc, "duration_ns", path=summary_path, field="duration_ns")
    assert completed is not None and duration_ns is not None
    if duration_ns < 1:  # below a nanosecond, the rates divided by it overflow
        raise ParseError(summary_path, f"field 'duration_ns' is {duration_ns!r}, expected ≥ 1")
    duration_s = duration_ns / 1e9
    result = ServingPoint(
        tool=_tool(doc),
        artifact_path=summary_path,
        output_tokens_per_s=_system_tps(doc, duration_s, path=summary_path),
        is_valid=doc.get("complete") is not False and doc.get("state", "complete") == "complete",
    )
    result.extra.update({"requests_completed": completed, "duration_s": duration_s})
    result.extra["requests_per_s"] = completed / duration_s
    _summary_extra(result, doc, completed, path=summary_path)
    _apply_point(result, point or {}, path=point_path, required=point is not None)
    if system:
        result.extra.update(system)
        total = system.get("accelerators_total")
        result.accelerators_total = total if isinstance(total, int) else None
    return point_results(result)


def _tool(doc: JsonObject) -> str:
    version = doc.get("version")
    return f"mlperf-endpoints {version}" if isinstance(version, str) else "mlperf-endpoints"


def _system_tps(doc: JsonObject, duration_s: float, *, path: str) -> float:
    block = doc.get("output_sequence_lengths")
    if isinstance(block, Mapping) and block.get("total") is not None:
        total = get_number(block, "total", path=path, field="output_sequence_lengths.total")
        assert total is not None
        return total / duration_s
    for key in ("system_tps", "tps"):
        if is_number(doc.get(key)):
            return float(doc[key])
    raise ParseError(
        path, "field 'output_sequence_lengths.total' is missing (and no 'system_tps' or 'tps')"
    )


def _summary_extra(result: ServingPoint, doc: JsonObject, completed: float, *, path: str) -> None:
    extra = result.extra
    for key, quantity in _BLOCKS.items():
        block = doc.get(key)
        if isinstance(block, Mapping):
            extra.update(_latency_block(block, quantity, completed, path=path, field=key))
    for key, name in _LENGTHS.items():
        block = doc.get(key)
        total = block.get("total") if isinstance(block, Mapping) else None
        if is_number(total) and completed > 0:
            extra[f"{name}_measured"] = total / completed
            extra[f"{name}_total_tokens"] = total
    failed = doc.get("n_samples_failed")
    if is_number(failed):
        extra["requests_failed"] = failed
    tpot_p90 = extra.get("tpot_p90_ms")
    if isinstance(tpot_p90, float) and tpot_p90 > 0:
        result.tokens_per_s_per_user = 1000.0 / tpot_p90
        result.tokens_per_s_per_user_statistic = STAT_INVERSE_P90_TPOT
    skip = frozenset({*_BLOCKS, *_LENGTHS, "run_config", "histogram", "n_samples_completed"})
    for key, value in flatten_scalars(doc, skip=skip).items():
        extra.setdefault(key, value)


def _latency_block(
    block: JsonObject, quantity: str, completed: float, *, path: str, field: str
) -> dict[str, ExtraValue]:
    extra: dict[str, ExtraValue] = {}
    percentiles = get_mapping(
        block, "percentiles", path=path, field=f"{field}.percentiles", required=False
    )
    for key in percentiles:
        number = get_number(percentiles, key, path=path, field=f"{field}.percentiles.{key}")
        assert number is not None
        extra[f"{quantity}_{stat_name(key)}_ms"] = number * _NS_TO_MS
    for key in ("min", "max", "median", "avg", "std_dev"):
        number = get_number(block, key, path=path, field=f"{field}.{key}", required=False)
        if number is not None:
            extra.setdefault(f"{quantity}_{stat_name(key)}_ms", number * _NS_TO_MS)
    early = block.get("early_stopping_percentiles")
    for key, value in early.items() if isinstance(early, Mapping) else ():
        if is_number(value):
            extra[f"{quantity}_early_stopping_{stat_name(key)}_ms"] = value * _NS_TO_MS
    total = get_number(block, "total", path=path, field=f"{field}.total", required=False)
    if total is not None:
        extra[f"{quantity}_sum_ms"] = total * _NS_TO_MS
        if completed > 0:
            extra.setdefault(f"{quantity}_mean_ms", total * _NS_TO_MS / completed)
    return extra


def _apply_point(
    result: ServingPoint, point: Mapping[str, Any], *, path: str, required: bool
) -> None:
    if required:
        concurrency = get_int(point, "concurrency", path=path, field="concurrency")
        if concurrency is not None and concurrency < 0:
            raise ParseError(path, f"field 'concurrency' is {concurrency}, expected ≥ 0")
        result.concurrency = float(concurrency) if concurrency is not None else None
    settings = point.get("runtime_settings")
    pattern = settings.get("load_pattern") if isinstance(settings, Mapping) else None
    result.load_mode = LOAD_AGENTIC if pattern == "agentic_inference" else LOAD_CONCURRENCY
    for key, attribute in (("model_name", "model"), ("model_precision", "precision")):
        value = point.get(key)
        if isinstance(value, str) and value:
            setattr(result, attribute, value)
    dataset = point.get("dataset")
    result.dataset = dataset if isinstance(dataset, str) and dataset else None
    skip = frozenset({"concurrency", "model_name", "model_precision", "dataset"})
    for key, value in flatten_scalars(point, skip=skip).items():
        result.extra.setdefault(f"point_{key}", value)


def parse_system_desc(data: bytes, *, path: str) -> dict[str, ExtraValue]:
    """The system facts of ``system_desc.json``, under the names of :mod:`.serving`."""
    doc = decode_json(data, path=path)
    if not isinstance(doc, Mapping):
        raise ParseError(path, "not a system description: the top level is not an object")
    facts: dict[str, ExtraValue] = {}
    for key, name in (
        ("system_name", "system_name"),
        ("submitter_org_names", "submitter"),
        ("division", "division"),
        ("serving_framework", "serving_framework"),
        ("system_availability_status", "availability"),
        ("publication_status", "availability"),
    ):
        value = doc.get(key)
        if isinstance(value, str) and value:
            facts.setdefault(name, value)
    nodes = get_sequence(doc, "node_types", path=path, field="node_types", required=False)
    facts.update(_node_facts(nodes, path=path))
    config = doc.get("config_summary")
    if isinstance(config, Mapping):
        facts.update(flatten_scalars(config, prefix="config"))
    for key, value in doc.items():
        if is_number(value) and key not in ("tps_utilization",):
            facts[f"system_{key}"] = value
    if is_number(doc.get("tps_utilization")):
        facts["tps_utilization"] = doc["tps_utilization"]
    return facts


def _node_facts(nodes: Any, *, path: str) -> dict[str, ExtraValue]:
    facts: dict[str, ExtraValue] = {}
    total, node_count, software = 0, 0, []
    for index, node in enumerate(nodes):
        if not isinstance(node, Mapping):
            raise ParseError(path, f"field 'node_types[{index}]' is not an object")
        field = f"node_types[{index}]"
        count = _count(node.get("number_of_nodes"), 1, path=path, field=f"{field}.number_of_nodes")
        node_count += count
        accelerators = node.get("accelerator_info")
        for info in accelerators if isinstance(accelerators, list) else []:
            if isinstance(info, Mapping):
                per_node = _count(
                    info.get("accelerators_per_node"),
                    0,
                    path=path,
                    field=f"{field}.accelerator_info[].accelerators_per_node",
                )
                total += count * per_node
                facts.setdefault("accelerators_per_node", per_node)
                if isinstance(info.get("accelerator_model_name"), str):
                    facts.setdefault("accelerator", info["accelerator_model_name"])
        if isinstance(node.get("host_processor_model_name"), str):
            facts.setdefault("host_cpu", node["host_processor_model_name"])
        software += [f"{k}: {node[k]}" for k in _SOFTWARE_KEYS if isinstance(node.get(k), str)]
    if node_count:
        facts["nodes"] = node_count
    if total:
        facts["accelerators_total"] = total
    if software:
        facts["software_stack"] = "; ".join(software)
    return facts


def _count(value: object, default: int, *, path: str, field: str) -> int:
    """Counts are ints or strings of ints in real system descriptions; missing → ``default``."""
    if value is None:
        return default
    count = None
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        count = int(value.strip()) if len(value.strip()) < 18 else None
    elif is_number(value) and float(value).is_integer():
        count = int(value)
    if count is None or not 0 <= count <= _MAX_COUNT:
        raise ParseError(path, f"field '{field}' is {value!r}, expected a whole number ≥ 0")
    return count


def looks_like_viz_bundle(doc: object) -> bool:
    """Whether a decoded JSON value is an ``mlperf-viz --export`` bundle."""
    return isinstance(doc, Mapping) and "bundle_version" in doc and "runs" in doc


def parse_viz_bundle(data: bytes, *, path: str) -> list[ParsedResult]:
    """One point per run of an ``mlperf-viz`` export bundle (values already derived, ms)."""
    doc = decode_json(data, path=path)
    if not looks_like_viz_bundle(doc):
        raise ParseError(
            path, "field 'bundle_version' or 'runs' is missing: not an mlperf-viz bundle"
        )
    submissions = {
        s.get("id"): s.get("combined_submission", {})
        for s in get_sequence(doc, "submissions", path=path, field="submissions", required=False)
        if isinstance(s, Mapping) and isinstance(s.get("id"), str | int | float | None)
    }
    results: list[ParsedResult] = []
    for index, run in enumerate(get_sequence(doc, "runs", path=path, field="runs")):
        if not isinstance(run, Mapping):
            raise ParseError(path, f"field 'runs[{index}]' is not an object")
        results.extend(_bundle_run(run, submissions, path=path, field=f"runs[{index}]"))
    return results


def _bundle_run(
    run: JsonObject, submissions: Mapping[Any, Any], *, path: str, field: str
) -> list[ParsedResult]:
    body = get_mapping(run, "run", path=path, field=f"{field}.run")
    direct = get_mapping(body, "direct_fields", path=path, field=f"{field}.run.direct_fields")
    derived = get_mapping(body, "derived_fields", path=path, field=f"{field}.run.derived_fields")
    tps = get_number(
        derived, "system_tps", path=path, field=f"{field}.run.derived_fields.system_tps"
    )
    concurrency = get_int(
        direct, "concurrency", path=path, field=f"{field}.run.direct_fields.concurrency"
    )
    assert tps is not None and concurrency is not None
    key = run.get("submission_id")
    submission = submissions.get(key, {}) if isinstance(key, str | int | float | None) else {}
    model = submission.get("model_metadata", {}) if isinstance(submission, Mapping) else {}
    model = model if isinstance(model, Mapping) else {}
    datasets = submission.get("datasets_metadata", {}) if isinstance(submission, Mapping) else {}
    point = ServingPoint(
        tool="mlperf-viz bundle",
        artifact_path=path,
        output_tokens_per_s=tps,
        concurrency=float(concurrency),
        model=model.get("model_name") if isinstance(model.get("model_name"), str) else None,
        precision=model.get("model_precision")
        if isinstance(model.get("model_precision"), str)
        else None,
    )
    if isinstance(datasets, Mapping) and isinstance(datasets.get("dataset_id"), str):
        point.dataset = datasets["dataset_id"]
    per_user = derived.get("tps_per_user")
    if is_number(per_user):
        point.tokens_per_s_per_user = float(per_user)
        point.tokens_per_s_per_user_statistic = STAT_INVERSE_P90_TPOT
    for key, value in flatten_scalars(direct).items():
        name = key.removeprefix("measured_latency_")
        name = f"{name.replace('average', 'mean')}_ms" if name != key else key
        point.extra[_BUNDLE_NAMES.get(name, name)] = value
    point.extra.update(flatten_scalars(derived, prefix="derived"))
    if is_number(derived.get("qps")):
        point.extra["requests_per_s"] = derived["qps"]
    if isinstance(run.get("label"), str):
        point.extra["run_label"] = run["label"]
    facts = _bundle_system(submission, path=path)
    point.extra.update(facts)
    total = facts.get("accelerators_total")
    point.accelerators_total = total if isinstance(total, int) else None
    return point_results(point)


_BUNDLE_NAMES = {
    "measured_run_duration": "duration_s",
    "measured_total_requests": "requests_completed",
    "measured_total_requests_failed": "requests_failed",
}


def _bundle_system(submission: object, *, path: str) -> dict[str, ExtraValue]:
    if not isinstance(submission, Mapping):
        return {}
    facts: dict[str, ExtraValue] = {}
    info, sut, details = (
        submission.get(key) for key in ("submission_info", "sut_metadata", "sut_details")
    )
    if isinstance(info, Mapping) and isinstance(info.get("submitter_org_names"), str):
        facts["submitter"] = info["submitter_org_names"]
    if isinstance(sut, Mapping):
        for key, name in (
            ("system_name", "system_name"),
            ("system_availability_status", "availability"),
        ):
            if isinstance(sut.get(key), str):
                facts[name] = sut[key]
    if isinstance(details, Mapping):
        nodes = get_sequence(
            details, "node_types", path=path, field="sut_details.node_types", required=False
        )
        facts.update(_node_facts(nodes, path=path))
        if isinstance(details.get("serving_framework"), str):
            facts["serving_framework"] = details["serving_framework"]
    return facts
