"""An MLPerf Endpoints result folder of a published round, read as the checker reads it.

From v6.1 a result folder ``results/<system>/<benchmark>/<scenario>/`` may hold
an MLPerf Endpoints run instead of LoadGen logs:
``performance/result_summary.json`` (times in nanoseconds), ``config.yaml``
and ``accuracy/accuracy_results.json``. The submission checker
(``parsers/endpoints_parser.py``) maps the file's fields to LoadGen keys, so
the result is the one a LoadGen result of that benchmark and scenario would
give (:func:`tracker.formats.mlperf_inference.parse.metric_for`):

* tokens/s for the LLMs = the file's ``tps``; samples/s or queries/s otherwise
  = its ``qps``; each is recomputed from the totals over the measurement window
  and a disagreement is reported;
* the window is ``legacy_loadgen_window_duration_ns`` (first issue to the
  completion of the last-issued query, LoadGen's "completed" definition) when
  ``run_config.load_pattern.use_legacy_loadgen_qps_metrics`` is true, else
  ``duration_ns``;
* SingleStream / MultiStream: the early-stopping p90 / p99 of ``latency`` in ms;
* validity from the run's own state and counts, the minimum duration and the
  LLM TTFT/TPOT p99 limits of the folder's scenario.

Accuracy (``average_accuracy``, per-dataset and per-subset scores) and the
TTFT/TPOT/latency percentiles (early-stopping ones too) go into ``extra``.
``config.yaml`` is decoded by the caller (this module imports only the
standard library).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tracker.errors import ParseError
from tracker.formats.loadgen.parse import NS_PER_MS, TOKENS_PER_S
from tracker.formats.mlperf_inference.parse import llm_latency_limits_ns, metric_for, round_key
from tracker.formats.parse_json import JsonObject, decode_json, get_number, is_number
from tracker.formats.serving.parse import stat_name
from tracker.records.results import ExtraValue, MetricRecord

__all__ = [
    "ACCURACY_NAME",
    "CONFIG_NAMES",
    "EndpointsRoundResult",
    "RESULT_SUMMARY",
    "parse_endpoints_accuracy",
    "parse_endpoints_result",
]


RESULT_SUMMARY = "performance/result_summary.json"
ACCURACY_NAME = "accuracy/accuracy_results.json"
CONFIG_NAMES = ("config.yaml", "config.yml")

_MIN_DURATION_NS = 600e9  # TEST_DURATION_MS
_AGREEMENT = 1e-4
_LEGACY = "legacy_loadgen_window_duration_ns"
_BLOCKS = {"ttft": "ttft", "tpot": "tpot", "latency": "e2e_latency"}
_NAME = re.compile(r"[^0-9a-z]+")


@dataclass(frozen=True, slots=True)
class EndpointsRoundResult:
    """The official metric of one Endpoints result, why it is invalid, and its extras."""

    metric: MetricRecord
    value: float
    """The official value, in the metric's unit."""
    key: str
    """The file's field the value is (``tps``, ``qps``), or how it was computed."""
    invalid_reasons: tuple[str, ...]
    disagreements: tuple[str, ...]
    """Where the file's own figures disagree with what its samples give."""
    extra: dict[str, ExtraValue] = field(default_factory=dict)


def parse_endpoints_result(
    summary: bytes,
    *,
    path: str,
    model: str,
    scenario: str,
    round_label: str,
    config: Mapping[str, Any] | None = None,
) -> EndpointsRoundResult:
    """The result of ``performance/result_summary.json`` in a ``scenario`` folder of ``model``."""
    doc = decode_json(summary, path=path)
    if not isinstance(doc, Mapping):
        raise ParseError(path, "not an Endpoints result summary: not a JSON object")
    issued = _count(doc, "n_samples_issued", path)
    completed = _count(doc, "n_samples_completed", path)
    duration_ns = get_number(doc, "duration_ns", path=path, field="duration_ns")
    assert duration_ns is not None
    if duration_ns < 1:
        raise ParseError(path, f"field 'duration_ns' is {duration_ns!r}, expected ≥ 1")
    window_ns, window = _window(doc, path)
    metric = metric_for(model, scenario, round_key(round_label))
    extra: dict[str, ExtraValue] = {
        "duration_s": duration_ns / 1e9,
        "measurement_window_s": window_ns / 1e9,
        "measurement_window": window,
        "requests_issued": issued,
        "requests_completed": completed,
    }
    disagreements: list[str] = []
    if metric.unit in ("ms", "s"):
        value, key = _latency(doc, scenario, path)
    else:
        value, key = _throughput(doc, metric, completed, window_ns, path, extra, disagreements)
    extra.update(_blocks(doc, path))
    extra.update(_run_facts(doc, config))
    reasons = _reasons(doc, issued, completed, duration_ns, model, scenario, extra)
    return EndpointsRoundResult(
        metric=metric,
        value=value,
        key=key,
        invalid_reasons=tuple(reasons),
        disagreements=tuple(disagreements),
        extra=extra,
    )


