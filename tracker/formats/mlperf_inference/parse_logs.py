"""A published run's files: its LoadGen logs (whichever is present) and its secondary
files (accuracy, compliance audits, power samples).

One view of a published run's LoadGen logs, whichever of the two is present.

The checker reads only ``mlperf_log_detail.txt``. Where a round's copy lacks it
(the fixtures here drop big ones), the summary is the fallback: its labels are
translated to the detail-log keys they print, so the checker's rules
(:mod:`tracker.formats.mlperf_inference.parse`) run unchanged on either. Summary numbers
are rounded for display (Server QPS to 2 decimals), hence the wider tolerance
for summary-only results.

A summary of an accuracy run holds no results: only LoadGen's closing lines
("No warnings encountered during test." ...) or a ``Mode : AccuracyOnly`` line.
It is read as ``effective_test_mode`` ``AccuracyOnly`` so the rules can name
it, rather than refused as no summary at all.

The secondary files of a published result: accuracy, compliance audits, power samples.

* ``accuracy/accuracy.txt``: the checker's ``ACC_PATTERN`` regexes for the
  model's accuracy metrics, matched at the start of each line, the last match
  winning (``accuracy_rouge1``, ``accuracy_map``...). Only accuracy numbers are
  read from ``accuracy/``; performance numbers never are.
* ``TEST0x/verify_*.txt``: ``TEST PASS`` / ``TEST FAIL``, or TEST06's
  ``... check pass: True|False|Skipped`` lines. A failed TEST01 accuracy check
  still passes when the baseline and compliance accuracies agree within the
  checker's delta (1 %, 0.1 % for the 99.9 % variants).
* ``performance/run_1/spl.txt``: the power analyser's samples; the checker's
  power metric is their mean (watts above 0, strictly between ``power_begin``
  and ``power_end``), or energy per query in mJ for the stream scenarios.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import lru_cache

from tracker.errors import ParseError
from tracker.formats.loadgen.parse import Entry, decode_text, parse_summary_log

__all__ = [
    "compliance_outcome",
    "keep_detail_key",
    "parse_accuracy",
    "parse_power_samples",
    "parse_verify",
    "power_metric",
    "summary_as_detail",
]


_KEPT_KEYS = frozenset(
    {
        "loadgen_version",
        "test_datetime",
        "sut_name",
        "num_errors",
        "power_begin",
        "power_end",
        "requested_scenario",
        "requested_use_token_latencies",
        "requested_server_ttft_latency",
        "requested_server_tpot_latency",
        "effective_scenario",
        "effective_test_mode",
        "effective_samples_per_query",
        "effective_target_qps",
        "effective_target_latency_ns",
        "effective_min_duration_ms",
        "effective_min_query_count",
        "effective_performance_sample_count",
    }
)
_KEPT_PREFIXES = ("result_", "early_stopping")
_UNUSED = frozenset(  # text nobody reads, and result_token_throughput is garbage
    {
        "early_stopping_result",
        "early_stopping_ttft_result",
        "early_stopping_tpot_result",
        "result_token_throughput",
        "result_token_throughput_with_loadgen_overhead",
    }
)


@lru_cache(maxsize=4096)  # bounded: a malformed log may hold any number of keys
def keep_detail_key(key: str) -> bool:
    """Whether a detail-log key matters to the primary metric, validity or extras."""
    return key in _KEPT_KEYS or (key.startswith(_KEPT_PREFIXES) and key not in _UNUSED)


_LABELS: Mapping[str, str] = {
    "SUT name": "sut_name",
    "Scenario": "effective_scenario",
    "Mode": "effective_test_mode",
    "Result is": "result_validity",
    "Samples per second": "result_samples_per_second",
    "Tokens per second": "result_tokens_per_second",
    "Tokens per second (inferred)": "result_inferred_tokens_per_second",
    "Completed samples per second": "result_completed_samples_per_sec",
    "Scheduled samples per second": "result_scheduled_samples_per_sec",
    "Completed tokens per second": "result_completed_tokens_per_second",
    "Completed tokens per second (inferred)": "result_inferred_completed_tokens_per_second",
    "Early stopping 90.0th percentile estimate": "early_stopping_latency_ss",
    "Early stopping 99.0th percentile estimate": "early_stopping_latency_ms",
    "QPS w/ loadgen overhead": "result_qps_with_loadgen_overhead",
    "QPS w/o loadgen overhead": "result_qps_without_loadgen_overhead",
    "samples_per_query": "effective_samples_per_query",
    "target_qps": "effective_target_qps",
    "target_latency (ns)": "effective_target_latency_ns",
    "ttft_latency (ns)": "requested_server_ttft_latency",
    "tpot_latency (ns)": "requested_server_tpot_latency",
    "min_duration (ms)": "effective_min_duration_ms",
    "min_query_count": "effective_min_query_count",
    "performance_sample_count": "effective_performance_sample_count",
    "Min First Token latency (ns)": "result_first_token_min_latency_ns",
    "Max First Token latency (ns)": "result_first_token_max_latency_ns",
    "Mean First Token latency (ns)": "result_first_token_mean_latency_ns",
    "Min Time to Output Token (ns)": "result_time_to_output_token_min",
    "Max Time to Output Token (ns)": "result_time_to_output_token_max",
    "Mean Time to Output Token (ns)": "result_time_to_output_token_mean",
    "Min Time per Output Token (ns)": "result_time_to_output_token_min",
    "Max Time per Output Token (ns)": "result_time_to_output_token_max",
    "Mean Time per Output Token (ns)": "result_time_to_output_token_mean",
}
_FLAGS: Mapping[str, str] = {
    "Early stopping satisfied": "early_stopping_met",
    "Min duration satisfied": "result_min_duration_met",
    "Min queries satisfied": "result_min_queries_met",
    "Performance constraints satisfied": "result_perf_constraints_met",
}
_PERCENTILES = (
    (re.compile(r"(\d+\.\d+) percentile latency \(ns\)"), "result_{}_percentile_latency_ns"),
    (
        re.compile(r"(\d+\.\d+) percentile first token latency \(ns\)"),
        "result_first_token_{}_percentile_latency_ns",
    ),
    (
        re.compile(r"(\d+\.\d+) percentile time to output token \(ns\)"),
        "result_time_per_output_token_{}_percentile_ns",
    ),
)
_PLAIN_LATENCIES = {
    "Min latency (ns)": "min",
    "Max latency (ns)": "max",
    "Mean latency (ns)": "mean",
}


def summary_as_detail(data: bytes, *, path: str) -> dict[str, Entry]:
    """A summary log's fields under the detail-log keys they print.

    MultiStream summaries print per-query latencies, which the detail log keeps
    under ``result_*_query_latency_ns`` names; token-latency settings imply
    ``requested_use_token_latencies``. An accuracy run's summary gives only
    ``effective_test_mode`` (``AccuracyOnly``).
    """
    try:
        fields = parse_summary_log(data, path=path)
    except ParseError:
        accuracy = _accuracy_run(data)
        if accuracy is None:
            raise
        return accuracy
    multistream = str(fields["Scenario"].value).strip().lower() == "multistream"
    detail: dict[str, Entry] = {}
    for label, entry in fields.items():
        key = _detail_key(label, multistream=multistream)
        if key is not None and key not in detail:
            detail[key] = entry
        elif label in _FLAGS:
            detail[_FLAGS[label]] = Entry(str(entry.value).lower() == "yes", entry.line)
    if "ttft_latency (ns)" in fields or "Completed tokens per second" in fields:
        detail["requested_use_token_latencies"] = Entry(True, fields["Scenario"].line)
    if "Tokens per second" in fields:
        detail["requested_use_token_latencies"] = Entry(True, fields["Scenario"].line)
    return detail


_CLOSING = re.compile(
    r"(?:no|\d+) (?:warnings?|errors?) encountered(?: during test)?\.?(?: see detailed log\.?)?"
)
_MODE = re.compile(r"\*?\s*mode\s*:\s*accuracyonly", re.IGNORECASE)


def _accuracy_run(data: bytes) -> dict[str, Entry] | None:
    """The fields of an accuracy run's summary (no ``Result is`` line), else ``None``."""
    try:
        lines = [line.strip() for line in data.decode("utf-8").splitlines()]
    except UnicodeDecodeError:
        return None
    for number, line in enumerate(lines, start=1):
        if _MODE.fullmatch(line):
            return {"effective_test_mode": Entry("AccuracyOnly", number)}
    told = [(n, line) for n, line in enumerate(lines, start=1) if line.strip("= ")]
    if told and all(_CLOSING.fullmatch(line.lower()) for _, line in told):
        return {"effective_test_mode": Entry("AccuracyOnly", told[0][0])}
    return None


