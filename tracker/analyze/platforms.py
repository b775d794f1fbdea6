"""Platforms compared per accelerator: within a round, across rounds, and across system sizes.

Pure functions over :class:`~tracker.records.results.AnalysisSample` (what the store
yields) returning plain records, for the ``tracker compare`` command and for a
report page to use later. Only valid throughput results with a known
accelerator count are compared (a latency is not divided by accelerators).
The figures are the ones people quote from MLPerf:

* :func:`rank_platforms`: for each benchmark and scenario of a round, every
  system's result per accelerator, ranked, with its ratio to a reference system
  (Vera Rubin NVL72, a *preview* system, against GB300 NVL72 on deepseek-r1
  Interactive: 2.57×) and its availability; twins (one measurement published
  under several systems' names: :func:`tracker.analyze.groupings.twin_configuration`)
  are one row naming the others;
* :func:`round_gains`: the same system from one round to the next where nothing
  but the software changed (a software gain: GB300 NVL72 x72 deepseek-r1 Server
  v6.0 → v6.1, 1.491×), shown apart from the pairs whose configuration changed
  (the comparability rule, :func:`tracker.analyze.groupings.besides_software`): the
  same system with another host CPU or precision, and the same accelerator model at
  another system size, per accelerator, each with what changed besides the software
  (GB300 qwen3-vl Server x4 in v6.0 against x72 in v6.1, 1.615×: accelerators 4 →
  72, precision fp32 → bf16);
* :func:`size_scaling`: the scaling efficiency ``(T(N)/N) / (T(N0)/N0)`` of each
  adjacent pair of sizes of one platform in a round (the scaling family of
  :func:`tracker.analyze.groupings.size_family`, as ``tracker analyze`` groups them:
  same submitter, division, accelerator and host CPU models, host CPUs per node,
  power mode, precision and framework), and of each size against the smallest
  (GB300 deepseek-r1 Offline x72 → x288: 0.995).
* :func:`compare_training_rounds`: MLPerf Training, from one round to another: each
  system's official time to train per benchmark (the olympic mean of its runs times the
  RCP scaling factor of its ``scaling.json``), compared only for the same configuration
  (same system, accelerator count and, where both rounds log one, global batch size),
  with the ratio (old / new: above 1 the new round trains faster), the unscaled
  olympic means, the runs used and dropped, whether the score is RCP-scaled, and the
  accelerator-hours to train where the round gives the accelerator count; pairs of
  another configuration, and folders without a score, are listed apart with why.
  It reads the stored Training rows (:class:`~tracker.records.results.ExportRow`, whose
  ``extra`` holds the olympic selection), not analysis samples.

A system is named by its stored name (the result folder's platform, such as
``GB300-NVL72_GB300-288GB_aarch64x72_TRT``) or its key (``submitter/name``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from tracker.analyze.groupings import (
    CONFIGURATION_CHANGED,
    SAME_SYSTEM,
    TWIN_TOLERANCE,
    besides_software,
    configuration_of,
    precision_class,
    size_family,
    training_folders,
    twin_configuration,
)
from tracker.records.keys import systems_of
from tracker.records.results import (
    TIME_TO_TRAIN,
    AnalysisSample,
    Configuration,
    ExportRow,
    SystemRecord,
    numeric_value,
)

__all__ = [
    "CONFIGURATION_CHANGED",
    "SAME_SYSTEM",
    "PlatformRanking",
    "PlatformResult",
    "RoundGain",
    "ScalingStep",
    "SystemResult",
    "TrainingChange",
    "TrainingResult",
    "TrainingRoundComparison",
    "TrainingUnmatched",
    "compare_training_rounds",
    "plain_number",
    "rank_platforms",
    "round_gains",
    "size_scaling",
    "is_glob",
    "system_matches",
]


def plain_number(value: float) -> str:
    """A measured value as people write it: six significant digits below 100,000, whole
    numbers with thousands separators above (never ``1.18333e+06``).

    >>> plain_number(1183330.4), plain_number(9065.971), plain_number(0.000123456)
    ('1,183,330', '9065.97', '0.000123456')
    """
    if abs(value) >= 100_000:
        return f"{value:,.0f}"
    return f"{value:.6g}" if abs(value) >= 1e-4 or value == 0 else f"{value:.3e}"


@dataclass(frozen=True, slots=True)
class SystemResult:
    """One system's result of one benchmark, scenario and metric in a round (the mean of
    its results there)."""

    system: str
    system_key: str
    """The system's platform key (submitter and name), unique in the round."""
    submitter: str | None
    division: str | None
    accelerator: str | None
    accelerators: int
    value: float
    """The result, in the metric's unit."""


