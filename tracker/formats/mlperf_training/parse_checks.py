"""MLPerf Training logs and their checks: the ``:::MLLOG`` lines, the compliance checks
of one run, and the seed check of a folder.

MLPerf logging lines (``:::MLLOG {json}``), as MLPerf Training result files hold them.

Every line that contains ``:::MLLOG `` carries one JSON object after that
token; text before it (a rank prefix such as `` 0: ``) is allowed and other
lines are ignored, as the MLCommons ``mlperf-logging`` package reads them.
The object has ``key``, ``value``, ``time_ms`` and ``metadata`` (``file``,
``lineno``; ``status`` on ``run_stop``; ``epoch_num`` or ``samples_count`` on
evaluations). Lines need not be in ``time_ms`` order.

Parsing is line by line over an iterable of ``bytes`` (a log may be large;
nothing but the lines asked for is kept). A line whose payload is not a JSON
object with a string ``key`` and a numeric ``time_ms`` (a truncated line, a
non-JSON payload) raises :class:`~tracker.errors.ParseError` naming the file
and line.

The compliance checks of one MLPerf Training run, as far as the log alone decides them.

The MLCommons ``mlperf-logging`` compliance checker (``training_<ruleset>/common.yaml``
chaining ``closed_common.yaml`` and ``closed_<benchmark>.yaml``) walks the
``:::MLLOG`` lines in file order. What is repeated here:

* key counts: exactly one ``submission_org``/``_platform``/``_division``/
  ``_benchmark``, ``init_stop``, ``run_start``, ``run_stop``, ``train_samples``,
  ``eval_samples``, ``gradient_accumulation_steps`` and the benchmark's
  hyper-parameters (:data:`BENCHMARK_KEYS`); at least one ``cache_clear``,
  ``init_start``, ``eval_accuracy``, and epoch or block markers;
* order: ``init_start`` before ``init_stop`` before ``run_start`` before ``run_stop``;
* the initialisation limit: ``init_stop`` less than 30 minutes (open: 240)
  after the first ``init_start``, the limit being set by ``submission_division``
  (a log whose division comes after ``init_stop`` fails, as in the package);
* ``run_stop`` carries a ``status`` (its value is not checked);
* the quality target: at least one ``eval_accuracy`` reaches it (:data:`QUALITY_TARGETS`);
* evaluation and epoch lines name an ``epoch_num`` or ``samples_count``.

Skipped, and said so in every ingest's notes (:data:`SKIPPED_CHECKS`) and in
each score's ``extra`` (:data:`NOT_CHECKED`): what needs the submitters' code
(``<submitter>/benchmarks/``, which a results reader never reads; the package
checker's seed check has looked there for seeds a log does not name; its
checks of the logged seeds are below),
the *values* of hyper-parameters (fixed values and formulas in
``closed_<benchmark>.yaml``; only their presence is checked) and the RCP
check (it needs the package's reference convergence points).

The seed check of MLCommons' package checker, over the seeds a folder's runs log.

``mlperf_logging.package_checker.seed_checker`` (4.1.68; closed division)
fails a result folder when a run logs no ``seed`` line, when a seed is not an
integer, or when two runs log the same seed on the same source line
(``metadata.file`` and ``lineno``). It reads nothing but the logs (older
versions also scanned the submitters' code for the word "seed", which a
results reader never has; that part is skipped). A failure does not change
the score, which the result summarizer computes without this check: it is a
note and the score's ``seed_check``.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from tracker.errors import ParseError

__all__ = [
    "ALLOWED_BENCHMARKS",
    "BENCHMARK_KEYS",
    "LogLine",
    "MLLOG_TOKEN",
    "NOT_CHECKED",
    "QUALITY_TARGETS",
    "QualityTarget",
    "RunState",
    "SKIPPED_CHECKS",
    "Seed",
    "check_seeds",
    "iter_mllog",
    "parse_mllog_line",
    "seed_of",
]


MLLOG_TOKEN = b":::MLLOG"
_TOKEN_LENGTH = len(MLLOG_TOKEN)
_MAX_SHOWN = 60
_EMPTY: Mapping[str, Any] = {}
_DECODE = json.JSONDecoder().decode
_NUMBERS = (int, float)


class LogLine(NamedTuple):
    """One ``:::MLLOG`` line: its 1-based line number in the file and its fields.

    (A named tuple: a log has a line per second of power readings, and a tuple
    is the cheapest record to make for each.)
    """

    line: int
    key: str
    value: Any
    time_ms: float
    metadata: Mapping[str, Any]
    event_type: str = ""


def iter_mllog(lines: Iterable[bytes], *, path: str) -> Iterator[LogLine]:
    """Every ``:::MLLOG`` line of a file, in file order; other lines are skipped."""
    for number, raw in enumerate(lines, start=1):
        start = raw.find(MLLOG_TOKEN)
        if start >= 0:
            yield parse_mllog_line(raw[start + _TOKEN_LENGTH :], path=path, line=number)


def parse_mllog_line(payload: bytes, *, path: str, line: int) -> LogLine:
    """The fields of one line, given what follows the ``:::MLLOG`` token."""
    try:
        document = _DECODE(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        reason = f"the :::MLLOG payload is not JSON ({_short(error)}): {_shown(payload)}"
        raise ParseError(path, reason, line=line) from None
    if not isinstance(document, dict):
        raise ParseError(path, "the :::MLLOG payload is not a JSON object", line=line)
    key = document.get("key")
    if not isinstance(key, str) or not key:
        raise ParseError(path, "the :::MLLOG line has no 'key'", line=line)
    time_ms: float = document.get("time_ms")  # type: ignore[assignment]  # checked next
    if type(time_ms) not in _NUMBERS:  # bool is not a number here
        raise ParseError(path, f"the :::MLLOG line {key!r} has no numeric 'time_ms'", line=line)
    if not math.isfinite(time_ms):
        raise ParseError(path, f"the :::MLLOG line {key!r} has a 'time_ms' of {time_ms}", line=line)
    metadata = document.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise ParseError(path, f"the :::MLLOG line {key!r} has a non-object 'metadata'", line=line)
    event = document.get("event_type")
    event = event if isinstance(event, str) else ""
    return LogLine(line, key, document.get("value"), time_ms, metadata or _EMPTY, event)


def _short(error: Exception) -> str:
    text = str(error)
    return text if len(text) <= _MAX_SHOWN else f"{text[:_MAX_SHOWN]}..."


def _shown(payload: bytes) -> str:
    text = payload.strip().decode("utf-8", errors="replace")
    return repr(text if len(text) <= _MAX_SHOWN else f"{text[:_MAX_SHOWN]}...")


NOT_CHECKED = (
    "checks that need the submitters' code (<submitter>/benchmarks/, not read: the seed "
    "check's look for seeds in it), hyper-parameter values (closed_<benchmark>.yaml; presence "
    "only) and the RCP check (reference convergence points)"
)
SKIPPED_CHECKS = f"compliance checked from the logs alone; skipped: {NOT_CHECKED}"
"""The ingest note of every Training source: what the checks leave out."""


@dataclass(frozen=True, slots=True)
class QualityTarget:
    """What an ``eval_accuracy`` value must satisfy (``metric``: stable diffusion's FID/CLIP)."""

    threshold: float
    higher_is_better: bool
    bound: float
    """The other end of the accepted range (1.0 above an accuracy, 0.0 below a loss)."""
    metric: str | None = None

    def reached(self, value: float) -> bool:
        if self.higher_is_better:
            return self.threshold <= value < self.bound
        return self.bound < value <= self.threshold

    def describe(self) -> str:
        sign = ">=" if self.higher_is_better else "<="
        return f"{self.metric or 'eval_accuracy'} {sign} {self.threshold:g}"


QUALITY_TARGETS: Mapping[str, tuple[QualityTarget, ...]] = {
    "bert": (QualityTarget(0.720, True, 1.0),),
    "dlrm_dcnv2": (QualityTarget(0.80275, True, 1.0 + 1e-12),),
    "retinanet": (QualityTarget(0.340, True, 1.0),),
    "rgat": (QualityTarget(0.72, True, 1.0),),
    "llama2_70b_lora": (QualityTarget(0.925, False, 0.0),),
    "llama31_405b": (QualityTarget(5.6, False, 0.0),),
    "llama31_8b": (QualityTarget(3.3, False, 0.0),),
    "flux1": (QualityTarget(0.586, False, 0.0),),
    "stable_diffusion": (
        QualityTarget(90.0, False, 0.0, metric="FID"),
        QualityTarget(0.15, True, math.inf, metric="CLIP"),
    ),
}
"""Closed-division quality targets (the same in rulesets 5.0.0 and 5.1.0)."""

ALLOWED_BENCHMARKS: Mapping[str, frozenset[str]] = {
    "5.0.0": frozenset(
        {"bert", "dlrm_dcnv2", "retinanet", "stable_diffusion", "llama2_70b_lora", "rgat"}
        | {"llama31_405b"}
    ),
    "5.1.0": frozenset(
        {"retinanet", "flux1", "dlrm_dcnv2", "llama31_8b", "rgat", "llama2_70b_lora"}
        | {"llama31_405b"}
    ),
}
"""``submission_benchmark`` values closed_common.yaml accepts, per ruleset."""

_ADAMW = (
    "opt_name",
    "opt_adamw_beta_1",
    "opt_adamw_beta_2",
    "opt_adamw_epsilon",
    "opt_adamw_weight_decay",
    "opt_gradient_clip_norm",
)
_LLAMA31 = (
    *_ADAMW,
    "max_sequence_length",
    "opt_base_learning_rate",
    "opt_end_learning_rate",
    "opt_learning_rate_decay_steps",
    "opt_learning_rate_warmup_steps",
    "opt_learning_rate_decay_schedule",
)
BENCHMARK_KEYS: Mapping[str, tuple[str, ...]] = {
    "bert": (
        "opt_base_learning_rate",
        "opt_lamb_epsilon",
        "opt_learning_rate_training_steps",
        "opt_learning_rate_warmup_steps",
        "num_warmup_steps",
        "start_warmup_step",
        "opt_lamb_beta_1",
        "opt_lamb_beta_2",
        "opt_lamb_weight_decay_rate",
    ),
    "dlrm_dcnv2": (
        "opt_name",
        "opt_base_learning_rate",
        "opt_adagrad_learning_rate_decay",
        "opt_weight_decay",
        "opt_adagrad_initial_accumulator_value",
        "opt_adagrad_epsilon",
        "opt_learning_rate_warmup_steps",
        "opt_learning_rate_decay_start_step",
        "opt_learning_rate_decay_steps",
    ),
    "flux1": (*_ADAMW, "opt_base_learning_rate", "opt_learning_rate_warmup_steps"),
    "llama31_405b": (*_LLAMA31, "init_checkpoint_step"),
    "llama31_8b": _LLAMA31,
    "llama2_70b_lora": ("opt_base_learning_rate",),
    "retinanet": ("opt_name", "opt_base_learning_rate"),
    "rgat": ("opt_name", "opt_base_learning_rate"),
}
"""Hyper-parameters a closed run must log exactly once (besides ``global_batch_size``)."""

_EXACTLY_ONE = (
    "submission_org",
    "submission_platform",
    "submission_division",
    "init_stop",
    "run_start",
    "run_stop",
    "train_samples",
    "eval_samples",
)
_CLOSED_EXACTLY_ONE = ("submission_benchmark", "gradient_accumulation_steps")
_AT_LEAST_ONE = ("cache_clear", "init_start", "eval_accuracy")
_EITHER = (
    ("block_start", "epoch_start"),
    ("block_stop", "epoch_stop"),
    ("eval_start", "block_start"),
    ("eval_stop", "block_stop"),
)
_STEP_KEYS = frozenset({"epoch_start", "epoch_stop", "eval_start", "eval_stop", "eval_accuracy"})
_INIT_LIMIT_MINUTES = {"closed": 30, "open": 240}
_MAX_REASONS = 8


@dataclass(slots=True)
class RunState:
    """The checker's state over one log, fed line by line in file order."""

    benchmark: str
    ruleset: str
    counts: Counter[str] = field(default_factory=Counter)
    reasons: list[str] = field(default_factory=list)
    division: str | None = None
    init_limit_minutes: int = 0
    first_init_start: float = math.inf
    init_stopped: bool = False
    run_started: bool = False
    target_reached: bool = False
    metrics_reached: set[str] = field(default_factory=set)
    best_accuracy: float | None = None

    def feed(self, entry: LogLine) -> None:
        """Apply the checks of one line."""
        key = entry.key
        self.counts[key] += 1
        handler = _HANDLERS.get(key)
        if handler is not None:
            handler(self, entry)
        if key in _STEP_KEYS and not _has_step(entry.metadata):
            self._fail(entry, f"'{key}' names neither epoch_num nor samples_count")

    def finish(self) -> list[str]:
        """Every reason the run fails compliance (empty: it passes what is checked here)."""
        reasons = list(self.reasons)
        closed = self.division != "open"
        exactly = _EXACTLY_ONE + (_CLOSED_EXACTLY_ONE if closed else ())
        benchmark_keys = BENCHMARK_KEYS.get(self.benchmark, ()) if closed else ()
        for key in (*exactly, "global_batch_size", *benchmark_keys):
            if self.counts[key] != 1 and (key != "global_batch_size" or not self.counts[key]):
                reasons.append(f"'{key}' logged {self.counts[key]} times; exactly once required")
        for key in _AT_LEAST_ONE:
            if not self.counts[key]:
                reasons.append(f"no '{key}' logged; at least one required")
        for first, second in _EITHER:
            if not (self.counts[first] or self.counts[second]):
                reasons.append(f"neither '{first}' nor '{second}' logged")
        reasons.extend(self._target_reasons())
        return reasons

    def _target_reasons(self) -> list[str]:
        targets = QUALITY_TARGETS.get(self.benchmark)
        if targets is None or self.division == "open" or not self.counts["eval_accuracy"]:
            return []
        missing = [
            t
            for t in targets
            if not (t.metric in self.metrics_reached if t.metric else self.target_reached)
        ]
        if not missing:
            return []
        wanted = " and ".join(t.describe() for t in missing)
        best = "" if self.best_accuracy is None else f" (best eval_accuracy {self.best_accuracy:g})"
        return [f"quality target not reached: no eval_accuracy with {wanted}{best}"]

    def _fail(self, entry: LogLine, reason: str) -> None:
        if len(self.reasons) < _MAX_REASONS:
            self.reasons.append(f"line {entry.line}: {reason}")

    def _division(self, entry: LogLine) -> None:
        value = entry.value
        if value not in _INIT_LIMIT_MINUTES:
            self._fail(entry, f"submission_division is {value!r}, not closed or open")
            return
        self.division = str(value)
        self.init_limit_minutes = _INIT_LIMIT_MINUTES[self.division]

    def _benchmark(self, entry: LogLine) -> None:
        allowed = ALLOWED_BENCHMARKS.get(self.ruleset)
        if allowed is not None and self.division != "open" and entry.value not in allowed:
            self._fail(entry, f"submission_benchmark {entry.value!r} is not a {self.ruleset} one")

    def _non_empty(self, entry: LogLine) -> None:
        if entry.value == "":
            self._fail(entry, f"'{entry.key}' is empty")

    def _init_start(self, entry: LogLine) -> None:
        if self.init_stopped or self.run_started:
            self._fail(entry, "init_start after init_stop or run_start")
        self.first_init_start = min(self.first_init_start, entry.time_ms)

    def _init_stop(self, entry: LogLine) -> None:
        if math.isinf(self.first_init_start) or self.run_started:
            self._fail(entry, "init_stop without an init_start before it, or after run_start")
        elapsed = entry.time_ms - self.first_init_start
        limit_ms = self.init_limit_minutes * 60 * 1e3
        if not elapsed < limit_ms:
            self._fail(
                entry,
                f"init_stop {elapsed / 60000:.1f} minutes after the first init_start "
                f"(limit {self.init_limit_minutes} minutes)",
            )
        self.init_stopped = True

    def _run_start(self, entry: LogLine) -> None:
        if not self.init_stopped:
            self._fail(entry, "run_start before init_stop")
        self.run_started = True

    def _run_stop(self, entry: LogLine) -> None:
        if not self.run_started:
            self._fail(entry, "run_stop before run_start")
        if "status" not in entry.metadata:
            self._fail(entry, "run_stop has no status")

    def _gradient_steps(self, entry: LogLine) -> None:
        value = entry.value
        if not _number(value) or not value > 0:
            self._fail(entry, f"gradient_accumulation_steps is {value!r}, not > 0")

    def _eval_accuracy(self, entry: LogLine) -> None:
        value = entry.value
        if not _number(value):
            return
        self.best_accuracy = _better(self.best_accuracy, float(value), self.benchmark)
        metric = entry.metadata.get("metric")
        for target in QUALITY_TARGETS.get(self.benchmark, ()):
            if target.metric is not None and target.metric != metric:
                continue
            if not target.reached(float(value)):
                continue
            if target.metric is None:
                self.target_reached = True
            else:
                self.metrics_reached.add(target.metric)


_HANDLERS = {
    "submission_division": RunState._division,
    "submission_benchmark": RunState._benchmark,
    "submission_org": RunState._non_empty,
    "submission_platform": RunState._non_empty,
    "train_samples": RunState._non_empty,
    "eval_samples": RunState._non_empty,
    "init_start": RunState._init_start,
    "init_stop": RunState._init_stop,
    "run_start": RunState._run_start,
    "run_stop": RunState._run_stop,
    "gradient_accumulation_steps": RunState._gradient_steps,
    "eval_accuracy": RunState._eval_accuracy,
}


def _has_step(metadata: Mapping[str, Any]) -> bool:
    return "epoch_num" in metadata or "samples_count" in metadata


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _better(best: float | None, value: float, benchmark: str) -> float:
    targets = QUALITY_TARGETS.get(benchmark)
    higher = targets[0].higher_is_better if targets else True
    if best is None:
        return value
    return max(best, value) if higher else min(best, value)


_MAX_LISTED = 3


class Seed(NamedTuple):
    """One ``seed`` line of a run: where the code logged it, and the value."""

    source: str
    """``metadata.file:lineno`` of the line (the code that logged the seed)."""
    value: int | None
    """``None`` when the value is not an integer."""
    line: int
    shown: str


def seed_of(entry: LogLine) -> Seed:
    """The seed of a ``seed`` line."""
    metadata = entry.metadata
    source = f"{metadata.get('file', '?')}:{metadata.get('lineno', '?')}"
    number: int | None
    try:
        number = int(entry.value)  # as the package converts it: "7" and 7.9 are 7
    except (TypeError, ValueError, OverflowError):
        number = None
    return Seed(source, number, entry.line, repr(entry.value))


def check_seeds(runs: Sequence[tuple[str, Sequence[Seed]]]) -> list[str]:
    """Why a folder's runs ``(file, seeds)`` fail the seed check (empty: they pass)."""
    problems: list[str] = []
    first: dict[tuple[str, int], str] = {}
    for file, seeds in runs:
        if not seeds:
            problems.append(f"{file} logs no seed")
        for seed in seeds:
            if seed.value is None:
                problems.append(f"{file}: line {seed.line}: seed {seed.shown} is not an integer")
                continue
            other = first.setdefault((seed.source, seed.value), file)
            if other != file:
                problems.append(f"{file} logs seed {seed.value} at {seed.source} as {other} does")
    if len(problems) > _MAX_LISTED:
        problems = [*problems[:_MAX_LISTED], f"{len(problems) - _MAX_LISTED} more"]
    return problems