def _count(doc: JsonObject, key: str, path: str) -> int:
    number = get_number(doc, key, path=path, field=key)
    assert number is not None
    if number < 0 or not number.is_integer():
        raise ParseError(path, f"field '{key}' is {number!r}, expected a whole number ≥ 0")
    return int(number)


def _window(doc: JsonObject, path: str) -> tuple[float, str]:
    """The measurement window in ns and what it is, as the checker takes it."""
    config = doc.get("run_config")
    pattern = config.get("load_pattern") if isinstance(config, Mapping) else None
    legacy = isinstance(pattern, Mapping) and pattern.get("use_legacy_loadgen_qps_metrics") is True
    window = get_number(doc, _LEGACY, path=path, field=_LEGACY, required=False)
    if legacy and window is not None and window >= 1:
        return window, "legacy LoadGen window"
    duration = get_number(doc, "duration_ns", path=path, field="duration_ns")
    assert duration is not None
    return duration, "whole run"


def _throughput(
    doc: JsonObject,
    metric: MetricRecord,
    completed: int,
    window_ns: float,
    path: str,
    extra: dict[str, ExtraValue],
    disagreements: list[str],
) -> tuple[float, str]:
    tokens = metric is TOKENS_PER_S
    key = "tps" if tokens else "qps"
    if tokens:
        block = doc.get("output_sequence_lengths")
        total = block.get("total") if isinstance(block, Mapping) else None
        counted = float(total) if is_number(total) else None
    else:
        counted = float(completed)
    recomputed = None if counted is None else counted / (window_ns / 1e9)
    own = doc.get(key)
    if is_number(own):
        value = float(own)
        extra[f"{metric.name}_from_totals"] = recomputed if recomputed is not None else "n/a"
        if recomputed is not None and abs(recomputed - value) > _AGREEMENT * max(value, 1e-12):
            disagreements.append(
                f"its '{key}' {value:.6g} and its totals over the "
                f"{extra['measurement_window']} ({recomputed:.6g}) disagree"
            )
    elif recomputed is not None:
        value, key = recomputed, f"{'output tokens' if tokens else 'completed samples'} / window"
    else:
        raise ParseError(path, f"no '{key}' and no totals to compute {metric.unit} from")
    if value < 0:
        raise ParseError(path, f"field '{key}' is {value!r}, not a result ≥ 0")
    return value, key


def _latency(doc: JsonObject, scenario: str, path: str) -> tuple[float, str]:
    block = doc.get("latency")
    percentile = "90.0" if scenario == "SingleStream" else "99.0"
    for group in ("early_stopping_percentiles", "percentiles"):
        values = block.get(group) if isinstance(block, Mapping) else None
        for key in (percentile, percentile.removesuffix(".0")):
            found = values.get(key) if isinstance(values, Mapping) else None
            if is_number(found) and found >= 0:
                metric_ms = float(found) / NS_PER_MS
                return metric_ms, f"latency.{group}.{key}"
    raise ParseError(path, f"no 'latency' p{percentile.removesuffix('.0')} for a {scenario} run")


def _blocks(doc: JsonObject, path: str) -> dict[str, ExtraValue]:
    extra: dict[str, ExtraValue] = {}
    for key, quantity in _BLOCKS.items():
        block = doc.get(key)
        if not isinstance(block, Mapping):
            continue
        for group, infix in (
            ("percentiles", ""),
            ("early_stopping_percentiles", "early_stopping_"),
        ):
            values = block.get(group)
            for stat, number in values.items() if isinstance(values, Mapping) else ():
                if is_number(number):
                    extra[f"{quantity}_{infix}{stat_name(str(stat))}_ms"] = number / NS_PER_MS
        for stat in ("min", "max", "median", "avg", "std_dev"):
            number = get_number(block, stat, path=path, field=f"{key}.{stat}", required=False)
            if number is not None:
                extra.setdefault(f"{quantity}_{stat_name(stat)}_ms", number / NS_PER_MS)
    lengths = doc.get("output_sequence_lengths")
    if isinstance(lengths, Mapping) and is_number(lengths.get("avg")):
        extra["osl_measured"] = float(lengths["avg"])
    return extra


