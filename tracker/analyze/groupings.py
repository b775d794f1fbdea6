"""Which results may be grouped or compared, and which findings share a cause: the rules,
written down in one place.

A finding is only as sound as the group it came from. These rules decide every
group the analysis forms (the README's "Groupings" and "Comparability" sections say
the same), and ``tracker compare``, the gate and the report use them too:

* **The comparability rule** (:func:`besides_software`): a change across versions
  is a *software* change only when the hardware part of the configuration is the
  same on both sides: accelerator model and count, host CPU model and count, power
  mode (MaxQ, a power cap, a TGP where both sides state one), division and
  precision class; a CPU-only result never pairs with an accelerated one.
  Anything else is *configuration changed*, with the differences spelled out
  (``host CPU Intel Xeon 6787P → Intel Xeon 6788P; TGP 1100 W → not stated``),
  and is never counted as a software gain or loss, never in a headline, never
  failing a gate. Other differences (host cores, memory, interconnect, nodes of
  the same count, availability) and what one side does not state are listed,
  not deciding. A result's configuration is its round's description of the
  system (:func:`configuration_of`). :func:`apply_rule` splits a run's pairs.
* **Stacks inside one round** are a ranking: no improvement or regression direction.

* **Series** (one metric across versions) are one software, system, benchmark,
  scenario, workload and metric. A system is its submitter and name within one
  division: an open-division system is a series of its own even when a closed
  system of the same submitter has the same name.
* **Software stacks** (configurations of one version that differ only in
  software) are compared only within one submitter, division, accelerator
  model, node and accelerator counts and host CPU.
* **Scaling groups** (:func:`scales_with_accelerators`, :func:`power_mode`):
  only throughput (or time-to-solution) results, never a per-query latency (a
  SingleStream or MultiStream result, or a metric named ``*latency*``), which
  by design does not improve with more accelerators; never sweep points or
  metrics already per accelerator; only
  within one round (version), division and **system family**: the same
  submitter, accelerator model, host CPU, framework and power mode. A
  power-capped system (MLPerf's ``MaxQ``) is a family of its own.
* **Precision classes** (:func:`precision_class`): where a round states the
  precision of a result (MLPerf's ``weight_data_types``: ``fp8``, ``fp4``, ...),
  a series is compared across versions only where both versions state the same
  class, and software stacks only within one class: a move from fp8 to fp4 is
  a different configuration, not a software gain.
* **Runs behind a score** (:data:`RUN_METRICS`, :func:`training_folders`): MLPerf
  Training stores each
  run as a sample of ``run_time_to_train_minutes`` beside the folder's official
  score (``time_to_train_minutes``, the olympic mean). The runs are shown, but
  only the score is compared, grouped for scaling and counted in gains, so a
  round counts once.
* **Twins** (:func:`twin_pairs`, :func:`twin_sets`): one measurement under several
  names counts once. Accuracy variants of one system (``-95``, ``-99``,
  ``-99.9``) whose samples are the same (to :data:`TWIN_TOLERANCE`: their logs are
  often byte-identical, or one is read from the summary log and one from the
  detail log), and results of other systems (another submitter's name for it) in
  one version with the same value and the same configuration
  (:func:`twin_configuration`: accelerator, counts, power mode, division and
  precision; the host CPU's name may be spelled otherwise). The lowest variant (or
  the series whose change is a software one, then the first by key) carries the
  comparison and its finding names the others; they add no p-value to the
  Benjamini–Hochberg family, no finding and no gate line; a variant's scaling
  finding that repeats the lower variant's is dropped.

Findings that share a cause, as one issue with members (the gate's, ``findings``' and the
report's lines).

One change in a serving stack shows in many series: every point of a sweep
(workload ``<curve>/c<N>`` or ``/r<rate>``), the per-accelerator form of each
metric (``X`` and ``X_per_accelerator``) and the derived series at the
interactivity target (``X at N tokens/s/user (...)``, workload ``<curve>``).
MLPerf's ``-99.9`` twins are already folded by the analysis; a twin's benchmark
is read as its ``-99`` here too. :func:`cause_of` says what a series is about;
series with the same :attr:`Cause.key` (software, system, benchmark, scenario,
curve, base metric) that changed in the same direction between the same
versions are one issue, and :func:`where` names its points:
``at c2–c32 and at 50 tokens/s/user``.

Pure over labels (no store, no analysis run): the gate (:mod:`tracker.gate.items`),
``tracker findings`` (:mod:`tracker.analyze.summary`) and the report
(:mod:`tracker.report.issues`) group with it, so the three count one regression alike.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar

from tracker.records.findings import SeriesInfo
from tracker.records.keys import VersionPair
from tracker.records.results import (
    RUN_TIME_TO_TRAIN,
    TIME_TO_TRAIN,
    TRAINING_SOFTWARE,
    AnalysisSample,
    Configuration,
    ExportRow,
)

if TYPE_CHECKING:  # the statistics (numpy, scipy) load only where a function needs them
    from tracker.stats import ScalingFinding, SeriesGain, SeriesSamples

__all__ = [
    "CONFIGURATION_CHANGED",
    "SAME_SYSTEM",
    "Besides",
    "Cause",
    "ConfigurationChange",
    "LATENCY_SCENARIOS",
    "NOTHING_BUT_SOFTWARE",
    "PERFORMANCE",
    "PER_ACCELERATOR",
    "POWER_CAPPED",
    "RUN_METRICS",
    "training_folders",
    "RuleOutcome",
    "Side",
    "StackRanking",
    "TWIN_TOLERANCE",
    "accuracy_variant",
    "apply_rule",
    "besides_software",
    "cause_of",
    "configuration_changes",
    "configuration_of",
    "fold_twins",
    "framework",
    "group_by",
    "host_cpu_name",
    "point_order",
    "power_mode",
    "precision_class",
    "rank_stacks",
    "scales_with_accelerators",
    "scaling_family",
    "series_labels",
    "size_family",
    "twin_benchmark",
    "twin_configuration",
    "twin_pairs",
    "twin_scaling_findings",
    "twin_sets",
    "where",
]


PER_ACCELERATOR = "_per_accelerator"
_POINT = re.compile(r"^(?P<curve>.+)/(?P<point>(?:r\d[\d.]*-)?c\d[\d.]*|r\d[\d.]*)$")
_AT_TARGET = re.compile(r"^(?P<metric>\S+) at (?P<target>\d[\d.]*) tokens/s/user\b")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")

_TWIN_SUFFIX = "-99.9"
_PRIMARY_SUFFIX = "-99"

T = TypeVar("T")


def twin_benchmark(benchmark: str) -> str | None:
    """The ``-99`` benchmark a ``-99.9`` benchmark may be the twin of (else ``None``)."""
    if benchmark.endswith(_TWIN_SUFFIX):
        return benchmark[: -len(_TWIN_SUFFIX)] + _PRIMARY_SUFFIX
    return None


@dataclass(frozen=True, slots=True)
class Cause:
    """What one series is about: ``key`` is shared by the series of one cause; ``point``
    is the sweep point (``c16``; empty for the curve), ``target`` the interactivity
    target of a derived series (``50``; empty otherwise)."""

    key: tuple[str, str, str, str, str, str]
    point: str = ""
    target: str = ""
    per_accelerator: bool = False

    @property
    def curve(self) -> str:
        """The workload without the point."""
        return self.key[4]

    @property
    def metric(self) -> str:
        """The base metric (no per-accelerator suffix, no target)."""
        return self.key[5]


def cause_of(
    software: str, system: str, benchmark: str, scenario: str, workload: str, metric: str
) -> Cause:
    """The cause of the series with these labels."""
    point_match = _POINT.match(workload)
    curve, point = (point_match["curve"], point_match["point"]) if point_match else (workload, "")
    target_match = _AT_TARGET.match(metric)
    base, target = (
        (target_match["metric"], target_match["target"]) if target_match else (metric, "")
    )
    per_accelerator = base.endswith(PER_ACCELERATOR)
    if per_accelerator:
        base = base[: -len(PER_ACCELERATOR)]
    bench = twin_benchmark(benchmark) or benchmark
    return Cause((software, system, bench, scenario, curve, base), point, target, per_accelerator)


def group_by(items: Iterable[T], key: Callable[[T], Hashable]) -> list[list[T]]:
    """``items`` in groups of equal ``key``, each group and the groups in first-seen order."""
    groups: dict[Hashable, list[T]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return list(groups.values())


def point_order(point: str) -> tuple[float, ...]:
    """A sweep point's sort key: its numbers (``r2-c16`` → (2, 16))."""
    return tuple(float(n) for n in _NUMBER.findall(point))


