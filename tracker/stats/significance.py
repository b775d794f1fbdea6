"""Significance over many series at once: t-tests from summary statistics, two-sample
tests of repeats, noise variances pooled by empirical Bayes, Benjamini–Hochberg q-values.

Vectorised two-sample t-tests from summary statistics.

scipy's ``ttest_ind`` warns (and our tests turn warnings into errors) when both
samples are constant; these versions define that case instead: equal means
give p = 1, different means p = 0 (a difference with no noise at all).
Means closer than :data:`TINY` count as equal, variances below ``TINY²`` as zero,
which keeps results stable when all values are scaled by a constant.

Two-sample comparisons of repeats, vectorised over many series of equal shape.

All inputs are log values, one row per series: ``base`` of shape ``(m, n_a)`` and
``cand`` of shape ``(m, n_b)``. The test follows asv's and Bencher's practice: Welch's t
on log values for few repeats, Mann–Whitney U from :data:`MWU_MIN_REPEATS` up
(exact to :data:`MWU_EXACT_MAX`), after checking, as asv's ``is_different``
does, that the test can reach the significance level at all.

The bootstrap CI of the change of medians uses the fact that the median of a
resample of sorted data is a function of the resampled *positions* only: one
draw of positions per sample size serves every series, and a resample's median
is a gather. When both sides have the same size, the two pairings of the two
position draws are pooled, so swapping baseline and candidate gives exactly the
negated CI.

Empirical-Bayes pooling of noise variances across the series of one run (Smyth 2004).

A history of ``n`` single values estimates its noise variance ``s²`` on only
``d = n − 1`` degrees of freedom: at 5 versions the t quantile a drop must pass
is twice the normal one. Most series of one run (one metric, one comparison)
have similar relative noise, so the other series say a lot about each one's
variance. This is limma's moderated t (Smyth, "Linear models and empirical
Bayes methods for assessing differential expression", 2004), used as published:

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
  freedom (:func:`pooled_variances`). Under the model, the prediction statistic
  with ``s̃`` has *exactly* Student's t on ``d₀ + d`` df when nothing changed,
  so the p-values stay calibrated while the df grow from ``d`` to ``d₀ + d``.

Where the model is wrong the run's p-values stay calibrated on average but not
per series: with noise levels spread ±30% around one value, the noisiest
tenth of the series reaches raw p < 0.005 two to three times as often as
nominal (measured by ``benchmarks/bench_detection.py``), the quietest less often.
The pooling is skipped
below ``min_series`` series with a usable variance (the prior would be a guess).

Multiple testing: Benjamini–Hochberg q-values over one analysis run.

Every p-value of one run (all series, all metrics, all version pairs) goes into
one call, and the family size is reported with the result: BH's power falls as
the family grows, so a reader needs it to judge a "no change". Neither asv, Bencher, Otava
nor Conbench corrects for multiple testing; on 1,000 unchanged series, raw tests flag
33–49 of them against 0–5 after BH.
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
    "TINY",
    "adjust_pvalues",
    "advised_repeats",
    "bootstrap_ci",
    "choose_test",
    "mann_whitney_p",
    "mann_whitney_tails",
    "min_attainable_p",
    "pooled_t_pvalue",
    "pooled_variances",
    "q_values",
    "t_pvalue",
    "t_tail_pvalues",
    "trigamma_inverse",
    "variance_prior",
    "welch_log_p",
    "welch_log_tails",
    "welch_t_pvalue",
    "welch_t_tails",
]


FloatArray = npt.NDArray[np.float64]

TINY = 1e-12
"""Log-space differences below this are rounding, not signal."""


def t_pvalue(diff: FloatArray, se2: FloatArray, df: FloatArray) -> FloatArray:
    """Two-sided p of ``diff / sqrt(se2)`` on ``df`` degrees of freedom, constant-safe."""
    noisy = se2 > TINY * TINY
    safe_se = np.sqrt(np.where(noisy, se2, 1.0))
    safe_df = np.where(noisy & (df > 0), df, 1.0)
    t = np.abs(diff) / safe_se
    p = np.asarray(2.0 * special.stdtr(safe_df, -t), dtype=np.float64)
    exact = np.where(np.abs(diff) > TINY, 0.0, 1.0)
    return np.where(df > 0, np.where(noisy, np.minimum(p, 1.0), exact), 1.0)


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


def _welch(
    mean1: FloatArray,
    var1: FloatArray,
    n1: FloatArray,
    mean2: FloatArray,
    var2: FloatArray,
    n2: FloatArray,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Welch's difference ``mean2 − mean1``, its squared standard error and its df."""
    a = var1 / n1
    b = var2 / n2
    se2 = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        df = se2 * se2 / (a * a / (n1 - 1.0) + b * b / (n2 - 1.0))
    df = np.where(np.isfinite(df), df, n1 + n2 - 2.0)
    return mean2 - mean1, se2, df


