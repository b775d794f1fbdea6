"""Slow drifts over each version history: a trend named as a trend, not one arbitrary step.

A series that loses a little at every version has no change point: E-Divisive
cuts it somewhere in the middle and reports one step of half the drift at a
random version. Here each series is reduced as for change points (median per
version, logs, reverting spikes removed) and

1. **tested** for a monotonic trend with the Mann–Kendall test (``S = Σ_{i<j}
   sign(x_j − x_i)``, normal approximation with continuity correction,
   two-sided); the p-values of every series in one call form one
   Benjamini–Hochberg family (a drift is an annotation like a change point, not
   part of the gate's families);
2. **shaped**: the best *hinge* (flat up to version ``k``, then a straight line
   to the newest version) is compared with the best single *step* (two levels),
   both by least squares with the same number of free parameters (a level, a
   change, a position); a drift needs the hinge to fit better;
3. **measured**: the slope is the Theil–Sen estimate (median of pairwise
   slopes, robust to the odd outlier) over the versions from ``k`` on, and the
   drift must run over at least ``min_span`` versions and change the level by
   more than ``min_magnitude`` in total.

A series with a drift is reported as ``drift`` with its slope per version and
the version where it started; the caller drops its change points inside the
drift (:func:`drift_covers`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from scipy import special  # type: ignore[import-untyped]

from tracker.stats.changepoints import ChangePointResult, despike, level_rows, prepare_levels
from tracker.stats.defaults import DriftPolicy
from tracker.stats.series import SeriesSamples, direction
from tracker.stats.significance import q_values

__all__ = [
    "Drift",
    "DriftResult",
    "detect_drifts",
    "drift_covers",
    "mann_kendall",
    "outside_drifts",
    "theil_sen",
]


FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]

_CHUNK = 512
"""Series per block of pairwise differences (keeps the (chunk, n, n) arrays small)."""


@dataclass(frozen=True, slots=True)
class Drift:
    """A steady change of level from ``version_start`` to the newest version.

    ``slope`` is the Theil–Sen slope of the log level per version (raw, not
    direction-aware), ``g_per_version`` its direction-aware value (negative is
    worse). ``start_index`` is the position of ``version_start`` in the series.
    """

    start_index: int
    version_start: str
    version_end: str
    span: int
    slope: float
    g_per_version: float
    p_value: float
    q_value: float

    @property
    def slope_pct(self) -> float:
        """The raw relative change per version in percent (−0.2 means 0.2% lower each)."""
        return 100.0 * math.expm1(self.slope)

    @property
    def total_pct(self) -> float:
        """The raw relative change over the drift in percent."""
        return 100.0 * math.expm1(self.slope * (self.span - 1))

    @property
    def is_regression(self) -> bool:
        """Whether the series drifts the worse way."""
        return self.g_per_version < 0.0


@dataclass(frozen=True, slots=True)
class DriftResult:
    """The drift of one series (``None`` when there is none), or why it was skipped."""

    key: str
    n_points: int
    drift: Drift | None = None
    skipped_reason: str = ""

    @property
    def is_skipped(self) -> bool:
        return bool(self.skipped_reason)


def mann_kendall(values: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Per row: Mann–Kendall ``S`` and its two-sided p (normal approximation, no tie term)."""
    m, n = values.shape
    s = np.zeros(m)
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    for lo in range(0, m, _CHUNK):
        block = values[lo : lo + _CHUNK]
        signs = np.sign(block[:, None, :] - block[:, :, None])
        s[lo : lo + _CHUNK] = signs[:, upper].sum(axis=1)
    var = n * (n - 1) * (2 * n + 5) / 18.0
    z = np.where(s > 0, s - 1.0, np.where(s < 0, s + 1.0, 0.0)) / math.sqrt(var)
    return s, np.asarray(np.minimum(2.0 * special.ndtr(-np.abs(z)), 1.0), dtype=np.float64)


def theil_sen(values: FloatArray) -> FloatArray:
    """Per row: the median of the slopes between every pair of points (x = 0, 1, 2, …)."""
    n = values.shape[1]
    i, j = np.triu_indices(n, k=1)
    return np.asarray(np.median((values[:, j] - values[:, i]) / (j - i), axis=1))