def _points(points: Sequence[str], every: Sequence[str]) -> str:
    """``c2–c32`` when ``points`` are a run of neighbours in ``every``, else a list."""
    ordered = sorted(set(points), key=point_order)
    if len(ordered) == 1:
        return ordered[0]
    universe = sorted(set(every) | set(ordered), key=point_order)
    at = [universe.index(p) for p in ordered]
    if at[-1] - at[0] == len(at) - 1:
        return f"{ordered[0]}–{ordered[-1]}"
    return ", ".join(ordered)


def where(causes: Iterable[Cause], every_point: Sequence[str] = ()) -> str:
    """Where an issue shows: ``at c2–c32 and at 50 tokens/s/user`` (empty for one plain
    series); ``every_point``: the curve's points looked at, to tell a run from a list."""
    found = list(causes)
    points = [c.point for c in found if c.point]
    targets = sorted({c.target for c in found if c.target}, key=point_order)
    parts = []
    if points:
        parts.append(f"at {_points(points, every_point)}")
    parts += [f"at {t} tokens/s/user" for t in targets]
    return " and ".join(parts)


RUN_METRICS = frozenset({RUN_TIME_TO_TRAIN.name})
"""Metrics whose values are the runs behind another result's score: never analysed."""


def training_folders(rows: Iterable[ExportRow]) -> list[list[ExportRow]]:
    """The MLPerf Training scores and runs of ``rows``, one list per result folder (one
    round's folder of one system and benchmark), in the order of their first row."""
    metrics = {TIME_TO_TRAIN.name, RUN_TIME_TO_TRAIN.name}
    folders: dict[tuple[str, str], list[ExportRow]] = {}
    for row in rows:
        if row.software == TRAINING_SOFTWARE and row.metric in metrics:
            where = row.location or f"{row.submitter}/{row.system}/{row.benchmark}"
            folders.setdefault((row.software_version, where), []).append(row)
    return list(folders.values())