def welch_t_tails(
    mean1: FloatArray,
    var1: FloatArray,
    n1: FloatArray,
    mean2: FloatArray,
    var2: FloatArray,
    n2: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """One-sided p of Welch's t for ``mean2 < mean1`` and for ``mean2 > mean1``."""
    return t_tail_pvalues(*_welch(mean1, var1, n1, mean2, var2, n2))


def welch_t_pvalue(
    mean1: FloatArray,
    var1: FloatArray,
    n1: FloatArray,
    mean2: FloatArray,
    var2: FloatArray,
    n2: FloatArray,
) -> FloatArray:
    """Two-sided p of Welch's t (unequal variances), element-wise.

    ``var*`` are sample variances (ddof = 1); ``n*`` must be at least 2.
    """
    return t_pvalue(*_welch(mean1, var1, n1, mean2, var2, n2))


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

    WELCH_LOG = "welch_t_log"
    MANN_WHITNEY = "mann_whitney_u"
    PREDICTION_INTERVAL = "t_prediction_interval"
    THRESHOLD = "threshold"
    NONE = "none"


def choose_test(n_a: int, n_b: int, mwu_min_repeats: int) -> Method:
    """Welch's t on logs below ``mwu_min_repeats`` samples on the smaller side, else MWU."""
    return Method.MANN_WHITNEY if min(n_a, n_b) >= mwu_min_repeats else Method.WELCH_LOG


def min_attainable_p(method: Method, n_a: int, n_b: int, exact_max: int) -> float:
    """The smallest one-sided p the test can give with these sample sizes.

    Exact MWU: ``1 / C(n_a + n_b, n_a)`` (0.05 for 3 vs 3, 0.004 for 5 vs 5);
    asymptotic MWU: the one-sided p of complete separation; Welch: 0 from 2
    samples a side. (Every test of a comparison is one-sided, see
    :mod:`tracker.stats.compare`.)
    """
    if min(n_a, n_b) < 2:
        return 1.0
    if method is Method.WELCH_LOG:
        return 0.0
    if max(n_a, n_b) <= exact_max:
        return min(1.0, 1.0 / math.comb(n_a + n_b, n_a))
    mean = n_a * n_b / 2.0
    sd = math.sqrt(n_a * n_b * (n_a + n_b + 1) / 12.0)
    return float(min(1.0, special.ndtr(-mean / sd)))


def welch_log_p(base: FloatArray, cand: FloatArray) -> FloatArray:
    """Two-sided p of Welch's t between the rows of two arrays of log values."""
    n_a = np.full(base.shape[0], float(base.shape[1]))
    n_b = np.full(cand.shape[0], float(cand.shape[1]))
    mean_a, var_a = base.mean(axis=1), base.var(axis=1, ddof=1)
    mean_b, var_b = cand.mean(axis=1), cand.var(axis=1, ddof=1)
    return welch_t_pvalue(mean_a, var_a, n_a, mean_b, var_b, n_b)


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


def welch_log_tails(base: FloatArray, cand: FloatArray) -> tuple[FloatArray, FloatArray]:
    """One-sided p of Welch's t per row: ``cand`` below ``base``, and ``cand`` above it."""
    n_a = np.full(base.shape[0], float(base.shape[1]))
    n_b = np.full(cand.shape[0], float(cand.shape[1]))
    mean_a, var_a = base.mean(axis=1), base.var(axis=1, ddof=1)
    mean_b, var_b = cand.mean(axis=1), cand.var(axis=1, ddof=1)
    return welch_t_tails(mean_a, var_a, n_a, mean_b, var_b, n_b)


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


def mann_whitney_p(base: FloatArray, cand: FloatArray, *, exact: bool) -> FloatArray:
    """Two-sided p of Mann–Whitney U between rows; rows where all values tie give 1."""
    # Imported here: scipy.stats costs about 50 MB of memory, and most runs
    # (Welch on logs) never need it.
    from scipy import stats

    result = stats.mannwhitneyu(
        base, cand, axis=1, alternative="two-sided", method="exact" if exact else "asymptotic"
    )
    p = np.asarray(result.pvalue, dtype=np.float64).reshape(base.shape[0])
    both = np.concatenate([base, cand], axis=1)
    constant = np.ptp(both, axis=1) == 0.0
    return np.where(constant | ~np.isfinite(p), 1.0, np.minimum(p, 1.0))


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
