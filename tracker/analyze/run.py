"""Analyse what is stored: store → records → analysis → findings → store.

:func:`run_analysis` reads every stored result and sweep, runs the pure
analysis (:mod:`tracker.stats`) and stores the findings; :func:`analyse` is
the same without the store, for callers that hold the records already. One run:

1. **Series** (:mod:`tracker.analyze.collect`): valid samples only, one series per
   software, system, benchmark, scenario, workload and metric, across that
   software's versions in their explicit order (:func:`tracker.versions.order_versions`).
2. **Throughput at the interactivity target** (:mod:`tracker.analyze.sweeps`), one
   value per sweep; per curve it is a derived series, analysed like the others.
3. **Comparisons** (the gate engine): every series' *newest version against its
   previous version* (a system that skipped a round is compared with the round it
   was last in), and each pair of neighbouring software stacks of configurations
   that differ only in software within one version. Their one-sided p-values form **two
   directional BH families** (:mod:`tracker.stats.compare`) of the reported size. With
   ``baseline`` and ``candidate``, that pair in every series that has both (and no stacks).
   Older pairs are not compared again (their findings stay, as triaged); change points cover them.
4. **Change points** and **drifts** of every series, as competing models of each series
   (steps only, a drift only, a drift with steps: E-Divisive means, a hinge, Schwarz's
   criterion, Mann–Kendall under BH; :func:`tracker.stats.detect_steps_and_drifts`; too
   short: skipped with the reason): ``change_point``/``drift`` findings, never in the
   comparisons' BH families.
5. **Scaling efficiency**, per software and version; findings under the floor and
   for drops against the previous version that has the same pair of counts.
6. **Software gains** for the same pairs as step 3, with geometric means per
   system and per benchmark (:meth:`AnalysisOutcome.gains_between` gives any other
   pair). A significant gain is an ``improvement`` finding (step 3 decides).
7. **Cost per token** of every sweep when a price book is given.

Findings are saved with :meth:`tracker.store.facade.Store.save_findings` (with the
run's settings, :mod:`tracker.analyze.settings`), whose rule keeps triage states and
closes a finding only when the run looked again at what it is about (its series and
version pair, its series' history, the scaling groups, the sweeps) and did not find it.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

from tracker.analyze import groupings
from tracker.analyze.collect import SampleSet, collect_samples, stack_series
from tracker.analyze.collect import version_series as build_version_series
from tracker.analyze.findings import (
    COMPARISON_KINDS,
    KIND_CHANGE_POINT,
    KIND_CONFIGURATION,
    KIND_DRIFT,
    KIND_SCALING,
    change_point_findings,
    comparison_findings,
    configuration_findings,
    drift_findings,
    scaling_findings_of,
    sla_findings,
)
from tracker.analyze.settings import AnalysisSettings, decide, recorded_settings
from tracker.analyze.sweeps import SweepReading, sweep_targets
from tracker.errors import ConfigError
from tracker.records.findings import (
    FindingRecord,
    FindingsSaved,
    SeriesInfo,
    StoredFinding,
    SweepTarget,
)
from tracker.records.keys import VersionPair
from tracker.records.results import OUTPUT_TOKENS_PER_S, AnalysisSample, SweepSample, VersionInfo
from tracker.stats import (
    ChangeEvidence,
    ChangePointResult,
    ComparisonRun,
    DriftResult,
    GainSummary,
    ScalingFinding,
    ScalingGroup,
    ScalingIssue,
    SeriesGain,
    SeriesSamples,
    aggregate_gains,
    collect_evidence,
    detect_steps_and_drifts,
    scaling_findings,
    series_gain,
    software_gains,
)
from tracker.versions import version_orders

if TYPE_CHECKING:
    from tracker.store.facade import Store

__all__ = ["DEFAULT_SEED", "AnalysisOutcome", "analyse", "run_analysis", "superseded_by"]

DEFAULT_SEED = 20260901
"""Seeds the bootstrap CIs, so the same database gives the same evidence."""


@dataclass(frozen=True, slots=True)
class AnalysisOutcome:
    """Everything one analysis run found, for the summary, the report and the gate.

    ``series`` are across versions (measured and derived), ``stack_series`` the
    configurations differing only in software; ``infos`` says what every key is.
    ``scaling`` and ``scaling_issues`` are per software. ``saved`` is ``None``
    when the findings were not stored.
    """

    settings: AnalysisSettings
    analysed_at: datetime
    version_order: Mapping[str, tuple[str, ...]]
    series: tuple[SeriesSamples, ...]
    stack_series: tuple[SeriesSamples, ...]
    infos: Mapping[str, SeriesInfo]
    comparisons: ComparisonRun
    change_points: tuple[ChangePointResult, ...]
    scaling: Mapping[str, tuple[ScalingGroup, ...]]
    scaling_issues: Mapping[str, tuple[ScalingFinding, ...]]
    gains: tuple[SeriesGain, ...]
    gains_by_system: tuple[GainSummary, ...]
    gains_by_benchmark: tuple[GainSummary, ...]
    targets: tuple[SweepTarget, ...]
    findings: tuple[FindingRecord, ...]
    samples: int
    invalid_samples: int
    sweeps_without_interactivity: int = 0
    saved: FindingsSaved | None = None
    twins: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """Per series key, the twins its comparison stands for (one measurement, several names)."""
    drifts: tuple[DriftResult, ...] = ()
    stack_rankings: tuple[groupings.StackRanking, ...] = ()
    """``stack_series`` ranked: stacks of one platform within a version, best first."""
    configuration_changes: tuple[groupings.ConfigurationChange, ...] = ()
    """Pairs whose configuration changed (the comparability rule): never compared."""
    besides: Mapping[tuple[str, VersionPair], groupings.Besides] = field(default_factory=dict)
    """What changed besides the software, per series and version pair looked at."""
    sides: Mapping[str, Mapping[str, groupings.Side]] = field(default_factory=dict)
    """Per series and version, what its results ran on (configuration, precision)."""

    @property
    def family_size(self) -> int:
        """How many p-values went into the run's one Benjamini–Hochberg family."""
        return self.comparisons.family_size

    def finding_counts(self) -> dict[str, int]:
        """Findings of this run per kind."""
        return dict(sorted(Counter(f.kind for f in self.findings).items()))

    def gains_between(self, baseline: str, candidate: str) -> tuple[SeriesGain, ...]:
        """The software gain of every series (across versions) that has both versions and
        whose change is a software one under the comparability rule (twins counted once)."""
        pair = VersionPair(baseline, candidate)
        rule = groupings.apply_rule(_pairs(self.series, pair, every=False), self.infos, self.sides)
        return software_gains(rule.software.get(pair, ()), baseline, candidate)

    def groups(self) -> tuple[ScalingGroup, ...]:
        """Every scaling group, of every software."""
        return tuple(g for software in sorted(self.scaling) for g in self.scaling[software])