LATENCY_SCENARIOS = frozenset({"singlestream", "multistream"})
"""Scenarios whose primary metric is a per-query latency (lower case)."""

POWER_CAPPED = "power-capped"
PERFORMANCE = "performance"
_MAXQ = re.compile(r"max[\s_-]?q(?![a-z])", re.IGNORECASE)


def precision_class(stated: str | None) -> str | None:
    """The precision class a result states (``FP8 `` → ``fp8``), or ``None``."""
    text = " ".join((stated or "").split()).casefold()
    return text or None


def power_mode(system: str | None, configuration: Configuration | None = None) -> str:
    """``power-capped`` for an MLPerf ``MaxQ`` system (named so) or one whose description
    states a power cap, else ``performance``."""
    if configuration is not None and configuration.power_mode:
        return POWER_CAPPED
    return POWER_CAPPED if system and _MAXQ.search(system) else PERFORMANCE


def scales_with_accelerators(sample: AnalysisSample) -> bool:
    """Whether ``sample`` may enter a scaling group (see the module docstring)."""
    conf = sample.configuration
    return (
        sample.accelerators_total is not None
        and sample.accelerators_total > 0
        and not (conf is not None and conf.cpu_only)
        and sample.sweep_key is None
        and "per_accelerator" not in sample.metric
        and "latency" not in sample.metric
        and sample.scenario.casefold() not in LATENCY_SCENARIOS
    )


NOTHING_BUT_SOFTWARE = "nothing but the software"
SAME_SYSTEM = "same system, nothing but the software"
"""A result of one system across rounds where nothing but the software changed."""
CONFIGURATION_CHANGED = "configuration changed, not a software gain"
"""A result across rounds of the same system with another hardware part, or of the same
submitter's accelerator model at another count: listed, never a software gain."""
NOT_STATED = "not stated"
_MARKS = re.compile(r"\((?:\s*x\s*\d+\s*|[^)]*power\s*cap[^)]*)\)", re.IGNORECASE)
_TRADEMARKS = re.compile(r"\((?:R|TM|C)\)|[®™]", re.IGNORECASE)


