"""Multiple testing: Benjamini–Hochberg q-values over one analysis run.

Every p-value of one run (all series, all metrics, all version pairs) goes into
one call, and the family size is reported with the result: BH's power falls as
the family grows, so a reader needs it to judge a "no change". No anchor tracker
corrects for multiple testing; §4 of the anchors doc measured 33–49 false flags
per 1,000 raw tests against 0–5 after BH.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = ["FamilyAdjustment", "adjust_pvalues", "q_values"]

FloatArray = npt.NDArray[np.float64]
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
