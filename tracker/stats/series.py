"""Series (one metric of one benchmark point on one system, across ordered versions)
and their software gains.

Series: one metric of one benchmark point on one system, across ordered versions.

A series is the unit every comparison works on. Its versions are in their
explicit order (the caller sorts them, e.g. with :func:`tracker.versions.order_versions`);
each version holds one sample (MLPerf) or several repeats (local runs).
Comparisons are direction-aware in log space: ``g = s·ln(new/base)`` with
``s = +1`` when higher is better and ``-1`` otherwise, so ``g < 0`` is worse.

Software gain: how much better a series got from one version to another.

The gain of a series is direction-aware, ``exp(g)`` with ``g = s·ln(new/base)``:
2.0 means twice the throughput or half the latency, 0.8 a 20% loss of
throughput. Levels are the medians of each version's samples.

"Versions" are whatever the series' version axis holds, so the same functions
serve both cases of the issue: one platform across MLPerf rounds (versions
``v5.1``, ``v6.0``) and two configurations of one round that differ only in
software (versions ``TensorRT 10.11``, ``TensorRT 10.14``).

Aggregates are geometric means of the gains, with the count of series, per
system or per benchmark (or any grouping function).
"""

from __future__ import annotations

import math
import statistics
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from tracker.records.results import SeriesPoint

__all__ = [
    "GainSummary",
    "SampleRow",
    "SeriesGain",
    "LOG_GAIN_LIMIT",
    "SeriesHead",
    "SeriesSamples",
    "aggregate_gains",
    "bounded_exp",
    "consecutive_gains",
    "direction",
    "goodness",
    "is_usable",
    "level",
    "log_ratio",
    "series_from_points",
    "series_from_rows",
    "series_gain",
    "software_gains",
]


@dataclass(frozen=True, slots=True)
class SeriesSamples:
    """The samples of one series, version by version, in version order.

    ``key`` identifies the series (opaque to the analysis); ``system`` and
    ``benchmark`` are only used to aggregate software gains.
    """

    key: str
    versions: tuple[str, ...]
    samples: tuple[tuple[float, ...], ...]
    higher_is_better: bool
    system: str = ""
    benchmark: str = ""

    def __post_init__(self) -> None:
        if len(self.versions) != len(self.samples):
            raise ValueError(
                f"series {self.key!r}: {len(self.versions)} versions, "
                f"{len(self.samples)} sample tuples"
            )
        if len(set(self.versions)) != len(self.versions):
            raise ValueError(f"series {self.key!r}: a version appears twice")

    def index(self, version: str) -> int | None:
        """Position of ``version`` in the series, or ``None`` when it has no result."""
        try:
            return self.versions.index(version)
        except ValueError:
            return None

    def samples_at(self, version: str) -> tuple[float, ...] | None:
        """The samples of ``version``, or ``None`` when the series has none there."""
        i = self.index(version)
        return None if i is None else self.samples[i]

    def levels(self) -> tuple[float, ...]:
        """The median of each version's samples (NaN for a version without any)."""
        return tuple(level(s) for s in self.samples)

    @classmethod
    def of(
        cls,
        key: str,
        versions: Sequence[str],
        found: Mapping[str, Sequence[float]],
        head: SeriesHead,
    ) -> SeriesSamples:
        """The series ``key`` of the samples ``found`` per version, at ``versions`` (each
        present in ``found``), its direction, system and benchmark those of ``head``."""
        return cls(
            key=key,
            versions=tuple(versions),
            samples=tuple(tuple(found[v]) for v in versions),
            higher_is_better=head.higher_is_better,
            system=head.system,
            benchmark=head.benchmark,
        )


class SeriesHead(Protocol):
    """What a series takes from the first of its rows: direction, system, benchmark."""

    @property
    def higher_is_better(self) -> bool: ...

    @property
    def system(self) -> str: ...

    @property
    def benchmark(self) -> str: ...