def host_cpu_name(name: str | None) -> str | None:
    """A host CPU's name as shown: ``Intel(R) Xeon(R) 6787P`` → ``Intel Xeon 6787P``."""
    text = " ".join(_TRADEMARKS.sub(" ", name or "").split())
    return text or None


def _model(name: str | None) -> str | None:
    """An accelerator or CPU model for comparing: no counts, caps, marks, case or spacing."""
    text = " ".join(_TRADEMARKS.sub(" ", _MARKS.sub(" ", name or "")).split()).casefold()
    return text or None


def configuration_of(sample: AnalysisSample) -> Configuration:
    """What ``sample`` ran on: its round's description, else what its labels say (a local
    run's accelerator and count), with ``MaxQ`` read from the system's name."""
    conf = sample.configuration
    if conf is None:
        conf = Configuration(
            accelerator=sample.accelerator,
            accelerators_total=sample.accelerators_total,
            nodes=sample.nodes,
            host_cpu=sample.host_cpu,
            division=sample.division,
        )
    if conf.power_mode is None and power_mode(sample.system) == POWER_CAPPED:
        conf = replace(conf, power_mode="MaxQ")
    return conf


Side = tuple[Configuration | None, str | None]
"""One side of a comparison: the configuration and the precision class it states."""


@dataclass(frozen=True, slots=True)
class Besides:
    """What changed besides the software between the two sides of a comparison.

    ``changed``: differences in the hardware part (then the pair is *configuration
    changed*, never a software change); ``noted``: other differences, and what one
    side does not state (listed, not deciding).
    """

    changed: tuple[str, ...] = ()
    noted: tuple[str, ...] = ()

    @property
    def software_only(self) -> bool:
        """Whether the pair is a software change under the rule."""
        return not self.changed

    @property
    def text(self) -> str:
        """``nothing but the software``, or ``configuration changed: host CPU A → B; ...``."""
        if self.changed:
            return "configuration changed: " + "; ".join((*self.changed, *self.noted))
        if self.noted:
            return f"{NOTHING_BUT_SOFTWARE} (noted: {'; '.join(self.noted)})"
        return NOTHING_BUT_SOFTWARE


def _shown(value: object) -> str:
    if value is None:
        return NOT_STATED
    if isinstance(value, float):
        return f"{value:g} W"
    return str(value)


class _Differences:
    """Collects the differences of two configurations, deciding and noted."""

    def __init__(self) -> None:
        self.changed: list[str] = []
        self.noted: list[str] = []

    def check(
        self, label: str, before: object, after: object, *, deciding: bool, same: object = None
    ) -> None:
        """Compare one field; ``same``: the values as compared (``before``/``after``'s own
        when ``None``), the shown ones are ``before`` and ``after``."""
        a, b = same if isinstance(same, tuple) else (before, after)
        if a == b or (not deciding and (a is None or b is None)):
            return  # a field that decides nothing is listed only where both state it
        line = f"{label} {_shown(before)} → {_shown(after)}"
        if a is None or b is None or not deciding:
            self.noted.append(line)
        else:
            self.changed.append(line)


def _host_cpus(c: Configuration, sizes: bool) -> int | None:
    per_node = c.host_cpus_per_node
    if sizes or per_node is None or c.nodes is None:
        return per_node
    return per_node * c.nodes


def _accelerators(d: _Differences, a: Configuration, b: Configuration, sizes: bool) -> None:
    if a.cpu_only != b.cpu_only:
        d.changed.append("CPU-only → accelerated" if a.cpu_only else "accelerated → CPU-only")
        return
    if a.cpu_only:
        return  # no accelerator ran: its model and count mean nothing
    models = (_model(a.accelerator), _model(b.accelerator))
    d.check("accelerator", a.accelerator, b.accelerator, deciding=True, same=models)
    if not sizes:
        d.check("accelerators", a.accelerators_total, b.accelerators_total, deciding=True)
        if a.accelerators_total == b.accelerators_total:
            layout = (a.nodes, a.accelerators_per_node), (b.nodes, b.accelerators_per_node)
            if None not in (*layout[0], *layout[1]) and layout[0] != layout[1]:
                d.noted.append(
                    f"nodes {layout[0][0]} × {layout[0][1]} → {layout[1][0]} × {layout[1][1]}"
                )


