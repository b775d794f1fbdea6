"""Default thresholds of the analysis, with the source each one comes from.

Every default is a module constant and every public function takes it as an
overridable argument (the gate's policy file sets them per metric). Each
constant's docstring names the tool or measurement its value comes from.

Floors are compared with ``|g|``, the direction-aware log-ratio
``g = s·ln(new/base)``: a floor of 0.05 is a drop of 4.9% or a gain of 5.1%.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "ADVICE_LEVEL",
    "ADVICE_POWER",
    "BOOTSTRAP_RESAMPLES",
    "CHANGE_POINT_LONG_MIN_MAGNITUDE",
    "CHANGE_POINT_LONG_MIN_SEGMENT",
    "CHANGE_POINT_MAX_PVALUE",
    "CHANGE_POINT_MIN_MAGNITUDE",
    "CHANGE_POINT_MIN_POINTS",
    "CHANGE_POINT_MIN_SEGMENT",
    "CHANGE_POINT_REFERENCE_POINTS",
    "CHANGE_POINT_WINDOW",
    "CONFIDENCE",
    "ChangePointPolicy",
    "ComparePolicy",
    "DESPIKE_K",
    "DRIFT_MIN_MAGNITUDE",
    "DRIFT_MIN_POINTS",
    "DRIFT_PENALTY",
    "DRIFT_MIN_SPAN",
    "DriftPolicy",
    "EFFICIENCY_DROP_FLOOR",
    "EFFICIENCY_FLOOR",
    "FIRST_PASS_FACTOR",
    "FLOOR_REPEATS",
    "FLOOR_SINGLE",
    "HISTORY_OUTLIER_P",
    "MAX_ADVISED_REPEATS",
    "MAX_HISTORY",
    "MIN_HISTORY",
    "MIN_REPEATS",
    "MWU_EXACT_MAX",
    "MWU_MIN_REPEATS",
    "NOISE_OUTLIER_LEVEL",
    "POOL_MIN_SERIES",
    "Q_LEVEL",
    "SENSITIVITY_CHANGE",
    "SENSITIVITY_POWER",
    "SHARED_NOISE_LEVEL",
    "SUSPECT_P",
]


Q_LEVEL = 0.05
"""The run's false-discovery level: a change is confirmed when its q-value is below this
(each directional Benjamini–Hochberg family at half of it, :mod:`~tracker.stats.compare`)."""

FLOOR_REPEATS = 0.02
"""Effect floor (``|g|``) when both versions have repeats (Perfherder 2%, LNT 1%)."""

FLOOR_SINGLE = 0.05
"""Effect floor for one value per version (asv 5%, Conbench 5%, Nyrkiö 5%)."""

SUSPECT_P = 0.01
"""A drop past the floor that the family does not confirm is SUSPECT only when its own
one-sided p is below this (at CV 2%: ≤ 1% of unchanged series, measured by
``benchmarks/bench_detection.py``)."""

ADVICE_LEVEL = 0.0025
"""One-sided level a re-run is sized for (:func:`~tracker.stats.significance.advised_repeats`):
about what Benjamini–Hochberg asks of a discovery among a tenth of a family of hundreds at
the family's level ``Q_LEVEL / 2`` (:mod:`~tracker.stats.compare`)."""

ADVICE_POWER = 0.90
"""Power a re-run is sized for."""

MAX_ADVISED_REPEATS = 50
"""The advised number of repeats is capped here."""

MIN_REPEATS = 3
"""Samples needed on *both* sides for a two-sample test; fewer means single-value mode."""

MWU_MIN_REPEATS = 8
"""From this many samples per side Mann–Whitney U replaces Welch's t on log values."""

MWU_EXACT_MAX = 20
"""Mann–Whitney U is exact up to this many samples per side, asymptotic above."""

MIN_HISTORY = 5
"""History points (versions up to the baseline) needed for the prediction interval."""

MAX_HISTORY = 20
"""At most this many history points are used (the newest ones)."""

HISTORY_OUTLIER_P = 0.01
"""Chance that a clean Gaussian history loses a point to the outlier test of the prediction
interval (:func:`tracker.stats.history.history_outliers`)."""

POOL_MIN_SERIES = 20
"""Single-value comparisons pool their history variances, and comparisons of repeats their
within-version variances (:mod:`tracker.stats.significance`), when at least this many series
of one call have one; 0 never pools."""

NOISE_OUTLIER_LEVEL = 0.05
"""Repeats: a series whose variance lies past the run's noise prior at this level, after
Bonferroni over the run's series, keeps its own variance (Welch's t) and is left out of the
prior's fit (:func:`~tracker.stats.significance.fit_noise_prior`): on clean data one run in
twenty sets one series aside."""

SHARED_NOISE_LEVEL = 0.001
"""Repeats: below this p of the test that the run's series share one noise model, nothing is
pooled (:func:`~tracker.stats.significance.fit_noise_prior`). Strict, because pooling is what
gives three repeats their power: at 1,000 series the test rejects a half-and-half mix of CV 1%
and 8% in every run measured, and one-point spikes among the repeats in none."""

