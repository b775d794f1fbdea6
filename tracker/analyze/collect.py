"""From the store's records to the inputs of the analysis, gathered in one pass.

One pass over the stored samples → a :class:`~tracker.analyze.collect.SampleSet`.

:func:`collect_samples` reads each sample once and keeps its value once, in its
series' list for its version. What the software-stack groups and the scaling
groups need is derived from those lists at the end, so that a million samples
do not cost a million extra objects. Per series and version the pass notes
only which software stack the samples had (an id in a small array) while they
all had the same one; the rare versions whose samples differ in stack keep
their (stack, value) pairs in arrival order. A software-stack group (one
platform and benchmark) with one series, the common case, is then read from its
series; a group of several series keeps its values per stack as they arrive,
from the moment its second series appears, so that every group's values and
the order the groups are found in are those of a plain pass in sample order.

From the store's records to the inputs of the analysis (used by :mod:`tracker.analyze.run`).

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

from array import array
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from tracker.analyze.groupings import (
    RUN_METRICS,
    Side,
    configuration_of,
    framework,
    power_mode,
    precision_class,
    scales_with_accelerators,
    scaling_family,
)
from tracker.records.findings import AXIS_STACK, AXIS_VERSION, SeriesInfo
from tracker.records.keys import SeriesKey, join_key
from tracker.records.results import AnalysisSample
from tracker.stats import (
    ScalingGroup,
    ScalingKey,
    ScalingPoint,
    SeriesSamples,
    scaling_groups,
    scaling_key,
)
from tracker.versions import version_sort_key

__all__ = [
    "AXIS_STACK",
    "AXIS_VERSION",
    "Platform",
    "SampleLabels",
    "SampleSet",
    "SeriesInfo",
    "Values",
    "collect_samples",
    "framework",
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
    sides: dict[str, dict[str, Side]] = field(default_factory=dict)
    """series key → version → what its results ran on (the first sample's configuration
    and precision class there): what the comparability rule reads."""


def _series(key: str, info: SeriesInfo, found: Values, order: Sequence[str]) -> SeriesSamples:
    return SeriesSamples.of(key, [v for v in order if v in found], found, info)


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
    key = join_key(software, version, name, benchmark, scenario, workload, metric)
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


_NO_SAMPLE = -1
"""``stack_at``: no sample at that version yet."""
_MIXED = -2
"""``stack_at``: the samples at that version differ in stack (see ``mixed``)."""
_NO_STACK = 0
"""The stack id of samples without a software stack."""


_Labels = tuple[str, str, str, str, str, str]
"""A series' labels: software, system key, benchmark, scenario, workload, metric."""


@dataclass(slots=True, eq=False)
class _Series:
    """What every sample of one series shares, and what its samples' stacks were.

    ``stack_at`` and ``first_stacked`` are indexed by the collector's version
    index: the stack id every sample at that version had (or a marker), and the
    arrival number of the first sample with a stack there (``-1``: none).
    """

    by_version: defaultdict[str, list[float]]
    count: int | None
    stack_group: int
    scales: bool
    system_key: str
    scaling_groups: dict[tuple[str | None, str], int] = field(default_factory=dict)
    scaling_by_facts: dict[tuple[object, ...], int] = field(default_factory=dict)
    """(stack, version) → the scaling group its samples there join."""
    stack_at: array[int] = field(default_factory=lambda: array("i"))
    first_stacked: array[int] = field(default_factory=lambda: array("q"))
    mixed: dict[str, list[tuple[str | None, float]]] = field(default_factory=dict)
    shared: bool = False
    """Whether its software-stack group has several series (values kept per stack)."""
    group_stacks: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    """Where shared: its group's values, version → stack → values (one dict per group)."""
    sides: dict[str, Side] = field(default_factory=dict)
    """version → the configuration and precision class of its first sample there."""
    facts: tuple[object, ...] | None = None
    """The facts of its latest sample that may change between versions (what it ran on,
    its precision and stack); ``side`` and ``scaling_group`` follow from them."""
    side: Side = (None, None)
    scaling_group: int = -1
    stack: str | None = None
    stack_number: int = _NO_STACK
    """The stack of its latest sample, and that stack's number in the collector."""
    uniform: bool = True
    """Whether every sample so far had the same facts: then ``side``, ``stack`` and
    ``scaling_group`` hold for every version, and ``sides``, ``scaling_groups``,
    ``stack_at`` and ``first_stacked`` are filled only when that ends (see
    :meth:`_Collector._materialize`)."""
    arrivals: dict[str, int] = field(default_factory=dict)
    """While uniform, with a stack and not shared: version → its first sample's arrival."""


