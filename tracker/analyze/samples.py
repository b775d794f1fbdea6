"""From the store's records to the inputs of the analysis (used by :mod:`tracker.analyze.run`).

Gathered in one pass by :func:`tracker.analyze.collect.collect_samples`:

* **Series** (:func:`version_series`): one per software,
  system (``submitter/name``), benchmark, scenario, workload and metric, its
  versions in that software's explicit order. Only *valid* samples are used;
  the invalid ones are counted. A key is ``software|system|benchmark|scenario|workload|metric``.
* **Configurations that differ only in software** (:func:`stack_series`): within
  one version, results of the same submitter, division, accelerator model,
  node and accelerator counts, host CPU, benchmark, scenario, workload and
  metric whose software stacks differ (e.g. one MLPerf round's HPE DL385 under
  TensorRT 10.11 and 10.14). Their "versions" are the stack labels, in natural
  order (digit runs compared as numbers), so 10.11 comes before 10.14.
* **Scaling groups**: every valid result with an
  accelerator count, except sweep points (scaling of serving curves is read at
  the interactivity target instead) and metrics already per accelerator. The
  group's software stack is the first part of the stored stack, i.e. the MLPerf
  system description's ``framework`` (``other_software_stack`` also names
  drivers, which differ between the racks of one submission).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tracker.analysis import ScalingGroup, SeriesSamples
from tracker.analysis_records import AXIS_STACK, AXIS_VERSION, SeriesInfo
from tracker.versions import version_sort_key

__all__ = [
    "AXIS_STACK",
    "AXIS_VERSION",
    "Platform",
    "SampleLabels",
    "SampleSet",
    "SeriesInfo",
    "Values",
    "framework",
    "series_key",
    "stack_series",
    "version_series",
]

Values = dict[str, list[float]]
Platform = tuple[str, str | None, str | None, str | None, int, int | None, str | None, str | None]
"""software, submitter, division, accelerator, accelerators, nodes, host CPU, precision."""
SampleLabels = tuple[str, str, str, str, str, bool]
"""benchmark, scenario, workload, metric, unit, higher is better."""


@dataclass(slots=True)
class SampleSet:
    """The valid samples, grouped; what :func:`tracker.analyze.collect.collect_samples` gathers."""

    values: dict[str, dict[str, Values]] = field(default_factory=dict)
    """software → series key → version → samples."""
    infos: dict[str, SeriesInfo] = field(default_factory=dict)
    scaling: dict[str, tuple[ScalingGroup, ...]] = field(default_factory=dict)
    """software → scaling groups (two counts or more), by key and version."""
    stacks: dict[tuple[Platform, str, SampleLabels], Values] = field(default_factory=dict)
    """(platform, version, labels) → software stack → samples, where two stacks or more ran."""
    samples: int = 0
    invalid: int = 0
    precisions: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)
    """series key → version → the precision classes its samples state (where any do)."""


def series_key(*parts: str) -> str:
    """The key of a series: its labels joined with ``|``."""
    return "|".join(parts)


def framework(stack: str | None) -> str:
    """The framework part of a stored software stack (before the first ``;``)."""
    return (stack or "").split(";", 1)[0].strip()


def _series(key: str, info: SeriesInfo, found: Values, order: Sequence[str]) -> SeriesSamples:
    versions = [v for v in order if v in found]
    return SeriesSamples(
        key=key,
        versions=tuple(versions),
        samples=tuple(tuple(found[v]) for v in versions),
        higher_is_better=info.higher_is_better,
        system=info.system,
        benchmark=info.benchmark,
    )


def version_series(
    found: SampleSet, orders: Mapping[str, Sequence[str]]
) -> tuple[SeriesSamples, ...]:
    """Every series across versions, each software's versions in ``orders[software]``."""
    return tuple(
        _series(key, found.infos[key], by_version, orders[software])
        for software, by_key in sorted(found.values.items())
        for key, by_version in by_key.items()
    )


def _stack_info(platform: Platform, version: str, labels: SampleLabels) -> tuple[str, SeriesInfo]:
    software, submitter, division, accelerator, count, nodes, host, precision = platform
    benchmark, scenario, workload, metric, unit, higher = labels
    name = (
        f"{submitter or ''} {division or ''} {accelerator or '?'} "
        f"x{count} ({nodes or '?'} nodes, {host or '?'}{f', {precision}' if precision else ''})"
    )
    key = series_key(software, version, name, benchmark, scenario, workload, metric)
    info = SeriesInfo(
        software,
        name,
        benchmark,
        scenario,
        workload,
        metric,
        unit,
        higher,
        axis=AXIS_STACK,
        version=version,
    )
    return key, info


def stack_series(found: SampleSet) -> tuple[SeriesSamples, ...]:
    """Configurations of one version differing only in software stack (two stacks or more).

    Their keys and :class:`SeriesInfo` are added to ``found.infos``.
    """
    out = []
    for (platform, version, labels), by_stack in found.stacks.items():
        if len(by_stack) < 2:
            continue
        key, info = _stack_info(platform, version, labels)
        found.infos[key] = info
        out.append(_series(key, info, by_stack, sorted(by_stack, key=version_sort_key)))
    return tuple(out)
