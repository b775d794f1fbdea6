"""Change points over each version history: one-point spikes removed, then E-Divisive means.

Change points are found over each version history, for the report's annotations.

Each series is reduced to one level per version (the median of its samples),
taken to log space, de-spiked (below) and searched with
the E-Divisive means split/merge (below). Series with
fewer than ``min_points`` usable versions are skipped, and the result says so.
Versions whose level is not positive and finite are left out of the search and
listed in the result.

Change points are annotations for the report, not gate decisions: they are not
part of the Benjamini–Hochberg family. Series longer than
``ChangePointPolicy.reference_points`` (50) are searched with a stricter p-value
and a lower magnitude floor, so that false alarms do not grow with length
(:data:`tracker.stats.defaults.CHANGE_POINT_REFERENCE_POINTS`). One-point spikes
are also removed at both ends of a series (a one-point segment is no change point).
Series of up to one window also accept a *bump*, a level that leaves and comes
back, at both of its edges (below).

E-Divisive means with Otava's split/merge, vectorised over many series at once.

Written from the papers (Matteson & James 2014, "A nonparametric approach for
multiple change point analysis"; Fleming et al. 2023, "Hunter", the method of Apache
Otava), not copied from any implementation.

* **Split.** In each window, binary segmentation: the candidate is the
  ``(τ, κ)`` that maximises the energy statistic
  ``Q̂ = 2/(p+q)·ΣΣ|x−y| − 2q/((p+q)(p−1))·Σ|x−x'| − 2p/((p+q)(q−1))·Σ|y−y'|``
  (α = 1) over ``x = z[L:τ]``, ``y = z[τ:κ]`` within the interval ``[L, R)``
  between change points already found; it is accepted when Student's t
  between ``z[L:τ]`` and ``z[τ:R]`` gives p below the first-pass level, else the
  window is done. All pair-distance sums come from one 2-D prefix-sum table
  per series, so a round costs a few array operations over all series.
* **Bumps.** A level that leaves and comes back (worse for ten versions, then
  fixed) mixes both levels in ``z[τ:R]``, and binary segmentation missed both of
  its change points. So the split also accepts a candidate when ``z[L:τ]``
  against ``z[τ:κ]`` passes at the merge step's level (stricter, since ``κ`` was
  chosen to make that difference large) and ``z[τ:κ]`` has at least ``min_bump``
  points (shorter ones, a spike and its noisy neighbours, became false pairs).
  Issue 15: F1 at 50 points 0.947 → 0.956, at 12 points 0.886 → 0.913 (medians of
  10 seeds). Series longer than one window do not need it (windows that start
  inside a bump see one of its edges as a plain step) and do not use it: there
  the scan over every ``(τ, κ)`` of 200 points turned noise dips into pairs
  (false alarms at 200 points 0.32% → 0.43%).
* **Merge.** Repeatedly drop the weakest change point (highest p, or, when all p
  pass, the smallest magnitude) and re-test its neighbours, until every change
  point has p below ``max_pvalue`` and magnitude above ``min_magnitude``. A
  change point next to a segment shorter than ``min_segment`` is always
  dropped first.

Windows of ``window`` points step by half a window (Otava steps to the last
change point found when that is further; here the step is fixed, so windows can
be processed as one batch).

Removal of one-point spikes that revert (Conbench's outlier rule, Hampel-style).

A point is a spike when it lies far from *both* neighbours while the
neighbours agree with each other; it is replaced by their mean. "Far" is
``k`` noise scales, the scale being the MAD of first differences over √2
(the noise of one point when the differences are noise). Work in log space so
that the rule does not depend on units.

Unlike a sequential filter that judges each point against already-filtered ones, all
interior points are judged against the *original* neighbours at once, so the
rule vectorises over many series; two adjacent spikes are left alone by both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tracker.stats.defaults import DESPIKE_K, ChangePointPolicy
from tracker.stats.series import SeriesSamples, direction
from tracker.stats.significance import pooled_t_pvalue

__all__ = [
    "ChangePoint",
    "ChangePointResult",
    "despike",
    "detect_change_points",
    "find_change_points",
    "merge",
    "noise_scale",
    "segment_tests",
    "split",
    "window_starts",
]


FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_MAD_TO_SIGMA = 1.4826
_SCALE_FLOOR = 1e-12
"""Stands in for a zero noise scale: a constant series makes any excursion a spike."""


def noise_scale(values: FloatArray) -> FloatArray:
    """The per-row noise scale of a 2-D array: ``1.4826 · MAD(diff) / √2``, at least 1e-12."""
    diffs = np.diff(values, axis=1)
    centre = np.median(diffs, axis=1, keepdims=True)
    mad = np.median(np.abs(diffs - centre), axis=1)
    scale = _MAD_TO_SIGMA * mad / np.sqrt(2.0)
    return np.asarray(np.maximum(scale, _SCALE_FLOOR), dtype=np.float64)


def despike(
    values: FloatArray, k: float = DESPIKE_K, *, ends: bool = False
) -> tuple[FloatArray, BoolArray]:
    """Replace reverting one-point spikes in each row of a 2-D array.

    Parameters
    ----------
    values
        Shape ``(series, points)``, normally log values.
    k
        How many noise scales make an excursion a spike.
    ends
        Also judge the first and last point: one is a spike when it lies far from
        its neighbour and the next point while those two agree; it is then
        replaced by its neighbour. (For change points, where a one-point segment
        cannot be a change anyway; not for a comparison's history, whose last
        point is the baseline.)

    Returns
    -------
    cleaned, spikes
        The cleaned copy, and a mask of the points that were replaced. Rows
        shorter than 3 points are returned unchanged.
    """
    out = np.array(values, dtype=np.float64, copy=True)
    mask = np.zeros(out.shape, dtype=np.bool_)
    if out.ndim != 2 or out.shape[1] < 3:
        return out, mask
    limit = (k * noise_scale(out))[:, None]
    lo, mid, hi = out[:, :-2], out[:, 1:-1], out[:, 2:]
    far = np.minimum(np.abs(mid - lo), np.abs(mid - hi)) > limit
    spike = far & (np.abs(hi - lo) < limit)
    mask[:, 1:-1] = spike
    cleaned = np.where(spike, 0.5 * (lo + hi), mid)
    if ends:
        for edge, near, next_ in ((0, 1, 2), (-1, -2, -3)):
            far_end = (
                np.minimum(
                    np.abs(out[:, edge] - out[:, near]), np.abs(out[:, edge] - out[:, next_])
                )
                > limit[:, 0]
            )
            calm = np.abs(out[:, near] - out[:, next_]) < limit[:, 0]
            hit = far_end & calm
            mask[:, edge] = hit
            out[:, edge] = np.where(hit, out[:, near], out[:, edge])
    out[:, 1:-1] = cleaned
    return out, mask


IntArray = npt.NDArray[np.intp]

_CHUNK = 64
"""Windows processed together: keeps the (chunk, w+1, w+1) tables cache-sized (fastest here)."""


def window_starts(n: int, window: int) -> list[int]:
    """Start of each window of ``window`` points over ``n`` points, stepping by half a window."""
    if n <= window:
        return [0]
    step = max(window // 2, 1)
    return [*range(0, n - window, step), n - window]


def _neighbours(bound: BoolArray) -> tuple[IntArray, IntArray]:
    """For rows of boundary masks over positions ``0..n``: the boundary before and after each.

    ``left[t]`` is the last boundary ``< t`` (0 for t = 0) and ``right[t]`` the first
    boundary ``> t`` (n for t = n). Position 0 and n must be boundaries.
    """
    n = bound.shape[1] - 1
    idx = np.arange(n + 1)
    upto = np.maximum.accumulate(np.where(bound, idx, 0), axis=1)
    left = np.zeros_like(upto)
    left[:, 1:] = upto[:, :-1]
    fromr = np.minimum.accumulate(np.where(bound, idx, n)[:, ::-1], axis=1)[:, ::-1]
    right = np.full_like(fromr, n)
    right[:, :-1] = fromr[:, 1:]
    return left, right


def _prefix(x: FloatArray) -> tuple[FloatArray, FloatArray]:
    p1 = np.zeros((x.shape[0], x.shape[1] + 1))
    p2 = np.zeros_like(p1)
    np.cumsum(x, axis=1, out=p1[:, 1:])
    np.cumsum(x * x, axis=1, out=p2[:, 1:])
    return p1, p2


def _segment(
    p1: FloatArray, p2: FloatArray, rows: IntArray, start: IntArray, stop: IntArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Mean, sample variance and count of ``x[rows, start:stop]`` (count >= 1)."""
    count = np.maximum(stop - start, 1).astype(np.float64)
    total = p1[rows, stop] - p1[rows, start]
    squares = p2[rows, stop] - p2[rows, start]
    mean = total / count
    var = np.maximum(squares - count * mean * mean, 0.0) / np.maximum(count - 1.0, 1.0)
    return mean, var, count