@lru_cache(maxsize=4096)
def _detail_key(label: str, *, multistream: bool) -> str | None:
    if label in _LABELS:
        return _LABELS[label]
    if label in _PLAIN_LATENCIES:
        word = _PLAIN_LATENCIES[label]
        return f"result_{word}_query_latency_ns" if multistream else f"result_{word}_latency_ns"
    for pattern, template in _PERCENTILES:
        match = pattern.fullmatch(label)
        if match:
            key = template.format(match.group(1))
            if multistream and template.startswith("result_{}_percentile_latency"):
                return key.replace("_latency_ns", "_per_query_latency_ns")
            return key
    return None


_ACC_PATTERN = {
    "acc": r"^(?:\{\"accuracy|accuracy)[\": ]*=?\s*([\d\.]+).*",
    "AUC": r"^AUC=([\d\.]+).*",
    "DLRM_NE": r".*metric/lifetime_ne/rating:\s*([\d\.]+).*",
    "DLRM_ACC": r".*metric/lifetime_accuracy/rating:\s*([\d\.]+).*",
    "DLRM_AUC": r".*metric/lifetime_gauc/rating:\s*([\d\.]+).*",
    "mAP": r".*(?:mAP=|'Total':)\s*([\d.]+)",
    "F1": r"^{[\"\']exact_match[\"\']\:\s*[\d\.]+,\s*[\"\']f1[\"\']\:\s*([\d\.]+)}",
    "ACCURACY": r"Word Error Rate\:.*, accuracy=([0-9\.]+)%",
    "DICE": r"Accuracy\:\s*mean\s*=\s*([\d\.]+).*",
    "ROUGE1": r".*'rouge1':\s+'?([\d.]+)'?.*",
    "ROUGE2": r".*'rouge2':\s+'?([\d.]+)'?.*",
    "ROUGEL": r".*'rougeL':\s+'?([\d.]+)'?.*",
    "ROUGELSUM": r".*'rougeLsum':\s+'?([\d.]+)'?.*",
    "GEN_LEN": r".*'gen_len':\s([\d.]+).*",
    "TOKENS_PER_SAMPLE": r".*'tokens_per_sample':\s([\d.]+).*",
    "CLIP_SCORE": r".*'CLIP_SCORE':\s+'?([\d.]+).*",
    "FID_SCORE": r".*'FID_SCORE':\s+'?([\d.]+).*",
    "gsm8k_accuracy": r".*'gsm8k':\s([\d.]+).*",
    "mbxp_accuracy": r".*'mbxp':\s([\d.]+).*",
    "exact_match": r".*'exact_match':\s([\d.]+).*",
    "vbench_score": r".*'vbench_score':\s([\d.]+).*",
    "F1_HIERARCHICAL": r'\{.*"f1":\s*([\d\.]+).*\}',
}
_PATTERNS = {key: re.compile(pattern) for key, pattern in _ACC_PATTERN.items()}
_MARKERS = {  # text a line must hold for the pattern to match (a cheap test first)
    "acc": "accuracy",
    "AUC": "AUC=",
    "DLRM_NE": "lifetime_ne",
    "DLRM_ACC": "lifetime_accuracy",
    "DLRM_AUC": "lifetime_gauc",
    "mAP": "",
    "F1": "f1",
    "ACCURACY": "Word Error Rate",
    "DICE": "mean",
    "ROUGE1": "'rouge1'",
    "ROUGE2": "'rouge2'",
    "ROUGEL": "'rougeL'",
    "ROUGELSUM": "'rougeLsum'",
    "GEN_LEN": "'gen_len'",
    "TOKENS_PER_SAMPLE": "'tokens_per_sample'",
    "CLIP_SCORE": "'CLIP_SCORE'",
    "FID_SCORE": "'FID_SCORE'",
    "gsm8k_accuracy": "'gsm8k'",
    "mbxp_accuracy": "'mbxp'",
    "exact_match": "'exact_match'",
    "vbench_score": "'vbench_score'",
    "F1_HIERARCHICAL": '"f1"',
}
_LLAMA2 = ("ROUGE1", "ROUGE2", "ROUGEL", "TOKENS_PER_SAMPLE")
_LLAMA31_8B = ("ROUGE1", "ROUGE2", "ROUGEL", "ROUGELSUM", "GEN_LEN")
_MODEL_KEYS: Mapping[str, tuple[str, ...]] = {
    "resnet": ("acc",),
    "retinanet": ("mAP",),
    "bert-99": ("F1",),
    "bert-99.9": ("F1",),
    "dlrm-v2-99": ("AUC",),
    "dlrm-v2-99.9": ("AUC",),
    "3d-unet-99": ("DICE",),
    "3d-unet-99.9": ("DICE",),
    "gptj-99": ("ROUGE1", "ROUGE2", "ROUGEL", "GEN_LEN"),
    "gptj-99.9": ("ROUGE1", "ROUGE2", "ROUGEL", "GEN_LEN"),
    "llama2-70b-99": _LLAMA2,
    "llama2-70b-99.9": _LLAMA2,
    "llama2-70b-interactive-99": _LLAMA2,
    "llama2-70b-interactive-99.9": _LLAMA2,
    "mixtral-8x7b": (*_LLAMA2, "gsm8k_accuracy", "mbxp_accuracy"),
    "llama3.1-405b": ("ROUGEL", "exact_match", "TOKENS_PER_SAMPLE"),
    "llama3.1-8b": _LLAMA31_8B,
    "llama3.1-8b-edge": _LLAMA31_8B,
    "stable-diffusion-xl": ("CLIP_SCORE", "FID_SCORE"),
    "rgat": ("acc",),
    "pointpainting": ("mAP",),
    "deepseek-r1": ("exact_match", "TOKENS_PER_SAMPLE"),
    "whisper": ("ACCURACY",),
    "gpt-oss-120b": ("exact_match",),
    "qwen3-vl-235b-a22b": ("F1_HIERARCHICAL",),
    "dlrm-v3": ("DLRM_NE", "DLRM_ACC", "DLRM_AUC"),
    "yolo-95": ("mAP",),
    "yolo-99": ("mAP",),
    "wan-2.2-t2v-a14b": ("vbench_score",),
}
_SDXL_DELTA_PERCENT = {"CLIP_SCORE": 1.0, "FID_SCORE": 2.0}
_TIME_FORMAT = "%m-%d-%Y %H:%M:%S.%f"


