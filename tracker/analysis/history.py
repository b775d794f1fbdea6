"""One new value against the history of its series (the MLPerf case), vectorised.

Bencher's ``t_test`` model, as the anchors' §5.3 B recommends: the mean and
sample standard deviation (ddof = 1) of the de-spiked log history, and the
Student-t *prediction interval* with ``n − 1`` degrees of freedom and scale
``s·√(1 + 1/n)``. Measured in the anchors' §4 on 20,000 null series: this holds
its nominal false-alarm rate, where MAD-based scales do not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import special  # type: ignore[import-untyped]

from tracker.analysis.spikes import despike
from tracker.analysis.ttests import t_pvalue, t_tail_pvalues

__all__ = ["PredictionTails", "prediction_tails", "prediction_test"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class PredictionTails:
    """One-sided p-values of new values against their history, the CI and the noise.

    ``p_less`` is the p of "the new value is below the history" (small when it is
    far below), ``p_greater`` of "above". ``low``/``high`` is the two-sided
    ``confidence`` interval of ``new − mean(history)``, ``shift`` its centre and
    ``sd`` the history's sample standard deviation (log units).
    """

    p_less: FloatArray
    p_greater: FloatArray
    shift: FloatArray
    low: FloatArray
    high: FloatArray
    sd: FloatArray


def prediction_tails(
    history: FloatArray, new: FloatArray, *, despike_k: float, confidence: float
) -> PredictionTails:
    """:func:`prediction_test` with one-sided p-values (see :class:`PredictionTails`)."""
    clean, _ = despike(history, despike_k)
    n = float(clean.shape[1])
    mean = clean.mean(axis=1)
    var = clean.var(axis=1, ddof=1)
    shift = new - mean
    se2 = var * (1.0 + 1.0 / n)
    df = np.full(shift.shape, n - 1.0)
    p_less, p_greater = t_tail_pvalues(shift, se2, df)
    half = float(special.stdtrit(n - 1.0, 0.5 + confidence / 2.0)) * np.sqrt(se2)
    return PredictionTails(p_less, p_greater, shift, shift - half, shift + half, np.sqrt(var))


def prediction_test(
    history: FloatArray, new: FloatArray, *, despike_k: float, confidence: float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Two-sided p of each new value against its row of history, and a CI of the shift.

    Parameters
    ----------
    history
        Log values, shape ``(series, n)`` with ``n >= 3``; reverting spikes are removed first.
    new
        Log values, shape ``(series,)``.

    Returns
    -------
    p, low, high
        p of ``new`` under the prediction interval, and the ``confidence`` interval
        of ``new − mean(history)`` (log units, not yet direction-aware).
    """
    clean, _ = despike(history, despike_k)
    n = float(clean.shape[1])
    mean = clean.mean(axis=1)
    var = clean.var(axis=1, ddof=1)
    shift = new - mean
    se2 = var * (1.0 + 1.0 / n)
    df = np.full(shift.shape, n - 1.0)
    p = t_pvalue(shift, se2, df)
    half = float(special.stdtrit(n - 1.0, 0.5 + confidence / 2.0)) * np.sqrt(se2)
    return p, shift - half, shift + half
