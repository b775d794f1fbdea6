"""NVIDIA AIPerf summaries and GenAI-Perf summaries (AIPerf's predecessor) → serving points.

NVIDIA AIPerf summaries (``profile_export_aiperf.json``) → one serving point each.

The summary of a run holds one block per metric, ``{"unit": ..., "avg": ...,
"p50": ...}`` (AIPerf's ``profile_export_aiperf.json``); the profiling phase only: warm-up
requests are in ``warmup_metrics`` and the per-request ``profile_export.jsonl``,
neither of which is read. Mapped by definition, not by name:

=====================================  ======================================
AIPerf tag                             stored as (see :mod:`.serving`)
=====================================  ======================================
``output_token_throughput``            ``output_tokens_per_s`` (the result)
``time_to_first_token``                ``ttft_<stat>_ms``
``inter_token_latency``                ``tpot_<stat>_ms`` (AIPerf's ITL is TPOT)
``inter_chunk_latency``                ``itl_<stat>_ms`` (vLLM's ITL)
``request_latency``                    ``e2e_latency_<stat>_ms``
``output_token_throughput_per_user``   ``output_tokens_per_s_per_user_<stat>``;
                                       its avg is the headline, "mean of per-request 1/TPOT"
=====================================  ======================================

Other blocks are kept as ``<tag>_<stat>`` with the unit appended. Concurrency
is the profiling phase's configured ``concurrency``; ``effective_concurrency``
is the achieved one. A run is valid when AIPerf says it completed and was not
cancelled. AIPerf's own sweep aggregates (``profile_export_aiperf_sweep.json``,
whose Pareto fields came out empty in 0.13.0) are never used: curves are built
from the per-run summaries.

GenAI-Perf summaries (``*_genai_perf.json``) → one serving point each.

Written against the documented structure (genai-perf
0.0.16 ``export_data/json_exporter.py``): one block per metric shaped as in
AIPerf (``{"unit", "avg", "p50", ...}``), plus ``input_config``. The metric
definitions are AIPerf's (``inter_token_latency`` is TPOT, tok/s/user is a
per-request 1/ITL), so the blocks map exactly as in :mod:`.aiperf`.

``input_config`` comes in two shapes: 0.0.16 nests the configuration
(``model_names``, ``perf_analyzer.stimulus: {concurrency: N}``,
``input.synthetic_tokens.mean``, ``input.output_tokens.mean``); older releases
wrote the flat command-line arguments (``model``, ``concurrency``,
``request_rate``, ``synthetic_input_tokens_mean``, ``output_tokens_mean``). Both are read.
The file names no GenAI-Perf version; the tool is recorded as ``genai-perf``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tracker.errors import ParseError
from tracker.formats.parse_json import (
    JsonObject,
    as_number,
    decode_json,
    get_mapping,
    get_number,
    get_sequence,
    get_str,
    is_number,
)
from tracker.formats.serving.parse import (
    LOAD_CONCURRENCY,
    LOAD_REQUEST_RATE,
    MS_PER_UNIT,
    STAT_MEAN_OF_INVERSE_TPOT,
    ServingPoint,
    point_results,
    stat_name,
)
from tracker.records.results import ExtraValue, ParsedResult

__all__ = [
    "AGGREGATE_NAME",
    "SUMMARY_NAME",
    "SUMMARY_SUFFIX",
    "SWEEP_NAME",
    "block_extra",
    "parse_aiperf_summary",
    "parse_genai_perf_summary",
]


SUMMARY_NAME = "profile_export_aiperf.json"
AGGREGATE_NAME = "profile_export_aiperf_aggregate.json"
SWEEP_NAME = "profile_export_aiperf_sweep.json"

LATENCY_TAGS: Mapping[str, str] = {
    "time_to_first_token": "ttft",
    "inter_token_latency": "tpot",
    "inter_chunk_latency": "itl",
    "request_latency": "e2e_latency",
}
"""Per-request latency blocks (AIPerf and GenAI-Perf) and their canonical quantity."""

RATE_TAGS: Mapping[str, tuple[str, str]] = {
    "total_token_throughput": ("total_tokens_per_s", "tokens/sec"),
    "input_token_throughput": ("input_tokens_per_s", "tokens/sec"),
    "request_throughput": ("requests_per_s", "requests/sec"),
    "goodput": ("goodput_requests_per_s", "requests/sec"),
    "request_goodput": ("goodput_requests_per_s", "requests/sec"),
    "good_request_fraction": ("good_request_fraction", "ratio"),
    "benchmark_duration": ("duration_s", "sec"),
    "completed_request_count": ("requests_completed", "requests"),
    "error_request_count": ("requests_failed", "requests"),
}
"""Single-value blocks with a canonical name, and the unit the block must state."""

_MEAN_TAGS: Mapping[str, str] = {
    "input_sequence_length": "isl_measured",
    "output_sequence_length": "osl_measured",
    "effective_concurrency": "concurrency_achieved",
}
_UNIT_SUFFIX: Mapping[str, str] = {
    "ms": "_ms",
    "sec": "_s",
    "tokens/sec": "_tokens_per_s",
    "requests/sec": "_requests_per_s",
    "tokens/sec/user": "_tokens_per_s_per_user",
    "%": "_pct",
    "KB": "_kb",
}
_SKIPPED_TOP = frozenset({"warmup_metrics", "input_config", "run_info", "error_summary"})
PRIMARY_TAG = "output_token_throughput"
PER_USER_TAG = "output_token_throughput_per_user"


def parse_aiperf_summary(data: bytes, *, path: str) -> list[ParsedResult]:
    """The point measured by one AIPerf run (its profiling phase)."""
    doc = decode_json(data, path=path)
    if not isinstance(doc, Mapping):
        raise ParseError(path, "not an AIPerf summary: the top level is not an object")
    version = get_str(doc, "aiperf_version", path=path, field="aiperf_version", required=False)
    if version is None:
        raise ParseError(path, "field 'aiperf_version' is missing: not an AIPerf summary")
    config = get_mapping(doc, "input_config", path=path, field="input_config")
    point = ServingPoint(
        tool=f"aiperf {version}",
        artifact_path=path,
        output_tokens_per_s=primary_rate(doc, path=path),
        is_valid=doc.get("is_complete") is not False and doc.get("was_cancelled") is not True,
        model=_model(config, path=path),
    )
    _load(point, config, path=path)
    _workload(point, config, path=path)
    point.extra.update(block_extra(doc, path=path, skip=_SKIPPED_TOP))
    point.extra.update(_provenance(doc, config, path=path))
    _per_user(point, doc, path=path)
    return point_results(point)


def primary_rate(doc: JsonObject, *, path: str) -> float:
    """The ``output_token_throughput`` avg, in tokens/s (AIPerf and GenAI-Perf)."""
    block = get_mapping(doc, PRIMARY_TAG, path=path, field=PRIMARY_TAG)
    _check_unit(block, "tokens/sec", path=path, field=PRIMARY_TAG)
    value = get_number(block, "avg", path=path, field=f"{PRIMARY_TAG}.avg")
    assert value is not None
    return value


def _per_user(point: ServingPoint, doc: JsonObject, *, path: str) -> None:
    block = doc.get(PER_USER_TAG)
    if isinstance(block, Mapping) and is_number(block.get("avg")):
        _check_unit(block, "tokens/sec/user", path=path, field=PER_USER_TAG)
        point.tokens_per_s_per_user = float(block["avg"])
        point.tokens_per_s_per_user_statistic = STAT_MEAN_OF_INVERSE_TPOT


def block_extra(
    doc: JsonObject, *, path: str, skip: frozenset[str] = frozenset()
) -> dict[str, ExtraValue]:
    """Every metric block of a summary, flattened under canonical or unit-suffixed names."""
    extra: dict[str, ExtraValue] = {}
    for tag, block in doc.items():
        if tag in skip or tag == PRIMARY_TAG:
            continue
        if isinstance(block, Mapping) and "unit" in block:
            extra.update(_one_block(tag, block, path=path))
    return extra


def _one_block(tag: str, block: JsonObject, *, path: str) -> dict[str, ExtraValue]:
    unit = get_str(block, "unit", path=path, field=f"{tag}.unit")
    assert unit is not None
    canonical = tag in LATENCY_TAGS or tag in RATE_TAGS or tag in _MEAN_TAGS or tag == PER_USER_TAG
    numbers: dict[str, float] = {}
    for key, value in block.items():
        if key == "unit" or value is None:
            continue
        if canonical:
            numbers[key] = as_number(value, path=path, field=f"{tag}.{key}")
        elif is_number(value):
            numbers[key] = float(value)
    if tag in LATENCY_TAGS:
        if unit not in MS_PER_UNIT:
            raise ParseError(path, f"field '{tag}.unit' is {unit!r}, expected a time unit (ms)")
        factor = MS_PER_UNIT[unit]
        quantity = LATENCY_TAGS[tag]
        return {_latency(quantity, key): _scaled(v, key, factor) for key, v in numbers.items()}
    if tag in RATE_TAGS and "avg" in numbers:
        name, expected = RATE_TAGS[tag]
        _check_unit(block, expected, path=path, field=tag)
        return {name: numbers["avg"]}
    return _generic_block(tag, unit, numbers)


def _generic_block(tag: str, unit: str, numbers: Mapping[str, float]) -> dict[str, ExtraValue]:
    extra: dict[str, ExtraValue] = {}
    if tag in _MEAN_TAGS and "avg" in numbers:
        extra[_MEAN_TAGS[tag]] = numbers["avg"]
    base = "output_tokens_per_s_per_user" if tag == PER_USER_TAG else tag
    suffix = _UNIT_SUFFIX.get(unit, "")
    if tag == PER_USER_TAG or tag.endswith(suffix):
        suffix = ""
    if set(numbers) == {"avg"}:
        extra[f"{base}{suffix}"] = numbers["avg"]
        return extra
    for key, value in numbers.items():
        stat = stat_name(key)
        extra[f"{base}_{stat}" if stat == "count" else f"{base}_{stat}{suffix}"] = value
    return extra


def _latency(quantity: str, key: str) -> str:
    name = stat_name(key)
    return f"{quantity}_{name}" if name in ("count",) else f"{quantity}_{name}_ms"


def _scaled(value: float, key: str, factor: float) -> float:
    return value if key == "count" else value * factor


def _check_unit(block: JsonObject, expected: str, *, path: str, field: str) -> None:
    unit = block.get("unit")
    if unit is not None and unit != expected:
        raise ParseError(path, f"field '{field}.unit' is {unit!r}, expected {expected!r}")


def _model(config: JsonObject, *, path: str) -> str | None:
    models = get_mapping(config, "models", path=path, field="input_config.models", required=False)
    items = get_sequence(
        models, "items", path=path, field="input_config.models.items", required=False
    )
    names = [item.get("name") for item in items if isinstance(item, Mapping)]
    legacy = config.get("model_names")
    if not names and isinstance(legacy, list):
        names = legacy
    return next((name for name in names if isinstance(name, str) and name), None)


def _load(point: ServingPoint, config: JsonObject, *, path: str) -> None:
    """Concurrency (or request rate) of the profiling phase, as configured."""
    phase = _profiling_phase(config, path=path)
    field = "input_config.phases[profiling]"
    if phase is None:
        phase = get_mapping(config, "loadgen", path=path, field="input_config.loadgen")
        field = "input_config.loadgen"
    concurrency = get_number(
        phase, "concurrency", path=path, field=f"{field}.concurrency", required=False
    )
    rate = get_number(phase, "rate", path=path, field=f"{field}.rate", required=False)
    if rate is None:
        rate = get_number(
            phase, "request_rate", path=path, field=f"{field}.request_rate", required=False
        )
    if concurrency is None and rate is None:
        raise ParseError(path, f"field '{field}' has neither 'concurrency' nor 'rate'")
    point.concurrency = concurrency
    point.request_rate_per_s = rate
    kind = phase.get("type")
    point.load_mode = LOAD_REQUEST_RATE if kind == "request_rate" or rate else LOAD_CONCURRENCY
    for key in ("requests", "sessions", "duration"):
        if is_number(phase.get(key)):
            point.extra[f"profiling_{key}"] = phase[key]


def _profiling_phase(config: JsonObject, *, path: str) -> JsonObject | None:
    phases = get_sequence(config, "phases", path=path, field="input_config.phases", required=False)
    for index, phase in enumerate(phases):
        if not isinstance(phase, Mapping):
            raise ParseError(path, f"field 'input_config.phases[{index}]' is not an object")
        if phase.get("kind", "profiling") == "profiling":
            return phase
    return None


def _workload(point: ServingPoint, config: JsonObject, *, path: str) -> None:
    datasets = get_sequence(
        config, "datasets", path=path, field="input_config.datasets", required=False
    )
    if not datasets or not isinstance(datasets[0], Mapping):
        return
    dataset: JsonObject = datasets[0]
    prompts = dataset.get("prompts")
    if isinstance(prompts, Mapping):
        point.isl_requested = _mean(prompts, "isl", path=path)
        point.osl_requested = _mean(prompts, "osl", path=path)
    turns = dataset.get("turns")
    if isinstance(turns, Mapping):
        point.turns_requested = get_number(
            turns, "mean", path=path, field="input_config.datasets[0].turns.mean", required=False
        )
    kind = dataset.get("type")
    if kind != "synthetic":
        name = dataset.get("name")
        point.dataset = name if isinstance(name, str) and name else None


def _mean(prompts: JsonObject, key: str, *, path: str) -> float | None:
    block = prompts.get(key)
    if not isinstance(block, Mapping):
        return None
    field = f"input_config.datasets[0].prompts.{key}.mean"
    return get_number(block, "mean", path=path, field=field, required=False)


def _provenance(doc: JsonObject, config: JsonObject, *, path: str) -> dict[str, ExtraValue]:
    extra: dict[str, ExtraValue] = {}
    run_info: Any = doc.get("run_info")
    run_info = run_info if isinstance(run_info, Mapping) else {}
    texts = {
        "run_id": doc.get("benchmark_id"),
        "started_at": doc.get("start_time"),
        "ended_at": doc.get("end_time"),
        "schema_version": doc.get("schema_version"),
        "sweep_id": run_info.get("sweep_id"),
        "variation_label": run_info.get("variation_label"),
        "run_label": run_info.get("run_label"),
    }
    extra.update({k: v for k, v in texts.items() if isinstance(v, str) and v})
    if is_number(run_info.get("trial")):
        extra["trial"] = run_info["trial"]
    endpoint = config.get("endpoint")
    if isinstance(endpoint, Mapping):
        if isinstance(endpoint.get("streaming"), bool):
            extra["streaming"] = endpoint["streaming"]
        if isinstance(endpoint.get("type"), str):
            extra["endpoint_type"] = endpoint["type"]
    slos = config.get("slos")
    if isinstance(slos, Mapping):
        for tag, limit in slos.items():
            if is_number(limit) and tag in LATENCY_TAGS:
                extra[f"slo_{LATENCY_TAGS[tag]}_ms"] = limit
            elif is_number(limit):
                extra[f"slo_{tag}"] = limit
    errors = doc.get("error_summary")
    if isinstance(errors, list):
        extra["error_kinds"] = len(errors)
    return extra


SUMMARY_SUFFIX = "_genai_perf.json"
_GENAI_SKIPPED_TOP = frozenset({"input_config", "telemetry_stats", "sessions"})


def parse_genai_perf_summary(data: bytes, *, path: str) -> list[ParsedResult]:
    """The point measured by one GenAI-Perf run."""
    doc = decode_json(data, path=path)
    if not isinstance(doc, Mapping):
        raise ParseError(path, "not a GenAI-Perf summary: the top level is not an object")
    if "aiperf_version" in doc:
        raise ParseError(path, "field 'aiperf_version' is present: this is an AIPerf summary")
    config = get_mapping(doc, "input_config", path=path, field="input_config")
    point = ServingPoint(
        tool="genai-perf",
        artifact_path=path,
        output_tokens_per_s=primary_rate(doc, path=path),
        model=_genai_model(config),
    )
    _genai_load(point, config, path=path)
    point.isl_requested = _first_number(
        config, ("input", "synthetic_tokens", "mean"), ("synthetic_input_tokens_mean",)
    )
    point.osl_requested = _first_number(
        config, ("input", "output_tokens", "mean"), ("output_tokens_mean",)
    )
    point.extra.update(block_extra(doc, path=path, skip=_GENAI_SKIPPED_TOP))
    per_user = doc.get(PER_USER_TAG)
    if isinstance(per_user, Mapping) and is_number(per_user.get("avg")):
        point.tokens_per_s_per_user = float(per_user["avg"])
        point.tokens_per_s_per_user_statistic = STAT_MEAN_OF_INVERSE_TPOT
    return point_results(point)


def _genai_model(config: JsonObject) -> str | None:
    for key in ("model_names", "model"):
        value = config.get(key)
        names = value if isinstance(value, list) else [value]
        for name in names:
            if isinstance(name, str) and name:
                return name
    return None


def _genai_load(point: ServingPoint, config: JsonObject, *, path: str) -> None:
    stimulus = _nested(config, ("perf_analyzer", "stimulus"))
    source = stimulus if isinstance(stimulus, Mapping) else config
    concurrency = source.get("concurrency", source.get("session_concurrency"))
    rate = source.get("request_rate", source.get("session_request_rate"))
    if is_number(rate):
        point.load_mode = LOAD_REQUEST_RATE
        point.request_rate_per_s = float(rate)
    elif is_number(concurrency):
        point.load_mode = LOAD_CONCURRENCY
        point.concurrency = float(concurrency)
    else:
        raise ParseError(
            path,
            "field 'input_config.perf_analyzer.stimulus' (or 'input_config.concurrency') "
            "names neither a concurrency nor a request rate",
        )


def _first_number(config: JsonObject, *paths: tuple[str, ...]) -> float | None:
    for keys in paths:
        value = _nested(config, keys)
        if is_number(value):
            return float(value)
    return None


def _nested(obj: JsonObject, keys: tuple[str, ...]) -> object:
    value: object = obj
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value