def parse_accuracy(data: bytes, *, path: str, model: str) -> dict[str, float]:
    """The accuracy metrics of an ``accuracy.txt`` (``{"accuracy_rouge1": 44.45, ...}``)."""
    keys = _MODEL_KEYS.get(model, tuple(_PATTERNS))
    found: dict[str, float] = {}
    for line in decode_text(data, path=path).splitlines():
        for key in keys:
            if _MARKERS[key] not in line:
                continue
            match = _PATTERNS[key].match(line)
            if match:
                try:
                    number = float(match.group(1))
                except ValueError:
                    continue
                if math.isfinite(number):  # hundreds of digits overflow to inf
                    found[f"accuracy_{key.lower()}"] = number
    return found


def parse_verify(data: bytes, *, path: str) -> bool | None:
    """A compliance ``verify_*.txt``: passed, failed, or ``None`` when it says neither."""
    text = decode_text(data, path=path)
    if "TEST FAIL" in text:
        return False
    checks = re.findall(r"check pass:\s*(\w+)", text)
    if any(value.lower() == "false" for value in checks):
        return False
    if "TEST PASS" in text or checks:
        return True
    return None


def compliance_outcome(
    verdicts: Sequence[bool | None],
    *,
    model: str,
    baseline: bytes | None = None,
    compliance: bytes | None = None,
    path: str = "",
) -> str | None:
    """``"pass"``, ``"fail"`` or ``None`` for one TEST folder's verify files.

    A failed accuracy check passes when ``baseline`` and ``compliance``
    (``accuracy/baseline_accuracy.txt``, ``compliance_accuracy.txt``) agree
    within the checker's delta.
    """
    if not verdicts or all(v is None for v in verdicts):
        return None
    if all(v is not False for v in verdicts):
        return "pass"
    if baseline is not None and compliance is not None:
        if _within_delta(model, baseline, compliance, path):
            return "pass"
    return "fail"