@dataclass(frozen=True, slots=True)
class PlatformResult(SystemResult):
    """One system's result in a ranking; ``ratio`` is per accelerator, to the reference."""

    rank: int
    per_accelerator: float
    ratio: float | None
    is_reference: bool
    availability: str | None = None
    """``available``, ``preview``, ``rdi`` (``None``: not stated)."""
    twins: tuple[str, ...] = ()
    """The systems that published this very measurement too (their keys)."""
    accelerators_stated: int | None = None
    """The count the system's description states where it is not the checker's
    ``accelerators`` (nodes × per node), which the per-accelerator figures use."""


@dataclass(frozen=True, slots=True)
class PlatformRanking:
    """The systems of one benchmark and scenario of a round, best per accelerator first."""

    round: str
    benchmark: str
    scenario: str
    metric: str
    unit: str
    reference: str | None
    """The reference system's key (``None``: it has no result here)."""
    results: tuple[PlatformResult, ...]


@dataclass(frozen=True, slots=True)
class RoundGain:
    """A result from one round to a later one; ``ratio`` is per accelerator (new / old).

    ``kind`` is :data:`SAME_SYSTEM` (same system key, nothing but the software changed)
    or :data:`CONFIGURATION_CHANGED` (the same system with another hardware part, or
    the same submitter's accelerator model at another accelerator count); ``besides``
    says what changed besides the software, ``old_availability`` and
    ``new_availability`` each side's availability.
    """

    kind: str
    benchmark: str
    scenario: str
    metric: str
    unit: str
    accelerator: str | None
    old_round: str
    old_system: str
    old_accelerators: int
    old_value: float
    new_round: str
    new_system: str
    new_accelerators: int
    new_value: float
    ratio: float
    besides: str = ""
    old_availability: str | None = None
    new_availability: str | None = None
    old_system_key: str = ""
    """The old side's identity (``submitter/name``, and the division unless closed)."""
    new_system_key: str = ""
    """The new side's identity."""


@dataclass(frozen=True, slots=True)
class ScalingStep:
    """From one system size to the next larger one, within a round."""

    round: str
    submitter: str | None
    accelerator: str | None
    benchmark: str
    scenario: str
    metric: str
    unit: str
    from_system: str
    from_accelerators: int
    to_system: str
    to_accelerators: int
    speedup: float
    efficiency: float
    """Per accelerator, to the previous (smaller) size."""
    smallest_accelerators: int
    efficiency_vs_smallest: float


@dataclass(frozen=True, slots=True)
class _Entry(SystemResult):
    """A system's result with what it ran on: what rankings, gains and scaling steps read."""

    configuration: Configuration | None = None
    precision: str | None = None
    stack: str | None = None

    @property
    def per_accelerator(self) -> float:
        return self.value / self.accelerators

    @property
    def availability(self) -> str | None:
        return None if self.configuration is None else self.configuration.availability

    @property
    def family(self) -> tuple[object, ...]:
        """Its scaling family (:func:`tracker.analyze.groupings.size_family`)."""
        return size_family(self.submitter, self.configuration, self.precision, self.stack)


_Case = tuple[str, str, str, str]
"""benchmark, scenario, metric, unit."""


def system_matches(sample_system: str, sample_key: str, name: str) -> bool:
    """Whether ``name`` names the system (its name, its key, or the key's last part); a
    name with ``*``, ``?`` or ``[`` is a shell glob over the same texts (``*GB300*``)."""
    if is_glob(name):
        return any(fnmatchcase(text, name) for text in systems_of(sample_key, sample_system))
    return name in (sample_system, sample_key) or sample_key.endswith(f"/{name}")


def is_glob(pattern: str) -> bool:
    """Whether ``pattern`` has a wildcard (``*``, ``?``, ``[``)."""
    return any(c in pattern for c in "*?[")


def _entries(samples: Iterable[AnalysisSample], round_label: str) -> dict[_Case, list[_Entry]]:
    """Valid throughput results of a round with an accelerator count, per case and system."""
    values: dict[tuple[_Case, str], list[float]] = defaultdict(list)
    first: dict[tuple[_Case, str], AnalysisSample] = {}
    for sample in samples:
        count = sample.accelerators_total
        if sample.version != round_label or not sample.is_valid or not sample.higher_is_better:
            continue
        if count is None or count <= 0 or sample.value <= 0:
            continue
        case = (sample.benchmark, sample.scenario, sample.metric, sample.unit)
        values[(case, sample.system_key)].append(sample.value)
        first.setdefault((case, sample.system_key), sample)
    found: dict[_Case, list[_Entry]] = defaultdict(list)
    for (case, _key), numbers in values.items():
        s = first[(case, _key)]
        found[case].append(
            _Entry(
                s.system,
                s.system_key,
                s.submitter,
                s.division,
                s.accelerator,
                s.accelerators_total or 1,
                sum(numbers) / len(numbers),
                configuration_of(s),
                precision_class(s.precision),
                s.software_stack,
            )
        )
    return found