SENSITIVITY_POWER = 0.80
"""The probability with which a series must confirm a change for the sensitivity statement
to say it "could detect" it (Cohen's conventional power; the detection limit of Currie 1968
with β = 0.2, :func:`~tracker.stats.significance.detectable_change`)."""

SENSITIVITY_CHANGE = 0.05
"""The change the run's sensitivity line counts series against: the share of series that could
not see a 5% change (the single-value floor, asv's and Conbench's default threshold)."""

BOOTSTRAP_RESAMPLES = 1000
"""Bootstrap resamples per side for the CI of the change of medians."""

CONFIDENCE = 0.95
"""Two-sided level of the bootstrap CI and of the prediction-interval CI."""

DESPIKE_K = 4.0
"""A one-point excursion that reverts is a spike when it is ``DESPIKE_K`` noise scales out."""

CHANGE_POINT_MAX_PVALUE = 0.001
"""Merge step: a change point is kept when its t-test p is below this (Otava, Nyrkiö)."""

FIRST_PASS_FACTOR = 10.0
"""Split step: candidates are accepted at ``FIRST_PASS_FACTOR × max p`` (Otava's weak points)."""

CHANGE_POINT_MIN_MAGNITUDE = 0.05
"""Merge step: a change point is kept when its change of level is above this (Nyrkiö 5%)."""

CHANGE_POINT_MIN_SEGMENT = 2
"""No segment between change points is shorter than this (asv ``min_size=2``)."""

CHANGE_POINT_WINDOW = 50
"""E-Divisive runs over windows of this many points, stepping by half a window (Otava)."""

CHANGE_POINT_REFERENCE_POINTS = 50
"""Series up to this long are searched with the settings above as they are. A longer
series of ``n`` points (ratio ``r = n / 50``) is searched with ``max_pvalue / r²`` (its
split/merge makes about ``r`` times as many tests, each over a scan ``r`` times as
long), a magnitude floor of ``max(CHANGE_POINT_LONG_MIN_MAGNITUDE, min_magnitude / √r)``
(its segments are long enough to measure smaller steps) and segments of at least
``CHANGE_POINT_LONG_MIN_SEGMENT``. Measured (benchmarks/bench_detection.py): the share of
stationary series with a false change point stays ≤ 0.5% at 50, 200 and 1,000 points
instead of growing from 0.4% to 2.9%, and F1 at 200 points rises from 0.95 to 0.98."""

CHANGE_POINT_LONG_MIN_MAGNITUDE = 0.025
"""The lowest magnitude floor of long series (see :data:`CHANGE_POINT_REFERENCE_POINTS`)."""

CHANGE_POINT_LONG_MIN_SEGMENT = 3
"""The shortest segment of series longer than :data:`CHANGE_POINT_REFERENCE_POINTS`."""

CHANGE_POINT_MIN_POINTS = 8
"""Series shorter than this are not searched for change points (Orion: about 10)."""

DRIFT_MIN_POINTS = 12
"""Series shorter than this are not tested for a drift."""

DRIFT_MIN_SPAN = 8
"""A drift runs over at least this many versions (shorter ramps are steps)."""

DRIFT_MIN_MAGNITUDE = 0.05
"""A drift is reported when its total change (slope × span) is above this (as change points)."""

DRIFT_PENALTY = 1.0
"""Steps or a drift: each free parameter of a model (a level, a step's position and size, a
drift's start and slope) costs ``DRIFT_PENALTY · ln(n)`` in the criterion; 1 is Schwarz's
BIC (:mod:`tracker.stats.changepoints`)."""


EFFICIENCY_FLOOR = 0.90
"""Scaling efficiency below this is a finding."""

EFFICIENCY_DROP_FLOOR = 0.05
"""A fall of scaling efficiency (absolute, 0.05 = 5 points) against the baseline version."""