def _within_delta(model: str, baseline: bytes, compliance: bytes, path: str) -> bool:
    base = parse_accuracy(baseline, path=path, model=model)
    test = parse_accuracy(compliance, path=path, model=model)
    shared = [key for key in base if key in test]
    if not shared:
        return False
    for key in shared:
        if base[key] == 0:
            return False
        delta = abs(base[key] - test[key]) * 100 / abs(base[key])
        if delta > _delta_percent(model, key):
            return False
    return True


def _delta_percent(model: str, key: str) -> float:
    if model == "stable-diffusion-xl":
        return _SDXL_DELTA_PERCENT.get(key.removeprefix("accuracy_").upper(), 1.0)
    return 0.1 if "99.9" in model else 1.0


_STAMP = re.compile(r"(\d\d)-(\d\d)-(\d{4}) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?")


def _sortable(stamp: bytes) -> bytes | None:
    """``%m-%d-%Y %H:%M:%S.%f`` as bytes that sort like the time they name."""
    if len(stamp) == 23 and stamp[19:20] == b"." and stamp[2:3] == stamp[5:6] == b"-":
        s = stamp
        key = s[6:10] + s[0:2] + s[3:5] + s[11:13] + s[14:16] + s[17:19] + s[20:23] + b"000"
        if key.isdigit() and s[10:11] == b" " and s[13:14] == s[16:17] == b":":
            return key  # the analyser's usual millisecond stamps, the fast way
    match = _STAMP.fullmatch(stamp.strip().decode("ascii", "replace"))
    if match is None:
        return None
    month, day, year, hour, minute, second, fraction = match.groups()
    return f"{year}{month}{day}{hour}{minute}{second}{(fraction or '').ljust(6, '0')}".encode()


