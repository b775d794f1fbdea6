"""``vllm bench serve`` results and SemiAnalysis InferenceX rows (which use vLLM's
spellings) → serving points.

``vllm bench serve --save-result`` JSON (and the InferenceX fork's spellings) → serving points.

One flat object per run; ``--append-result`` files hold one
object per line, each a point (its line is recorded). Mapped by definition:

=============================================  ==========================================
vLLM key                                       stored as (see :mod:`.serving`)
=============================================  ==========================================
``output_throughput``                          ``output_tokens_per_s`` (the result)
``total_token_throughput``                     ``total_tokens_per_s`` (input + output)
``request_throughput``                         ``requests_per_s``
``request_goodput`` / ``request_goodput:``     ``goodput_requests_per_s`` (fork: trailing colon)
``{mean,median,std,pP}_ttft_ms``               ``ttft_<stat>_ms``
``…_tpot_ms``                                  ``tpot_<stat>_ms`` (excludes TTFT)
``…_itl_ms``                                   ``itl_<stat>_ms`` (pooled chunk gaps)
``…_e2el_ms``                                  ``e2e_latency_<stat>_ms``
``max_concurrency``                            the point's configured concurrency
``duration``                                   ``duration_s``
=============================================  ==========================================

vLLM writes no per-user figure: the headline tokens/s/user is derived as
1000 / ``median_tpot_ms`` ("1/p50 TPOT", the InferenceX convention). Achieved
concurrency is Σ E2E / duration (= completed × mean E2E / duration), when E2E
was measured. The file names no ISL/OSL, only totals: the measured means are
totals / completed; requested values come only from ``--metadata`` keys
(``isl``/``osl`` or ``random_input_len``/``random_output_len``) when present.
A run is valid when it completed at least one request.

SemiAnalysis InferenceX result rows → serving points.

Three row shapes are read, from a JSON object or an array of them:

* aggregated rows (``agg_*.json`` from ``utils/process_result.py``) and the
  DB/API rows (``/api/v1/benchmarks``, ``supplemental-bmk.json``), whose metrics
  sit at the top level or under ``metrics``;
* AgentX aggregates (``scenario_type: agentic-coding``, nested ``request_metrics``).

Units: every latency is in **seconds** (→ ms); ``*_intvty`` is 1000 / TPOT-ms
per statistic (kept as ``intvty_<stat>_tokens_per_s_per_user``; the ``std`` one
is meaningless but kept). Throughput is **per GPU** and ``tput_per_gpu`` counts
input **plus** output tokens; the GPUs engaged are ``tp × pp × pcp_size`` on one
node, ``num_prefill_gpu + num_decode_gpu`` for disaggregated rows (where
``output_tput_per_gpu`` is per decode GPU), or ``num_gpus`` (AgentX). So
``output_tokens_per_s`` = ``output_tput_per_gpu`` × the GPUs that produced the
output tokens, and the accelerator count comes from the row. The headline
tokens/s/user is ``median_intvty`` ("1/p50 TPOT"). InferenceX's own per-GPU
figures are kept under their names. The row's hardware, framework, image and
topology are recorded (``accelerator``, ``serving_framework``,
``container_image``, ``topology``) for the reader to label the result with.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from tracker.errors import ParseError
from tracker.formats.parse_json import (
    JsonObject,
    as_number,
    decode_json,
    decode_json_lines,
    flatten_scalars,
    get_int,
    get_mapping,
    get_number,
    get_str,
    is_number,
)
from tracker.formats.serving.parse import (
    LOAD_AGENTIC,
    LOAD_CONCURRENCY,
    LOAD_REQUEST_RATE,
    STAT_INVERSE_P50_TPOT,
    ServingPoint,
    point_results,
    stat_name,
)
from tracker.records.results import ExtraValue, ParsedResult

__all__ = [
    "looks_like_inferencex_row",
    "looks_like_vllm_result",
    "parse_inferencex_rows",
    "parse_vllm_result",
]


_REQUIRED_KEYS = ("output_throughput", "request_throughput")
_LATENCY = re.compile(r"(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el)_ms")
_QUANTITY = {"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2e_latency"}
_RENAMED: Mapping[str, str] = {
    "total_token_throughput": "total_tokens_per_s",
    "request_throughput": "requests_per_s",
    "request_goodput": "goodput_requests_per_s",
    "request_goodput:": "goodput_requests_per_s",
    "duration": "duration_s",
    "completed": "requests_completed",
    "failed": "requests_failed",
    "date": "started_at",
    "backend": "backend",
}
_SKIPPED = frozenset({"output_throughput", "max_concurrency", "request_rate", "model_id"})


def looks_like_vllm_result(doc: object) -> bool:
    """Whether a decoded JSON value has the keys of a vLLM ``--save-result`` object."""
    return isinstance(doc, Mapping) and all(key in doc for key in _REQUIRED_KEYS)


def parse_vllm_result(data: bytes, *, path: str) -> list[ParsedResult]:
    """Every point of a ``--save-result`` file (one object, or one object per line)."""
    documents: list[tuple[int | None, object]]
    try:
        documents = [(None, decode_json(data, path=path))]
    except ParseError as error:
        if "Extra data" not in error.message:
            raise
        documents = list(decode_json_lines(data, path=path))
    results: list[ParsedResult] = []
    for line, doc in documents:
        results.extend(_parse_one(doc, path=path, line=line))
    return results


def _parse_one(doc: object, *, path: str, line: int | None) -> list[ParsedResult]:
    if not isinstance(doc, Mapping):
        raise ParseError(path, "not a vLLM benchmark result: expected a JSON object", line=line)
    for key in _REQUIRED_KEYS:
        if key not in doc:
            raise ParseError(
                path, f"field '{key}' is missing: not a vLLM benchmark result", line=line
            )
    completed = get_number(doc, "completed", path=path, field="completed", required=False)
    point = ServingPoint(
        tool=_tool(doc),
        artifact_path=path,
        line=line,
        output_tokens_per_s=_number(doc, "output_throughput", path=path, line=line),
        is_valid=completed is None or completed > 0,
        model=get_str(doc, "model_id", path=path, field="model_id", required=False),
    )
    _load(point, doc, path=path, line=line)
    point.extra.update(_extra(doc))
    _derived(point, doc, completed)
    return point_results(point)


def _number(doc: JsonObject, key: str, *, path: str, line: int | None) -> float:
    value = doc.get(key)
    if not is_number(value):
        shown = "missing or null" if value is None else repr(value)
        raise ParseError(path, f"field '{key}' is {shown}, expected a finite number", line=line)
    return float(value)


def _tool(doc: JsonObject) -> str:
    version = doc.get("vllm_version") or doc.get("version")
    return f"vllm bench {version}" if isinstance(version, str) and version else "vllm bench"


def _load(point: ServingPoint, doc: JsonObject, *, path: str, line: int | None) -> None:
    cap = doc.get("max_concurrency")
    if cap is not None:
        point.concurrency = _number(doc, "max_concurrency", path=path, line=line)
    rate = doc.get("request_rate")
    if is_number(rate):
        point.request_rate_per_s = float(rate)
    elif rate not in (None, "inf", "Infinity"):
        raise ParseError(path, f"field 'request_rate' is {rate!r}, expected a number or 'inf'")
    if point.request_rate_per_s is not None:
        point.load_mode = LOAD_REQUEST_RATE
    elif point.concurrency is None:
        raise ParseError(
            path,
            "field 'max_concurrency' is null and 'request_rate' is 'inf': "
            "the run has no load setting to key its point on",
            line=line,
        )
    else:
        point.load_mode = LOAD_CONCURRENCY


def _extra(doc: JsonObject) -> dict[str, ExtraValue]:
    extra: dict[str, ExtraValue] = {}
    for key, value in doc.items():
        if key in _SKIPPED or value is None or isinstance(value, list | Mapping):
            continue
        match = _LATENCY.fullmatch(key)
        if match and is_number(value):
            stat, quantity = match.groups()
            extra[f"{_QUANTITY[quantity]}_{stat_name(stat)}_ms"] = value
        elif key in _RENAMED:
            extra[_RENAMED[key]] = value
        elif isinstance(value, str | bool) or is_number(value):
            extra[key] = value
    return extra


def _derived(point: ServingPoint, doc: JsonObject, completed: float | None) -> None:
    extra = point.extra
    median_tpot = extra.get("tpot_p50_ms")
    if isinstance(median_tpot, int | float) and median_tpot > 0:
        point.tokens_per_s_per_user = 1000.0 / median_tpot
        point.tokens_per_s_per_user_statistic = STAT_INVERSE_P50_TPOT
    duration = doc.get("duration")
    if completed and is_number(duration) and duration > 0:
        for total, name in (("total_input_tokens", "isl"), ("total_output_tokens", "osl")):
            tokens = doc.get(total)
            if is_number(tokens):
                extra[f"{name}_measured"] = tokens / completed
        mean_e2e = extra.get("e2e_latency_mean_ms")
        if isinstance(mean_e2e, int | float):
            extra["concurrency_achieved"] = completed * mean_e2e / 1000.0 / duration
    for names, target in (
        (("isl", "random_input_len"), "isl"),
        (("osl", "random_output_len"), "osl"),
    ):
        value = next((doc[n] for n in names if is_number(doc.get(n))), None)
        if value is not None:
            setattr(point, f"{target}_requested", float(value))


_ROW_LATENCY = re.compile(r"(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el)")
_INTVTY = re.compile(r"(mean|median|std|p\d+(?:\.\d+)?)_intvty")
_TEXT_KEYS: Mapping[str, str] = {
    "hw": "accelerator",
    "hardware": "accelerator",
    "framework": "serving_framework",
    "image": "container_image",
    "date": "started_at",
    "run_url": "upstream_url",
    "infmax_model_prefix": "model_prefix",
    "recipe_fingerprint": "recipe_fingerprint",
    "scenario_type": "scenario_type",
    "kv_offloading": "kv_offloading",
}


def looks_like_inferencex_row(doc: object) -> bool:
    """Whether a decoded JSON value is an InferenceX row (or an array of rows)."""
    rows = doc if isinstance(doc, list) else [doc]
    return bool(rows) and all(
        isinstance(row, Mapping) and "conc" in row and ("hw" in row or "hardware" in row)
        for row in rows
    )


def parse_inferencex_rows(data: bytes, *, path: str) -> list[ParsedResult]:
    """One point per row of an InferenceX file."""
    doc = decode_json(data, path=path)
    rows: Sequence[Any] = doc if isinstance(doc, list) else [doc]
    if not rows:
        raise ParseError(path, "no rows: the file is an empty array")
    results: list[ParsedResult] = []
    for index, row in enumerate(rows):
        where = f"[{index}]" if isinstance(doc, list) else ""
        if not isinstance(row, Mapping):
            raise ParseError(path, f"row {where or 0} is not an object")
        results.extend(_parse_row(row, path=path, where=where))
    return results


def _parse_row(row: JsonObject, *, path: str, where: str) -> list[ParsedResult]:
    if not ("hw" in row or "hardware" in row):
        raise ParseError(path, f"field '{where}hw' is missing: not an InferenceX row")
    if "request_metrics" in row:
        return point_results(_agentic_point(row, path=path, where=where))
    return point_results(_fixed_point(row, path=path, where=where))


def _fixed_point(row: JsonObject, *, path: str, where: str) -> ServingPoint:
    metrics = row.get("metrics")
    values: JsonObject = metrics if isinstance(metrics, Mapping) else row
    prefix = f"{where}metrics." if isinstance(metrics, Mapping) else where
    total_gpus, output_gpus = _gpus(row, path=path, where=where)
    per_gpu = get_number(
        values, "output_tput_per_gpu", path=path, field=f"{prefix}output_tput_per_gpu"
    )
    assert per_gpu is not None
    point = ServingPoint(
        tool="inferencex",
        artifact_path=path,
        output_tokens_per_s=per_gpu * output_gpus,
        concurrency=as_number(row.get("conc"), path=path, field=f"{where}conc"),
        model=_model(row),
        precision=_text(row, "precision"),
        spec_decoding=_text(row, "spec_decoding") or _text(row, "spec_method"),
        isl_requested=get_number(row, "isl", path=path, field=f"{where}isl", required=False),
        osl_requested=get_number(row, "osl", path=path, field=f"{where}osl", required=False),
        accelerators_total=total_gpus,
    )
    point.extra.update(_row_extra(row))
    point.extra.update(_metric_extra(values, total_gpus))
    median = values.get("median_intvty", values.get("p50_intvty"))
    if is_number(median):
        point.tokens_per_s_per_user = float(median)
        point.tokens_per_s_per_user_statistic = STAT_INVERSE_P50_TPOT
    return point


def _gpus(row: JsonObject, *, path: str, where: str) -> tuple[int, int]:
    """(GPUs engaged, GPUs that produced the output tokens)."""
    prefill = get_int(
        row, "num_prefill_gpu", path=path, field=f"{where}num_prefill_gpu", required=False
    )
    decode = get_int(
        row, "num_decode_gpu", path=path, field=f"{where}num_decode_gpu", required=False
    )
    split = row.get("disagg") is True or row.get("is_multinode") is True
    if prefill is not None and decode is not None:
        gpus = (prefill + decode, decode) if split else (decode, decode)
        fields = f"'{where}num_prefill_gpu' and '{where}num_decode_gpu'"
    else:
        tp = get_int(row, "tp", path=path, field=f"{where}tp", required=False)
        if tp is None:
            raise ParseError(
                path, f"field '{where}tp' is missing (and no num_prefill_gpu/num_decode_gpu)"
            )
        for key in ("pp", "pcp_size"):
            tp *= get_int(row, key, path=path, field=f"{where}{key}", required=False) or 1
        gpus, fields = (tp, tp), f"'{where}tp' (× pp × pcp_size)"
    if min(gpus) < 1:
        raise ParseError(path, f"fields {fields} give {gpus[0]} GPUs, expected at least 1")
    return gpus


def _model(row: JsonObject) -> str | None:
    for key in ("infmax_model_prefix", "model"):
        value = row.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _text(row: JsonObject, key: str) -> str | None:
    value = row.get(key)
    return value if isinstance(value, str) and value else None


def _row_extra(row: JsonObject) -> dict[str, ExtraValue]:
    extra: dict[str, ExtraValue] = {}
    for key, value in row.items():
        if key in ("metrics", "request_metrics", "server_metrics", "conc", "isl", "osl"):
            continue
        if key in _TEXT_KEYS:
            if isinstance(value, str) and value:
                extra[_TEXT_KEYS[key]] = value
        elif isinstance(value, Mapping):
            extra.update(flatten_scalars(value, prefix=key))
        elif isinstance(value, str | bool) or is_number(value):
            extra[key] = value
    if isinstance(row.get("model"), str):
        extra["model_id"] = row["model"]
    extra["topology"] = _topology(row)
    return extra


def _topology(row: JsonObject) -> str:
    """A short topology label: ``tp8``, ``tp4-ep4-dpa``, ``disagg-p4-d8``."""
    if row.get("disagg") is True and is_number(row.get("num_prefill_gpu")):
        return f"disagg-p{row['num_prefill_gpu']}-d{row.get('num_decode_gpu')}"
    parts = []
    for key, label in (("tp", "tp"), ("pp", "pp"), ("ep", "ep")):
        value = row.get(key, row.get(f"decode_{key}"))
        if is_number(value) and (key == "tp" or value != 1):
            parts.append(f"{label}{value}")
    attention = row.get("dp_attention", row.get("decode_dp_attention"))
    if attention is True or attention == "true":
        parts.append("dpa")
    return "-".join(parts)


def _metric_extra(values: JsonObject, gpus: int) -> dict[str, ExtraValue]:
    extra: dict[str, ExtraValue] = {}
    for key, value in values.items():
        if not is_number(value):
            continue
        latency = _ROW_LATENCY.fullmatch(key)
        intvty = _INTVTY.fullmatch(key)
        if latency:
            stat, quantity = latency.groups()
            extra[f"{_QUANTITY[quantity]}_{stat_name(stat)}_ms"] = value * 1000.0
        elif intvty:
            extra[f"intvty_{stat_name(intvty.group(1))}_tokens_per_s_per_user"] = value
        else:
            extra[key] = value
    if is_number(values.get("tput_per_gpu")):
        extra["total_tokens_per_s"] = values["tput_per_gpu"] * gpus
    return extra


def _agentic_point(row: JsonObject, *, path: str, where: str) -> ServingPoint:
    request = get_mapping(row, "request_metrics", path=path, field=f"{where}request_metrics")
    throughput = get_mapping(
        request, "throughput", path=path, field=f"{where}request_metrics.throughput"
    )
    output = get_mapping(
        throughput, "output", path=path, field=f"{where}request_metrics.throughput.output"
    )
    field = f"{where}request_metrics.throughput.output.tokens_per_second"
    rate = get_number(output, "tokens_per_second", path=path, field=field)
    gpus = get_int(row, "num_gpus", path=path, field=f"{where}num_gpus")
    assert rate is not None and gpus is not None
    dataset = row.get("dataset")
    point = ServingPoint(
        tool="inferencex agentx",
        artifact_path=path,
        output_tokens_per_s=rate,
        load_mode=LOAD_AGENTIC,
        concurrency=as_number(row.get("conc"), path=path, field=f"{where}conc"),
        model=_model(row),
        precision=_text(row, "precision"),
        spec_decoding=_text(row, "spec_decoding"),
        dataset=_dataset_name(dataset),
        accelerators_total=gpus,
    )
    point.extra.update(_row_extra(row))
    point.extra.update(_agentic_extra(request, row.get("server_metrics")))
    intvty = _nested_number(request, ("latency", "intvty", "p50"))
    if intvty is not None:
        point.tokens_per_s_per_user = intvty
        point.tokens_per_s_per_user_statistic = STAT_INVERSE_P50_TPOT
    return point


def _dataset_name(dataset: object) -> str | None:
    if isinstance(dataset, Mapping):
        for key in ("hf_dataset_name", "loader", "source_type"):
            if isinstance(dataset.get(key), str) and dataset[key]:
                return str(dataset[key])
    return None


def _agentic_extra(request: JsonObject, server: object) -> dict[str, ExtraValue]:
    extra: dict[str, ExtraValue] = {}
    latency = request.get("latency")
    if isinstance(latency, Mapping):
        for name, stats in latency.items():
            if not isinstance(stats, Mapping):
                continue
            for stat, value in stats.items():
                if not is_number(value):
                    continue
                if name.endswith("intvty"):
                    extra[f"{name}_{stat_name(stat)}_tokens_per_s_per_user"] = value
                else:
                    extra[f"{_QUANTITY.get(name, name)}_{stat_name(stat)}_ms"] = value * 1000.0
    rest = {key: value for key, value in request.items() if key != "latency"}
    extra.update(flatten_scalars(rest, prefix="request_metrics"))
    if isinstance(server, Mapping):
        extra.update(flatten_scalars(server, prefix="server_metrics"))
    for source, name in (
        (("throughput", "total", "tokens_per_second"), "total_tokens_per_s"),
        (("throughput", "input", "tokens_per_second"), "input_tokens_per_s"),
        (("throughput", "duration_seconds"), "duration_s"),
        (("tokens", "input", "mean"), "isl_measured"),
        (("tokens", "output_actual", "mean"), "osl_measured"),
        (("qps", "mean"), "requests_per_s"),
    ):
        value = _nested_number(request, source)
        if value is not None:
            extra[name] = value
    return extra


def _nested_number(obj: JsonObject, keys: tuple[str, ...]) -> float | None:
    value: object = obj
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return float(value) if is_number(value) else None
