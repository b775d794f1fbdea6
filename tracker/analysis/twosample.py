"""Two-sample comparisons of repeats, vectorised over many series of equal shape.

All inputs are log values, one row per series: ``base`` of shape ``(m, n_a)`` and
``cand`` of shape ``(m, n_b)``. The test follows the anchors' §5.3 A: Welch's t
on log values for few repeats, Mann–Whitney U from :data:`MWU_MIN_REPEATS` up
(exact to :data:`MWU_EXACT_MAX`), after checking, as asv's ``is_different``
does, that the test can reach the significance level at all.

The bootstrap CI of the change of medians uses the fact that the median of a
resample of sorted data is a function of the resampled *positions* only: one
draw of positions per sample size serves every series, and a resample's median
is a gather. When both sides have the same size, the two pairings of the two
position draws are pooled, so swapping baseline and candidate gives exactly the
negated CI.
"""

from __future__ import annotations

import math
from enum import StrEnum

import numpy as np
import numpy.typing as npt
from scipy import special  # type: ignore[import-untyped]

from tracker.analysis.ttests import welch_t_pvalue, welch_t_tails

__all__ = [
    "Method",
    "advised_repeats",
    "bootstrap_ci",
    "choose_test",
    "min_attainable_p",
    "mann_whitney_p",
    "mann_whitney_tails",
    "welch_log_p",
    "welch_log_tails",
]

FloatArray = npt.NDArray[np.float64]
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
    :mod:`tracker.analysis.verdicts`.)
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
