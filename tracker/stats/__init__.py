"""The statistics: pure functions over arrays, returning frozen dataclasses.

Nothing here touches the database, files or the terminal; the store feeds it
plain rows and stores what comes back. Each module's docstring describes its
method and where it comes from; the defaults live in :mod:`tracker.stats.defaults`,
each with its source, and every one can be overridden per call.

Feeding it from plain rows
--------------------------
**Series** (comparisons, change points, software gains). One series is one
metric of one benchmark/scenario/workload point on one system configuration,
across software versions in their explicit order::

    order = [v.version for v in order_versions(infos)]          # tracker.versions
    series = series_from_points(store_points, version_order=order)   # SeriesPoint rows
    # or, from any rows: series_from_rows([SampleRow(key, version, value, higher_is_better,
    #                                                 system, benchmark), ...], version_order=order)

Several samples of one key and version are repeats. A series of the same
platform across MLPerf rounds uses the rounds as versions; two configurations
of one round that differ only in software use their stack labels as versions.

**Gate / two-version comparison**::

    rng = numpy.random.default_rng(seed)
    a = collect_evidence(series, "2.0.12", "2.0.13", rng=rng, policy=ComparePolicy())
    b = collect_evidence(other_metric_series, "2.0.12", "2.0.13", rng=rng, policy=lat_policy)
    run = decide_verdicts([*a.evidence, *b.evidence], missing=[*a.missing, *b.missing])
    run.family_size, run.counts(), run.with_verdict(Verdict.REGRESSION)

Every comparison carries its evidence (Δ%, CI, p, q, method, n per side).
Single-value series of one :func:`collect_evidence` call pool their noise
variances (:mod:`tracker.stats.significance`): call it with the series that share
a policy, not one series at a time.
Put every test of one analysis run into one :func:`decide_verdicts` call: that
call is the Benjamini–Hochberg family. :func:`compare_versions` does both
steps for a single version pair.

**Steps and drifts** (report only): ``detect_steps_and_drifts(series)``: each series'
change points (E-Divisive) and its drift (a hinge, Mann–Kendall under BH, Theil–Sen
slope) chosen as competing models of one series (steps only, a drift only, a drift with
steps) by Schwarz's criterion; series with fewer than 8 usable versions come back with
``skipped_reason`` set (12 for a drift). ``detect_change_points(series)`` gives the steps
alone, ``detect_drifts(series)`` the drifts of the model choice.

**Scaling**: one :class:`ScalingPoint` per result, keyed by
:func:`scaling_key` (submitter, accelerator model, benchmark, scenario, metric,
software stack, division, workload; *not* the count, *not* the version), with
its version, total accelerator count and primary value; then
``groups = scaling_groups(points)`` and
``scaling_findings(groups, version_order=order)``.

**Software gain**: ``software_gains(series, "v5.1", "v6.0")`` or
``consecutive_gains(series)``, then ``aggregate_gains(gains, by="system")``.

**Throughput at an interactivity target**: per version, the sweep's
tokens/s/user and tokens/s per accelerator; ``throughput_at_interactivity(x, y,
target=50, statistic="median 1/TPOT")`` or ``throughput_series(sweeps, ...)``,
whose series goes into the comparisons like any other.

**Cost**: ``book = parse_price_book(path.read_bytes(), source=str(path))`` (the
caller reads the file), then ``estimate_cost(book, accelerator=..., accelerators=N,
tokens_per_s=...)``.
"""

from __future__ import annotations

from tracker.stats.changepoints import (
    ChangePoint,
    ChangePointResult,
    Drift,
    DriftResult,
    StepsAndDrifts,
    detect_change_points,
    detect_drifts,
    detect_steps_and_drifts,
    find_change_points,
)
from tracker.stats.compare import (
    ChangeEvidence,
    Comparison,
    ComparisonRun,
    EvidenceSet,
    Method,
    Verdict,
    collect_evidence,
    compare_versions,
    decide_verdicts,
)
from tracker.stats.defaults import ChangePointPolicy, ComparePolicy, DriftPolicy
from tracker.stats.scaling import (
    EfficiencyPoint,
    ScalingFinding,
    ScalingGroup,
    ScalingIssue,
    ScalingKey,
    ScalingPoint,
    efficiency,
    efficiency_below_floor,
    efficiency_drops,
    scaling_findings,
    scaling_groups,
    scaling_key,
)
from tracker.stats.series import (
    GainSummary,
    SampleRow,
    SeriesGain,
    SeriesSamples,
    aggregate_gains,
    consecutive_gains,
    goodness,
    series_from_points,
    series_from_rows,
    series_gain,
    software_gains,
)
from tracker.stats.serving import (
    CostEstimate,
    Reach,
    ThroughputAtTarget,
    VersionSweep,
    cost_per_million_tokens,
    estimate_cost,
    pareto_front,
    parse_price_book,
    price_for,
    throughput_at_interactivity,
    throughput_series,
)
from tracker.stats.significance import FamilyAdjustment, adjust_pvalues, q_values

__all__ = [
    "ChangeEvidence",
    "ChangePoint",
    "ChangePointPolicy",
    "ChangePointResult",
    "ComparePolicy",
    "Comparison",
    "ComparisonRun",
    "CostEstimate",
    "Drift",
    "DriftPolicy",
    "DriftResult",
    "EfficiencyPoint",
    "EvidenceSet",
    "FamilyAdjustment",
    "GainSummary",
    "Method",
    "Reach",
    "SampleRow",
    "ScalingFinding",
    "ScalingGroup",
    "ScalingIssue",
    "ScalingKey",
    "ScalingPoint",
    "SeriesGain",
    "SeriesSamples",
    "StepsAndDrifts",
    "ThroughputAtTarget",
    "Verdict",
    "VersionSweep",
    "adjust_pvalues",
    "aggregate_gains",
    "collect_evidence",
    "compare_versions",
    "consecutive_gains",
    "cost_per_million_tokens",
    "decide_verdicts",
    "detect_change_points",
    "detect_drifts",
    "detect_steps_and_drifts",
    "efficiency",
    "efficiency_below_floor",
    "efficiency_drops",
    "estimate_cost",
    "find_change_points",
    "goodness",
    "pareto_front",
    "parse_price_book",
    "price_for",
    "q_values",
    "scaling_findings",
    "scaling_groups",
    "scaling_key",
    "series_from_points",
    "series_from_rows",
    "series_gain",
    "software_gains",
    "throughput_at_interactivity",
    "throughput_series",
]
