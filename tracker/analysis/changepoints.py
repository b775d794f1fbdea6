"""Change points over each version history (report annotations, SPEC §4, anchors §5.4).

Each series is reduced to one level per version (the median of its samples),
taken to log space, de-spiked (:mod:`tracker.analysis.spikes`) and searched with
the E-Divisive means split/merge of :mod:`tracker.analysis.edivisive`. Series with
fewer than ``min_points`` usable versions are skipped, and the result says so.
Versions whose level is not positive and finite are left out of the search and
listed in the result.

Change points are annotations for the report, not gate decisions: they are not
part of the Benjamini–Hochberg family. Series longer than
``ChangePointPolicy.reference_points`` (50) are searched with a stricter p-value
and a lower magnitude floor, so that false alarms do not grow with length
(:data:`tracker.analysis.defaults.CHANGE_POINT_REFERENCE_POINTS`). One-point spikes
are also removed at both ends of a series (a one-point segment is no change point).
Series of up to one window also accept a *bump*, a level that leaves and comes
back, at both of its edges (:mod:`tracker.analysis.edivisive`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tracker.analysis.defaults import ChangePointPolicy
from tracker.analysis.edivisive import merge, segment_tests, split
from tracker.analysis.series import SeriesSamples, direction
from tracker.analysis.spikes import despike

__all__ = [
    "ChangePoint",
    "ChangePointResult",
    "detect_change_points",
    "find_change_points",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


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
    (shared with :mod:`tracker.analysis.drift`)."""
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
