"""One new value against the history of its series (the MLPerf case), vectorised.

The test
--------
Bencher's ``t_test`` model: with the mean
``m`` and sample variance ``s²`` of the log history (``n`` points), under "no
change" and Gaussian noise of one level, ``(y − m) / (s·√(1 + 1/n))`` has
Student's t distribution on ``n − 1`` df, whatever the noise level: the
*prediction interval*. It holds its nominal false-alarm rate, where scales built on the
median absolute deviation flag too often on short histories. Two additions make it
usable at 5–20 versions:

1. **Outliers set aside by a test with a known cost on clean data.** Each
   point's *externally studentised* deviation from the others,
   ``(x_i − m₋ᵢ) / (s₋ᵢ·√(1 + 1/(n − 1)))``, has Student's t on ``n − 2`` df
   under the same model, so with Bonferroni over the ``n`` points at level
   ``outlier_p`` a clean Gaussian history loses a point with probability at most
   ``outlier_p`` (:func:`history_outliers`; the most outlying point first, at most
   ``n // 5``). Spikes of 10–30% are 5–15 noise scales and go; the first
   point and the baseline are judged like any other (the neighbour rule of
   :mod:`~tracker.stats.changepoints` cannot judge the ends, and a spike there inflated
   ``s`` of 2 histories in 10 at 10 versions). A step *at* the baseline is set aside
   too; the comparison's floor is measured against the baseline's own value, so
   the next version at the new level is not reported again.
2. **Variances pooled across the run's series** (:mod:`~tracker.stats.significance`,
   empirical Bayes as in limma): ``s²`` is replaced by its posterior ``s̃²`` on
   ``d₀ + n − 1`` df, exact under the pooling model; equal noise across series
   turns the t quantile of 5 versions (df 4) into nearly the normal one.

Measured (benchmarks/bench_detection.py, CV 2%, 1% spikes, 1,000 series of which
10% lose 10%, medians of 10 seeds): REGRESSION for 0.33 / 0.85 / 0.94 of the drops
at 5 / 10 / 20 versions before, 0.91 / 0.98 / 0.98 with both additions and the
floor on the history's level (:mod:`~tracker.stats.compare`), 0.91 / 0.98 /
0.995 with the generalised ESD and the baseline rules of the comparison, 0.85 /
0.976 / 0.989 with each directional family at half the run's level
(:mod:`~tracker.stats.compare`; 40 seeds: 0.98 / 0.99); raw
one-sided p < 0.05 on unchanged series 5.1–5.3% (4–6% required), p < 0.005
0.34–0.54% (with spikes in the history, 10,000 series: 0.49% at 10 versions, 0.51%
at 20).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import special  # type: ignore[import-untyped]

from tracker.stats.significance import TINY, pooled_variances, t_tail_pvalues

__all__ = ["PredictionTails", "history_outliers", "prediction_tails", "prediction_test"]


FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_LEAST_KEPT = 3
"""An outlier is set aside only while at least this many points remain after it."""


@dataclass(frozen=True, slots=True)
class PredictionTails:
    """One-sided p-values of new values against their history, the CI and the noise.

    ``p_less`` is the p of "the new value is below the history" (small when it is
    far below), ``p_greater`` of "above". ``low``/``high`` is the two-sided
    ``confidence`` interval of ``new − mean(history)``, ``shift`` its centre, ``sd``
    the noise scale the test used (pooled, log units), ``df`` its degrees of
    freedom, ``used`` the history points kept and ``outliers`` those set aside;
    ``last_outlier`` whether the last point of the row (the baseline) was one.
    """

    p_less: FloatArray
    p_greater: FloatArray
    shift: FloatArray
    low: FloatArray
    high: FloatArray
    sd: FloatArray
    df: FloatArray
    used: FloatArray
    outliers: FloatArray
    last_outlier: BoolArray


def _deleted_t(x: FloatArray, keep: BoolArray) -> tuple[FloatArray, FloatArray]:
    """Each kept point's externally studentised |deviation| (−1 where not kept), and ``n``."""
    n = keep.sum(axis=1).astype(np.float64)[:, None]
    xs = np.where(keep, x, 0.0)
    m = n - 1.0
    rest_mean = (xs.sum(axis=1, keepdims=True) - xs) / np.maximum(m, 1.0)
    squares = (xs * xs).sum(axis=1, keepdims=True) - xs * xs - m * rest_mean * rest_mean
    rest_var = np.maximum(squares, 0.0) / np.maximum(m - 1.0, 1.0)
    dev = np.abs(x - rest_mean)
    noisy = rest_var > TINY * TINY
    scale = np.sqrt(np.where(noisy, rest_var, 1.0) * (1.0 + 1.0 / np.maximum(m, 1.0)))
    t = np.where(noisy, dev / scale, np.where(dev > TINY, np.inf, 0.0))
    return np.where(keep, t, -1.0), n[:, 0]


