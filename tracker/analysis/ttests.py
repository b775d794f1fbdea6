"""Vectorised two-sample t-tests from summary statistics.

scipy's ``ttest_ind`` warns (and our tests turn warnings into errors) when both
samples are constant; these versions define that case instead: equal means
give p = 1, different means p = 0 (a difference with no noise at all).
Means closer than :data:`TINY` count as equal, variances below ``TINY²`` as zero,
which keeps results stable when all values are scaled by a constant.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy import special  # type: ignore[import-untyped]

__all__ = [
    "TINY",
    "pooled_t_pvalue",
    "t_pvalue",
    "t_tail_pvalues",
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