class _Collector:
    """One pass over the samples; keys are built once per series, group or stack."""

    def __init__(self) -> None:
        self.out = SampleSet()
        self.series: dict[_Labels, _Series] = {}
        self.stack_groups: dict[tuple[Platform, SampleLabels], int] = {}
        self.first_member: dict[int, _Series] = {}
        self.stacks: dict[int, dict[str, dict[str, list[float]]]] = {}
        """Values of the groups with several series: group → version → stack → values."""
        self.stack_order: dict[tuple[int, str], int] = {}
        self.scaling_groups: dict[tuple[str, ScalingKey, bool], int] = {}
        self.sides_by_facts: dict[tuple[object, ...], Side] = {}
        self.version_index: dict[str, int] = {}
        self.stack_ids: dict[str | None, int] = {None: _NO_STACK}
        self.stack_names: list[str | None] = [None]
        self.arrived = 0

    def _new(self, labels: _Labels, sample: AnalysisSample) -> _Series:
        key = str(SeriesKey(*labels))
        self.out.infos[key] = SeriesInfo(*labels, sample.unit, sample.higher_is_better)
        by_version: defaultdict[str, list[float]] = defaultdict(list)
        self.out.values.setdefault(sample.software, {})[key] = by_version
        count = sample.accelerators_total
        platform: Platform = (
            sample.software,
            sample.submitter,
            sample.division,
            sample.accelerator,
            count or 0,
            sample.nodes,
            sample.host_cpu,
            precision_class(sample.precision),
        )
        tail: SampleLabels = (
            sample.benchmark,
            sample.scenario,
            sample.workload,
            sample.metric,
            sample.unit,
            sample.higher_is_better,
        )
        group = self.stack_groups.setdefault((platform, tail), len(self.stack_groups))
        scales = scales_with_accelerators(sample)
        entry = _Series(by_version, count, group, scales, sample.system_key)
        self.series[labels] = entry
        if count is not None:
            first = self.first_member.setdefault(group, entry)
            if first is not entry:
                if not first.shared:
                    self._share(first)
                entry.shared = True
                entry.group_stacks = first.group_stacks
        return entry

    def add(self, sample: AnalysisSample) -> None:
        labels: _Labels = (
            sample.software,
            sample.system_key,
            sample.benchmark,
            sample.scenario,
            sample.workload,
            sample.metric,
        )
        entry = self.series.get(labels) or self._new(labels, sample)
        version = sample.version
        values = entry.by_version[version]
        facts = (
            sample.configuration,
            sample.accelerator,
            sample.accelerators_total,
            sample.nodes,
            sample.host_cpu,
            sample.division,
            sample.system,
            sample.precision,
            sample.software_stack,
        )
        if facts != entry.facts:  # most series keep their facts: worked out once per run of them
            self._refresh(entry, sample, facts)
        if not entry.uniform:
            if version not in entry.sides:
                entry.sides[version] = entry.side
            if entry.count is not None:
                self._note_stack(entry, sample, values)
        elif entry.count is not None:  # one stack so far: only its order and its group's values
            self.arrived += 1
            if entry.stack is None:
                pass
            elif entry.shared:
                self._note_group(entry, version, entry.stack, sample.value)
            elif not values:
                entry.arrivals[version] = self.arrived
        values.append(sample.value)

    def _note_group(self, entry: _Series, version: str, stack: str, value: float) -> None:
        """Add a value of a shared series to its group's values at ``version``."""
        by_stack = entry.group_stacks.get(version)
        if by_stack is None:
            by_stack = entry.group_stacks[version] = {}
            self.stack_order[(entry.stack_group, version)] = self.arrived
        by_stack.setdefault(stack, []).append(value)

    def _materialize(self, entry: _Series) -> None:
        """A uniform series' first change of facts: what held for every version so far is
        written out per version, as :meth:`_note_stack` keeps it from now on."""
        entry.uniform = False
        for version, values in entry.by_version.items():
            if not values:
                continue  # the version of the sample that changes the facts: not yet added
            entry.sides[version] = entry.side
            if entry.count is None:
                continue
            at = self.version_index.setdefault(version, len(self.version_index))
            if len(entry.stack_at) <= at:
                missing = len(self.version_index) - len(entry.stack_at)
                entry.stack_at.extend([_NO_SAMPLE] * missing)
                entry.first_stacked.extend([-1] * missing)
            entry.stack_at[at] = entry.stack_number
            entry.first_stacked[at] = entry.arrivals.get(version, -1)
            if entry.scales:
                entry.scaling_groups[(entry.stack, version)] = entry.scaling_group

    def _refresh(self, entry: _Series, sample: AnalysisSample, facts: tuple[object, ...]) -> None:
        """``entry``'s side and scaling group for a sample with new ``facts`` (the side worked
        out once per set of facts in the run, the scaling group once per set in the series:
        its labels fix the rest, software, system, and so submitter and division,
        benchmark, scenario, workload, metric)."""
        if entry.uniform and entry.facts is not None:
            self._materialize(entry)
        entry.facts = facts
        stack = entry.stack = sample.software_stack or None
        number = self.stack_ids.get(stack)
        if number is None:
            number = self.stack_ids[stack] = len(self.stack_names)
            self.stack_names.append(stack)
        entry.stack_number = number
        side = self.sides_by_facts.get(facts[:-1])
        if side is None:
            side = (configuration_of(sample), precision_class(sample.precision))
            self.sides_by_facts[facts[:-1]] = side
        entry.side = side
        if entry.scales and entry.count is not None:
            found: tuple[object, ...] = (stack, sample.configuration, sample.precision)
            found += (sample.accelerator, sample.host_cpu)
            group = entry.scaling_by_facts.get(found)
            if group is None:
                group = entry.scaling_by_facts[found] = self._new_scaling_group(sample, stack)
            entry.scaling_group = group

    def _note_stack(self, entry: _Series, sample: AnalysisSample, values: list[float]) -> None:
        """Note the sample's stack (``values``: the series' earlier values at its version)."""
        self.arrived += 1
        version, stack, number, value = (
            sample.version,
            entry.stack,
            entry.stack_number,
            sample.value,
        )
        at = self.version_index.get(version)
        if at is None:
            at = self.version_index[version] = len(self.version_index)
        if len(entry.stack_at) <= at:
            missing = len(self.version_index) - len(entry.stack_at)
            entry.stack_at.extend([_NO_SAMPLE] * missing)
            entry.first_stacked.extend([-1] * missing)
        if stack is not None and entry.first_stacked[at] < 0:
            entry.first_stacked[at] = self.arrived
        state = entry.stack_at[at]
        if state == _NO_SAMPLE:
            entry.stack_at[at] = number
        elif state == _MIXED:
            entry.mixed[version].append((stack, value))
        elif state != number:
            before = self.stack_names[state]
            entry.mixed[version] = [*((before, v) for v in values), (stack, value)]
            entry.stack_at[at] = _MIXED
        if entry.shared and stack is not None:
            self._note_group(entry, version, stack, value)
        if entry.scales:
            entry.scaling_groups.setdefault((stack, version), entry.scaling_group)

    def _by_stack(self, entry: _Series, version: str) -> dict[str, list[float]]:
        """The values of one series at ``version`` per stack, in arrival order."""
        if entry.uniform:
            values = entry.by_version[version]
            return {entry.stack: list(values)} if entry.stack is not None and values else {}
        state = entry.stack_at[self.version_index[version]]
        if state != _MIXED:
            stack = self.stack_names[state]
            return {stack: list(entry.by_version[version])} if stack is not None else {}
        out: dict[str, list[float]] = {}
        for stack, value in entry.mixed[version]:
            if stack is not None:
                out.setdefault(stack, []).append(value)
        return out

    def _share(self, first: _Series) -> None:
        """A second series joins ``first``'s group: keep the group's values per stack from now."""
        first.shared = True
        self.stacks[first.stack_group] = first.group_stacks
        if first.uniform:
            for version, arrived in first.arrivals.items():
                first.group_stacks[version] = self._by_stack(first, version)
                self.stack_order[(first.stack_group, version)] = arrived
            return
        versions = list(self.version_index)
        for at, arrived in enumerate(first.first_stacked):
            if arrived >= 0:
                first.group_stacks[versions[at]] = self._by_stack(first, versions[at])
                self.stack_order[(first.stack_group, versions[at])] = arrived

    def _new_scaling_group(self, sample: AnalysisSample, stack: str | None) -> int:
        """The number of the scaling group ``sample`` belongs to (made on first sight)."""
        key = scaling_key(
            submitter=sample.submitter,
            accelerator=sample.accelerator,
            benchmark=sample.benchmark,
            scenario=sample.scenario,
            metric=sample.metric,
            software_stack=framework(stack),
            division=sample.division,
            workload=sample.workload,
            host_cpu=sample.host_cpu,
            power_mode=power_mode(sample.system, sample.configuration),
            family=scaling_family(sample.configuration, precision_class(sample.precision)),
        )
        found = (sample.software, key, sample.higher_is_better)
        return self.scaling_groups.setdefault(found, len(self.scaling_groups))

    def finish(self) -> SampleSet:
        self._finish_stacks()
        self._finish_scaling()
        self.out.sides = {
            str(SeriesKey(*labels)): (
                dict.fromkeys(entry.by_version, entry.side) if entry.uniform else entry.sides
            )
            for labels, entry in self.series.items()
        }
        return self.out

    def _finish_stacks(self) -> None:
        """The groups with two stacks or more at a version, in the order they were found."""
        found: list[tuple[int, int, str, dict[str, list[float]]]] = [
            (self.stack_order[(group, version)], group, version, by_stack)
            for group, by_version in self.stacks.items()
            for version, by_stack in by_version.items()
            if len(by_stack) > 1
        ]
        for entry in self.first_member.values():
            if entry.shared:
                continue
            for version in entry.mixed:
                by_stack = self._by_stack(entry, version)
                if len(by_stack) > 1:
                    arrived = entry.first_stacked[self.version_index[version]]
                    found.append((arrived, entry.stack_group, version, by_stack))
        platforms = {number: labels for labels, number in self.stack_groups.items()}
        for _arrived, group, version, by_stack in sorted(found, key=lambda f: f[0]):
            platform, labels = platforms[group]
            self.out.stacks[(platform, version, labels)] = by_stack

    def _finish_scaling(self) -> None:
        """Scaling groups: per key and version, the samples of its series at ≥ 2 counts."""
        members: defaultdict[int, list[_Series]] = defaultdict(list)
        for entry in self.series.values():
            if entry.scales and entry.count is not None:
                joined = (
                    (entry.scaling_group,)
                    if entry.uniform
                    else tuple(dict.fromkeys(entry.scaling_groups.values()))
                )
                for number in joined:
                    members[number].append(entry)
        by_key: defaultdict[tuple[str, ScalingKey], list[tuple[int, bool]]] = defaultdict(list)
        for (software, key, higher), number in self.scaling_groups.items():
            by_key[(software, key)].append((number, higher))
        found: defaultdict[str, list[ScalingGroup]] = defaultdict(list)
        for (software, key), numbers in by_key.items():
            points: defaultdict[str, list[ScalingPoint]] = defaultdict(list)
            for number, higher in numbers:
                if len({m.count for m in members[number]}) < 2:
                    continue  # one accelerator count: no group
                for version, by_count in self._scaling_values(number, members[number]).items():
                    if len(by_count) > 1:
                        points[version] += (
                            ScalingPoint(key, version, count, value, higher, label)
                            for count, values in by_count.items()
                            for value, label in values
                        )
            for version_points in points.values():
                found[software] += scaling_groups(version_points)
        self.out.scaling = {
            software: tuple(sorted(groups, key=lambda g: (g.key, g.version)))
            for software, groups in sorted(found.items())
        }

    def _scaling_values(
        self, number: int, members: list[_Series]
    ) -> dict[str, dict[int, list[tuple[float, str]]]]:
        """The samples of scaling group ``number``: version → count → (value, system)."""
        out: dict[str, dict[int, list[tuple[float, str]]]] = {}
        for entry in members:
            assert entry.count is not None
            if entry.uniform and entry.scaling_group != number:
                continue
            for version, values in entry.by_version.items():
                chosen = values if entry.uniform else self._in_group(entry, version, number)
                if not chosen:
                    continue
                by_count = out.setdefault(version, {})
                by_count.setdefault(entry.count, []).extend((v, entry.system_key) for v in chosen)
        return out

    def _in_group(self, entry: _Series, version: str, number: int) -> list[float]:
        """The values of a series that is not uniform at ``version`` in scaling group
        ``number``."""
        state = entry.stack_at[self.version_index[version]]
        if state == _MIXED:
            return [
                v for s, v in entry.mixed[version] if entry.scaling_groups[(s, version)] == number
            ]
        if entry.scaling_groups[(self.stack_names[state], version)] == number:
            return entry.by_version[version]
        return []


def collect_samples(samples: Iterable[AnalysisSample]) -> SampleSet:
    """Group every valid sample into series, software-stack groups and scaling groups."""
    collector = _Collector()
    out = collector.out
    for sample in samples:
        if sample.metric in RUN_METRICS:
            continue  # the runs behind a score: shown, not analysed
        out.samples += 1
        if sample.is_valid:
            collector.add(sample)
        else:
            out.invalid += 1
    return collector.finish()