def besides_software(
    before: Configuration | None,
    after: Configuration | None,
    precision_before: str | None = None,
    precision_after: str | None = None,
    *,
    sizes: bool = False,
) -> Besides:
    """What changed besides the software from ``before`` to ``after`` (see the module
    docstring); ``sizes``: the two are sizes of one platform (a scaling pair), so their
    accelerator counts, nodes and host CPUs in all may differ (host CPUs per node may not).
    """
    d = _Differences()
    if before is not None and after is not None:
        _accelerators(d, before, after, sizes)
        cpus = (_model(before.host_cpu), _model(after.host_cpu))
        shown = (host_cpu_name(before.host_cpu), host_cpu_name(after.host_cpu))
        d.check("host CPU", *shown, deciding=True, same=cpus)
        d.check("host CPUs", _host_cpus(before, sizes), _host_cpus(after, sizes), deciding=True)
        modes = (before.power_mode or PERFORMANCE, after.power_mode or PERFORMANCE)
        d.check("power mode", *modes, deciding=True)
        d.check("TGP", before.tgp_w, after.tgp_w, deciding=True)
        divisions = (
            (before.division or "").casefold() or None,
            (after.division or "").casefold() or None,
        )
        d.check("division", before.division, after.division, deciding=True, same=divisions)
        if not sizes:
            d.check("host cores", before.host_cores, after.host_cores, deciding=False)
            d.check("host memory", before.host_memory, after.host_memory, deciding=False)
            d.check("availability", before.availability, after.availability, deciding=False)
    elif before is not None or after is not None:
        d.noted.append(
            f"configuration {'stated' if before else NOT_STATED} → "
            f"{'stated' if after else NOT_STATED}"
        )
    d.check("precision", precision_before, precision_after, deciding=True)
    return Besides(tuple(d.changed), tuple(d.noted))


def twin_configuration(side: Side) -> tuple[object, ...]:
    """What two results of other systems must share to be one measurement: accelerator
    model and count, CPU-only, host CPUs, power mode, division and precision (not the host
    CPU's name, which submitters spell differently)."""
    conf, precision = side
    if conf is None:
        return (None, precision)
    return (
        None if conf.cpu_only else _model(conf.accelerator),
        None if conf.cpu_only else conf.accelerators_total,
        conf.cpu_only,
        _host_cpus(conf, False),
        conf.power_mode or PERFORMANCE,
        (conf.division or "").casefold(),
        precision,
    )


def framework(stack: str | None) -> str:
    """The framework part of a stored software stack (before the first ``;``)."""
    return (stack or "").split(";", 1)[0].strip()


def size_family(
    submitter: str | None,
    configuration: Configuration | None,
    precision: str | None,
    stack: str | None,
) -> tuple[object, ...]:
    """What results must share to be sizes of one platform (a scaling family): submitter,
    division, accelerator model, host CPU model and CPUs per node, power mode, precision
    class, framework and CPU-only; only the accelerator count (and nodes) may differ."""
    conf = configuration or Configuration()
    return (
        submitter,
        (conf.division or "").casefold(),
        _model(conf.accelerator),
        _model(conf.host_cpu),
        conf.host_cpus_per_node,
        conf.power_mode or PERFORMANCE,
        precision,
        " ".join(framework(stack).split()),
        conf.cpu_only,
    )


def scaling_family(configuration: Configuration | None, precision: str | None) -> str:
    """What a scaling family shares beyond its submitter, accelerator, host CPU, framework,
    division and power mode (capped or not): the precision class, the host CPUs per node
    and the power cap (empty when none is stated), as :func:`size_family` compares them."""
    parts = [precision or ""]
    if configuration is not None and configuration.host_cpus_per_node is not None:
        parts.append(f"{configuration.host_cpus_per_node} host CPUs per node")
    if configuration is not None and configuration.power_mode:
        parts.append(configuration.power_mode)
    return " · ".join(p for p in parts if p)