def _split_test(
    p1: FloatArray,
    p2: FloatArray,
    rows: IntArray,
    left: IntArray,
    tau: IntArray,
    right: IntArray,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Student's t of ``x[left:tau]`` against ``x[tau:right]``: p, mean before, mean after."""
    m1, v1, n1 = _segment(p1, p2, rows, left, tau)
    m2, v2, n2 = _segment(p1, p2, rows, tau, right)
    return pooled_t_pvalue(m1, v1, n1, m2, v2, n2), m1, m2


class _Tables:
    """Pair-distance sums of a chunk of windows, shared by every round of the split.

    ``table`` is the 2-D prefix sum ``S[a, b] = Σ_{i<a, j<b} |x_i − x_j|`` and ``diag``
    its diagonal. The sum of distances inside ``x[τ:κ]`` is
    ``(S[κ, κ] − 2·S[τ, κ] + S[τ, τ]) / 2``, and inside ``x[L:τ]`` likewise.
    """

    def __init__(self, x: FloatArray, min_segment: int) -> None:
        c, w = x.shape
        dist = np.abs(x[:, :, None] - x[:, None, :])
        self.table = np.zeros((c, w + 1, w + 1))
        np.cumsum(np.cumsum(dist, axis=1), axis=2, out=self.table[:, 1:, 1:])
        self.idx = np.arange(w + 1)
        self.diag = self.table[:, self.idx, self.idx]
        self.q = (self.idx[None, :] - self.idx[:, None]).astype(np.float64)
        self.inv_qm1 = 1.0 / np.maximum(self.q - 1.0, 1.0)
        self.min_segment = min_segment

    def first_round(self) -> tuple[IntArray, IntArray, BoolArray]:
        """Best split of each whole window (every interval starts at 0, where S is zero).

        With ``L = 0``: ``κ·Q̂ = S·c1 − S[τ,τ]·c2 − S[κ,κ]·c3`` for fixed coefficient grids.
        """
        idx, q, inv_qm1 = self.idx, self.q, self.inv_qm1
        tau = idx.astype(np.float64)[:, None]
        inv_kappa = (1.0 / np.maximum(idx, 1))[None, :]
        c1 = (2.0 + 2.0 * tau * inv_qm1) * inv_kappa
        c2 = (2.0 + q / np.maximum(tau - 1.0, 1.0) + tau * inv_qm1) * inv_kappa
        c3 = tau * inv_qm1 * inv_kappa
        ok = (tau >= self.min_segment) & (q >= self.min_segment)
        qhat = self.table * c1[None, :, :]
        qhat -= self.diag[:, :, None] * c2[None, :, :]
        qhat -= self.diag[:, None, :] * c3[None, :, :]
        qhat += np.where(ok, 0.0, -np.inf)[None, :, :]
        return _argmax_tau(qhat)

    def later_round(self, rows: IntArray, bound: BoolArray) -> tuple[IntArray, IntArray, BoolArray]:
        """Best split of each row given the change points already in ``bound``."""
        idx, q = self.idx, self.q
        table, diag = self.table[rows], self.diag[rows]
        left, right = _neighbours(bound)
        at_left = table[np.arange(rows.size)[:, None], left]  # S[i, L(τ), κ]
        left_diag = at_left[:, idx, idx]
        within_left = diag - 2.0 * left_diag + np.take_along_axis(diag, left, axis=1)
        within = diag[:, None, :] - 2.0 * table
        within += diag[:, :, None]
        within *= self.inv_qm1[None, :, :]
        p = (idx[None, :] - left).astype(np.float64)
        qhat = table - at_left
        qhat -= (diag - left_diag)[:, :, None]
        qhat *= 2.0
        qhat -= q[None, :, :] * (within_left / np.maximum(p - 1.0, 1.0))[:, :, None]
        qhat -= p[:, :, None] * within
        qhat /= np.maximum(p[:, :, None] + q[None, :, :], 1.0)
        ok = (idx[None, None, :] <= right[:, :, None]) & (q >= self.min_segment)[None, :, :]
        ok &= ((p >= self.min_segment) & ~bound)[:, :, None]
        return _argmax_tau(np.where(ok, qhat, -np.inf))


def _argmax_tau(qhat: FloatArray) -> tuple[IntArray, IntArray, BoolArray]:
    """The ``(τ, κ)`` of the largest ``Q̂[τ, κ]`` per row, and whether it is finite (allowed)."""
    k, size = qhat.shape[0], qhat.shape[1]
    flat = qhat.reshape(k, -1)
    best = np.argmax(flat, axis=1)
    return (
        (best // size).astype(np.intp),
        (best % size).astype(np.intp),
        np.isfinite(flat[np.arange(k), best]),
    )


def _split_chunk(
    x: FloatArray, min_segment: int, pvalue: float, bump: tuple[int, float]
) -> BoolArray:
    c, w = x.shape
    tables = _Tables(x, min_segment)
    p1, p2 = _prefix(x)
    bound = np.zeros((c, w + 1), dtype=np.bool_)
    bound[:, 0] = bound[:, w] = True
    active = np.arange(c)
    tau, kappa, has = tables.first_round()
    while active.size:
        left, right = _neighbours(bound[active])
        rows = np.arange(active.size)
        p, _, _ = _split_test(p1, p2, active, left[rows, tau], tau, right[rows, tau])
        end = np.maximum(kappa, tau + 1)
        p_bump, _, _ = _split_test(p1, p2, active, left[rows, tau], tau, end)
        p = np.where((kappa - tau >= bump[0]) & (p_bump < bump[1]), 0.0, p)
        accept = has & (p < pvalue)
        bound[active[accept], tau[accept]] = True
        active = active[accept]
        if active.size:
            tau, kappa, has = tables.later_round(active, bound[active])
    bound[:, 0] = False
    return bound[:, :w]


def split(
    x: FloatArray,
    *,
    window: int,
    min_segment: int,
    pvalue: float,
    bump_pvalue: float = 0.0,
    min_bump: int | None = None,
) -> BoolArray:
    """Weak change points of each row of ``x`` (shape ``(series, points)``), as a mask.

    ``mask[i, t]`` is true when a new segment of series ``i`` starts at point ``t``.
    A candidate is also accepted when ``[L, τ)`` against ``[τ, κ)`` gives p below
    ``bump_pvalue`` (0: never) and ``[τ, κ)`` has at least ``min_bump`` points
    (default ``2 · min_segment``; module docstring, "bumps").
    """
    m, n = x.shape
    bump = (2 * min_segment if min_bump is None else min_bump, bump_pvalue)
    starts = window_starts(n, window)
    w = min(n, window)
    windows = np.stack([x[:, s : s + w] for s in starts], axis=1).reshape(m * len(starts), w)
    found = np.zeros((windows.shape[0], w), dtype=np.bool_)
    for lo in range(0, windows.shape[0], _CHUNK):
        found[lo : lo + _CHUNK] = _split_chunk(windows[lo : lo + _CHUNK], min_segment, pvalue, bump)
    found = found.reshape(m, len(starts), w)
    mask = np.zeros((m, n), dtype=np.bool_)
    for j, s in enumerate(starts):
        mask[:, s : s + w] |= found[:, j, :]
    return mask


def segment_tests(
    x: FloatArray, mask: BoolArray
) -> tuple[FloatArray, FloatArray, FloatArray, IntArray, IntArray]:
    """The test of every change point in ``mask`` against its neighbouring change points.

    Returns p, mean before, mean after (shape ``(series, points)``; set where ``mask``
    is, p = 1 and means 0 elsewhere), and for every position the start of the segment
    before and the end of the segment after it.
    """
    m, n = x.shape
    bound = np.zeros((m, n + 1), dtype=np.bool_)
    bound[:, 0] = bound[:, n] = True
    bound[:, :n] |= mask
    left, right = _neighbours(bound)
    rows, cols = np.nonzero(mask)
    p1, p2 = _prefix(x)
    found, m1, m2 = _split_test(p1, p2, rows, left[rows, cols], cols, right[rows, cols])
    p, before, after = np.ones((m, n)), np.zeros((m, n)), np.zeros((m, n))
    p[rows, cols], before[rows, cols], after[rows, cols] = found, m1, m2
    return p, before, after, left[:, :n], right[:, :n]


def merge(
    x: FloatArray,
    mask: BoolArray,
    *,
    min_segment: int,
    max_pvalue: float,
    min_magnitude: float,
) -> BoolArray:
    """Drop weak change points from ``mask`` until all pass ``max_pvalue`` and ``min_magnitude``.

    The magnitude of a change point is ``|exp(mean after − mean before) − 1|`` of the
    log values, i.e. the relative change of the geometric means of its segments.
    """
    out = np.array(mask, dtype=np.bool_, copy=True)
    active = np.flatnonzero(out.any(axis=1))
    while active.size:
        sub = out[active]
        p, before, after, left, right = segment_tests(x[active], sub)
        tau = np.arange(x.shape[1])[None, :]
        short = ((tau - left) < min_segment) | ((right - tau) < min_segment)
        weakness = np.where(sub, p + short, -1.0)
        magnitude = np.where(sub, np.abs(np.expm1(after - before)), np.inf)
        rows = np.arange(active.size)
        worst = np.argmax(weakness, axis=1)
        smallest = np.argmin(magnitude, axis=1)
        by_p = weakness[rows, worst] >= max_pvalue
        by_size = ~by_p & (magnitude[rows, smallest] <= min_magnitude)
        drop = by_p | by_size
        where = np.where(by_p, worst, smallest)
        out[active[drop], where[drop]] = False
        active = active[drop]
        active = active[out[active].any(axis=1)]
    return out


@dataclass(frozen=True, slots=True)
class ChangePoint:
    """A change of level between two consecutive versions of a series.

    ``index`` is the position (in the series' versions) of the first version of
    the new segment. Levels are geometric means of the de-spiked segments on
    either side; ``g`` is their direction-aware log-ratio (negative is worse).
    """

    index: int
    version_before: str
    version_after: str
    level_before: float
    level_after: float
    g: float
    p_value: float

    @property
    def delta_pct(self) -> float:
        """The raw relative change of the level in percent."""
        return 100.0 * (self.level_after / self.level_before - 1.0)

    @property
    def is_regression(self) -> bool:
        """Whether the series got worse at this change point."""
        return self.g < 0.0


@dataclass(frozen=True, slots=True)
class ChangePointResult:
    """The change points of one series, or why it was skipped."""

    key: str
    n_points: int
    change_points: tuple[ChangePoint, ...] = ()
    spikes: tuple[str, ...] = ()
    """Versions whose level was treated as a one-point spike."""
    excluded: tuple[str, ...] = ()
    """Versions left out because their level is not positive and finite."""
    skipped_reason: str = ""

    @property
    def is_skipped(self) -> bool:
        return bool(self.skipped_reason)


@dataclass(frozen=True, slots=True)
class _Found:
    mask: BoolArray
    spikes: BoolArray
    p: FloatArray
    before: FloatArray
    after: FloatArray


def _detect(logs: FloatArray, policy: ChangePointPolicy) -> _Found:
    clean, spikes = despike(logs, policy.despike_k, ends=True)
    centre = np.median(clean, axis=1, keepdims=True)
    centred = clean - centre
    points = logs.shape[1]
    max_p = policy.max_pvalue_for(points)
    min_segment = policy.min_segment_for(points)
    weak = split(
        centred,
        window=policy.window,
        min_segment=min_segment,
        pvalue=min(max_p * policy.first_pass_factor, 0.5),
        bump_pvalue=max_p if points <= policy.window else 0.0,
    )
    mask = merge(
        centred,
        weak,
        min_segment=min_segment,
        max_pvalue=max_p,
        min_magnitude=policy.min_magnitude_for(points),
    )
    p, before, after, _, _ = segment_tests(centred, mask)
    return _Found(mask, spikes, p, before + centre, after + centre)


def find_change_points(
    values: npt.ArrayLike, *, policy: ChangePointPolicy | None = None
) -> list[tuple[int, ...]]:
    """Change-point positions of each row of positive values (1-D: one series).

    The array-level entry point: no skipping, no version labels. Rows must have
    at least ``2 · min_segment`` points, and every value must be positive.
    """
    pol = policy or ChangePointPolicy()
    arr = np.asarray(values, dtype=np.float64)
    rows = arr[None, :] if arr.ndim == 1 else arr
    if rows.ndim != 2 or rows.shape[1] < 2 * pol.min_segment:
        raise ValueError("values must be 1-D or 2-D with at least 2 * min_segment points")
    if not np.all(np.isfinite(rows) & (rows > 0.0)):
        raise ValueError("values must be positive and finite")
    found = _detect(np.log(rows), pol)
    return [tuple(int(i) for i in np.flatnonzero(r)) for r in found.mask]


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A series ready for detection: the positions of its usable versions and their logs."""

    series: SeriesSamples
    positions: tuple[int, ...]
    logs: FloatArray
    excluded: tuple[str, ...]


def level_rows(series: Sequence[SeriesSamples]) -> list[FloatArray]:
    """Each series' per-version medians; series of one rectangular shape in one array call
    (shared with :mod:`tracker.stats.drift`)."""
    out: list[FloatArray | None] = [None] * len(series)
    shapes: dict[tuple[int, int], list[int]] = {}
    for i, s in enumerate(series):
        widths = {len(t) for t in s.samples}
        if len(widths) == 1 and 0 not in widths:
            shapes.setdefault((len(s.samples), widths.pop()), []).append(i)
        else:
            out[i] = np.array(s.levels(), dtype=np.float64)
    for members in shapes.values():
        block = np.array([series[i].samples for i in members], dtype=np.float64)
        levels = np.median(block, axis=2)
        for row, i in enumerate(members):
            out[i] = levels[row]
    return [row for row in out if row is not None]


def prepare_levels(series: SeriesSamples, levels: FloatArray) -> _Prepared:
    """The usable versions of a series (positive, finite levels) and their logs."""
    usable = np.isfinite(levels) & (levels > 0.0)
    if usable.all():
        return _Prepared(series, tuple(range(levels.size)), np.log(levels), ())
    positions = np.flatnonzero(usable)
    excluded = tuple(series.versions[i] for i in np.flatnonzero(~usable))
    return _Prepared(series, tuple(int(i) for i in positions), np.log(levels[usable]), excluded)


def _annotate(prep: _Prepared, found: _Found, row: int) -> ChangePointResult:
    s = prep.series
    sign = direction(s.higher_is_better)
    points = []
    for j in np.flatnonzero(found.mask[row]):
        before, after = float(found.before[row, j]), float(found.after[row, j])
        points.append(
            ChangePoint(
                index=prep.positions[j],
                version_before=s.versions[prep.positions[j - 1]],
                version_after=s.versions[prep.positions[j]],
                level_before=math.exp(before),
                level_after=math.exp(after),
                g=sign * (after - before),
                p_value=float(found.p[row, j]),
            )
        )
    spikes = tuple(s.versions[prep.positions[j]] for j in np.flatnonzero(found.spikes[row]))
    return ChangePointResult(s.key, len(prep.positions), tuple(points), spikes, prep.excluded)


def detect_change_points(
    series: Sequence[SeriesSamples], *, policy: ChangePointPolicy | None = None
) -> tuple[ChangePointResult, ...]:
    """Change points of every series, in the order given (vectorised per series length)."""
    pol = policy or ChangePointPolicy()
    prepared = [prepare_levels(s, lv) for s, lv in zip(series, level_rows(series), strict=True)]
    results: list[ChangePointResult | None] = [None] * len(prepared)
    by_length: dict[int, list[int]] = {}
    for i, prep in enumerate(prepared):
        n = len(prep.positions)
        if n < pol.min_points:
            reason = f"{n} usable versions; change points need at least {pol.min_points}"
            results[i] = ChangePointResult(
                prep.series.key, n, excluded=prep.excluded, skipped_reason=reason
            )
        else:
            by_length.setdefault(n, []).append(i)
    for members in by_length.values():
        found = _detect(np.stack([prepared[i].logs for i in members]), pol)
        for row, i in enumerate(members):
            results[i] = _annotate(prepared[i], found, row)
    return tuple(r for r in results if r is not None)