@dataclass(frozen=True, slots=True)
class SampleRow:
    """One sample as a plain row, for :func:`series_from_rows`."""

    key: str
    version: str
    value: float
    higher_is_better: bool
    system: str = ""
    benchmark: str = ""


def direction(higher_is_better: bool) -> float:
    """``+1.0`` when higher is better, ``-1.0`` otherwise."""
    return 1.0 if higher_is_better else -1.0


def is_usable(value: float) -> bool:
    """Whether a value can be compared in log space (finite and positive)."""
    return math.isfinite(value) and value > 0.0


def goodness(base: float, new: float, higher_is_better: bool) -> float:
    """``g = s·ln(new/base)``: positive when ``new`` is better than ``base``.

    >>> round(goodness(100.0, 90.0, True), 4), round(goodness(100.0, 90.0, False), 4)
    (-0.1054, 0.1054)
    """
    if not (is_usable(base) and is_usable(new)):
        raise ValueError(f"cannot compare {base!r} and {new!r} in log space")
    return direction(higher_is_better) * log_ratio(new, base)


def log_ratio(new: float, base: float) -> float:
    """``ln(new/base)`` of two usable values; a ratio a float cannot hold (1e-300 / 1e300
    underflows to 0) is taken as the difference of the logs instead.

    >>> round(log_ratio(90.0, 100.0), 4), round(log_ratio(1e-300, 1e300), 1)
    (-0.1054, -1381.6)
    """
    ratio = new / base
    if _NORMAL_MIN <= ratio < math.inf:
        return math.log(ratio)
    return math.log(new) - math.log(base)


_NORMAL_MIN = sys.float_info.min
"""The smallest normal float: a smaller ratio has lost digits (or is 0)."""


LOG_GAIN_LIMIT = 700.0
"""The largest |ln gain| kept as it is: e^700 ≈ 1e304 still is a float, e^710 is not."""


def bounded_exp(log_gain: float) -> float:
    """``e^log_gain`` as a finite, positive float: beyond ±:data:`LOG_GAIN_LIMIT` (a
    baseline of 1e300 against a candidate of 1e-300) the gain is held at the limit.

    >>> bounded_exp(0.0), bounded_exp(-1381.5) > 0.0, bounded_exp(1381.5) < float("inf")
    (1.0, True, True)
    """
    return math.exp(min(max(log_gain, -LOG_GAIN_LIMIT), LOG_GAIN_LIMIT))


def level(samples: Sequence[float]) -> float:
    """The median of ``samples`` (NaN when empty)."""
    if not samples:
        return math.nan
    if len(samples) == 1:
        return float(samples[0])
    return float(statistics.median(samples))


def _ordered(key: str, found: dict[str, list[float]], order: dict[str, int]) -> list[str]:
    unknown = sorted(v for v in found if v not in order)
    if unknown:
        raise ValueError(f"series {key!r}: version {unknown[0]!r} is not in version_order")
    return sorted(found, key=order.__getitem__)


def series_from_rows(
    rows: Iterable[SampleRow], *, version_order: Sequence[str]
) -> tuple[SeriesSamples, ...]:
    """Group plain sample rows into series, versions in ``version_order``.

    Rows with the same ``key`` and ``version`` are repeats. Every version must
    appear in ``version_order``, and a key must keep one direction.
    """
    order = {v: i for i, v in enumerate(version_order)}
    values: dict[str, dict[str, list[float]]] = {}
    first: dict[str, SampleRow] = {}
    for row in rows:
        head = first.setdefault(row.key, row)
        if head.higher_is_better != row.higher_is_better:
            raise ValueError(f"series {row.key!r} has rows of both directions")
        values.setdefault(row.key, {}).setdefault(row.version, []).append(float(row.value))
    out = []
    for key, found in values.items():
        out.append(SeriesSamples.of(key, _ordered(key, found, order), found, first[key]))
    return tuple(out)