VersionOrders = Mapping[str, Sequence[str]]
"""Each software's versions in their explicit order."""


def _orders(versions: Iterable[VersionInfo] | VersionOrders) -> dict[str, tuple[str, ...]]:
    if isinstance(versions, Mapping):
        return {software: tuple(order) for software, order in versions.items()}
    return version_orders(versions)


def _pairs(
    series: Iterable[SeriesSamples], pair: VersionPair | None, *, every: bool
) -> dict[VersionPair, list[SeriesSamples]]:
    """The series to compare, per version pair: ``pair`` in every series that has both;
    else every neighbouring pair (``every``) or each series' newest two versions."""
    out: dict[VersionPair, list[SeriesSamples]] = defaultdict(list)
    for s in series:
        if pair is not None:
            if s.index(pair.baseline) is not None and s.index(pair.candidate) is not None:
                out[pair].append(s)
        elif every:
            for old, new in zip(s.versions, s.versions[1:], strict=False):
                out[VersionPair(old, new)].append(s)
        elif len(s.versions) > 1:
            out[VersionPair(s.versions[-2], s.versions[-1])].append(s)
    return out


def _gains(groups: Mapping[VersionPair, Sequence[SeriesSamples]]) -> tuple[SeriesGain, ...]:
    found = (series_gain(s, p.baseline, p.candidate) for p in sorted(groups) for s in groups[p])
    return tuple(g for g in found if g is not None)