def parse_power_samples(data: bytes, *, path: str) -> list[tuple[bytes, float]]:
    """The ``(time, watts)`` samples of a power analyser's ``spl.txt``.

    Times are kept as sortable bytes (``YYYYmmddHHMMSSffffff``): a run has
    thousands of samples, and only comparisons are needed.
    """
    samples = []
    for line in data.split(b"\n"):
        if line[:5] != b"Time,":
            continue
        fields = line.split(b",", 4)
        try:
            s = fields[1]
            if len(s) == 23 and s[2:3] == b"-" and s[19:20] == b".":  # the usual stamps
                key = s[6:10] + s[:2] + s[3:5] + s[11:13] + s[14:16] + s[17:19] + s[20:] + b"000"
            else:
                key = _sortable(s) or b""
            watts = float(fields[3])
            if not key.isdigit() or not math.isfinite(watts):
                raise ValueError(s)
            samples.append((key, watts))
        except (IndexError, ValueError):
            number = data[: data.find(line)].count(b"\n") + 1
            raise ParseError(path, "not a power sample line", line=number) from None
    return samples


def power_metric(
    samples: Sequence[tuple[bytes, float]],
    *,
    begin: str,
    end: str,
    scenario: str,
    loadgen_scenario: str,
    query_count: float | None,
    path: str,
) -> tuple[str, float] | None:
    """``("power_w", W)`` or ``("energy_per_query_mj", mJ)`` as the checker computes it.

    ``None`` when no sample falls inside the run (the checker's error case).
    """
    try:
        start, stop = datetime.strptime(begin, _TIME_FORMAT), datetime.strptime(end, _TIME_FORMAT)
    except ValueError:
        raise ParseError(path, f"power window {begin!r}..{end!r} is not a timestamp") from None
    first, last = _sortable(begin.encode()), _sortable(end.encode())
    watts = [w for t, w in samples if first is not None and last is not None and first < t < last]
    watts = [w for w in watts if w > 0]
    if not watts:
        return None
    average = sum(watts) / len(watts)
    if scenario in ("Offline", "Server", "Interactive"):
        return _finite("power_w", average, path)
    if not query_count or query_count < 0:
        raise ParseError(path, "no 'result_query_count' to turn power into energy per query")
    per_query = 8 if (scenario, loadgen_scenario) == ("MultiStream", "SingleStream") else 1
    energy = average * (stop - start).total_seconds() * per_query * 1000 / query_count
    return _finite("energy_per_query_mj", energy, path)


def _finite(name: str, value: float, path: str) -> tuple[str, float]:
    if not math.isfinite(value):  # samples near the largest double overflow their sum
        raise ParseError(path, f"the power samples give {name} {value}: out of range")
    return name, value