def series_from_points(
    points: Iterable[SeriesPoint], *, version_order: Sequence[str]
) -> tuple[SeriesSamples, ...]:
    """Series from the store's :class:`~tracker.records.results.SeriesPoint` rows.

    A series is keyed by its :class:`~tracker.records.keys.SeriesKey`; each point's
    ``values`` are the samples of its version.
    """
    rows = (
        SampleRow(str(p.series_key), p.version, v, p.higher_is_better, p.system, p.benchmark)
        for p in points
        for v in p.values
    )
    return series_from_rows(rows, version_order=version_order)


@dataclass(frozen=True, slots=True)
class SeriesGain:
    """The gain of one series from ``baseline`` to ``candidate``."""

    key: str
    system: str
    benchmark: str
    baseline: str
    candidate: str
    baseline_level: float
    candidate_level: float
    higher_is_better: bool
    gain: float
    """Direction-aware factor: above 1 is better."""

    @property
    def log_gain(self) -> float:
        return math.log(self.gain)

    @property
    def delta_pct(self) -> float:
        """The raw relative change of the metric in percent."""
        return 100.0 * (self.candidate_level / self.baseline_level - 1.0)


@dataclass(frozen=True, slots=True)
class GainSummary:
    """The geometric-mean gain of ``count`` series sharing ``group`` and one version pair."""

    group: str
    baseline: str
    candidate: str
    geometric_mean: float
    count: int
    min_gain: float
    max_gain: float


def series_gain(series: SeriesSamples, baseline: str, candidate: str) -> SeriesGain | None:
    """The gain of one series, or ``None`` without usable values at both versions."""
    a, b = series.samples_at(baseline), series.samples_at(candidate)
    if not a or not b:
        return None
    base, new = level(a), level(b)
    if not (is_usable(base) and is_usable(new)):
        return None
    return SeriesGain(
        key=series.key,
        system=series.system,
        benchmark=series.benchmark,
        baseline=baseline,
        candidate=candidate,
        baseline_level=base,
        candidate_level=new,
        higher_is_better=series.higher_is_better,
        gain=bounded_exp(goodness(base, new, series.higher_is_better)),
    )


def software_gains(
    series: Iterable[SeriesSamples], baseline: str, candidate: str
) -> tuple[SeriesGain, ...]:
    """The gain of every series that has both versions."""
    found = (series_gain(s, baseline, candidate) for s in series)
    return tuple(g for g in found if g is not None)


def consecutive_gains(series: Iterable[SeriesSamples]) -> tuple[SeriesGain, ...]:
    """The gain between each pair of neighbouring versions of every series."""
    out = []
    for s in series:
        for old, new in zip(s.versions, s.versions[1:], strict=False):
            found = series_gain(s, old, new)
            if found is not None:
                out.append(found)
    return tuple(out)


def _grouper(by: str | Callable[[SeriesGain], str]) -> Callable[[SeriesGain], str]:
    if callable(by):
        return by
    if by == "system":
        return lambda g: g.system
    if by == "benchmark":
        return lambda g: g.benchmark
    raise ValueError(f"cannot aggregate gains by {by!r}; use 'system', 'benchmark' or a function")


def aggregate_gains(
    gains: Sequence[SeriesGain], *, by: str | Callable[[SeriesGain], str]
) -> tuple[GainSummary, ...]:
    """Geometric-mean gain per group and version pair, sorted by group then versions.

    ``by`` is ``"system"``, ``"benchmark"`` or a function of a :class:`SeriesGain`.
    """
    key_of = _grouper(by)
    groups: dict[tuple[str, str, str], list[float]] = {}
    for g in gains:
        groups.setdefault((key_of(g), g.baseline, g.candidate), []).append(g.gain)
    return tuple(
        GainSummary(
            group=group,
            baseline=base,
            candidate=cand,
            geometric_mean=math.exp(math.fsum(math.log(v) for v in values) / len(values)),
            count=len(values),
            min_gain=min(values),
            max_gain=max(values),
        )
        for (group, base, cand), values in sorted(groups.items())
    )