def _compare(
    groups: Mapping[VersionPair, Sequence[SeriesSamples]],
    settings: AnalysisSettings,
    rng: np.random.Generator,
    infos: Mapping[str, SeriesInfo],
) -> ComparisonRun:
    evidence: list[ChangeEvidence] = []
    missing: list[str] = []
    for pair in sorted(groups):
        found = collect_evidence(
            groups[pair], pair.baseline, pair.candidate, rng=rng, policy=settings.compare
        )
        evidence.extend(found.evidence)
        missing.extend(found.missing)
    return decide(
        evidence,
        infos=infos,
        thresholds=settings.thresholds,
        q_level=settings.compare.q_level,
        family_method=settings.family_method,
        missing=missing,
        power=settings.compare.sensitivity_power,
    )


def _scaling(
    found: SampleSet, orders: Mapping[str, Sequence[str]], settings: AnalysisSettings
) -> tuple[dict[str, tuple[ScalingGroup, ...]], dict[str, tuple[ScalingFinding, ...]]]:
    groups = dict(found.scaling)
    issues = {}
    for software, found_groups in groups.items():
        raised = scaling_findings(
            found_groups,
            version_order=orders.get(software, ()),
            floor=settings.efficiency_floor,
            drop_floor=settings.efficiency_drop_floor,
        )
        repeated = groupings.twin_scaling_findings(raised)
        issues[software] = tuple(f for f in raised if f not in repeated)
    return groups, issues


def _merge_derived(
    found: SampleSet, values: Mapping[str, Mapping[str, dict[str, list[float]]]]
) -> None:
    for software, by_key in values.items():
        for key, by_version in by_key.items():
            if by_version:
                found.values.setdefault(software, {})[key] = by_version


def _with_sweeps(
    found: SampleSet,
    sweeps: Iterable[SweepSample],
    conf: AnalysisSettings,
    price_book: Mapping[str, float] | None,
) -> SweepReading:
    """Each sweep read at the interactivity target; its derived series join ``found``."""
    reading = sweep_targets(
        sweeps,
        target=conf.target_tokens_per_s_per_user,
        method=conf.interpolation,
        price_book=price_book,
    )
    found.infos.update(reading.infos)
    _merge_derived(found, reading.values)
    return reading


def analyse(
    samples: Iterable[AnalysisSample],
    sweeps: Iterable[SweepSample],
    versions: Iterable[VersionInfo] | VersionOrders,
    *,
    settings: AnalysisSettings | None = None,
    pair: VersionPair | None = None,
    price_book: Mapping[str, float] | None = None,
    rng_seed: int = DEFAULT_SEED,
    analysed_at: datetime | None = None,
) -> AnalysisOutcome:
    """The analysis of plain records (see the module docstring); stores nothing.

    ``versions``: the versions of the records, or their orders already made
    (:func:`tracker.versions.version_orders`); ``pair``: compare exactly that pair."""
    conf = settings or AnalysisSettings()
    orders = _orders(versions)
    found = collect_samples(samples)
    reading = _with_sweeps(found, sweeps, conf, price_book)
    series = build_version_series(found, orders)
    stacks = stack_series(found) if pair is None else ()  # a ranking: never compared
    rule = groupings.apply_rule(_pairs(series, pair, every=False), found.infos, found.sides)
    groups, twins = rule.software, rule.twins
    comparisons = _compare(groups, conf, np.random.default_rng(rng_seed), found.infos)
    changes = groupings.configuration_changes(rule)
    shapes = detect_steps_and_drifts(series, change_points=conf.change_points, drifts=conf.drift)
    change_points, drifts = shapes.change_points, shapes.drifts
    scaling, issues = _scaling(found, orders, conf)
    gains = _gains(groups)
    repeated = groupings.twin_pairs(series, groupings.series_labels(found.infos))
    findings = [
        *comparison_findings(comparisons, found.infos, twins, rule.besides),
        *configuration_findings(changes, found.infos),
        *change_point_findings((r for r in change_points if r.key not in repeated), found.infos),
        *drift_findings((r for r in drifts if r.key not in repeated), found.infos),
        *(f for sw in sorted(issues) for f in scaling_findings_of(sw, issues[sw], scaling[sw])),
        *sla_findings(reading.targets),
    ]
    return AnalysisOutcome(
        settings=conf,
        analysed_at=analysed_at or datetime.now(UTC),
        version_order=orders,
        series=series,
        stack_series=stacks,
        stack_rankings=groupings.rank_stacks(stacks),
        infos=found.infos,
        comparisons=comparisons,
        change_points=change_points,
        drifts=drifts,
        scaling=scaling,
        scaling_issues=issues,
        gains=gains,
        gains_by_system=aggregate_gains(gains, by="system"),
        gains_by_benchmark=aggregate_gains(gains, by="benchmark"),
        targets=reading.targets,
        findings=tuple(findings),
        samples=found.samples,
        invalid_samples=found.invalid,
        sweeps_without_interactivity=reading.without_interactivity,
        twins=twins,
        configuration_changes=changes,
        besides=rule.besides,
        sides=found.sides,
    )


