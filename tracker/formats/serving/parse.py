"""The normalised record of an LLM-serving benchmark point: one vocabulary.

Every serving tool's parser (AIPerf, GenAI-Perf, vLLM bench, InferenceX,
MLPerf Endpoints) fills a :class:`ServingPoint` and turns it into results with
:func:`point_results`. Tools disagree on names, units and definitions
("throughput", "TPOT", "interactivity"); here a name means one thing, by definition,
whatever the tool.

**Results (tracked series), one set per measured point**

=======================================  =====================  =========  ============
metric                                   unit                   direction  when
=======================================  =====================  =========  ============
``output_tokens_per_s``                  tokens/s               higher     always
``output_tokens_per_s_per_accelerator``  tokens/s/accelerator   higher     count known
=======================================  =====================  =========  ============

``output_tokens_per_s`` is the whole system's output tokens over the tool's
measurement window (AIPerf ``output_token_throughput``, vLLM ``output_throughput``,
Endpoints ``system_tps``, InferenceX ``output_tput_per_gpu`` × its GPUs). The
per-accelerator series divides it by ``accelerators_total`` (from the file
where it says, else ``--accelerators``); it is what scaling efficiency and the
throughput-per-GPU curves read. Latency statistics are *not* separate series:
the analysis compares curves at an interactivity target, not latency percentiles, so
they live in ``extra`` beside the throughput they were measured with.

**Identity of a point.** ``scenario`` is the load mode (``concurrency``,
``request-rate`` or ``agentic``); ``concurrency`` is the configured cap (the curve
key); ``workload`` is ``<curve workload>/c<N>`` (or ``/r<rate>``), so every
point is its own series and repeats of one point are samples of it;
``extra["curve_workload"]`` (``isl256-osl64``, ``isl256-osl32-turns3``,
``isl1024-osl1024-fp4-mtp``, a dataset name) is the workload without the
point, and the reader sets a ``sweep_key`` shared by the points of one sweep.
A curve is the points with the same system, software version, benchmark,
scenario and ``curve_workload``. Precision and speculative decoding are part of
the curve workload when a file names them: another precision is another
configuration (InferenceX draws one curve per precision and spec method), not
a software gain of the same series. The model is the benchmark when
``--benchmark`` does not name one.

**Secondary values (``extra``), canonical units, names carry the unit**

* throughput: ``total_tokens_per_s`` (input + output), ``input_tokens_per_s``,
  ``requests_per_s``, ``goodput_requests_per_s`` (requests meeting every SLO),
  ``good_request_fraction``, and ``*_per_accelerator`` of the token rates when the
  count is known;
* latency, ``<quantity>_<stat>_ms`` with stat in ``mean, p50, p90, p95, p99,
  p99.9, min, max, std`` (and the other percentiles a tool gives):
  ``ttft`` time to first token; ``tpot`` decode time per output token
  **excluding** TTFT, (E2E − TTFT)/(OSL − 1) per request (AIPerf/GenAI-Perf
  ``inter_token_latency``, vLLM/InferenceX ``tpot``, Endpoints ``tpot``);
  ``itl`` gaps between streamed chunks, pooled (vLLM/InferenceX ``itl``, AIPerf
  ``inter_chunk_latency``); ``e2e_latency`` request start to last token;
* interactivity: ``output_tokens_per_s_per_user`` (tokens/s/user) with
  ``tokens_per_s_per_user_statistic`` naming how it was derived:
  ``"mean of per-request 1/TPOT"`` (AIPerf, GenAI-Perf avg), ``"1/p50 TPOT"``
  (InferenceX ``median_intvty``; vLLM, derived here from ``median_tpot_ms``),
  ``"1/p90 TPOT"`` (MLPerf Endpoints ``tps_per_user``). ``1000 / tpot_p50_ms``
  is available for every tool when one statistic is needed across tools.
  AIPerf's per-request distribution is kept as ``output_tokens_per_s_per_user_<stat>``;
* load: ``concurrency_achieved`` (mean requests in flight: AIPerf
  ``effective_concurrency``, vLLM Σ E2E / duration), ``request_rate_per_s``
  (configured; absent = unlimited), ``requests_completed``, ``requests_failed``,
  ``duration_s``;
* workload: ``curve_workload``, ``isl_requested``/``osl_requested`` (tokens, the
  configured means), ``isl_measured``/``osl_measured`` (tokens, measured means),
  ``turns_requested``, ``dataset``;
* model and system: ``model``, ``precision``, ``spec_decoding``,
  ``accelerators_total``, ``accelerator``, ``serving_framework``, ``container_image``;
* provenance: ``tool`` (``"aiperf 0.13.0"``), ``started_at``, ``run_id``, ``upstream_url``;
* everything else a file holds as a number is kept, flattened (``a_b_c``),
  under the tool's own name with the unit appended where the tool states it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from tracker.errors import ParseError
from tracker.records.results import OUTPUT_TOKENS_PER_S, ExtraValue, MetricRecord, ParsedResult

__all__ = [
    "LOAD_AGENTIC",
    "LOAD_CONCURRENCY",
    "LOAD_REQUEST_RATE",
    "MS_PER_UNIT",
    "OUTPUT_TOKENS_PER_S",
    "OUTPUT_TOKENS_PER_S_PER_ACCELERATOR",
    "STAT_INVERSE_P50_TPOT",
    "STAT_INVERSE_P90_TPOT",
    "STAT_MEAN_OF_INVERSE_TPOT",
    "ServingPoint",
    "latency_key",
    "point_results",
    "stat_name",
    "with_accelerators",
]


OUTPUT_TOKENS_PER_S_PER_ACCELERATOR = MetricRecord(
    "output_tokens_per_s_per_accelerator", "tokens/s/accelerator", True
)

LOAD_CONCURRENCY = "concurrency"
LOAD_REQUEST_RATE = "request-rate"
LOAD_AGENTIC = "agentic"

STAT_MEAN_OF_INVERSE_TPOT = "mean of per-request 1/TPOT"
STAT_INVERSE_P50_TPOT = "1/p50 TPOT"
STAT_INVERSE_P90_TPOT = "1/p90 TPOT"

MS_PER_UNIT: Mapping[str, float] = {"ms": 1.0, "sec": 1e3, "s": 1e3, "us": 1e-3, "ns": 1e-6}
"""Milliseconds per one of each time unit the tools write."""

_RATES_PER_ACCELERATOR = ("output_tokens_per_s", "total_tokens_per_s", "input_tokens_per_s")
_MAX_COUNT = 2**31 - 1  # accelerator counts are INTEGER columns
_STAT_ALIASES = {"avg": "mean", "average": "mean", "median": "p50", "std_dev": "std"}


@dataclass(slots=True)
class ServingPoint:
    """One measured point in canonical units, before labels (see the module docstring)."""

    tool: str
    artifact_path: str
    output_tokens_per_s: float
    load_mode: str = LOAD_CONCURRENCY
    concurrency: float | None = None
    request_rate_per_s: float | None = None
    is_valid: bool = True
    line: int | None = None
    model: str | None = None
    precision: str | None = None
    spec_decoding: str | None = None
    isl_requested: float | None = None
    osl_requested: float | None = None
    turns_requested: float | None = None
    dataset: str | None = None
    accelerators_total: int | None = None
    tokens_per_s_per_user: float | None = None
    tokens_per_s_per_user_statistic: str | None = None
    extra: dict[str, ExtraValue] = field(default_factory=dict)


def stat_name(raw: str) -> str:
    """A statistic's canonical name: ``avg`` → ``mean``, ``median``/``"50.0"`` → ``p50``."""
    name = _STAT_ALIASES.get(raw, raw)
    try:
        number = float(name)
    except ValueError:
        return name
    return f"p{_short(number)}"