TWIN_TOLERANCE = 1e-5
"""Relative difference within which two samples are one run's value: a ``-99.9``
twin is often read from the summary log, its ``-99`` from the detail log, and
the two print different digits (29,739.88 and 29,739.9)."""

_VARIANT = re.compile(r"^(?P<base>.+)-(?P<target>9\d(?:\.\d+)?)$")


def accuracy_variant(benchmark: str) -> tuple[str, float] | None:
    """``(base, accuracy target)`` of an MLPerf accuracy variant (``yolo-95`` → ``("yolo",
    95.0)``, ``llama2-70b-99.9`` → ``("llama2-70b", 99.9)``), else ``None``."""
    found = _VARIANT.match(benchmark)
    return (found["base"], float(found["target"])) if found else None


def _variant_order(benchmark: str) -> tuple[str, float]:
    found = accuracy_variant(benchmark)
    return found if found else (benchmark, 0.0)


def _same_samples(a: SeriesSamples, b: SeriesSamples, versions: Iterable[str]) -> bool:
    for version in versions:
        i, j = a.index(version), b.index(version)
        if i is None or j is None or len(a.samples[i]) != len(b.samples[j]):
            return False
        pairs = zip(sorted(a.samples[i]), sorted(b.samples[j]), strict=True)
        if not all(math.isclose(x, y, rel_tol=TWIN_TOLERANCE) for x, y in pairs):
            return False
    return True


def twin_pairs(
    series: Iterable[SeriesSamples],
    labels_of: Mapping[str, Sequence[str]],
    versions: Sequence[str] | None = None,
) -> dict[str, str]:
    """Twin series key → the key of the lowest accuracy variant with the same samples.

    ``labels_of`` gives each key's labels (software, system, benchmark, scenario,
    workload, metric, ...); ``versions`` are the versions that must agree (every
    version of the twin when ``None``).
    """
    variants: dict[tuple[object, ...], list[SeriesSamples]] = defaultdict(list)
    for s in series:
        labels = labels_of.get(s.key)
        if labels is None or accuracy_variant(labels[2]) is None:
            continue
        base = _variant_order(labels[2])[0]
        variants[(*labels[:2], base, *labels[3:])].append(s)
    out: dict[str, str] = {}
    for members in variants.values():
        ordered = sorted(members, key=lambda m: _variant_order(labels_of[m.key][2])[1])
        primaries: list[SeriesSamples] = []
        for twin in ordered:
            same = next(
                (
                    p
                    for p in primaries
                    if twin.versions and _same_samples(twin, p, versions or twin.versions)
                ),
                None,
            )
            if same is None:
                primaries.append(twin)
            else:
                out[twin.key] = same.key
    return out


def twin_scaling_findings(findings: Iterable[ScalingFinding]) -> set[ScalingFinding]:
    """The findings of an accuracy variant's groups that repeat a lower variant's exactly."""
    found = list(findings)
    index: dict[tuple[object, ...], list[ScalingFinding]] = defaultdict(list)
    for f in found:
        base = _variant_order(f.key.benchmark)[0]
        where = (f.issue, replace(f.key, benchmark=base), f.version)
        index[(*where, f.base_accelerators, f.accelerators)].append(f)
    out = set()
    for members in index.values():
        ordered = sorted(members, key=lambda m: _variant_order(m.key.benchmark)[1])
        for f in ordered[1:]:
            if accuracy_variant(f.key.benchmark) is None:
                continue
            if any(
                math.isclose(p.efficiency, f.efficiency, rel_tol=TWIN_TOLERANCE)
                for p in ordered[: ordered.index(f)]
                if p not in out
            ):
                out.add(f)
    return out


def series_labels(infos: Mapping[str, SeriesInfo]) -> dict[str, tuple[str, ...]]:
    """Each series' labels, as :func:`twin_pairs` matches them (axis and stack version last)."""
    return {
        key: (i.software, i.system, i.benchmark, i.scenario, i.workload, i.metric, i.axis)
        + (i.version or "",)
        for key, i in infos.items()
    }


