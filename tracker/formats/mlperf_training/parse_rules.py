"""The rule tables of MLCommons' MLPerf Training checkers, per ruleset, with their source.

Every table here is transcribed by hand from ``mlperf-logging`` 4.1.68 (:data:`PACKAGE`)
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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "BENCHMARK_RULES",
    "PACKAGE",
    "RULESETS",
    "SD_CLIP_MIN",
    "SD_FID_MAX",
    "BenchmarkRules",
    "QualityTarget",
    "Ruleset",
    "rcp_step_unit",
    "rules_for",
]

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
