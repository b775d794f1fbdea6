"""MLPerf Training logs and their checks: the ``:::MLLOG`` lines, the rule tables of the
package's checkers per ruleset, the compliance checks of one run, and the seed check of a
folder.

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

The rule tables of MLCommons' MLPerf Training checkers, per ruleset, with their source.

Every table in this module is transcribed by hand from ``mlperf-logging`` 4.1.68 (:data:`PACKAGE`)
and says which file it comes from:

* the compliance checker's keys (:class:`Ruleset`): ``compliance_checker/training_<ruleset>/``
  ``common.yaml`` (every run), ``closed_common.yaml`` (closed division) and
  ``closed_<benchmark>.yaml`` (:class:`BenchmarkRules`). Only what a key must be
  logged (exactly once, at least once) and the quality target are repeated, not the
  hyper-parameter *values* those files also check;
* the RCP checker's samples (or epochs) to converge (:func:`rcp_step_unit`):
  ``rcp_checker/rcp_checker.py``, ``read_submission_file``.

Two rulesets are tabled, 5.0.0 and 5.1.0. They differ in what they ask of every run:
the 5.0.0 ``common.yaml`` does not list ``submission_org`` and ``submission_platform``
(4.1.0, 5.1.0 and 6.0.0 require each exactly once, not empty), and in the benchmarks
``closed_common.yaml`` accepts. Another ruleset is checked with the tabled one nearest
below it (5.0.0 for older ones), and the reader says so.

The compliance checks of one MLPerf Training run, as far as the log alone decides them.

The MLCommons ``mlperf-logging`` compliance checker (``training_<ruleset>/common.yaml``
chaining ``closed_common.yaml`` and ``closed_<benchmark>.yaml``) walks the
``:::MLLOG`` lines in file order. What is repeated here, with the rules of the run's
ruleset (the rule tables below, which cite the files they come from):

* key counts: the keys a ruleset requires exactly once (``submission_division``,
  ``init_stop``, ``run_start``, ``run_stop``, ``train_samples``, ``eval_samples``;
  ``submission_org`` and ``submission_platform`` from 5.1.0 on; for closed runs
  ``submission_benchmark``, ``gradient_accumulation_steps`` and the benchmark's
  hyper-parameters). As in the package, such a key logged more than once with the
  same value every time (one line per GPU rank) is a warning, not a failure
  (:meth:`RunState.warnings`); with different values it fails, naming the key and
  the values. At least one ``cache_clear``, ``init_start``, ``eval_accuracy``, and
  epoch or block markers;
* order: ``init_start`` before ``init_stop`` before ``run_start`` before
  ``run_stop``, ``block_start`` after ``run_start`` (checked on every line, so a
  second ``run_start`` is only a repeat);
* the initialisation limit: ``init_stop`` less than 30 minutes (open: 240)
  after the first ``init_start``, the limit being set by ``submission_division``
  (a log whose division comes after ``init_stop`` fails, as in the package);
* ``run_stop`` carries a ``status`` (its value is not checked);
* the quality target: at least one ``eval_accuracy`` reaches it; for stable
  diffusion FID and CLIP are joined per ``samples_count`` and one evaluation must
  pass both, with at least two evaluations each logging both;
* evaluation, epoch and block lines name their step (``epoch_num`` or
  ``samples_count``; the benchmark's own key where its file asks for one).

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
from typing import Any, NamedTuple, TypeGuard

from tracker.errors import ParseError

__all__ = [
    "is_numeric",
    "BENCHMARK_RULES",
    "MLLOG_TOKEN",
    "NOT_CHECKED",
    "PACKAGE",
    "RULESETS",
    "SD_CLIP_MIN",
    "SD_FID_MAX",
    "SKIPPED_CHECKS",
    "BenchmarkRules",
    "LogLine",
    "QualityTarget",
    "Ruleset",
    "RunState",
    "Seed",
    "check_seeds",
    "iter_mllog",
    "parse_mllog_line",
    "rcp_step_unit",
    "rules_for",
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


PACKAGE = "mlperf-logging 4.1.68"
"""The package whose rule files the tables below transcribe."""


@dataclass(frozen=True, slots=True)
class QualityTarget:
    """What an ``eval_accuracy`` value must satisfy (``metric``: stable diffusion's FID/CLIP).

    The accepted range runs from ``threshold`` (inclusive) to ``bound`` (inclusive
    when ``bound_inclusive``), upwards when ``higher_is_better``.
    """

    threshold: float
    higher_is_better: bool
    bound: float
    """The other end of the accepted range (1.0 above an accuracy, 0.0 below a loss)."""
    metric: str | None = None
    bound_inclusive: bool = False

    def reached(self, value: float) -> bool:
        inside = value <= self.bound if self.higher_is_better else self.bound <= value
        if not self.bound_inclusive:
            inside = inside and value != self.bound
        if self.higher_is_better:
            return self.threshold <= value and inside
        return value <= self.threshold and inside

    def describe(self) -> str:
        sign = ">=" if self.higher_is_better else "<="
        return f"{self.metric or 'eval_accuracy'} {sign} {self.threshold:g}"


@dataclass(frozen=True, slots=True)
class BenchmarkRules:
    """What ``closed_<benchmark>.yaml`` asks of a closed run, besides the common keys."""

    exactly_one: tuple[str, ...]
    at_least_one: tuple[str, ...]
    targets: tuple[QualityTarget, ...]
    """At least one evaluation must reach them all (stable diffusion: at one ``samples_count``)."""
    eval_step: str | None
    """The metadata key each ``eval_accuracy`` must name (``None``: ``epoch_num`` or
    ``samples_count``, as ``common.yaml`` asks)."""
    paired_metrics: bool = False
    """Stable diffusion: FID and CLIP lines are joined per ``samples_count``; at least two
    such evaluations, each with both metrics (the file's ``aggregated_eval_accuracy``)."""


_ADAMW = ("opt_adamw_beta_1", "opt_adamw_beta_2", "opt_adamw_epsilon", "opt_adamw_weight_decay")
_LLAMA31 = (
    "global_batch_size",
    "max_sequence_length",
    "opt_name",
    "opt_base_learning_rate",
    "opt_end_learning_rate",
    "opt_learning_rate_warmup_steps",
    "opt_learning_rate_decay_steps",
    "opt_learning_rate_decay_schedule",
    *_ADAMW,
    "opt_gradient_clip_norm",
    "gradient_accumulation_steps",
    "eval_samples",
)


def _accuracy(threshold: float, *, bound_inclusive: bool = False) -> tuple[QualityTarget, ...]:
    return (QualityTarget(threshold, True, 1.0, bound_inclusive=bound_inclusive),)


def _loss(threshold: float) -> tuple[QualityTarget, ...]:
    return (QualityTarget(threshold, False, 0.0),)


BENCHMARK_RULES: Mapping[str, BenchmarkRules] = {
    # closed_bert.yaml (5.0.0 = 5.1.0)
    "bert": BenchmarkRules(
        (
            "global_batch_size",
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
        (),
        _accuracy(0.720),
        "epoch_num",
    ),
    # closed_dlrm_dcnv2.yaml (5.0.0 = 5.1.0)
    "dlrm_dcnv2": BenchmarkRules(
        (
            "global_batch_size",
            "opt_name",
            "opt_base_learning_rate",
            "opt_adagrad_learning_rate_decay",
            "opt_weight_decay",
            "opt_adagrad_initial_accumulator_value",
            "opt_adagrad_epsilon",
            "opt_learning_rate_warmup_steps",
            "opt_learning_rate_decay_start_step",
            "opt_learning_rate_decay_steps",
            "eval_samples",
        ),
        (),
        _accuracy(0.80275, bound_inclusive=True),
        "epoch_num",
    ),
    # closed_flux1.yaml (5.1.0)
    "flux1": BenchmarkRules(
        (
            "evaluation_frequency",
            "opt_name",
            *_ADAMW,
            "opt_base_learning_rate",
            "opt_learning_rate_warmup_steps",
            "opt_gradient_clip_norm",
        ),
        ("global_batch_size",),
        _loss(0.586),
        "samples_count",
    ),
    # closed_llama2_70b_lora.yaml (5.0.0 = 5.1.0)
    "llama2_70b_lora": BenchmarkRules(
        (
            "global_batch_size",
            "opt_base_learning_rate",
            "opt_learning_rate_training_steps",
            "opt_gradient_clip_norm",
            "opt_adamw_weight_decay",
            "gradient_accumulation_steps",
            "lora_alpha",
            "lora_rank",
        ),
        (),
        _loss(0.925),
        "samples_count",
    ),
    # closed_llama31_405b.yaml (5.0.0 and 5.1.0: the same keys, values checked differently)
    "llama31_405b": BenchmarkRules(
        (*_LLAMA31, "init_checkpoint_step"), (), _loss(5.6), "samples_count"
    ),
    # closed_llama31_8b.yaml (5.1.0)
    "llama31_8b": BenchmarkRules((*_LLAMA31, "max_steps"), (), _loss(3.3), "samples_count"),
    # closed_retinanet.yaml (5.0.0 = 5.1.0)
    "retinanet": BenchmarkRules(
        (
            "global_batch_size",
            "opt_name",
            "opt_base_learning_rate",
            "opt_weight_decay",
            "opt_learning_rate_warmup_epochs",
            "opt_learning_rate_warmup_factor",
        ),
        (),
        _accuracy(0.340),
        "epoch_num",
    ),
    # closed_rgat.yaml (5.0.0 = 5.1.0)
    "rgat": BenchmarkRules(
        ("global_batch_size", "opt_name", "opt_base_learning_rate"),
        (),
        _accuracy(0.72),
        "epoch_num",
    ),
    # closed_stable_diffusion.yaml (5.0.0)
    "stable_diffusion": BenchmarkRules(
        (
            "opt_name",
            *_ADAMW,
            "opt_base_learning_rate",
            "opt_learning_rate_warmup_steps",
        ),
        ("global_batch_size",),
        (
            QualityTarget(90.0, False, 0.0, metric="FID", bound_inclusive=True),
            QualityTarget(0.15, True, 1.0, metric="CLIP", bound_inclusive=True),
        ),
        None,
        paired_metrics=True,
    ),
}
"""Per benchmark, what its ``closed_<benchmark>.yaml`` requires (keys and quality target)."""


@dataclass(frozen=True, slots=True)
class Ruleset:
    """The compliance rules of one ruleset (``training_<version>/``)."""

    version: str
    exactly_one: tuple[str, ...]
    """``common.yaml``: keys every run logs exactly once."""
    not_empty: tuple[str, ...]
    """``common.yaml``: keys whose value must not be the empty string."""
    closed_benchmarks: frozenset[str]
    """``closed_common.yaml``: the ``submission_benchmark`` values it accepts."""
    closed_exactly_one: tuple[str, ...] = ("submission_benchmark", "gradient_accumulation_steps")
    """``closed_common.yaml``: keys a closed run logs exactly once."""
    at_least_one: tuple[str, ...] = ("cache_clear", "init_start", "eval_accuracy")
    """``common.yaml``: keys every run logs at least once."""

    @property
    def source(self) -> str:
        """Where the rules come from: ``mlperf-logging 4.1.68, .../training_5.1.0/``."""
        return f"{PACKAGE}, compliance_checker/training_{self.version}/"


_RUN_KEYS = ("init_stop", "run_start", "run_stop", "train_samples", "eval_samples")
RULESETS: Mapping[str, Ruleset] = {
    "5.0.0": Ruleset(
        "5.0.0",
        exactly_one=("submission_division", *_RUN_KEYS),
        not_empty=("train_samples", "eval_samples"),
        closed_benchmarks=frozenset(
            {"retinanet", "stable_diffusion", "dlrm_dcnv2", "bert", "rgat", "llama2_70b_lora"}
            | {"llama31_405b"}
        ),
    ),
    "5.1.0": Ruleset(
        "5.1.0",
        exactly_one=("submission_org", "submission_platform", "submission_division", *_RUN_KEYS),
        not_empty=("submission_org", "submission_platform", "train_samples", "eval_samples"),
        closed_benchmarks=frozenset(
            {"retinanet", "flux1", "dlrm_dcnv2", "llama31_8b", "rgat", "llama2_70b_lora"}
            | {"llama31_405b"}
        ),
    ),
}
"""The tabled rulesets (``common.yaml`` and ``closed_common.yaml`` of each)."""


def rules_for(ruleset: str) -> tuple[Ruleset, bool]:
    """The rules a run of ``ruleset`` is checked with, and whether they are its own.

    An untabled ruleset gets the tabled one nearest below it (the oldest for older ones).
    """
    found = RULESETS.get(ruleset)
    if found is not None:
        return found, True
    key = _version_key(ruleset)
    below = [name for name in RULESETS if _version_key(name) <= key]
    chosen = max(below, key=_version_key) if below else min(RULESETS, key=_version_key)
    return RULESETS[chosen], False


def _version_key(version: str) -> tuple[int, ...]:
    parts = []
    for part in version.split("."):
        digits = "".join(c for c in part if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


_SAMPLES_COUNT = frozenset(
    {
        "llama2_70b_lora",
        "flux1",
        "llama31_405b",
        "llama31_8b",
        "gpt_oss_20b",
        "deepseekv3_671b",
        "qwen35_397b_grpo",
        "dlrmv4",
    }
)


def rcp_step_unit(benchmark: str, ruleset: str) -> str:
    """The metadata key the RCP checker reads a run's convergence step from.

    ``rcp_checker.read_submission_file`` (:data:`PACKAGE`): ``samples_count`` of the
    last evaluation before ``run_stop`` for the language models and flux1; for
    stable diffusion the smallest ``samples_count`` (``step_num`` in ruleset 3.1.0)
    at which FID and CLIP both pass; ``epoch_num`` (rounded to 3 decimals) of the
    last evaluation for every other benchmark.
    """
    if benchmark == "stable_diffusion":
        return "step_num" if ruleset == "3.1.0" else "samples_count"
    return "samples_count" if benchmark in _SAMPLES_COUNT else "epoch_num"


SD_FID_MAX = 90.0
SD_CLIP_MIN = 0.15
"""The stable diffusion convergence criteria the RCP checker hard-codes."""


NOT_CHECKED = (
    "checks that need the submitters' code (<submitter>/benchmarks/, not read: the seed "
    "check's look for seeds in it), hyper-parameter values (closed_<benchmark>.yaml; presence "
    "only) and the RCP check (reference convergence points)"
)
SKIPPED_CHECKS = f"compliance checked from the logs alone; skipped: {NOT_CHECKED}"
"""The ingest note of every Training source: what the checks leave out."""

_EITHER = (
    ("block_start", "epoch_start"),
    ("block_stop", "epoch_stop"),
    ("eval_start", "block_start"),
    ("eval_stop", "block_stop"),
)
_STEP_KEYS = frozenset({"epoch_start", "epoch_stop", "eval_start", "eval_stop"})
_INIT_LIMIT_MINUTES = {"closed": 30, "open": 240}
_MAX_REASONS = 8
_MAX_VALUES = 3


@dataclass(slots=True)
class _Logged:
    """How often an exactly-once key was logged, and its first few different values."""

    count: int = 0
    values: list[Any] = field(default_factory=list)

    def add(self, value: Any) -> None:
        self.count += 1
        if len(self.values) < _MAX_VALUES and not any(v == value for v in self.values):
            self.values.append(value)

    def shown(self) -> str:
        names = [repr(v) for v in self.values]
        more = "" if len(self.values) < _MAX_VALUES else " (and maybe more)"
        return f"{', '.join(names[:-1])} and {names[-1]}{more}"


@dataclass(slots=True)
class RunState:
    """The checker's state over one log, fed line by line in file order.

    The rules are those of ``ruleset`` (:func:`rules_for`); a key
    required exactly once and logged more often with one value is a warning
    (:meth:`warnings`, as the package's ``put_warning``), with different values an
    error naming the key and the values.
    """

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
    best_accuracy: float | None = None
    paired: dict[Any, dict[str, Any]] = field(default_factory=dict)
    """Stable diffusion: ``samples_count`` → ``{metric: value}`` of its evaluations."""
    logged: dict[str, _Logged] = field(default_factory=dict)
    rules: Ruleset = field(init=False)
    exact_rules: bool = field(init=False)
    closed_rules: BenchmarkRules | None = field(init=False)

    def __post_init__(self) -> None:
        self.rules, self.exact_rules = rules_for(self.ruleset)
        self.closed_rules = BENCHMARK_RULES.get(self.benchmark)
        once = (*self.rules.exactly_one, *self.rules.closed_exactly_one)
        if self.closed_rules is not None:
            once += self.closed_rules.exactly_one
        self.logged = {key: _Logged() for key in once}

    def feed(self, entry: LogLine) -> None:
        """Apply the checks of one line."""
        key = entry.key
        self.counts[key] += 1
        logged = self.logged.get(key)
        if logged is not None:
            logged.add(entry.value)
        handler = _HANDLERS.get(key)
        # the package runs a submission_* key's check on its first line only
        if handler is not None and not (key.startswith("submission_") and self.counts[key] > 1):
            handler(self, entry)
        if key in _STEP_KEYS and not _has_step(entry.metadata):
            self._fail(entry, f"'{key}' names neither epoch_num nor samples_count")

    def finish(self) -> list[str]:
        """Every reason the run fails compliance (empty: it passes what is checked here)."""
        reasons = list(self.reasons)
        closed = self.division != "open"
        bench = self.closed_rules if closed else None
        for key in self._exactly_one(closed):
            logged = self.logged[key]
            if logged.count == 0:
                reasons.append(f"'{key}' logged 0 times; exactly once required")
            elif len(logged.values) > 1:
                reasons.append(
                    f"'{key}' logged {logged.count} times with different values "
                    f"{logged.shown()}; exactly once required"
                )
        for key in (*self.rules.at_least_one, *(bench.at_least_one if bench else ())):
            if not self.counts[key]:
                reasons.append(f"no '{key}' logged; at least one required")
        for first, second in _EITHER:
            if not (self.counts[first] or self.counts[second]):
                reasons.append(f"neither '{first}' nor '{second}' logged")
        if bench is not None and self.counts["eval_accuracy"]:
            reasons.extend(self._paired_reasons() if bench.paired_metrics else [])
            reasons.extend(self._target_reasons(bench))
        return reasons

    def warnings(self) -> list[str]:
        """Keys required exactly once and logged more often, each time with the same value."""
        closed = self.division != "open"
        return [
            f"'{key}' logged {logged.count} times with the same value {logged.values[0]!r}"
            for key in self._exactly_one(closed)
            if (logged := self.logged[key]).count > 1 and len(logged.values) == 1
        ]

    def _exactly_one(self, closed: bool) -> list[str]:
        keys = list(self.rules.exactly_one)
        if closed:
            keys += self.rules.closed_exactly_one
            keys += self.closed_rules.exactly_one if self.closed_rules else ()
        return list(dict.fromkeys(keys))

    def _paired_reasons(self) -> list[str]:
        """Stable diffusion: two evaluations (``samples_count``) or more, each with FID and CLIP."""
        reasons = []
        if len(self.paired) < 2:
            reasons.append(
                f"{len(self.paired)} evaluation(s) with a FID/CLIP metric; at least 2 required"
            )
        for step, metrics in self.paired.items():
            missing = [name for name in ("FID", "CLIP") if name not in metrics]
            if missing:
                reasons.append(f"the evaluation at samples_count {step!r} logs no {missing[0]}")
        return reasons

    def _target_reasons(self, bench: BenchmarkRules) -> list[str]:
        if bench.paired_metrics:
            reached = any(_pair_reaches(metrics, bench.targets) for metrics in self.paired.values())
        else:
            reached = self.target_reached
        if reached:
            return []
        wanted = " and ".join(t.describe() for t in bench.targets)
        if bench.paired_metrics:
            return [f"quality target not reached: no evaluation with {wanted} at one samples_count"]
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
        allowed = self.rules.closed_benchmarks
        if self.exact_rules and self.division != "open" and entry.value not in allowed:
            self._fail(entry, f"submission_benchmark {entry.value!r} is not a {self.ruleset} one")

    def _non_empty(self, entry: LogLine) -> None:
        if entry.key in self.rules.not_empty and entry.value == "":
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

    def _block_start(self, entry: LogLine) -> None:
        metadata = entry.metadata
        if not self.run_started:
            self._fail(entry, "block_start before run_start")
        if "epoch_count" not in metadata and "samples_count" not in metadata:
            self._fail(entry, "'block_start' names neither epoch_count nor samples_count")
        epochs, samples = metadata.get("epoch_count"), metadata.get("samples_count")
        if epochs is not None and ("first_epoch_num" not in metadata or not _above(epochs, 0)):
            self._fail(entry, "'block_start' needs first_epoch_num and an epoch_count > 0")
        if samples is not None and not (is_numeric(samples) and samples >= 0):
            self._fail(entry, f"'block_start' has a samples_count of {samples!r}")

    def _block_stop(self, entry: LogLine) -> None:
        if "first_epoch_num" not in entry.metadata and "samples_count" not in entry.metadata:
            self._fail(entry, "'block_stop' names neither first_epoch_num nor samples_count")

    def _gradient_steps(self, entry: LogLine) -> None:
        value = entry.value
        if not is_numeric(value) or not value > 0:
            self._fail(entry, f"gradient_accumulation_steps is {value!r}, not > 0")

    def _eval_accuracy(self, entry: LogLine) -> None:
        bench = self.closed_rules if self.division != "open" else None
        step = bench.eval_step if bench is not None else None
        if step is not None and step not in entry.metadata:
            self._fail(entry, f"'eval_accuracy' names no {step}")
        elif step is None and not _has_step(entry.metadata):
            self._fail(entry, "'eval_accuracy' names neither epoch_num nor samples_count")
        value = entry.value
        metric = entry.metadata.get("metric")
        if bench is not None and bench.paired_metrics and metric is not None:
            self.paired.setdefault(entry.metadata.get("samples_count"), {})[str(metric)] = value
        if not is_numeric(value) or bench is None or bench.paired_metrics:
            return
        self.best_accuracy = _better(self.best_accuracy, float(value), bench)
        if all(target.reached(float(value)) for target in bench.targets):
            self.target_reached = True


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
    "block_start": RunState._block_start,
    "block_stop": RunState._block_stop,
    "gradient_accumulation_steps": RunState._gradient_steps,
    "eval_accuracy": RunState._eval_accuracy,
}


def _pair_reaches(metrics: Mapping[str, Any], targets: Sequence[QualityTarget]) -> bool:
    """Whether one stable diffusion evaluation reaches every target (FID and CLIP)."""
    for target in targets:
        value: Any = metrics.get(target.metric or "")
        if not is_numeric(value) or not target.reached(float(value)):
            return False
    return True


def _has_step(metadata: Mapping[str, Any]) -> bool:
    return "epoch_num" in metadata or "samples_count" in metadata


def is_numeric(value: object) -> TypeGuard[int | float]:
    """Whether ``value`` is a number (a bool is not, though Python counts it one)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _above(value: object, floor: float) -> bool:
    return is_numeric(value) and value > floor


def _better(best: float | None, value: float, bench: BenchmarkRules) -> float:
    higher = bench.targets[0].higher_is_better if bench.targets else True
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