def _run_facts(doc: JsonObject, config: Mapping[str, Any] | None) -> dict[str, ExtraValue]:
    facts: dict[str, ExtraValue] = {}
    for key, name in (("qps", "queries_per_s_file"), ("tps", "tokens_per_s_file")):
        if is_number(doc.get(key)):
            facts[name] = float(doc[key])
    if isinstance(doc.get("version"), str):
        facts["endpoints_version"] = doc["version"]
    if is_number(doc.get("n_samples_failed")):
        facts["requests_failed"] = doc["n_samples_failed"]
    run = doc.get("run_config")
    pattern = run.get("load_pattern") if isinstance(run, Mapping) else None
    if isinstance(pattern, Mapping):
        if isinstance(pattern.get("type"), str):
            facts["load_pattern"] = pattern["type"]
        if is_number(pattern.get("target_qps")):
            facts["target_qps"] = float(pattern["target_qps"])
    if config:
        params = config.get("model_params")
        weights = params.get("name") if isinstance(params, Mapping) else None
        if isinstance(weights, str) and weights.strip():
            # the submitter's own path to the weights: only its last part names the model
            facts["model_name"] = weights.strip().rstrip("/").rsplit("/", 1)[-1]
        for key in ("name", "type"):
            if isinstance(config.get(key), str):
                facts[f"endpoints_config_{key}"] = config[key]
    return facts


def _reasons(
    doc: JsonObject,
    issued: int,
    completed: int,
    duration_ns: float,
    model: str,
    scenario: str,
    extra: Mapping[str, ExtraValue],
) -> list[str]:
    reasons: list[str] = []
    state = doc.get("state", "complete")
    if state != "complete" or doc.get("complete") is False:
        reasons.append(f"the run did not complete (state {state!r})")
    failed = doc.get("n_samples_failed")
    if is_number(failed) and failed > 0:
        reasons.append(f"{failed:g} samples failed")
    if completed < issued:
        reasons.append(f"{completed} of {issued} samples completed")
    if duration_ns < _MIN_DURATION_NS:
        reasons.append(f"min duration {duration_ns / 1e6:.0f} ms < {_MIN_DURATION_NS / 1e6:.0f} ms")
    limits = llm_latency_limits_ns(model, scenario)
    if limits is not None:
        for quantity, limit in zip(("ttft", "tpot"), limits, strict=True):
            measured = extra.get(
                f"{quantity}_early_stopping_p99_ms", extra.get(f"{quantity}_p99_ms")
            )
            if isinstance(measured, float) and measured >= limit / NS_PER_MS:
                reasons.append(
                    f"{quantity.upper()} p99 {measured:.1f} ms ≥ {limit / NS_PER_MS:.0f} ms"
                )
    return reasons


def parse_endpoints_accuracy(data: bytes, *, path: str) -> dict[str, ExtraValue]:
    """``accuracy/accuracy_results.json`` → ``accuracy`` (the average) and per-dataset scores."""
    doc = decode_json(data, path=path)
    if not isinstance(doc, Mapping):
        raise ParseError(path, "not an Endpoints accuracy file: not a JSON object")
    found: dict[str, ExtraValue] = {}
    datasets: list[float] = []
    scores = doc.get("accuracy_scores")
    for entry in scores if isinstance(scores, list) else ():
        if not isinstance(entry, Mapping) or not is_number(entry.get("score")):
            continue
        name = _clean(entry.get("dataset_name")) or "dataset"
        found[f"accuracy_{name}"] = float(entry["score"])
        datasets.append(float(entry["score"]))
        if is_number(entry.get("total_samples")):
            found[f"accuracy_{name}_samples"] = entry["total_samples"]
        breakdown = entry.get("breakdown")
        subsets = breakdown.get("subset_scores") if isinstance(breakdown, Mapping) else None
        for subset, score in subsets.items() if isinstance(subsets, Mapping) else ():
            if is_number(score) and _clean(subset):
                found[f"accuracy_{name}_{_clean(subset)}"] = float(score)
    if is_number(doc.get("average_accuracy")):
        found["accuracy"] = float(doc["average_accuracy"])
    elif len(datasets) == 1:
        found["accuracy"] = datasets[0]
    return found


def _clean(name: object) -> str:
    return _NAME.sub("_", name.lower()).strip("_")[:60] if isinstance(name, str) else ""