@dataclass(frozen=True, slots=True)
class ComparePolicy:
    """The knobs of a two-version comparison (see the module constants)."""

    q_level: float = Q_LEVEL
    floor_repeats: float = FLOOR_REPEATS
    floor_single: float = FLOOR_SINGLE
    min_repeats: int = MIN_REPEATS
    mwu_min_repeats: int = MWU_MIN_REPEATS
    mwu_exact_max: int = MWU_EXACT_MAX
    min_history: int = MIN_HISTORY
    max_history: int = MAX_HISTORY
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES
    confidence: float = CONFIDENCE
    history_outlier_p: float = HISTORY_OUTLIER_P
    pool_min_series: int = POOL_MIN_SERIES
    suspect_p: float = SUSPECT_P
    advice_level: float = ADVICE_LEVEL
    advice_power: float = ADVICE_POWER
    noise_outlier_level: float = NOISE_OUTLIER_LEVEL
    shared_noise_level: float = SHARED_NOISE_LEVEL
    sensitivity_power: float = SENSITIVITY_POWER

    def __post_init__(self) -> None:
        if not 0.0 < self.suspect_p <= 1.0:
            raise ValueError("suspect_p must lie in (0, 1]")
        if not 0.0 < self.advice_level < 0.5 or not 0.5 < self.advice_power < 1.0:
            raise ValueError("advice_level must lie in (0, 0.5) and advice_power in (0.5, 1)")
        if not 0.0 < self.q_level < 1.0 or not 0.0 < self.confidence < 1.0:
            raise ValueError("q_level and confidence must lie strictly between 0 and 1")
        if min(self.floor_repeats, self.floor_single) < 0.0:
            raise ValueError("floors must not be negative")
        if self.min_repeats < 2 or self.min_history < 3 or self.max_history < self.min_history:
            raise ValueError("need min_repeats >= 2 and 3 <= min_history <= max_history")
        if self.bootstrap_resamples < 100:
            raise ValueError("bootstrap_resamples must be at least 100")
        if not 0.0 <= self.history_outlier_p < 1.0 or self.pool_min_series < 0:
            raise ValueError("need 0 <= history_outlier_p < 1 and pool_min_series >= 0")
        if not 0.0 <= self.noise_outlier_level < 1.0 or not 0.0 <= self.shared_noise_level < 1.0:
            raise ValueError("noise_outlier_level and shared_noise_level must lie in [0, 1)")
        if not 0.5 <= self.sensitivity_power < 1.0:
            raise ValueError("sensitivity_power must lie in [0.5, 1)")


@dataclass(frozen=True, slots=True)
class ChangePointPolicy:
    """The knobs of change-point detection (see the module constants)."""

    max_pvalue: float = CHANGE_POINT_MAX_PVALUE
    first_pass_factor: float = FIRST_PASS_FACTOR
    min_magnitude: float = CHANGE_POINT_MIN_MAGNITUDE
    min_segment: int = CHANGE_POINT_MIN_SEGMENT
    window: int = CHANGE_POINT_WINDOW
    min_points: int = CHANGE_POINT_MIN_POINTS
    despike_k: float = DESPIKE_K
    reference_points: int = CHANGE_POINT_REFERENCE_POINTS
    long_min_magnitude: float = CHANGE_POINT_LONG_MIN_MAGNITUDE
    long_min_segment: int = CHANGE_POINT_LONG_MIN_SEGMENT

    def __post_init__(self) -> None:
        if not 0.0 < self.max_pvalue < 1.0 or self.first_pass_factor < 1.0:
            raise ValueError("max_pvalue must lie in (0, 1) and first_pass_factor be >= 1")
        if self.min_segment < 2 or self.window < 2 * self.min_segment:
            raise ValueError("need min_segment >= 2 and window >= 2 * min_segment")
        if self.min_points < 2 * self.min_segment:
            raise ValueError("min_points must be at least 2 * min_segment")
        if self.reference_points < self.min_points or self.long_min_segment < 2:
            raise ValueError("need reference_points >= min_points and long_min_segment >= 2")
        if 2 * self.long_min_segment > self.window:
            raise ValueError("need window >= 2 * long_min_segment")

    @property
    def first_pass_pvalue(self) -> float:
        """The split step's relaxed p-value (capped below 1)."""
        return min(self.max_pvalue * self.first_pass_factor, 0.5)

    def _ratio(self, points: int) -> float:
        return max(1.0, points / self.reference_points)

    def max_pvalue_for(self, points: int) -> float:
        """The merge step's p-value for series of ``points`` points (see
        :data:`CHANGE_POINT_REFERENCE_POINTS`)."""
        return self.max_pvalue / self._ratio(points) ** 2

    def min_magnitude_for(self, points: int) -> float:
        """The magnitude floor for series of ``points`` points."""
        if points <= self.reference_points:
            return self.min_magnitude
        scaled = self.min_magnitude / math.sqrt(self._ratio(points))
        return max(min(self.long_min_magnitude, self.min_magnitude), scaled)

    def min_segment_for(self, points: int) -> int:
        """The shortest segment for series of ``points`` points."""
        if points <= self.reference_points:
            return self.min_segment
        return max(self.min_segment, self.long_min_segment)


@dataclass(frozen=True, slots=True)
class DriftPolicy:
    """The knobs of drift detection and of the choice between steps and a drift (see
    :mod:`tracker.stats.changepoints`)."""

    q_level: float = Q_LEVEL
    min_points: int = DRIFT_MIN_POINTS
    min_span: int = DRIFT_MIN_SPAN
    min_magnitude: float = DRIFT_MIN_MAGNITUDE
    penalty: float = DRIFT_PENALTY

    def __post_init__(self) -> None:
        if not 0.0 < self.q_level < 1.0:
            raise ValueError("q_level must lie strictly between 0 and 1")
        if self.penalty <= 0.0:
            raise ValueError("penalty must be positive")
        if self.min_span < 4 or self.min_points < self.min_span:
            raise ValueError("need min_span >= 4 and min_points >= min_span")
        if self.min_magnitude < 0.0:
            raise ValueError("min_magnitude must not be negative")
