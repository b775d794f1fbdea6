"""From the store's records to the inputs of the analysis (used by :mod:`tracker.analyze`).

* **Series** (:func:`collect_samples`, :func:`version_series`): one per software,
  system (``submitter/name``), benchmark, scenario, workload and metric, its
  versions in that software's explicit order. Only *valid* samples are used;
  the invalid ones are counted. A key is ``software|system|benchmark|scenario|workload|metric``.
* **Configurations that differ only in software** (:func:`stack_series`): within
  one version, results of the same submitter, division, accelerator model,
  node and accelerator counts, host CPU, benchmark, scenario, workload and
  metric whose software stacks differ (e.g. one MLPerf round's HPE DL385 under
  TensorRT 10.11 and 10.14). Their "versions" are the stack labels, in natural
  order (digit runs compared as numbers), so 10.11 comes before 10.14.
* **Scaling points** (:func:`scaling_points`): every valid result with an
  accelerator count, except sweep points (scaling of serving curves is read at
  the interactivity target instead) and metrics already per accelerator. The
  group's software stack is the first part of the stored stack, i.e. the MLPerf
  system description's ``framework`` (``other_software_stack`` also names
  drivers, which differ between the racks of one submission).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from tracker.analysis import ScalingKey, ScalingPoint, SeriesSamples, scaling_key
from tracker.records import AnalysisSample
from tracker.versions import version_sort_key

__all__ = [
    "SampleSet",
    "SeriesInfo",
    "collect_samples",
    "framework",
    "series_key",
    "stack_series",
    "version_series",
]

AXIS_VERSION = "version"
AXIS_STACK = "software_stack"


@dataclass(frozen=True, slots=True)
class SeriesInfo:
    """What a series key stands for (for findings and the report).

    ``axis`` is ``"version"`` for series across software versions and
    ``"software_stack"`` for configurations of one ``version`` that differ only in
    software; ``system`` is then the platform (submitter, accelerator and counts).
    """

    software: str
    system: str
    benchmark: str
    scenario: str
    workload: str
    metric: str
    unit: str
    higher_is_better: bool
    axis: str = AXIS_VERSION
    version: str | None = None


Values = dict[str, list[float]]
_Platform = tuple[str, str | None, str | None, str | None, int, int | None, str | None]
"""software, submitter, division, accelerator, accelerators, nodes, host CPU."""
_Labels = tuple[str, str, str, str, str, bool]
"""benchmark, scenario, workload, metric, unit, higher is better."""


@dataclass(slots=True)
class SampleSet:
    """The valid samples, grouped; what :func:`collect_samples` gathers in one pass."""

    values: dict[str, dict[str, Values]] = field(default_factory=dict)
    """software → series key → version → samples."""
    infos: dict[str, SeriesInfo] = field(default_factory=dict)
    scaling: dict[str, list[ScalingPoint]] = field(default_factory=dict)
    """software → scaling points (only of groups with two counts or more)."""
    stacks: dict[tuple[_Platform, str, _Labels], Values] = field(default_factory=dict)
    """(platform, version, labels) → software stack → samples."""
    samples: int = 0
    invalid: int = 0


def series_key(*parts: str) -> str:
    """The key of a series: its labels joined with ``|``."""
    return "|".join(parts)


def framework(stack: str | None) -> str:
    """The framework part of a stored software stack (before the first ``;``)."""
    return (stack or "").split(";", 1)[0].strip()


def _info(sample: AnalysisSample) -> SeriesInfo:
    return SeriesInfo(
        sample.software,
        sample.system_key,
        sample.benchmark,
        sample.scenario,
        sample.workload,
        sample.metric,
        sample.unit,
        sample.higher_is_better,
    )


def _is_scaling_input(sample: AnalysisSample) -> bool:
    return (
        sample.accelerators_total is not None
        and sample.sweep_key is None
        and "per_accelerator" not in sample.metric
    )


@dataclass(slots=True)
class _Series:
    """What every sample of one series shares (the system's fields are one row's).

    ``stack_group`` and the values of ``scaling_groups`` number the series' platform
    group and scaling keys, so that a sample costs a small tuple, not a long hash.
    """

    by_version: defaultdict[str, list[float]]
    count: int | None
    stack_group: int
    scales: bool
    scaling_groups: dict[str | None, int] = field(default_factory=dict)


class _Collector:
    """One pass over the samples; keys are built once per series, group or stack."""

    def __init__(self) -> None:
        self.out = SampleSet()
        self.series: dict[tuple[str, ...], _Series] = {}
        self.stack_groups: dict[tuple[_Platform, _Labels], int] = {}
        self.stacks: dict[tuple[int, str], defaultdict[str, list[float]]] = {}
        self.scaling_groups: dict[tuple[str, ScalingKey, bool], int] = {}
        self.scaling: dict[tuple[int, str], dict[int, list[tuple[float, str]]]] = {}

    def _new(self, labels: tuple[str, ...], sample: AnalysisSample) -> _Series:
        key = series_key(*labels)
        self.out.infos[key] = _info(sample)
        by_version: defaultdict[str, list[float]] = defaultdict(list)
        self.out.values.setdefault(sample.software, {})[key] = by_version
        count = sample.accelerators_total
        platform: _Platform = (
            sample.software,
            sample.submitter,
            sample.division,
            sample.accelerator,
            count or 0,
            sample.nodes,
            sample.host_cpu,
        )
        tail: _Labels = (
            sample.benchmark,
            sample.scenario,
            sample.workload,
            sample.metric,
            sample.unit,
            sample.higher_is_better,
        )
        group = self.stack_groups.setdefault((platform, tail), len(self.stack_groups))
        entry = _Series(by_version, count, group, _is_scaling_input(sample))
        self.series[labels] = entry
        return entry

    def add(self, sample: AnalysisSample) -> None:
        labels = (
            sample.software,
            sample.system_key,
            sample.benchmark,
            sample.scenario,
            sample.workload,
            sample.metric,
        )
        entry = self.series.get(labels) or self._new(labels, sample)
        entry.by_version[sample.version].append(sample.value)
        if entry.count is None:
            return
        stack = sample.software_stack
        if stack:
            by_stack = self.stacks.get((entry.stack_group, sample.version))
            if by_stack is None:
                by_stack = self.stacks[(entry.stack_group, sample.version)] = defaultdict(list)
            by_stack[stack].append(sample.value)
        if entry.scales:
            group = entry.scaling_groups.get(stack)
            if group is None:
                group = self._scaling_group(entry, sample)
            by_count = self.scaling.setdefault((group, sample.version), {})
            by_count.setdefault(entry.count, []).append((sample.value, sample.system_key))

    def _scaling_group(self, entry: _Series, sample: AnalysisSample) -> int:
        key = scaling_key(
            submitter=sample.submitter,
            accelerator=sample.accelerator,
            benchmark=sample.benchmark,
            scenario=sample.scenario,
            metric=sample.metric,
            software_stack=framework(sample.software_stack),
            division=sample.division,
            workload=sample.workload,
        )
        found = (sample.software, key, sample.higher_is_better)
        group = self.scaling_groups.setdefault(found, len(self.scaling_groups))
        entry.scaling_groups[sample.software_stack] = group
        return group

    def finish(self) -> SampleSet:
        groups = {number: found for found, number in self.scaling_groups.items()}
        for (number, version), by_count in self.scaling.items():
            if len(by_count) < 2:
                continue  # one accelerator count: no group
            software, key, higher = groups[number]
            points = self.out.scaling.setdefault(software, [])
            for count, values in by_count.items():
                points += (ScalingPoint(key, version, count, v, higher, s) for v, s in values)
        platforms = {number: found for found, number in self.stack_groups.items()}
        for (number, version), by_stack in self.stacks.items():
            platform, labels = platforms[number]
            self.out.stacks[(platform, version, labels)] = by_stack
        return self.out


def collect_samples(samples: Iterable[AnalysisSample]) -> SampleSet:
    """Group every valid sample into series, software-stack groups and scaling points."""
    collector = _Collector()
    out = collector.out
    for sample in samples:
        out.samples += 1
        if sample.is_valid:
            collector.add(sample)
        else:
            out.invalid += 1
    return collector.finish()


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


def _stack_info(platform: _Platform, version: str, labels: _Labels) -> tuple[str, SeriesInfo]:
    software, submitter, division, accelerator, count, nodes, host = platform
    benchmark, scenario, workload, metric, unit, higher = labels
    name = (
        f"{submitter or ''} {division or ''} {accelerator or '?'} "
        f"x{count} ({nodes or '?'} nodes, {host or '?'})"
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