def twin_sets(
    members: Sequence[SeriesSamples],
    infos: Mapping[str, SeriesInfo],
    sides: Mapping[str, Side],
    candidate: str,
) -> list[list[str]]:
    """Series of other systems whose ``candidate`` results are one measurement: the same
    labels but the system, the same samples and :func:`twin_configuration` (``sides``:
    each key's side at ``candidate``), of systems a description names (accelerator or
    CPU-only, and host CPU). Each set has two keys or more."""
    buckets: dict[tuple[object, ...], list[SeriesSamples]] = defaultdict(list)
    for s in members:
        i, at = infos.get(s.key), s.index(candidate)
        conf = sides.get(s.key, (None, None))[0]
        described = conf is not None and bool(conf.cpu_only or conf.accelerator) and conf.host_cpu
        if i is None or at is None or not s.samples[at] or not described:
            continue  # only systems a description names: equal values of bare labels are not
        shown = tuple(f"{v:.5g}" for v in sorted(s.samples[at]))
        labels = (i.software, i.benchmark, i.scenario, i.workload, i.metric, i.axis, i.version)
        side = sides.get(s.key, (None, None))
        buckets[(*labels, twin_configuration(side), shown)].append(s)
    out = []
    for found in buckets.values():
        if len({infos[s.key].system for s in found}) < 2:
            continue
        head = found[0]
        same = [s.key for s in found if _same_samples(s, head, (candidate,))]
        if len(same) > 1:
            out.append(same)
    return out


def fold_twins(
    groups: Mapping[VersionPair, Sequence[SeriesSamples]], infos: Mapping[str, SeriesInfo]
) -> tuple[dict[VersionPair, list[SeriesSamples]], dict[str, list[str]]]:
    """``groups`` without the accuracy variants that repeat a lower variant at the pair,
    and per kept key the twins it stands for (:func:`twin_pairs`)."""
    outcome = apply_rule(groups, infos, {})
    return outcome.software, outcome.twins


@dataclass(frozen=True, slots=True)
class StackRanking:
    """The software stacks of one platform, benchmark, scenario and metric within one
    version, best first: a ranking, with no improvement or regression direction.
    ``stacks``: (stack, level of its results, ratio to the best, direction-aware: 1 is
    the best, below 1 worse)."""

    key: str
    version: str
    stacks: tuple[tuple[str, float, float], ...]


def rank_stacks(series: Iterable[SeriesSamples]) -> tuple[StackRanking, ...]:
    """Each stack series (:func:`tracker.analyze.collect.stack_series`: its "versions" are
    the stacks of one version) as a ranking, best first, then by stack."""
    from tracker.stats.series import level

    out = []
    for s in series:
        levels = [(stack, level(found)) for stack, found in zip(s.versions, s.samples, strict=True)]
        usable = [(stack, value) for stack, value in levels if value > 0]
        if len(usable) < 2:
            continue
        sign = 1.0 if s.higher_is_better else -1.0
        ranked = sorted(usable, key=lambda sv: (-sign * math.log(sv[1]), sv[0]))
        best = ranked[0][1]
        stacks = tuple((stack, value, (value / best) ** sign) for stack, value in ranked)
        version = s.key.split("|")[1] if "|" in s.key else ""
        out.append(StackRanking(s.key, version, stacks))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class ConfigurationChange:
    """A series whose configuration changed between two versions: its values and what
    changed besides the software; never a software gain or loss (``change``: the measured
    ratio, for information; ``twins``: the series it stands for)."""

    key: str
    baseline: str
    candidate: str
    besides: Besides
    change: SeriesGain | None
    twins: tuple[str, ...] = ()

    @property
    def delta_pct(self) -> float | None:
        """The raw relative change of the metric in percent (``None``: no values)."""
        return None if self.change is None else self.change.delta_pct


def configuration_changes(rule: RuleOutcome) -> tuple[ConfigurationChange, ...]:
    """The series of ``rule``'s pairs whose configuration changed, pair by pair."""
    from tracker.stats import series_gain

    return tuple(
        ConfigurationChange(
            s.key,
            pair.baseline,
            pair.candidate,
            rule.besides[(s.key, pair)],
            series_gain(s, pair.baseline, pair.candidate),
            tuple(rule.twins.get(s.key, ())),
        )
        for pair in sorted(rule.changed)
        for s in rule.changed[pair]
    )


