"""Significance over many series at once: one-sided t-tests from summary statistics,
two-sample tests of repeats, noise variances shared across series by empirical Bayes,
Benjamini–Hochberg q-values, and the smallest change a test could confirm.

t-tests from summary statistics
-------------------------------
Vectorised, and defined where scipy's ``ttest_ind`` warns (our tests turn warnings into
errors): when both samples are constant, equal means give p = 1 and different means
p = 0 (a difference with no noise at all). Means closer than :data:`TINY` count as
equal, variances below ``TINY²`` as zero, which keeps results stable when all values
are scaled by a constant.

Two-sample comparisons of repeats
---------------------------------
All inputs are log values, one row per series: ``base`` of shape ``(m, n_a)`` and
``cand`` of shape ``(m, n_b)``. Below :data:`~tracker.stats.defaults.MWU_MIN_REPEATS`
repeats a side the test is a t-test on log values (asv's and Bencher's practice), from
there Mann–Whitney U (exact to ``MWU_EXACT_MAX``), after checking, as asv's
``is_different`` does, that the test can reach the significance level at all.

With few repeats the t-test is the **moderated t** of limma (Smyth 2004, below):
each series' within-version variance ``s²`` (both versions pooled, on
``d = n_a + n_b − 2`` df) is replaced by its posterior ``s̃²`` on ``d₀ + d`` df, the
prior fitted on the run's own series (:func:`fit_noise_prior`). At 3 repeats a side,
Welch's t has 2–4 df: a 10% drop at CV 2% gets a median p of 0.004, which
Benjamini–Hochberg over 1,000 series does not confirm; on the shared variance the
same drop is 6 standard errors, p below 10⁻⁹. A series the prior does not explain
(:meth:`NoisePrior.beyond`), and every series of a run whose series do not share a
noise level, is tested by Welch's t on its own variances.

The bootstrap CI of the change of medians uses the fact that the median of a
resample of sorted data is a function of the resampled *positions* only: one
draw of positions per sample size serves every series, and a resample's median
is a gather. When both sides have the same size, the two pairings of the two
position draws are pooled, so swapping baseline and candidate gives exactly the
negated CI.

Noise variances shared across the series of one run (Smyth 2004)
----------------------------------------------------------------
A variance from 3 + 3 repeats has 4 degrees of freedom, one from a history of ``n``
single values ``n − 1``: at 5 versions the t quantile a drop must pass is twice the
normal one. Most series of one run (one metric, one comparison) have similar relative
noise, so the other series say a lot about each one's variance. This is limma's
moderated t (Smyth, "Linear models and empirical Bayes methods for assessing
differential expression", 2004), used as published:

* **Model.** Each series' true variance ``σ²`` is drawn from a scaled inverse
  χ² prior with ``d₀`` degrees of freedom around ``s₀²``; given ``σ²``,
  ``s² ~ σ²·χ²_d / d`` (the usual Gaussian model).
* **Prior, from the run.** ``d₀`` and ``s₀²`` by moments of ``log s²``
  (:func:`variance_prior`, limma's ``fitFDist`` without covariate): the excess
  spread of ``log s²`` over what ``χ²_d`` alone gives is the spread of the true
  variances. Equal noise everywhere gives ``d₀ = ∞`` (every series gets the
  run's variance); very different noise levels give a small ``d₀`` (little
  pooling, close to each series' own t-test).
* **Posterior.** ``s̃² = (d₀·s₀² + d·s²) / (d₀ + d)`` on ``d₀ + d`` degrees of
  freedom (:func:`pooled_variances`). Under the model, the t statistic with ``s̃``
  has *exactly* Student's t on ``d₀ + d`` df when nothing changed, so the
  p-values stay calibrated while the df grow from ``d`` to ``d₀ + d``.

For repeats the fit is made robust and then checked (:func:`fit_noise_prior`):

* **Series past the prior** (a spike among the repeats, a broken benchmark): under
  the model ``s²/s₀²`` has the F distribution on ``(d, d₀)`` df. A series whose
  upper tail is below ``outlier_level`` after Bonferroni over the run's series is
  set aside and the prior fitted again without it (up to three rounds), the idea of
  limma's robust hyperparameters (Phipson et al., "Robust hyperparameter estimation
  protects against hypervariable genes and improves power to detect differential
  expression", 2016) in its simplest form: such a series keeps its own variance.
  The first prior comes from the lower half of the variances, where no spike
  reaches (the ratio of their lower quartile to their median, solved for ``d₀``):
  a first fit by moments on every series let the 6% of series with a 10–30% spike
  among 6 values pull ``d₀`` from hundreds to about 6, and its heavy tail then set
  none of them aside.
* **Do the series share a noise level?** Under the fitted model the F
  distribution's CDF at each kept series' ``s²/s₀²`` is uniform; a
  Kolmogorov–Smirnov test of that (Stephens' small-sample form of the statistic)
  below ``shared_level`` says the run's series do not share the model (e.g. half
  at CV 1%, half at CV 8%: the moderated t would shrink the noisy half's variances
  towards the middle and flag it too often), and nothing is pooled. Series that vary
  *less* than one shared level allows (``d₀ = ∞``: equal variances, quantised values)
  share it by definition and are not tested.

Where the model is only roughly right the run's p-values stay calibrated on average
but not per series: with noise levels spread ±30% around one value, the noisiest
tenth of single-value series reaches raw p < 0.005 two to three times as often as
nominal (measured by ``benchmarks/bench_detection.py``), the quietest less often.
The pooling is skipped below ``min_series`` series with a usable variance (the prior
would be a guess).

Multiple testing: Benjamini–Hochberg q-values over one analysis run
-------------------------------------------------------------------
Every p-value of one run (all series, all metrics, all version pairs) goes into
one call, and the family size is reported with the result: BH's power falls as
the family grows, so a reader needs it to judge a "no change". Neither asv, Bencher, Otava
nor Conbench corrects for multiple testing; on 1,000 unchanged series, raw tests flag
33–49 of them against 0–5 after BH.

Sensitivity: the smallest change a test could confirm
-----------------------------------------------------
:func:`detectable_change` is the *detection limit* of a one-sided test (Currie,
"Limits for qualitative detection and quantitative determination", 1968): the true
change ``(t₁₋ₐ + t_power)·se`` that a test at level ``a`` confirms with probability
``power``, Student's quantiles on the test's df. With the level the run's BH family
asks of one more discovery it answers "what could this run have seen?"
(:mod:`~tracker.stats.compare`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import special  # type: ignore[import-untyped]

__all__ = [
    "FamilyAdjustment",
    "MAX_PRIOR_DF",
    "Method",
    "NoisePrior",
    "RepeatTest",
    "TINY",
    "adjust_pvalues",
    "advised_repeats",
    "bootstrap_ci",
    "choose_test",
    "detectable_change",
    "fit_noise_prior",
    "mann_whitney_tails",
    "min_attainable_p",
    "pooled_t_pvalue",
    "pooled_variances",
    "q_values",
    "repeat_t_tails",
    "t_pvalue",
    "t_tail_pvalues",
    "trigamma_inverse",
    "variance_prior",
    "within_variances",
]


FloatArray = npt.NDArray[np.float64]

TINY = 1e-12
"""Log-space differences below this are rounding, not signal."""


def t_tail_pvalues(
    diff: FloatArray, se2: FloatArray, df: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """One-sided p-values of ``diff / sqrt(se2)`` on ``df`` degrees of freedom, constant-safe.

    Returns ``(p_less, p_greater)``: the p of "the true difference is below 0" (small
    when ``diff`` is very negative) and of "above 0". Without noise a difference past
    :data:`TINY` gives 0 on its side and 1 on the other; no difference gives 1 on both.
    """
    noisy = se2 > TINY * TINY
    safe_se = np.sqrt(np.where(noisy, se2, 1.0))
    safe_df = np.where(noisy & (df > 0), df, 1.0)
    t = diff / safe_se
    less = np.asarray(special.stdtr(safe_df, t), dtype=np.float64)
    greater = np.asarray(special.stdtr(safe_df, -t), dtype=np.float64)
    exact_less = np.where(diff < -TINY, 0.0, 1.0)
    exact_greater = np.where(diff > TINY, 0.0, 1.0)
    valid = df > 0
    p_less = np.where(valid, np.where(noisy, less, exact_less), 1.0)
    p_greater = np.where(valid, np.where(noisy, greater, exact_greater), 1.0)
    return p_less, p_greater


def t_pvalue(diff: FloatArray, se2: FloatArray, df: FloatArray) -> FloatArray:
    """Two-sided p of ``diff / sqrt(se2)`` on ``df`` degrees of freedom, constant-safe:
    twice the smaller one-sided p of :func:`t_tail_pvalues`, at most 1."""
    p_less, p_greater = t_tail_pvalues(diff, se2, df)
    return np.asarray(np.minimum(2.0 * np.minimum(p_less, p_greater), 1.0), dtype=np.float64)


def pooled_t_pvalue(
    mean1: FloatArray,
    var1: FloatArray,
    n1: FloatArray,
    mean2: FloatArray,
    var2: FloatArray,
    n2: FloatArray,
) -> FloatArray:
    """Two-sided p of Student's t with a pooled variance (as Otava's change-point test).

    A side of one point has no variance of its own and contributes ``(n - 1)·var = 0``.
    """
    df = n1 + n2 - 2.0
    pooled = ((n1 - 1.0) * var1 + (n2 - 1.0) * var2) / np.maximum(df, 1.0)
    se2 = pooled * (1.0 / n1 + 1.0 / n2)
    return t_pvalue(mean2 - mean1, se2, df)


MAX_PRIOR_DF = 1e6
"""Stands in for an infinite prior df (all series share one variance)."""

_TINY_VARIANCE = 1e-24
"""Variances below this (constant histories) have no logarithm and stay out of the fit."""


def trigamma_inverse(y: float) -> float:
    """The ``x > 0`` with ``trigamma(x) = y`` (limma's Newton iteration on ``1/trigamma``)."""
    if y > 1e7:
        return 1.0 / math.sqrt(y)
    if y < 1e-6:
        return 1.0 / y
    x = 0.5 + 1.0 / y
    for _ in range(50):
        tri = float(special.polygamma(1, x))
        step = tri * (1.0 - tri / y) / float(special.polygamma(2, x))
        x += step
        if -step / x < 1e-8:
            break
    return x


def variance_prior(
    variances: FloatArray, df: FloatArray, *, min_series: int
) -> tuple[float, float]:
    """``(d₀, s₀²)`` of the scaled inverse χ² prior, by moments of ``log s²``.

    ``variances`` are the series' sample variances on ``df`` degrees of freedom each.
    Returns ``(0.0, 0.0)`` (no pooling) when fewer than ``min_series`` series have a
    positive variance and at least one df.
    """
    usable = (variances > _TINY_VARIANCE) & (df >= 1.0)
    if int(usable.sum()) < max(min_series, 2):
        return 0.0, 0.0
    d = df[usable]
    e = np.log(variances[usable]) - special.digamma(d / 2.0) + np.log(d / 2.0)
    centre = float(e.mean())
    excess = float(e.var(ddof=1) - np.mean(special.polygamma(1, d / 2.0)))
    if excess <= 0.0:
        return MAX_PRIOR_DF, math.exp(centre)
    d0 = min(2.0 * trigamma_inverse(excess), MAX_PRIOR_DF)
    return d0, math.exp(centre + float(special.digamma(d0 / 2.0)) - math.log(d0 / 2.0))


def pooled_variances(
    variances: FloatArray, df: FloatArray, *, min_series: int
) -> tuple[FloatArray, FloatArray]:
    """Each series' posterior variance ``s̃²`` and its degrees of freedom ``d₀ + d``."""
    d0, s0 = variance_prior(variances, df, min_series=min_series)
    if d0 <= 0.0:
        return variances, df
    return (d0 * s0 + df * variances) / (d0 + df), df + d0


_ROBUST_ROUNDS = 3
"""Rounds of "fit the prior, set aside the series past it" (they settle in one or two)."""

BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class NoisePrior:
    """The noise prior of one run's series (module docstring) and how it was checked.

    ``df`` is ``d₀`` (0: nothing pooled) and ``scale`` is ``s₀²``; ``series`` is how many
    usable series the outlier check is made over (Bonferroni) at ``outlier_level``;
    ``shared_p`` the p of the test that the series share the prior (NaN: not tested).
    """

    df: float = 0.0
    scale: float = 0.0
    series: int = 0
    outlier_level: float = 0.0
    shared_p: float = math.nan

    @property
    def pools(self) -> bool:
        """Whether any variance is pooled."""
        return self.df > 0.0

    def beyond(self, variances: FloatArray, df: FloatArray) -> BoolArray:
        """The series whose variance the prior does not explain: the upper tail of
        ``F(d, d₀)`` at ``s²/s₀²``, times :attr:`series`, below :attr:`outlier_level`."""
        usable = (variances > _TINY_VARIANCE) & (df >= 1.0)
        if not self.pools:
            return np.zeros(variances.shape, dtype=np.bool_)
        ratio = np.where(usable, variances / self.scale, 0.0)
        tail = special.fdtrc(np.where(usable, df, 1.0), self.df, ratio)
        return np.asarray(usable & (tail * self.series < self.outlier_level), dtype=np.bool_)

    def posterior(
        self, variances: FloatArray, df: FloatArray
    ) -> tuple[FloatArray, FloatArray, BoolArray]:
        """Each series' posterior variance and df, and where it keeps its own instead
        (past the prior, or nothing pooled)."""
        if not self.pools:
            return variances, df, np.ones(variances.shape, dtype=np.bool_)
        own = self.beyond(variances, df)
        pooled = (self.df * self.scale + df * variances) / (self.df + df)
        return np.where(own, variances, pooled), np.where(own, df, df + self.df), own


def _shared_p(prior: NoisePrior, variances: FloatArray, df: FloatArray) -> float:
    """p of the Kolmogorov–Smirnov test that every ``s²/s₀²`` follows ``F(d, d₀)``
    (Stephens' modified statistic ``(√m + 0.12 + 0.11/√m)·D``, Kolmogorov's limit law)."""
    m = variances.size
    if m < 2:
        return 1.0
    u = np.sort(special.fdtr(df, prior.df, variances / prior.scale))
    i = np.arange(1, m + 1, dtype=np.float64)
    d = max(float(np.max(i / m - u)), float(np.max(u - (i - 1.0) / m)))
    root = math.sqrt(m)
    return float(special.kolmogorov((root + 0.12 + 0.11 / root) * d))


def fit_noise_prior(
    variances: FloatArray,
    df: FloatArray,
    *,
    min_series: int,
    outlier_level: float,
    shared_level: float,
) -> NoisePrior:
    """The run's noise prior, fitted without the series past it and checked (module docstring).

    ``variances`` are the series' sample variances on ``df`` degrees of freedom each.
    Returns a prior that pools nothing when fewer than ``min_series`` series have a
    usable variance, or when the test that the series share it gives p below
    ``shared_level`` (its p is kept in :attr:`NoisePrior.shared_p`).
    """
    usable = (variances > _TINY_VARIANCE) & (df >= 1.0)
    if int(usable.sum()) < max(min_series, 2):
        return NoisePrior()
    count = int(usable.sum())
    d0, s0 = _quantile_prior(variances[usable], df[usable])
    own = NoisePrior(d0, s0, count, outlier_level).beyond(variances, df)
    prior = NoisePrior()
    for _ in range(_ROBUST_ROUNDS):
        kept = usable & ~own
        d0, s0 = variance_prior(variances[kept], df[kept], min_series=min_series)
        if d0 <= 0.0:
            return NoisePrior()
        prior = NoisePrior(d0, s0, count, outlier_level)
        found = own | prior.beyond(variances, df)
        if np.array_equal(found, own):
            break
        own = found
    kept = usable & ~prior.beyond(variances, df)
    shared = 1.0 if prior.df >= MAX_PRIOR_DF else _shared_p(prior, variances[kept], df[kept])
    if shared < shared_level:
        return NoisePrior(shared_p=shared)
    return NoisePrior(prior.df, prior.scale, prior.series, outlier_level, shared)


def _quantile_prior(variances: FloatArray, df: FloatArray) -> tuple[float, float]:
    """A first ``(d₀, s₀²)`` from the lower half of the variances, where a spike cannot
    reach: the ratio of the lower quartile to the median of ``s²/s₀² ~ F(d, d₀)`` is
    solved for ``d₀`` (it grows with ``d₀``) and ``s₀²`` read off the median; the series
    of the most common ``d`` only."""
    values, counts = np.unique(df, return_counts=True)
    d = float(values[np.argmax(counts)])
    low, mid = np.quantile(variances[df == d], [0.25, 0.5])

    def ratio(d0: float) -> float:
        """The lower quartile over the median of ``F(d, d0)``."""
        return float(special.fdtri(d, d0, 0.25) / special.fdtri(d, d0, 0.5))

    lo, hi = math.log(0.1), math.log(MAX_PRIOR_DF)
    if low / mid >= ratio(MAX_PRIOR_DF):
        return MAX_PRIOR_DF, float(mid / special.fdtri(d, MAX_PRIOR_DF, 0.5))
    for _ in range(40):
        half = 0.5 * (lo + hi)
        lo, hi = (half, hi) if ratio(math.exp(half)) < low / mid else (lo, half)
    d0 = math.exp(0.5 * (lo + hi))
    return d0, float(mid / special.fdtri(d, d0, 0.5))


def within_variances(base: FloatArray, cand: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Per row: the variance of both sides around their own means, and its df ``n_a + n_b − 2``."""
    n_a, n_b = base.shape[1], cand.shape[1]
    squares = base.var(axis=1, ddof=1) * (n_a - 1) + cand.var(axis=1, ddof=1) * (n_b - 1)
    d = float(n_a + n_b - 2)
    return squares / d, np.full(base.shape[0], d)


@dataclass(frozen=True, slots=True)
class RepeatTest:
    """Per row: one-sided p of "candidate below" and "above", the standard error of the
    difference of the log means and its df, and whether the row kept its own variances
    (Welch's t) instead of the moderated t."""

    p_less: FloatArray
    p_greater: FloatArray
    se: FloatArray
    df: FloatArray
    own: BoolArray


def repeat_t_tails(base: FloatArray, cand: FloatArray, prior: NoisePrior) -> RepeatTest:
    """The moderated t of each row on ``prior`` (module docstring); Welch's t for the rows
    it does not explain, and for every row when it pools nothing."""
    n_a, n_b = float(base.shape[1]), float(cand.shape[1])
    variances, d = within_variances(base, cand)
    post, post_df, own = prior.posterior(variances, d)
    a = base.var(axis=1, ddof=1) / n_a
    b = cand.var(axis=1, ddof=1) / n_b
    welch_se2 = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        welch_df = welch_se2 * welch_se2 / (a * a / (n_a - 1.0) + b * b / (n_b - 1.0))
    welch_df = np.where(np.isfinite(welch_df), welch_df, n_a + n_b - 2.0)
    se2 = np.where(own, welch_se2, post * (1.0 / n_a + 1.0 / n_b))
    df = np.where(own, welch_df, post_df)
    p_less, p_greater = t_tail_pvalues(cand.mean(axis=1) - base.mean(axis=1), se2, df)
    return RepeatTest(p_less, p_greater, np.sqrt(se2), df, own)


def detectable_change(
    se: FloatArray, df: FloatArray, *, level: FloatArray | float, power: float
) -> FloatArray:
    """Per row: the true change (log units) a one-sided t-test at ``level`` on ``se`` and
    ``df`` confirms with probability ``power``, ``(t₁₋ₗₑᵥₑₗ + t_power)·se`` (Currie 1968,
    module docstring); ∞ without degrees of freedom."""
    usable = df > 0.0
    safe_df = np.where(usable, df, 1.0)
    z = special.stdtrit(safe_df, 1.0 - np.asarray(level)) + special.stdtrit(safe_df, power)
    return np.asarray(np.where(usable, z * se, np.inf), dtype=np.float64)


FamilyMethod = Literal["bh", "by"]


@dataclass(frozen=True, slots=True)
class FamilyAdjustment:
    """q-values in the order of the p-values given, the family size and the method."""

    q_values: tuple[float, ...]
    family_size: int
    method: FamilyMethod


def q_values(p_values: npt.ArrayLike, method: FamilyMethod = "bh") -> FloatArray:
    """Adjusted p-values (q) of a 1-D array: ``"bh"`` Benjamini–Hochberg, ``"by"`` –Yekutieli.

    Benjamini–Yekutieli holds under any dependence (e.g. TTFT and TPOT of the same
    run) at the cost of power. An empty input gives an empty output.
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError("p-values must be a 1-D array")
    if p.size == 0:
        return p.copy()
    if not np.all((p >= 0.0) & (p <= 1.0)):
        raise ValueError("p-values must lie in [0, 1]")
    return _step_up(p, method)


def _step_up(p: FloatArray, method: FamilyMethod) -> FloatArray:
    """The step-up adjustment, as ``scipy.stats.false_discovery_control`` computes it.

    Written out here so that the analysis does not import ``scipy.stats`` (about
    50 MB of memory in every process that analyses or reports).
    """
    m = p.size
    order = np.argsort(p)
    ranks = np.arange(1, m + 1, dtype=np.float64)
    adjusted = p[order] * (m / ranks)
    if method == "by":
        adjusted *= np.sum(1.0 / ranks)
    adjusted = np.minimum.accumulate(adjusted[::-1])[::-1]
    q = np.empty_like(adjusted)
    q[order] = adjusted
    return np.clip(q, 0.0, 1.0)


def adjust_pvalues(p_values: Sequence[float], method: FamilyMethod = "bh") -> FamilyAdjustment:
    """:func:`q_values` for a plain sequence, with the family size."""
    q = q_values(p_values, method)
    return FamilyAdjustment(tuple(float(v) for v in q), int(q.size), method)


IntArray = npt.NDArray[np.intp]


class Method(StrEnum):
    """How a change was tested."""

    MODERATED_T = "moderated_t_log"
    """The moderated t on logs (variance shared across the run's series)."""
    WELCH_LOG = "welch_t_log"
    MANN_WHITNEY = "mann_whitney_u"
    PREDICTION_INTERVAL = "t_prediction_interval"
    THRESHOLD = "threshold"
    NONE = "none"


def choose_test(n_a: int, n_b: int, mwu_min_repeats: int) -> Method:
    """The moderated t on logs below ``mwu_min_repeats`` samples on the smaller side (Welch's
    t for the series it does not cover, :func:`repeat_t_tails`), else MWU."""
    return Method.MANN_WHITNEY if min(n_a, n_b) >= mwu_min_repeats else Method.MODERATED_T


def min_attainable_p(method: Method, n_a: int, n_b: int, exact_max: int) -> float:
    """The smallest one-sided p the test can give with these sample sizes.

    Exact MWU: ``1 / C(n_a + n_b, n_a)`` (0.05 for 3 vs 3, 0.004 for 5 vs 5);
    asymptotic MWU: the one-sided p of complete separation; the t-tests: 0 from 2
    samples a side. (Every test of a comparison is one-sided, see
    :mod:`tracker.stats.compare`.)
    """
    if min(n_a, n_b) < 2:
        return 1.0
    if method in (Method.MODERATED_T, Method.WELCH_LOG):
        return 0.0
    if max(n_a, n_b) <= exact_max:
        return min(1.0, 1.0 / math.comb(n_a + n_b, n_a))
    mean = n_a * n_b / 2.0
    sd = math.sqrt(n_a * n_b * (n_a + n_b + 1) / 12.0)
    return float(min(1.0, special.ndtr(-mean / sd)))


def advised_repeats(
    effect: FloatArray,
    sd: FloatArray,
    *,
    level: float,
    power: float,
    least: int,
    most: int,
) -> npt.NDArray[np.int64]:
    """Repeats per version for a one-sided two-sample test to confirm ``effect``.

    The normal-approximation sample size ``2·((z₁₋ₗₑᵥₑₗ + z_power)·sd / effect)²``
    plus one (for Student's t), per row, clamped to ``[least, most]``. ``sd`` is the
    noise of one value in log units, ``effect`` the log change to confirm; a row
    without noise needs ``least``.
    """
    z = float(special.ndtri(1.0 - level) + special.ndtri(power))
    size = np.abs(effect)
    ratio = np.where(size > 0.0, sd / np.where(size > 0.0, size, 1.0), np.inf)
    n = np.ceil(2.0 * (z * ratio) ** 2) + 1.0
    n = np.where(np.isfinite(n), n, float(most))
    return np.clip(n, least, most).astype(np.int64)


def mann_whitney_tails(
    base: FloatArray, cand: FloatArray, *, exact: bool
) -> tuple[FloatArray, FloatArray]:
    """One-sided p of Mann–Whitney U per row: ``cand`` below ``base``, and above it.

    Rows where all values tie give 1 on both sides.
    """
    from scipy import stats

    method = "exact" if exact else "asymptotic"
    both = np.concatenate([base, cand], axis=1)
    constant = np.ptp(both, axis=1) == 0.0
    out = []
    for alternative in ("less", "greater"):
        result = stats.mannwhitneyu(cand, base, axis=1, alternative=alternative, method=method)
        p = np.asarray(result.pvalue, dtype=np.float64).reshape(base.shape[0])
        out.append(np.where(constant | ~np.isfinite(p), 1.0, np.minimum(p, 1.0)))
    return out[0], out[1]


def _median_codes(rng: np.random.Generator, n: int, resamples: int) -> IntArray:
    """Each resample of size ``n`` as ``lo·n + hi``: sorted positions of its two middle values."""
    draws = np.sort(rng.integers(0, n, size=(resamples, n)), axis=1)
    return (draws[:, (n - 1) // 2] * n + draws[:, n // 2]).astype(np.intp)


def _medians(sorted_rows: FloatArray, codes: IntArray) -> FloatArray:
    """The resampled medians (mean of the two middle values) for each code, per row."""
    n = sorted_rows.shape[1]
    return 0.5 * (sorted_rows[:, codes // n] + sorted_rows[:, codes % n])


def _order_statistics(
    values: FloatArray, weights: IntArray, ranks: tuple[int, int]
) -> tuple[FloatArray, FloatArray]:
    """Per row, the values at two 0-based ranks of the multiset where ``values[:, j]``
    occurs ``weights[j]`` times."""
    order = np.argsort(values, axis=1, kind="stable")
    ranked = np.take_along_axis(values, order, axis=1)
    reach = np.cumsum(weights[order], axis=1)
    rows = np.arange(values.shape[0])
    lo = ranked[rows, np.argmax(reach > ranks[0], axis=1)]
    hi = ranked[rows, np.argmax(reach > ranks[1], axis=1)]
    return lo, hi


def bootstrap_ci(
    base: FloatArray,
    cand: FloatArray,
    sign: FloatArray,
    *,
    rng: np.random.Generator,
    resamples: int,
    confidence: float,
) -> tuple[FloatArray, FloatArray]:
    """Percentile bootstrap CI of ``s·(median(cand) − median(base))`` per row (log values).

    Positions are drawn per sample size, smaller size first, so the draws do not
    depend on which side is the baseline. A resample's median depends only on the
    positions of its middle values, so the bootstrap distribution is a weighted
    set of at most ``n_a² · n_b²`` distinct differences per row: the order
    statistics are read from those (exactly what sorting all draws would give).
    """
    n_a, n_b = base.shape[1], cand.shape[1]
    sa, sb = np.sort(base, axis=1), np.sort(cand, axis=1)
    if n_a == n_b:
        first, second = _median_codes(rng, n_a, resamples), _median_codes(rng, n_a, resamples)
        codes_a, codes_b = np.concatenate([first, second]), np.concatenate([second, first])
    else:
        drawn = {n: _median_codes(rng, n, resamples) for n in sorted((n_a, n_b))}
        codes_a, codes_b = drawn[n_a], drawn[n_b]
    total = codes_a.size
    k = int(math.floor((1.0 - confidence) / 2.0 * total + 1e-9))  # 0.05 * 1000 is 49.99…
    joint, inverse, weights = np.unique(
        codes_a * (n_b * n_b) + codes_b, return_inverse=True, return_counts=True
    )
    diffs = _medians(sb, joint % (n_b * n_b)) - _medians(sa, joint // (n_b * n_b))
    diffs *= sign[:, None]
    if 4 * joint.size < total:
        return _order_statistics(diffs, weights.astype(np.intp), (k, total - 1 - k))
    every = np.partition(diffs[:, inverse], (k, total - 1 - k), axis=1)
    return every[:, k], every[:, total - 1 - k]
