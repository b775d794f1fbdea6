"""The secondary files of a published result: accuracy, compliance audits, power samples.

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

from tracker.errors import ParseError

__all__ = [
    "compliance_outcome",
    "parse_accuracy",
    "parse_power_samples",
    "parse_verify",
    "power_metric",
]

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


def _text(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ParseError(path, f"not UTF-8 text (byte {error.start})") from None


def parse_accuracy(data: bytes, *, path: str, model: str) -> dict[str, float]:
    """The accuracy metrics of an ``accuracy.txt`` (``{"accuracy_rouge1": 44.45, ...}``)."""
    keys = _MODEL_KEYS.get(model, tuple(_PATTERNS))
    found: dict[str, float] = {}
    for line in _text(data, path).splitlines():
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
    text = _text(data, path)
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