def _selected(entry: _Entry, systems: Sequence[str]) -> bool:
    return not systems or any(system_matches(entry.system, entry.system_key, n) for n in systems)


def _twin_rows(entries: Sequence[_Entry], named: Sequence[str]) -> dict[str, list[str]]:
    """Entries that are one measurement (the same value and twin configuration): the key
    of the one kept (a named system first, else the first by key) → the others' keys."""
    groups: dict[tuple[object, ...], list[_Entry]] = defaultdict(list)
    for e in entries:
        if e.configuration is None or not (e.configuration.accelerator or e.configuration.cpu_only):
            continue
        side = (e.configuration, e.precision)
        groups[(twin_configuration(side), f"{e.value:.5g}")].append(e)
    out: dict[str, list[str]] = {}
    for members in groups.values():
        head = members[0]
        same = [m for m in members if math.isclose(m.value, head.value, rel_tol=TWIN_TOLERANCE)]
        if len({m.system_key for m in same}) < 2:
            continue
        ordered = sorted(same, key=lambda m: (not _selected(m, named), m.system_key))
        out[ordered[0].system_key] = [m.system_key for m in ordered[1:]]
    return out


def _ranked(
    case_entries: Sequence[_Entry], systems: Sequence[str], named: str | None
) -> tuple[list[_Entry], dict[str, list[str]]]:
    """The entries of one case a ranking shows (twins counted once), best first."""
    chosen = [e for e in case_entries if _selected(e, systems)]
    twins = _twin_rows(chosen, [n for n in (*systems, named) if n])
    dropped = {key for others in twins.values() for key in others}
    kept = sorted(
        (e for e in chosen if e.system_key not in dropped),
        key=lambda e: (-e.per_accelerator, e.system_key),
    )
    return kept, twins


def rank_platforms(
    samples: Iterable[AnalysisSample],
    *,
    round_label: str,
    systems: Sequence[str] = (),
    reference: str | None = None,
) -> list[PlatformRanking]:
    """Per benchmark and scenario of ``round_label``: the systems ranked per accelerator.

    With ``systems``, only those; the reference is ``reference``, else the last
    of ``systems``, else the best system of each ranking. One measurement published
    under several systems' names is one row, naming the others (``twins``).
    """
    named = reference or (systems[-1] if systems else None)
    rankings = []
    for case, entries in sorted(_entries(samples, round_label).items()):
        chosen, twins = _ranked(entries, systems, named)
        if not chosen or (systems and len(chosen) < 2):
            continue
        base = next(
            (e for e in chosen if named and system_matches(e.system, e.system_key, named)),
            None if named else chosen[0],
        )
        results = tuple(
            PlatformResult(
                rank=rank,
                system=e.system,
                system_key=e.system_key,
                submitter=e.submitter,
                division=e.division,
                accelerator=e.accelerator,
                accelerators=e.accelerators,
                value=e.value,
                per_accelerator=e.per_accelerator,
                ratio=None if base is None else e.per_accelerator / base.per_accelerator,
                is_reference=e is base,
                availability=e.availability,
                twins=tuple(twins.get(e.system_key, ())),
                accelerators_stated=(
                    None if e.configuration is None else e.configuration.accelerators_stated
                ),
            )
            for rank, e in enumerate(chosen, start=1)
        )
        rankings.append(
            PlatformRanking(
                round_label,
                *case,
                reference=None if base is None else base.system_key,
                results=results,
            )
        )
    return rankings


def _family(entry: _Entry) -> tuple[str | None, str | None, str | None]:
    """Systems worth setting beside one another across rounds at other sizes: the same
    submitter, division and accelerator model (their configuration changed, and says how)."""
    return entry.submitter, entry.division, entry.accelerator


def _gain(case: _Case, before: _Entry, after: _Entry, rounds: tuple[str, str]) -> RoundGain:
    besides = besides_software(
        before.configuration, after.configuration, before.precision, after.precision
    )
    same = before.system_key == after.system_key and besides.software_only
    return RoundGain(
        SAME_SYSTEM if same else CONFIGURATION_CHANGED,
        *case,
        accelerator=after.accelerator,
        old_round=rounds[0],
        old_system=before.system,
        old_accelerators=before.accelerators,
        old_value=before.value,
        new_round=rounds[1],
        new_system=after.system,
        new_accelerators=after.accelerators,
        new_value=after.value,
        ratio=after.per_accelerator / before.per_accelerator,
        besides=besides.text,
        old_availability=before.availability,
        new_availability=after.availability,
        old_system_key=before.system_key,
        new_system_key=after.system_key,
    )