def history_outliers(history: FloatArray, *, level: float) -> BoolArray:
    """The points of each row set aside as outliers (module docstring, item 1).

    ``history`` holds log values, shape ``(series, points)``; NaN marks an absent
    point (rows of different lengths). ``level`` is the chance that a clean
    Gaussian row loses a point (Bonferroni over its points).

    Generalised ESD (Rosner 1983): up to ``n // 5`` rounds each take out the most
    outlying point whether or not it is significant, and the outliers are the
    points of every round up to the *last* significant one. Stopping at the first
    round that is not significant (a forward test) let two spikes hide each other:
    each inflated the variance the other was judged by. The first round is tested
    at ``level`` as before (one spike is found as often as before); the later ones
    at ``level / rounds``, which keeps a clean row's chance of losing a point near
    ``level`` (measured on 20,000 clean rows of 5 / 10 / 20 / 50 points at level
    0.01: 1.08 / 1.18 / 0.97 / 1.05%; every round at ``level`` gave up to 1.34%).
    """
    present = np.isfinite(history)
    centre = np.nanmean(np.where(present, history, np.nan), axis=1, keepdims=True)
    x = np.where(present, history - centre, 0.0)
    keep = present.copy()
    rows = np.arange(x.shape[0])
    most = present.sum(axis=1) // 5
    last = np.full(x.shape[0], -1)
    taken: list[tuple[npt.NDArray[np.intp], BoolArray]] = []
    for round_ in range(int(most.max(initial=0))):
        t, n = _deleted_t(x, keep)
        worst = np.argmax(t, axis=1)
        t_worst = t[rows, worst]
        df = np.maximum(n - 2.0, 1.0)
        p = 2.0 * special.stdtr(df, -np.minimum(t_worst, 1e300))
        p = np.where(np.isinf(t_worst), 0.0, p)
        can = (round_ < most) & (n - 1.0 >= _LEAST_KEPT)
        if not can.any():
            break
        cut = level if round_ == 0 else level / np.maximum(most, 1)
        last = np.where(can & (p * n < cut), round_, last)
        taken.append((worst, can))
        keep[rows[can], worst[can]] = False
    out = np.zeros_like(present)
    for round_, (worst, can) in enumerate(taken):
        hit = can & (round_ <= last)
        out[rows[hit], worst[hit]] = True
    return out


def prediction_tails(
    history: FloatArray,
    new: FloatArray,
    *,
    outlier_p: float,
    confidence: float,
    pool_min_series: int = 0,
) -> PredictionTails:
    """One-sided p of each new value against its row of history (module docstring).

    Parameters
    ----------
    history
        Log values, shape ``(series, points)``, NaN for an absent point; at least 3
        points a row.
    new
        Log values, shape ``(series,)``.
    outlier_p
        Level of the outlier test (0 keeps every point).
    pool_min_series
        Pool the variances across the rows when at least this many have one
        (0: never pool; each row is its own t-test).
    """
    out = history_outliers(history, level=outlier_p) if outlier_p > 0.0 else None
    keep = np.isfinite(history) if out is None else np.isfinite(history) & ~out
    n = keep.sum(axis=1).astype(np.float64)
    mean = np.where(keep, history, 0.0).sum(axis=1) / n
    dev = np.where(keep, history - mean[:, None], 0.0)
    var = (dev * dev).sum(axis=1) / (n - 1.0)
    df = n - 1.0
    if pool_min_series > 0:
        var, df = pooled_variances(var, df, min_series=pool_min_series)
    shift = new - mean
    se2 = var * (1.0 + 1.0 / n)
    p_less, p_greater = t_tail_pvalues(shift, se2, df)
    half = special.stdtrit(df, 0.5 + confidence / 2.0) * np.sqrt(se2)
    removed = np.zeros_like(n) if out is None else out.sum(axis=1).astype(np.float64)
    last = np.zeros(len(n), dtype=bool)
    if out is not None:
        present = np.isfinite(history)
        last_index = history.shape[1] - 1 - np.argmax(present[:, ::-1], axis=1)
        last = out[np.arange(len(n)), last_index]
    return PredictionTails(
        p_less, p_greater, shift, shift - half, shift + half, np.sqrt(var), df, n, removed, last
    )


def prediction_test(
    history: FloatArray, new: FloatArray, *, outlier_p: float, confidence: float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Two-sided p of each new value against its own row of history (no pooling), and the CI.

    Returns ``p, low, high``: the p of ``new`` under the prediction interval, and the
    ``confidence`` interval of ``new − mean(history)`` (log units, not direction-aware).
    """
    found = prediction_tails(history, new, outlier_p=outlier_p, confidence=confidence)
    p = np.minimum(2.0 * np.minimum(found.p_less, found.p_greater), 1.0)
    return p, found.low, found.high
