"""``vllm bench serve --save-result`` JSON (and the InferenceX fork's spellings) → serving points.

One flat object per run (llm-serving.md §3); ``--append-result`` files hold one
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
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from tracker.errors import ParseError
from tracker.parsers.json_fields import (
    JsonObject,
    decode_json,
    decode_json_lines,
    get_number,
    get_str,
    is_number,
)
from tracker.parsers.serving import (
    LOAD_CONCURRENCY,
    LOAD_REQUEST_RATE,
    STAT_INVERSE_P50_TPOT,
    ServingPoint,
    point_results,
    stat_name,
)
from tracker.records import ExtraValue, ParsedResult

__all__ = ["looks_like_vllm_result", "parse_vllm_result"]

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
