"""Empirical-Bayes pooling of noise variances across the series of one run (Smyth 2004).

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
nominal (measured, issue 15), the quietest less often. The pooling is skipped
below ``min_series`` series with a usable variance (the prior would be a guess).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy import special  # type: ignore[import-untyped]

__all__ = ["MAX_PRIOR_DF", "pooled_variances", "trigamma_inverse", "variance_prior"]

FloatArray = npt.NDArray[np.float64]

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
