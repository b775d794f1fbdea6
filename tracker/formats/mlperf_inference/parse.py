"""An MLPerf Inference result as the submission checker reads it: the primary metric of a
run, the canonical names of benchmarks and scenarios, the scenarios each round accepts.

The primary metric of a published MLPerf Inference result, as the checker computes it.

Follows ``tools/submission/submission_checker`` of ``mlcommons/inference``
(``performance_check.py``, ``constants.py``):

* the benchmark folder is mapped to the official model (exact name, built-in
  aliases such as ``resnet50`` → ``resnet``, the submitter's
  ``model_mapping.json``, then the checker's substring guesses);
* the key is chosen by LoadGen's *effective* scenario (an ``Interactive``
  folder holds a ``Server`` run), with the per-benchmark overrides (tokens/s for
  the LLMs, inferred tokens for gptj, plain p90 latency for llama3.1-8b-edge,
  tokens for whisper Offline);
* SingleStream/MultiStream latencies are ns → ms (wan-2.2 → s);
* a folder scenario that differs from LoadGen's (case-insensitively, Interactive
  ← Server excepted) is an *inferred* result, allowed for edge systems only:
  Offline from SingleStream (QPS without LoadGen overhead), Offline from
  MultiStream (samples per query / mean query latency), MultiStream from
  SingleStream (8 × the early-stopping p99 estimate);
* an accuracy-mode log where the performance run belongs (``effective_test_mode``
  ``AccuracyOnly``) holds no performance number: the result is invalid, with
  the folder's metric and no value of its own (0).

Units are canonical (tokens/s, samples/s, queries/s, ms, s) and every metric
has a direction; the official table's unit label is kept beside it by the reader.

Canonical MLPerf benchmark and scenario names, for series keys across rounds and tables.

Result folders and tables spell the same benchmark and scenario differently:
``offline`` / ``Offline`` (MLCommons-automation submitters use lower-case
folders), ``llama3_1-8b`` / ``llama3.1-8b`` (the checker's built-in aliases).
A result is stored under the canonical spelling, so that one benchmark and
scenario is one series and one page whichever round or table it came from;
the spelling the files use is kept in ``extra`` (:func:`spelling_extra`).

Only spelling is canonical here (case, ``_`` for ``.`` between digits): an
open-division name that a submitter maps to an official model through
``model_mapping.json`` (``llama3_1-405b_pruned``) stays its own benchmark, and so
does ``resnet50`` (a name, not a spelling, of the checker's ``resnet``).

The scenarios the submission checker accepts per model and system type, round by round.

``MODEL_CONFIG[version]`` of ``mlcommons/inference`` lists, per system type
(``datacenter``, ``edge``, ``datacenter,edge``), the required and optional
scenarios of each model: ``tools/submission/submission_checker.py`` for
v4.0/v4.1, ``tools/submission/submission_checker/constants.py`` for
v5.0-v6.0 (``Config.set_type``, ``get_required``, ``get_optional``). In the
closed and network divisions the checker rejects a result whose scenario is
neither required nor optional for its model ("ignoring scenario ... (neither
required nor optional)"; ``Loader.check_scenarios``' unknown scenarios), and
a model the system type does not run at all ("has an invalid model ...,
system_type=..."). The open division is not held to the table, and rounds
whose table is not known here (v6.1 on) are not checked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from tracker.errors import ParseError
from tracker.formats.loadgen.parse import (
    NS_PER_MS,
    P90_LATENCY_MS,
    P99_LATENCY_MS,
    QUERIES_PER_S,
    SAMPLES_PER_S,
    TOKENS_PER_S,
    Entry,
    entry_number,
)
from tracker.records.results import ExtraValue, MetricRecord

__all__ = [
    "LLM_LATENCY_LIMITS_NS",
    "P90_LATENCY_S",
    "P90_PLAIN_LATENCY_MS",
    "PrimaryMetric",
    "TASKS_PER_S",
    "canonical_benchmark",
    "canonical_scenario",
    "folder_scenario",
    "llm_latency_limits_ns",
    "metric_for",
    "mlperf_model",
    "primary_metric",
    "round_key",
    "scenario_reasons",
    "spelling_extra",
]


P90_PLAIN_LATENCY_MS = MetricRecord("p90_latency_ms", "ms", False)
P90_LATENCY_S = MetricRecord("p90_latency_early_stopping_s", "s", False)
TASKS_PER_S = MetricRecord("tasks_per_s", "tasks/s", True)  # e2e-rag-qna (v6.1)

_MS_PER_S = 1000.0
_MIN_DURATION_MS = 600_000
_SCENARIOS = {
    "offline": "Offline",
    "server": "Server",
    "singlestream": "SingleStream",
    "multistream": "MultiStream",
    "interactive": "Interactive",
    "online": "Server",  # v6.1 Endpoints submissions
}
OFFICIAL_MODELS = frozenset(
    (
        "resnet retinanet bert-99 bert-99.9 dlrm-v2-99 dlrm-v2-99.9 dlrm-v3 3d-unet-99 "
        "3d-unet-99.9 gptj-99 gptj-99.9 llama2-70b-99 llama2-70b-99.9 "
        "llama2-70b-interactive-99 llama2-70b-interactive-99.9 llama3.1-8b llama3.1-8b-edge "
        "llama3.1-405b mixtral-8x7b stable-diffusion-xl rgat pointpainting deepseek-r1 "
        "whisper gpt-oss-120b qwen3-vl-235b-a22b wan-2.2-t2v-a14b yolo-95 yolo-99 qwen3.6-27b "
        "e2e-rag-qna e2e-rag-db "
    ).split()
)
_ALIASES = {
    "ssd-resnet34": "retinanet",
    "mobilenet": "resnet",
    "resnet50": "resnet",
    "llama3_1-405b": "llama3.1-405b",
    "llama3_1-8b": "llama3.1-8b",
    "llama3_1-8b-edge": "llama3.1-8b-edge",
}
_TOKENS = {"Offline": "result_tokens_per_second", "Server": "result_completed_tokens_per_second"}
_OVERRIDES: Mapping[str, Mapping[str, str]] = {
    **dict.fromkeys(
        (
            "llama2-70b-99",
            "llama2-70b-99.9",
            "llama2-70b-interactive-99",
            "llama2-70b-interactive-99.9",
            "mixtral-8x7b",
            "llama3.1-405b",
            "llama3.1-8b",
            "deepseek-r1",
            "gpt-oss-120b",
        ),
        _TOKENS,
    ),
    **dict.fromkeys(
        ("gptj-99", "gptj-99.9"),
        {
            "Offline": "result_inferred_tokens_per_second",
            "Server": "result_inferred_completed_tokens_per_second",
        },
    ),
    "llama3.1-8b-edge": {
        "Offline": "result_tokens_per_second",
        "SingleStream": "result_90.00_percentile_latency_ns",
    },
    "whisper": {"Offline": "result_tokens_per_second"},
}
_DEFAULT_KEYS = {
    "Offline": "result_samples_per_second",
    "Server": "result_completed_samples_per_sec",
    "SingleStream": "early_stopping_latency_ss",
    "MultiStream": "early_stopping_latency_ms",
}
_KEY_METRICS = {
    "result_samples_per_second": SAMPLES_PER_S,
    "result_tokens_per_second": TOKENS_PER_S,
    "result_inferred_tokens_per_second": TOKENS_PER_S,
    "result_completed_samples_per_sec": QUERIES_PER_S,
    "result_scheduled_samples_per_sec": QUERIES_PER_S,
    "result_completed_tokens_per_second": TOKENS_PER_S,
    "result_inferred_completed_tokens_per_second": TOKENS_PER_S,
    "early_stopping_latency_ss": P90_LATENCY_MS,
    "early_stopping_latency_ms": P99_LATENCY_MS,
    "result_90.00_percentile_latency_ns": P90_PLAIN_LATENCY_MS,
}
_SECONDS_MODELS = frozenset({"wan-2.2-t2v-a14b"})
LLM_LATENCY_LIMITS_NS: Mapping[str, Mapping[str, tuple[float, float]]] = {
    # The checker's LLM_LATENCY_LIMITS[model][scenario]: (TTFT, TPOT) p99 limits, ns. It
    # looks them up by LoadGen's scenario, so the Server ones hold an Interactive folder's
    # run too (LoadGen says Server); an Endpoints run has no LoadGen scenario: its folder's
    # scenario chooses (:func:`llm_latency_limits_ns`).
    "llama2-70b-99": {"Server": (2000e6, 200e6), "Interactive": (450e6, 40e6)},
    "llama2-70b-99.9": {"Server": (2000e6, 200e6), "Interactive": (450e6, 40e6)},
    "llama2-70b-interactive-99": {"Server": (450e6, 40e6)},
    "llama2-70b-interactive-99.9": {"Server": (450e6, 40e6)},
    "mixtral-8x7b": {"Server": (2000e6, 200e6)},
    "llama3.1-405b": {"Server": (6000e6, 175e6), "Interactive": (4500e6, 80e6)},
    "llama3.1-8b": {"Server": (2000e6, 100e6), "Interactive": (500e6, 30e6)},
    "deepseek-r1": {"Server": (2000e6, 80e6), "Interactive": (1500e6, 15e6)},
    "gpt-oss-120b": {"Server": (3000e6, 80e6), "Interactive": (2000e6, 15e6)},
}


def llm_latency_limits_ns(model: str, scenario: str) -> tuple[float, float] | None:
    """The (TTFT, TPOT) p99 limits, ns, of ``model`` in ``scenario``; ``None``: none."""
    return LLM_LATENCY_LIMITS_NS.get(model, {}).get(scenario)


_INFERABLE = {
    ("SingleStream", "MultiStream"),
    ("SingleStream", "Offline"),
    ("MultiStream", "Offline"),
}


@dataclass(frozen=True, slots=True)
class PrimaryMetric:
    """The official metric of one result, where it came from, and why it is invalid.

    ``measured`` is false for an accuracy-mode log, which holds no performance
    number (``value`` is then 0 and ``invalid_reasons`` says why).
    """

    metric: MetricRecord
    value: float
    key: str
    line: int | None
    loadgen_scenario: str
    inferred: bool
    invalid_reasons: tuple[str, ...]
    measured: bool = True


def folder_scenario(name: str) -> str | None:
    """The scenario a result folder names (case-insensitive), or ``None``."""
    return _SCENARIOS.get(name.strip().lower())


def round_key(label: str) -> tuple[int, int]:
    """``"v5.1"`` → ``(5, 1)``; an unreadable label sorts as the newest round."""
    match = re.fullmatch(r"v?(\d{1,9})\.(\d{1,9})(?:\.\d+)?", label.strip())
    return (int(match.group(1)), int(match.group(2))) if match else (999, 0)


def mlperf_model(folder: str, mapping: Mapping[str, str] | None = None) -> str:
    """The official model of a benchmark folder, as ``Config.get_mlperf_model`` finds it."""
    if folder in OFFICIAL_MODELS:
        return folder
    if folder in _ALIASES:
        return _ALIASES[folder]
    if mapping and isinstance(mapping.get(folder), str):
        return mapping[folder]
    guess = folder
    if "mobilenet" in folder or "efficientnet" in folder or "resnet50" in folder:
        guess = "resnet"
    elif "bert-99.9" in folder:
        guess = "bert-99.9"
    elif "bert-99" in folder:
        guess = "bert-99"
    elif "llama3_1-405b" in folder:
        guess = "llama3.1-405b"
    return _ALIASES.get(guess, guess)


def result_key(model: str, scenario: str, round_: tuple[int, int]) -> str:
    """The detail-log key of the primary metric for a LoadGen scenario."""
    override = _OVERRIDES.get(model, {})
    if scenario == "Server" and round_ < (4, 1):
        if model.startswith("llama2-70b"):
            return "result_completed_samples_per_sec"
        if model not in ("gptj-99", "gptj-99.9"):
            return "result_scheduled_samples_per_sec"
    return override.get(scenario, _DEFAULT_KEYS[scenario])


def metric_for(model: str, scenario: str, round_: tuple[int, int]) -> MetricRecord:
    """The metric a result folder of ``scenario`` is stored under (not inferred)."""
    loadgen = "Server" if scenario == "Interactive" else scenario
    metric = _KEY_METRICS[result_key(model, loadgen, round_)]
    if model == "e2e-rag-qna" and metric is SAMPLES_PER_S:
        return TASKS_PER_S
    return P90_LATENCY_S if metric is P90_LATENCY_MS and model in _SECONDS_MODELS else metric


def primary_metric(
    log: Mapping[str, Entry],
    *,
    model: str,
    scenario: str,
    round_label: str,
    system_type: str,
    path: str,
) -> PrimaryMetric:
    """The official metric of a run whose folder says ``scenario``.

    ``log`` holds detail-log keys (see
    :func:`~tracker.formats.mlperf_inference.parse_logs.summary_as_detail` for a summary log).
    Raises :class:`ParseError` when the log cannot give the metric.
    """
    mode = log.get("effective_test_mode")
    if mode is not None and str(mode.value).strip() == "AccuracyOnly":
        reason = f"{_run_folder(path)} holds an accuracy-mode run"
        return _accuracy_mode(log, model, scenario, round_label, (reason, mode.line))
    loadgen = _loadgen_scenario(log, path=path)
    inferred = loadgen != scenario and (loadgen, scenario) != ("Server", "Interactive")
    reasons = _invalid_reasons(log, model=model, loadgen=loadgen, path=path)
    if inferred:
        value, metric, key = _inferred(log, loadgen=loadgen, scenario=scenario, path=path)
        reasons += _inference_reasons(loadgen, scenario, system_type)
    else:
        key = result_key(model, loadgen, round_key(round_label))
        value = _value(log, key, loadgen, path)
        metric = _KEY_METRICS[key]
        if loadgen in ("SingleStream", "MultiStream"):
            value /= NS_PER_MS
            if model in _SECONDS_MODELS and metric is P90_LATENCY_MS:
                value, metric = value / _MS_PER_S, P90_LATENCY_S
    entry = log.get(key)
    if not (math.isfinite(value) and value >= 0):
        raise ParseError(
            path,
            f"'{key}' gives {value!r} {metric.unit}, not a result ≥ 0",
            line=entry.line if entry is not None else None,
        )
    return PrimaryMetric(
        metric=metric,
        value=value,
        key=key,
        line=entry.line if entry is not None else None,
        loadgen_scenario=loadgen,
        inferred=inferred,
        invalid_reasons=tuple(reasons),
    )


def _loadgen_scenario(log: Mapping[str, Entry], *, path: str) -> str:
    entry = log.get("effective_scenario") or log.get("requested_scenario")
    if entry is None:
        raise ParseError(path, "no 'effective_scenario': is the log complete?")
    scenario = _SCENARIOS.get(str(entry.value).strip().lower())
    if scenario is None or scenario == "Interactive":
        raise ParseError(path, f"unknown LoadGen scenario {entry.value!r}", line=entry.line)
    return scenario


def _accuracy_mode(
    log: Mapping[str, Entry], model: str, scenario: str, round_label: str, why: tuple[str, int]
) -> PrimaryMetric:
    """An invalid result without a value (its line: the mode's): an accuracy run's log."""
    entry = log.get("effective_scenario") or log.get("requested_scenario")
    folder = "Server" if scenario == "Interactive" else scenario
    loadgen = _SCENARIOS.get(str(entry.value).strip().lower(), folder) if entry else folder
    loadgen = "Server" if loadgen == "Interactive" else loadgen
    return PrimaryMetric(
        metric=metric_for(model, scenario, round_key(round_label)),
        value=0.0,
        key=result_key(model, folder, round_key(round_label)),
        line=why[1],
        loadgen_scenario=loadgen,
        inferred=False,
        invalid_reasons=(why[0],),
        measured=False,
    )


def _run_folder(path: str) -> str:
    """``performance/run_1`` for a log in that folder."""
    parts = PurePosixPath(path.replace("\\", "/")).parent.parts
    if len(parts) >= 2 and parts[-2] == "performance":
        return f"performance/{parts[-1]}"
    return "the performance log"


def _required(log: Mapping[str, Entry], key: str, scenario: str, path: str) -> Entry:
    entry = log.get(key)
    if entry is None:
        raise ParseError(path, f"no '{key}' for a {scenario} run: is the log complete?")
    return entry


def _value(log: Mapping[str, Entry], key: str, scenario: str, path: str) -> float:
    return entry_number(_required(log, key, scenario, path), key=key, path=path)


def _inferred(
    log: Mapping[str, Entry], *, loadgen: str, scenario: str, path: str
) -> tuple[float, MetricRecord, str]:
    if (loadgen, scenario) == ("SingleStream", "Offline"):
        key = "result_qps_without_loadgen_overhead"
        return _value(log, key, loadgen, path), SAMPLES_PER_S, key
    if (loadgen, scenario) == ("MultiStream", "Offline"):
        key = "result_mean_query_latency_ns"
        latency_ms = _value(log, key, loadgen, path) / NS_PER_MS
        per_query = _value(log, "effective_samples_per_query", loadgen, path)
        if latency_ms <= 0:
            raise ParseError(path, f"'{key}' is not positive; cannot infer Offline samples/s")
        return per_query * _MS_PER_S / latency_ms, SAMPLES_PER_S, key
    if (loadgen, scenario) == ("SingleStream", "MultiStream"):
        key = "early_stopping_latency_ms"
        return _value(log, key, loadgen, path) * 8 / NS_PER_MS, P99_LATENCY_MS, key
    key = _DEFAULT_KEYS[loadgen]
    metric = _KEY_METRICS[key]
    value = _value(log, key, loadgen, path)
    return (value / NS_PER_MS if metric.unit == "ms" else value), metric, key


def _inference_reasons(loadgen: str, scenario: str, system_type: str) -> list[str]:
    if (loadgen, scenario) not in _INFERABLE:
        return [f"a {scenario} result cannot be inferred from a {loadgen} run"]
    if "edge" not in system_type.lower():
        return [f"{scenario} inferred from {loadgen} is allowed for edge systems only"]
    return []


def _flag(log: Mapping[str, Entry], key: str) -> bool | None:
    entry = log.get(key)
    if entry is None:
        return None
    value = entry.value
    return value if isinstance(value, bool) else str(value).strip().lower() in ("true", "yes")


def _optional_number(log: Mapping[str, Entry], key: str, path: str) -> float | None:
    entry = log.get(key)
    return None if entry is None else entry_number(entry, key=key, path=path)


def _invalid_reasons(log: Mapping[str, Entry], *, model: str, loadgen: str, path: str) -> list[str]:
    reasons: list[str] = []
    validity = log.get("result_validity")
    if validity is None:
        raise ParseError(path, "no 'result_validity': is the log complete?")
    if str(validity.value).strip() != "VALID":
        reasons.append(f"LoadGen says {validity.value}")
    if loadgen != "Offline" and _flag(log, "early_stopping_met") is False:
        reasons.append("early stopping not met")
    duration = _optional_number(log, "effective_min_duration_ms", path)
    if duration is not None and duration < _MIN_DURATION_MS:
        reasons.append(f"min duration {duration:.0f} ms < {_MIN_DURATION_MS} ms")
    limits = llm_latency_limits_ns(model, loadgen)
    if limits is not None:
        reasons += _llm_reasons(log, limits, path)
    return reasons


def _llm_reasons(log: Mapping[str, Entry], limits: tuple[float, float], path: str) -> list[str]:
    ttft_limit, tpot_limit = limits
    ttft = _optional_number(log, "result_first_token_99.00_percentile_latency_ns", path)
    tpot = _optional_number(log, "result_time_per_output_token_99.00_percentile_ns", path)
    reasons = []
    if ttft is not None and ttft >= ttft_limit:
        reasons.append(f"TTFT p99 {ttft / 1e6:.1f} ms ≥ {ttft_limit / 1e6:.0f} ms")
    if tpot is not None and tpot >= tpot_limit:
        reasons.append(f"TPOT p99 {tpot / 1e6:.1f} ms ≥ {tpot_limit / 1e6:.0f} ms")
    return reasons


_DIGIT_UNDERSCORE = re.compile(r"(?<=\d)_(?=\d)")


def canonical_scenario(name: str) -> str:
    """``offline`` → ``Offline``, ``online`` → ``Server``; an unknown name is kept as given."""
    return folder_scenario(name) or name


def canonical_benchmark(name: str) -> str:
    """``llama3_1-8b`` → ``llama3.1-8b``, ``DeepSeek-R1`` → ``deepseek-r1``; others as given."""
    if name in OFFICIAL_MODELS:
        return name
    spelled = _DIGIT_UNDERSCORE.sub(".", name.strip().lower())
    return spelled if spelled in OFFICIAL_MODELS else name


def spelling_extra(benchmark: str, scenario: str) -> dict[str, ExtraValue]:
    """The files' own spellings, where they differ from the canonical names."""
    extra: dict[str, ExtraValue] = {}
    if canonical_benchmark(benchmark) != benchmark:
        extra["benchmark_as_named"] = benchmark
    if canonical_scenario(scenario) != scenario:
        extra["scenario_as_named"] = scenario
    return extra


_NAMES = {
    "O": "Offline",
    "S": "Server",
    "SS": "SingleStream",
    "MS": "MultiStream",
    "I": "Interactive",
}
_Table = Mapping[str, str]
"""Model → its required then optional scenarios, abbreviated (``"SS MS O"``)."""

_V40_DATACENTER: _Table = {
    **dict.fromkeys(("resnet", "retinanet", "rnnt", "bert-99", "bert-99.9"), "S O"),
    **dict.fromkeys(("dlrm-v2-99", "dlrm-v2-99.9", "gptj-99", "gptj-99.9"), "S O"),
    **dict.fromkeys(("llama2-70b-99", "llama2-70b-99.9", "stable-diffusion-xl"), "S O"),
    **dict.fromkeys(("3d-unet-99", "3d-unet-99.9"), "O"),
}
_V40_EDGE: _Table = {
    **dict.fromkeys(("resnet", "retinanet"), "SS MS O"),
    **dict.fromkeys(("rnnt", "bert-99", "3d-unet-99", "3d-unet-99.9"), "SS O"),
    **dict.fromkeys(("gptj-99", "gptj-99.9", "stable-diffusion-xl"), "SS O"),
}
_V40_BOTH: _Table = {
    **dict.fromkeys(("resnet", "retinanet"), "SS O MS S"),
    **dict.fromkeys(("rnnt", "bert-99", "gptj-99", "gptj-99.9"), "SS O S"),
    **dict.fromkeys(("bert-99.9", "dlrm-v2-99", "dlrm-v2-99.9"), "O S"),
    **dict.fromkeys(("3d-unet-99", "3d-unet-99.9"), "SS O"),
    **dict.fromkeys(("llama2-70b-99", "llama2-70b-99.9"), "S O"),
    "stable-diffusion-xl": "SS O S",
}
_V41_DATACENTER: _Table = {
    **{k: v for k, v in _V40_DATACENTER.items() if k != "rnnt"},
    "mixtral-8x7b": "S O",
}
_V41_EDGE: _Table = {k: v for k, v in _V40_EDGE.items() if k != "rnnt"}
_V41_BOTH: _Table = {
    **{k: v for k, v in _V40_BOTH.items() if k != "rnnt"},
    "mixtral-8x7b": "SS S O",
}
_V50_DATACENTER: _Table = {
    **{k: v for k, v in _V41_DATACENTER.items() if not k.startswith("bert")},
    **dict.fromkeys(("llama2-70b-interactive-99", "llama2-70b-interactive-99.9"), "S O"),
    "llama3.1-405b": "S O",
    "rgat": "O",
}
_V50_EDGE: _Table = {**_V41_EDGE, "bert-99.9": "SS O", "pointpainting": "SS"}
_V50_BOTH: _Table = {
    **{k: v for k, v in _V41_BOTH.items() if k != "mixtral-8x7b"},
    **dict.fromkeys(("bert-99", "bert-99.9"), "SS O"),
    **dict.fromkeys(("llama2-70b-interactive-99", "llama2-70b-interactive-99.9"), "S O"),
    **dict.fromkeys(("mixtral-8x7b", "llama3.1-405b"), "S O"),
    "rgat": "O",
    "pointpainting": "SS",
}
_V51_LLM_OPTIONAL: _Table = dict.fromkeys(
    ("llama2-70b-99", "llama2-70b-99.9", "llama3.1-405b", "llama3.1-8b"), "O I S"
)
_V51_DATACENTER: _Table = {
    **dict.fromkeys(("retinanet", "dlrm-v2-99", "dlrm-v2-99.9"), "S O"),
    **dict.fromkeys(("stable-diffusion-xl", "mixtral-8x7b", "deepseek-r1"), "S O"),
    **dict.fromkeys(("3d-unet-99", "3d-unet-99.9", "rgat", "whisper"), "O"),
    **_V51_LLM_OPTIONAL,
}
_V51_EDGE: _Table = {
    **dict.fromkeys(("resnet", "retinanet"), "SS MS O"),
    **dict.fromkeys(("bert-99", "bert-99.9", "3d-unet-99", "3d-unet-99.9"), "SS O"),
    **dict.fromkeys(("llama3.1-8b-edge", "stable-diffusion-xl"), "SS O"),
    "pointpainting": "SS",
    "whisper": "O",
}
_V51_BOTH: _Table = {
    "resnet": "SS MS O S",
    "retinanet": "SS O MS S",
    **dict.fromkeys(("bert-99", "bert-99.9", "3d-unet-99", "3d-unet-99.9"), "SS O"),
    **dict.fromkeys(("dlrm-v2-99", "dlrm-v2-99.9"), "O S"),
    "llama3.1-8b-edge": "SS O",
    "stable-diffusion-xl": "SS O S",
    "mixtral-8x7b": "S O",
    **dict.fromkeys(("rgat", "whisper"), "O"),
    "pointpainting": "SS",
    "deepseek-r1": "SS S O",
    **_V51_LLM_OPTIONAL,
}
_V60_LLM_OPTIONAL: _Table = {
    **_V51_LLM_OPTIONAL,
    **dict.fromkeys(("deepseek-r1", "gpt-oss-120b"), "O I S"),
}
_V60_DATACENTER: _Table = {
    **dict.fromkeys(("dlrm-v3", "mixtral-8x7b", "qwen3-vl-235b-a22b"), "S O"),
    **dict.fromkeys(("3d-unet-99", "3d-unet-99.9", "rgat", "whisper"), "O"),
    "wan-2.2-t2v-a14b": "O SS",
    **_V60_LLM_OPTIONAL,
}
_V60_YOLO: _Table = dict.fromkeys(("yolo-95", "yolo-99"), "SS MS O")
_V60_EDGE: _Table = {**{k: v for k, v in _V51_EDGE.items() if k != "retinanet"}, **_V60_YOLO}
_V60_BOTH: _Table = {
    **{k: v for k, v in _V51_BOTH.items() if not k.startswith("dlrm-v2")},
    "dlrm-v3": "O S",
    **_V60_YOLO,
    **_V60_LLM_OPTIONAL,
    "qwen3-vl-235b-a22b": "O I S",
}
_TABLES: Mapping[tuple[int, int], Mapping[str, _Table]] = {
    (4, 0): {"datacenter": _V40_DATACENTER, "edge": _V40_EDGE, "datacenter,edge": _V40_BOTH},
    (4, 1): {"datacenter": _V41_DATACENTER, "edge": _V41_EDGE, "datacenter,edge": _V41_BOTH},
    (5, 0): {"datacenter": _V50_DATACENTER, "edge": _V50_EDGE, "datacenter,edge": _V50_BOTH},
    (5, 1): {"datacenter": _V51_DATACENTER, "edge": _V51_EDGE, "datacenter,edge": _V51_BOTH},
    (6, 0): {"datacenter": _V60_DATACENTER, "edge": _V60_EDGE, "datacenter,edge": _V60_BOTH},
}
_CHECKED_DIVISIONS = frozenset({"closed", "network"})


def scenario_reasons(
    model: str, scenario: str, *, round_label: str, system_type: str, division: str
) -> list[str]:
    """Why the checker rejects a ``scenario`` result of ``model`` (empty when it does not).

    ``model`` is the official model (:func:`tracker.formats.mlperf_inference.parse.mlperf_model`),
    ``scenario`` the canonical folder scenario (``Interactive`` included) and
    ``system_type`` the system JSON's field (``"datacenter,edge"`` in either order).
    A model the round's table does not name for any system type is not checked.
    """
    tables = _TABLES.get(round_key(round_label))
    kind = _system_kind(system_type)
    if division.strip().lower() not in _CHECKED_DIVISIONS or tables is None or kind is None:
        return []
    allowed = tables[kind].get(model)
    if allowed is None:
        if not any(model in table for table in tables.values()):
            return []  # not a model of the round's table at all (e.g. example data): unchecked
        return [f"{model} is not a {round_label} benchmark for {kind} systems (checker)"]
    names = [_NAMES[s] for s in allowed.split()]
    if scenario in names:
        return []
    return [
        f"scenario {scenario} is not allowed for {model} on {kind} systems "
        f"(checker: allowed {', '.join(names)})"
    ]


def _system_kind(system_type: str) -> str | None:
    """``"datacenter"``, ``"edge"`` or ``"datacenter,edge"``; ``None`` for anything else."""
    parts = frozenset(p.strip().lower() for p in system_type.split(","))
    if parts == {"datacenter", "edge"}:
        return "datacenter,edge"
    return next(iter(parts)) if parts in ({"datacenter"}, {"edge"}) else None