def latency_key(quantity: str, raw_stat: str) -> str:
    """``latency_key("ttft", "avg")`` → ``"ttft_mean_ms"``."""
    return f"{quantity}_{stat_name(raw_stat)}_ms"


def curve_workload(point: ServingPoint) -> str:
    """The workload without the point: ``isl256-osl64``, or the dataset, then the turns of a
    multi-turn run, the precision and the speculative decoding when the file names them
    (``isl1024-osl1024-fp4-mtp``): InferenceX draws one curve per precision and spec method."""
    if point.isl_requested is not None and point.osl_requested is not None:
        shape = f"isl{_short(point.isl_requested)}-osl{_short(point.osl_requested)}"
    else:
        shape = point.dataset or ""
    if point.turns_requested is not None and point.turns_requested > 1:
        shape = f"{shape}-turns{_short(point.turns_requested)}"
    if point.precision:
        shape = f"{shape}-{point.precision.lower()}"
    if point.spec_decoding and point.spec_decoding.lower() != "none":
        shape = f"{shape}-{point.spec_decoding.lower()}"
    return shape.lstrip("-")


def _point_label(point: ServingPoint) -> str:
    parts = []
    if point.load_mode == LOAD_REQUEST_RATE and point.request_rate_per_s is not None:
        parts.append(f"r{_short(point.request_rate_per_s)}")
    if point.concurrency is not None:
        parts.append(f"c{_short(point.concurrency)}")
    return "-".join(parts)


