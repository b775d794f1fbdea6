"""GenAI-Perf summaries (``*_genai_perf.json``) → one serving point each.

Written against the documented structure (llm-serving.md §2; genai-perf
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

from tracker.errors import ParseError
from tracker.parsers.aiperf import PER_USER_TAG, block_extra, primary_rate
from tracker.parsers.json_fields import JsonObject, decode_json, get_mapping, is_number
from tracker.parsers.serving import (
    LOAD_CONCURRENCY,
    LOAD_REQUEST_RATE,
    STAT_MEAN_OF_INVERSE_TPOT,
    ServingPoint,
    point_results,
)
from tracker.records import ParsedResult

__all__ = ["SUMMARY_SUFFIX", "parse_genai_perf_summary"]

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
