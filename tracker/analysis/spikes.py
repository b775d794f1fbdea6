"""Removal of one-point spikes that revert (Conbench's outlier rule, Hampel-style).

A point is a spike when it lies far from *both* neighbours while the
neighbours agree with each other; it is replaced by their mean. "Far" is
``k`` noise scales, the scale being the MAD of first differences over √2
(the noise of one point when the differences are noise). Work in log space so
that the rule does not depend on units.

Unlike the sequential ten-line filter of the anchors' Appendix A, all
interior points are judged against the *original* neighbours at once, so the
rule vectorises over many series; two adjacent spikes are left alone by both.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tracker.analysis.defaults import DESPIKE_K

__all__ = ["despike", "noise_scale"]

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