def run_analysis(
    store: Store,
    *,
    pair: VersionPair | None = None,
    policy: AnalysisSettings | None = None,
    price_book: Mapping[str, float] | None = None,
    rng_seed: int = DEFAULT_SEED,
    save: bool = True,
    versions: Sequence[VersionInfo] | None = None,
    price_book_source: str = "",
) -> AnalysisOutcome:
    """Analyse everything in ``store`` and (unless ``save`` is false) store the findings and
    the run's settings (``price_book_source``: the price book's file, for the record).

    ``versions``: the store's versions, when the caller has read them already."""
    versions = store.list_versions() if versions is None else versions
    labels = () if pair is None else (("baseline", pair.baseline), ("candidate", pair.candidate))
    for role, label in labels:
        if not any(v.version == label for v in versions):
            raise ConfigError(f"unknown {role} version {label!r}; see `tracker export`")
    outcome = analyse(
        store.iter_analysis_samples(),
        store.iter_sweep_samples(metric=OUTPUT_TOKENS_PER_S.name),
        versions,
        settings=policy,
        pair=pair,
        price_book=price_book,
        rng_seed=rng_seed,
    )
    if not save:
        return outcome
    run = recorded_settings(outcome.settings, price_book, price_book_source)
    at, evaluated = outcome.analysed_at, _evaluated(outcome)
    saved = store.save_findings(
        outcome.findings,
        analysed_at=at,
        evaluated=evaluated,
        settings=run,
        superseded=superseded_by(outcome.settings),
    )
    return replace(outcome, saved=saved)


_AT_TARGET = re.compile(r" at ([0-9.eE+-]+) tokens/s/user\b")


def superseded_by(settings: AnalysisSettings) -> Callable[[StoredFinding], str | None]:
    """Why a stored finding was made under settings other than ``settings`` (``None``:
    it was not): a series or SLA miss read at another interactivity target, or a
    scaling efficiency judged against another floor. Such a finding is superseded,
    never merged with the findings of the run (see Store.save_findings)."""
    target = settings.target_tokens_per_s_per_user
    floor = settings.efficiency_floor

    def why(finding: StoredFinding) -> str | None:
        ev = finding.evidence
        made_at = ev.get("target_tokens_per_s_per_user")
        found = _AT_TARGET.search(finding.series_key)
        if not isinstance(made_at, int | float) and found is not None:
            made_at = float(found.group(1))
        if isinstance(made_at, int | float) and not math.isclose(made_at, target):
            return f"made at {made_at:g} tokens/s/user, now read at {target:g}"
        threshold = ev.get("threshold")
        if (
            finding.kind == KIND_SCALING
            and ev.get("issue") == ScalingIssue.BELOW_FLOOR.value
            and isinstance(threshold, int | float)
            and not math.isclose(threshold, floor)
        ):
            return f"made under efficiency floor {threshold:.2f}, now {floor:.2f}"
        return None

    return why


def _evaluated(outcome: AnalysisOutcome) -> Callable[[StoredFinding], bool]:
    """Whether the run looked again at what a stored finding is about (see Store.save_findings):
    its version pair of its series, its series' history, or any scaling group and sweep."""
    compared = {
        (key, c.evidence.baseline, c.evidence.candidate)
        for c in outcome.comparisons.comparisons
        for key in (c.key, *outcome.twins.get(c.key, ()))
    } | {
        (key, change.baseline, change.candidate)
        for change in outcome.configuration_changes
        for key in (change.key, *change.twins)
    }
    searched = {r.key for r in outcome.change_points if not r.is_skipped}

    def evaluated(finding: StoredFinding) -> bool:
        if finding.kind in (*COMPARISON_KINDS, KIND_CONFIGURATION):
            subject = (finding.series_key, finding.baseline_version, finding.candidate_version)
            return subject in compared
        if finding.kind in (KIND_CHANGE_POINT, KIND_DRIFT):  # its series' history was searched
            return finding.series_key in searched
        return True

    return evaluated
