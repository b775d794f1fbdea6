"""Software gain: how much better a series got from one version to another.

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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from tracker.analysis.series import SeriesSamples, goodness, is_usable, level

__all__ = [
    "GainSummary",
    "SeriesGain",
    "aggregate_gains",
    "consecutive_gains",
    "series_gain",
    "software_gains",
]


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
        gain=math.exp(goodness(base, new, series.higher_is_better)),
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