def round_gains(
    samples: Iterable[AnalysisSample],
    *,
    old_round: str,
    new_round: str,
    systems: Sequence[str] = (),
) -> list[RoundGain]:
    """Same-system gains from ``old_round`` to ``new_round`` where nothing but the software
    changed, then the pairs whose configuration changed (the same system, or the same
    submitter's accelerator model at another size), each saying what changed.

    A pair is listed when either side is one of ``systems`` (every pair without).
    """
    pool = list(samples)
    old, new = _entries(pool, old_round), _entries(pool, new_round)
    same: list[RoundGain] = []
    changed: list[RoundGain] = []
    for case in sorted(set(old) & set(new)):
        for after in sorted(new[case], key=lambda e: e.system_key):
            for before in sorted(old[case], key=lambda e: e.system_key):
                if not (_selected(after, systems) or _selected(before, systems)):
                    continue
                other_size = (
                    _family(before) == _family(after) and before.accelerators != after.accelerators
                )
                if before.system_key != after.system_key and not other_size:
                    continue
                gain = _gain(case, before, after, (old_round, new_round))
                (same if gain.kind == SAME_SYSTEM else changed).append(gain)
    return same + changed


def _step(
    round_label: str, case: _Case, sizes: Sequence[_Entry], before: _Entry, after: _Entry
) -> ScalingStep:
    smallest = sizes[0]
    return ScalingStep(
        round_label,
        after.submitter,
        after.accelerator,
        *case,
        from_system=before.system,
        from_accelerators=before.accelerators,
        to_system=after.system,
        to_accelerators=after.accelerators,
        speedup=after.value / before.value,
        efficiency=after.per_accelerator / before.per_accelerator,
        smallest_accelerators=smallest.accelerators,
        efficiency_vs_smallest=after.per_accelerator / smallest.per_accelerator,
    )


def size_scaling(
    samples: Iterable[AnalysisSample], *, round_label: str, systems: Sequence[str] = ()
) -> list[ScalingStep]:
    """Scaling over the sizes of each platform (one with a system of ``systems``, if given):
    the systems of one scaling family (:func:`tracker.analyze.groupings.size_family`).

    Where one platform has several systems of one size, the best result stands for it.
    """
    steps: list[ScalingStep] = []
    for case, entries in sorted(_entries(samples, round_label).items()):
        families: dict[tuple[object, ...], list[_Entry]] = defaultdict(list)
        for entry in entries:
            if entry.configuration is None or not entry.configuration.cpu_only:
                families[entry.family].append(entry)
        for _family_key, members in sorted(families.items(), key=lambda f: tuple(map(str, f[0]))):
            if systems and not any(_selected(m, systems) for m in members):
                continue
            best: dict[int, _Entry] = {}
            for member in sorted(members, key=lambda e: e.system_key):
                if (
                    member.accelerators not in best
                    or member.value > best[member.accelerators].value
                ):
                    best[member.accelerators] = member
            sizes = [best[n] for n in sorted(best)]
            steps += (
                _step(round_label, case, sizes, before, after)
                for before, after in zip(sizes, sizes[1:], strict=False)
            )
    return steps


@dataclass(frozen=True, slots=True)
class TrainingResult:
    """One round's result folder of one system and benchmark: its score, if it has one."""

    round: str
    system: str
    system_key: str
    """The system's platform key (submitter and name), unique in the round."""
    benchmark: str
    accelerator: str | None
    accelerators: int | None
    score_minutes: float | None
    """``None``: the folder has no score (too many runs did not converge)."""
    olympic_mean_minutes: float | None
    """The mean of the runs used, before the scaling factor."""
    scaling_factor: float
    rcp_scaled: bool
    """Whether the folder has a ``scaling.json`` (the RCP checker's factor)."""
    runs_used: int | None
    runs_dropped: int | None
    global_batch_size: float | None

    @property
    def accelerator_hours(self) -> float | None:
        """Accelerator-hours to train: the score times the accelerators, in hours."""
        if self.score_minutes is None or not self.accelerators:
            return None
        return self.score_minutes * self.accelerators / 60.0