@dataclass(slots=True)
class RuleOutcome:
    """A run's version pairs under the rule: ``software`` are the series whose change is a
    software one, ``changed`` those whose configuration changed (twins folded in both);
    ``besides`` says for each series and pair what changed besides the software, ``twins``
    per kept key the series it stands for."""

    software: dict[VersionPair, list[SeriesSamples]] = field(default_factory=dict)
    changed: dict[VersionPair, list[SeriesSamples]] = field(default_factory=dict)
    besides: dict[tuple[str, VersionPair], Besides] = field(default_factory=dict)
    twins: dict[str, list[str]] = field(default_factory=dict)


def _besides(
    sides: Mapping[str, Side], pair: VersionPair, known: dict[tuple[Side, Side], Besides]
) -> Besides:
    """What changed besides the software in ``pair``, worked out once per two sides
    (``known``: the answers so far; most series of a run share their sides)."""
    ends = (sides.get(pair.baseline, (None, None)), sides.get(pair.candidate, (None, None)))
    found = known.get(ends)
    if found is None:
        (before, precision_before), (after, precision_after) = ends
        found = besides_software(before, after, precision_before, precision_after)
        known[ends] = found
    return found


def _union(sets: Iterable[Sequence[str]]) -> dict[str, str]:
    """Each key of ``sets`` → one key standing for every set it shares a key with."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    for keys in sets:
        for other in keys[1:]:
            parent[root(other)] = root(keys[0])
    return {key: root(key) for key in parent}


def _fold(
    members: Sequence[SeriesSamples],
    pair: VersionPair,
    infos: Mapping[str, SeriesInfo],
    sides: Mapping[str, Mapping[str, Side]],
    besides: Mapping[str, Besides],
) -> tuple[list[SeriesSamples], dict[str, list[str]]]:
    """``members`` with each set of twins as one series (see :func:`apply_rule`)."""
    labels = series_labels(infos)
    variants = twin_pairs(members, labels, versions=(pair.baseline, pair.candidate))
    at = {s.key: sides.get(s.key, {}).get(pair.candidate, (None, None)) for s in members}
    sets = [[twin, primary] for twin, primary in variants.items()]
    sets += twin_sets(members, infos, at, pair.candidate)
    roots = _union(sets)
    by_root: dict[str, list[str]] = defaultdict(list)
    for key, top in roots.items():
        by_root[top].append(key)

    def rank(key: str) -> tuple[bool, float, str]:
        bench = infos[key].benchmark if key in infos else ""
        return (not besides[key].software_only, _variant_order(bench)[1], key)

    dropped: set[str] = set()
    twins: dict[str, list[str]] = {}
    for keys in by_root.values():
        kept, *others = sorted(keys, key=rank)
        twins[kept] = sorted(others)
        dropped.update(others)
    return [s for s in members if s.key not in dropped], twins


def apply_rule(
    groups: Mapping[VersionPair, Sequence[SeriesSamples]],
    infos: Mapping[str, SeriesInfo],
    sides: Mapping[str, Mapping[str, Side]],
) -> RuleOutcome:
    """Each pair's series under the comparability rule, twins folded (``sides``: per series
    key and version, the configuration and precision of its results; a series without
    them is compared as a software change)."""
    out = RuleOutcome()
    known: dict[tuple[Side, Side], Besides] = {}
    for pair, members in groups.items():
        besides = {s.key: _besides(sides.get(s.key, {}), pair, known) for s in members}
        kept, twins = _fold(members, pair, infos, sides, besides)
        for key, found in twins.items():
            out.twins.setdefault(key, [])
            out.twins[key] += [t for t in found if t not in out.twins[key]]
        out.software[pair] = [s for s in kept if besides[s.key].software_only]
        out.changed[pair] = [s for s in kept if not besides[s.key].software_only]
        out.besides.update({(key, pair): b for key, b in besides.items()})
    out.twins = {key: found for key, found in out.twins.items() if found}
    return out