def _best_step(y: FloatArray, min_segment: int) -> FloatArray:
    """Per row: the smallest residual sum of squares of a two-level fit."""
    n = y.shape[1]
    total = y.sum(axis=1, keepdims=True)
    cum = np.cumsum(y, axis=1)[:, :-1]  # sums of y[:tau] for tau = 1 .. n-1
    tau = np.arange(1, n, dtype=np.float64)
    m1 = cum / tau
    m2 = (total - cum) / (n - tau)
    gain = tau * (n - tau) / n * (m1 - m2) ** 2
    ok = (tau >= min_segment) & (n - tau >= min_segment)
    syy = ((y - y.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    return np.asarray(syy - np.where(ok, gain, -np.inf).max(axis=1))


def _best_hinge(y: FloatArray, min_span: int) -> tuple[FloatArray, IntArray]:
    """Per row: the smallest residual sum of squares of "flat, then a line", and its start."""
    n = y.shape[1]
    t = np.arange(n, dtype=np.float64)
    starts = np.arange(0, n - min_span + 1)
    x = np.maximum(0.0, t[None, :] - starts[:, None])  # (K, n)
    xc = x - x.mean(axis=1, keepdims=True)
    sxx = (xc * xc).sum(axis=1)
    yc = y - y.mean(axis=1, keepdims=True)
    sxy = yc @ xc.T  # (m, K)
    sse = (yc * yc).sum(axis=1, keepdims=True) - sxy * sxy / sxx[None, :]
    best = np.argmin(sse, axis=1)
    return sse[np.arange(y.shape[0]), best], starts[best].astype(np.intp)


def _search(logs: FloatArray, policy: DriftPolicy) -> tuple[FloatArray, FloatArray, IntArray]:
    """Per row: MK p, whether the hinge beats the step, the hinge start (as floats/ints)."""
    clean, _ = despike(logs, policy.despike_k)
    _, p = mann_kendall(clean)
    hinge, start = _best_hinge(clean, policy.min_span)
    step = _best_step(clean, 2)
    return p, (hinge < step).astype(np.float64), start


def detect_drifts(
    series: Sequence[SeriesSamples], *, policy: DriftPolicy | None = None
) -> tuple[DriftResult, ...]:
    """The drift of every series, in the order given; one BH family over all of them."""
    pol = policy or DriftPolicy()
    prepared = [prepare_levels(s, lv) for s, lv in zip(series, level_rows(series), strict=True)]
    p_all = np.ones(len(prepared))
    shaped = np.zeros(len(prepared))
    starts = np.zeros(len(prepared), dtype=np.intp)
    by_length: dict[int, list[int]] = {}
    for i, prep in enumerate(prepared):
        if len(prep.positions) >= pol.min_points:
            by_length.setdefault(len(prep.positions), []).append(i)
    tested = [i for members in by_length.values() for i in members]
    for members in by_length.values():
        p, hinge, start = _search(np.stack([prepared[i].logs for i in members]), pol)
        p_all[members], shaped[members], starts[members] = p, hinge, start
    q_all = np.ones(len(prepared))
    if tested:
        q_all[tested] = q_values(p_all[tested])
    out = []
    for i, prep in enumerate(prepared):
        n = len(prep.positions)
        key = prep.series.key
        if n < pol.min_points:
            reason = f"{n} usable versions; a drift needs at least {pol.min_points}"
            out.append(DriftResult(key, n, skipped_reason=reason))
            continue
        found = None
        if q_all[i] < pol.q_level and shaped[i] > 0.0:
            found = _measure(prep.series, prep.positions, prep.logs, int(starts[i]), pol)
            if found is not None:
                found = replace(found, p_value=float(p_all[i]), q_value=float(q_all[i]))
        out.append(DriftResult(key, n, found))
    return tuple(out)


def _measure(
    s: SeriesSamples,
    positions: Sequence[int],
    logs: FloatArray,
    start: int,
    policy: DriftPolicy,
) -> Drift | None:
    clean, _ = despike(logs[None, start:], policy.despike_k)
    span = clean.shape[1]
    slope = float(theil_sen(clean)[0])
    if span < policy.min_span or abs(slope) * (span - 1) <= policy.min_magnitude:
        return None
    return Drift(
        start_index=positions[start],
        version_start=s.versions[positions[start]],
        version_end=s.versions[positions[-1]],
        span=span,
        slope=slope,
        g_per_version=direction(s.higher_is_better) * slope,
        p_value=1.0,
        q_value=1.0,
    )


def drift_covers(result: DriftResult, index: int) -> bool:
    """Whether a change point at ``index`` (a position in the series) lies in the drift."""
    return result.drift is not None and index > result.drift.start_index


def outside_drifts(
    results: Sequence[ChangePointResult], drifts: Sequence[DriftResult]
) -> tuple[ChangePointResult, ...]:
    """``results`` without the change points that lie inside their series' drift."""
    by_key = {d.key: d for d in drifts if d.drift is not None}
    out = []
    for r in results:
        d = by_key.get(r.key)
        if d is not None:
            kept = tuple(cp for cp in r.change_points if not drift_covers(d, cp.index))
            r = replace(r, change_points=kept)
        out.append(r)
    return tuple(out)