@dataclass(frozen=True, slots=True)
class TrainingChange:
    """The same system and configuration from ``old.round`` to ``new.round``."""

    old: TrainingResult
    new: TrainingResult

    @property
    def speedup(self) -> float:
        """Old time / new time: above 1 the new round trains faster."""
        return (self.old.score_minutes or 0.0) / (self.new.score_minutes or 1.0)

    @property
    def unscaled_speedup(self) -> float | None:
        """The same for the olympic means before the scaling factors."""
        old, new = self.old.olympic_mean_minutes, self.new.olympic_mean_minutes
        return None if old is None or not new else old / new


@dataclass(frozen=True, slots=True)
class TrainingUnmatched:
    """A system and benchmark in both rounds that is not compared, and why."""

    old: TrainingResult
    new: TrainingResult
    reason: str


@dataclass(frozen=True, slots=True)
class TrainingRoundComparison:
    """What ``tracker compare`` says of Training between two rounds."""

    old_round: str
    new_round: str
    changes: tuple[TrainingChange, ...]
    unmatched: tuple[TrainingUnmatched, ...]


def _folder(rows: Sequence[ExportRow]) -> TrainingResult:
    head = rows[0]
    score = next((r for r in rows if r.metric == TIME_TO_TRAIN.name), None)
    extra = score.extra if score is not None else {}
    system = SystemRecord(name=head.system, submitter=head.submitter, division=head.division)
    used, dropped = numeric_value(extra.get("runs_used")), numeric_value(extra.get("runs_dropped"))
    return TrainingResult(
        round=head.software_version,
        system=head.system,
        system_key=system.platform_key,
        benchmark=head.benchmark,
        accelerator=head.accelerator,
        accelerators=head.accelerators_total,
        score_minutes=None if score is None else score.value,
        olympic_mean_minutes=numeric_value(extra.get("olympic_mean_unscaled_minutes")),
        scaling_factor=numeric_value(extra.get("scaling_factor")) or 1.0,
        rcp_scaled=extra.get("scaling_json") is True,
        runs_used=None if used is None else int(used),
        runs_dropped=None if dropped is None else int(dropped),
        global_batch_size=numeric_value(extra.get("global_batch_size")),
    )


def _folders(
    rows: Iterable[ExportRow], rounds: set[str]
) -> dict[tuple[str, str, str], TrainingResult]:
    """``(round, system key, benchmark) → folder`` of the Training rows of ``rounds``."""
    found: dict[tuple[str, str, str], TrainingResult] = {}
    for group in training_folders(r for r in rows if r.software_version in rounds):
        folder = _folder(group)
        found[(folder.round, folder.system_key, folder.benchmark)] = folder
    return found


def _configuration_differs(old: TrainingResult, new: TrainingResult) -> str | None:
    """What makes two folders of one system different configurations (``None``: nothing)."""
    if old.accelerators != new.accelerators:
        return f"accelerators x{old.accelerators} → x{new.accelerators}"
    sizes = (old.global_batch_size, new.global_batch_size)
    if None not in sizes and sizes[0] != sizes[1]:
        return f"global batch size {sizes[0]:g} → {sizes[1]:g}"
    return None


def compare_training_rounds(
    rows: Iterable[ExportRow],
    *,
    old_round: str,
    new_round: str,
    selected: Sequence[str] = (),
    benchmark: str | None = None,
) -> TrainingRoundComparison:
    """Every system and benchmark with a Training folder in both rounds, compared.

    ``selected``: only the systems those names match (a name, ``submitter/name`` or the
    key's last part); ``benchmark``: only that benchmark. Sorted by benchmark and system.
    """
    folders = _folders(rows, {old_round, new_round})
    changes: list[TrainingChange] = []
    unmatched: list[TrainingUnmatched] = []
    pairs = sorted({(key, bench) for (_r, key, bench) in folders}, key=lambda p: (p[1], p[0]))
    for key, bench in pairs:
        old, new = folders.get((old_round, key, bench)), folders.get((new_round, key, bench))
        if old is None or new is None or (benchmark is not None and bench != benchmark):
            continue
        if selected and not any(system_matches(new.system, new.system_key, n) for n in selected):
            continue
        reason = _configuration_differs(old, new)
        if reason is None and (old.score_minutes is None or new.score_minutes is None):
            rounds = [f.round for f in (old, new) if f.score_minutes is None]
            reason = f"no score in {' and '.join(rounds)} (too many runs did not converge)"
        if reason is None:
            changes.append(TrainingChange(old, new))
        else:
            unmatched.append(TrainingUnmatched(old, new, reason))
    return TrainingRoundComparison(old_round, new_round, tuple(changes), tuple(unmatched))