def point_results(point: ServingPoint) -> list[ParsedResult]:
    """The results of one point: output tokens/s, and per accelerator when the count is known.

    A throughput, concurrency or request rate that is not a finite number ≥ 0,
    or an accelerator count below 1, is a ParseError; secondary values that are
    not finite (NaN written for a statistic without samples, an overflow) are left out.
    """
    _check_point(point)
    curve = curve_workload(point)
    label = _point_label(point)
    workload = "/".join(part for part in (curve, label) if part)
    extra = {**point.extra, **_canonical_extra(point, curve)}
    extra = {k: v for k, v in extra.items() if not isinstance(v, float) or math.isfinite(v)}
    extra.pop("accelerators_total", None)  # set with the per-accelerator figures below
    primary = ParsedResult(
        scenario=point.load_mode,
        metric=OUTPUT_TOKENS_PER_S,
        value=point.output_tokens_per_s,
        is_valid=point.is_valid,
        artifact_path=point.artifact_path,
        line=point.line,
        benchmark=point.model,
        workload=workload,
        concurrency=point.concurrency,
        extra=dict(sorted(extra.items())),
    )
    if point.accelerators_total is None:
        return [primary]
    return with_accelerators([primary], point.accelerators_total)


def _check_point(point: ServingPoint) -> None:
    for name, value in (
        ("output tokens/s", point.output_tokens_per_s),
        ("concurrency", point.concurrency),
        ("request rate", point.request_rate_per_s),
    ):
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise ParseError(
                point.artifact_path,
                f"the {name} is {value!r}, expected a finite number ≥ 0 (a damaged file?)",
                line=point.line,
            )
    count = point.accelerators_total
    if count is not None and not 0 < count <= _MAX_COUNT:
        raise ParseError(
            point.artifact_path,
            f"the accelerator count is {count!r}, expected a whole number ≥ 1 (a damaged file?)",
            line=point.line,
        )


def _canonical_extra(point: ServingPoint, curve: str) -> dict[str, ExtraValue]:
    values: dict[str, ExtraValue | None] = {
        "tool": point.tool,
        "curve_workload": curve,
        "request_rate_per_s": point.request_rate_per_s,
        "model": point.model,
        "precision": point.precision,
        "spec_decoding": point.spec_decoding,
        "isl_requested": point.isl_requested,
        "osl_requested": point.osl_requested,
        "turns_requested": point.turns_requested,
        "dataset": point.dataset,
        "output_tokens_per_s_per_user": point.tokens_per_s_per_user,
        "tokens_per_s_per_user_statistic": (
            point.tokens_per_s_per_user_statistic if point.tokens_per_s_per_user else None
        ),
    }
    return {key: value for key, value in values.items() if value is not None}


def with_accelerators(results: list[ParsedResult], accelerators: int) -> list[ParsedResult]:
    """Add the per-accelerator figures to each point that has no accelerator count yet.

    Used by the parsers when the file gives the count and by the readers with
    ``--accelerators`` otherwise; a point that already has a count keeps it.
    """
    out: list[ParsedResult] = []
    for result in results:
        if result.metric != OUTPUT_TOKENS_PER_S or "accelerators_total" in result.extra:
            out.append(result)
            continue
        extra = {**result.extra, "accelerators_total": accelerators}
        extra["output_tokens_per_s_per_accelerator"] = result.value / accelerators
        for name in _RATES_PER_ACCELERATOR[1:]:
            value = extra.get(name)
            if isinstance(value, int | float) and not isinstance(value, bool):
                extra[f"{name}_per_accelerator"] = value / accelerators
        extra = dict(sorted(extra.items()))
        out.append(replace(result, extra=extra))
        out.append(
            replace(
                result,
                metric=OUTPUT_TOKENS_PER_S_PER_ACCELERATOR,
                value=result.value / accelerators,
                extra=extra,
            )
        )
    return out


def _short(number: float) -> str:
    """``256.0`` → ``"256"``, ``0.5`` → ``"0.5"``, ``99.90`` → ``"99.9"``."""
    return str(int(number)) if number.is_integer() else format(number, ".10g")
