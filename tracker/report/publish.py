"""Publish the static report: read what the report needs from the store, then render.

The report package never queries the database; this module is the bridge. It
runs the analysis (:func:`tracker.analyze.run.analyse`, nothing stored) so every
page has content whether or not ``tracker analyze`` was run: series, change
points, scaling groups and the throughput at the interactivity target. The
comparison pages use the gate's engine on every consecutive version pair of each
software and on its newest version against its first (one Benjamini–Hochberg
family per pair, seeded bootstrap), under the comparability rule: only the series
where nothing but the software changed are compared, the others are listed as
configuration changes with what changed, and twins count once. Findings are the
stored ones, with their triage states; when none are stored, the findings of this
run are shown, marked "not stored" (run ``tracker analyze`` to store and triage them).

Nothing that grows with every result is held whole: the samples stream into the
analysis (the systems' descriptions are gathered on the way), the report reads
the points from the store once per pass (grouped by benchmark, then by system),
and each version pair is compared only when the report comes to it, its rows
rendered and dropped before the next.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from tracker.analyze.groupings import apply_rule, configuration_changes
from tracker.analyze.platforms import PlatformRanking, RoundGain, rank_platforms, round_gains
from tracker.analyze.run import DEFAULT_SEED, AnalysisOutcome, analyse
from tracker.analyze.settings import AnalysisSettings, ReportOverrides, report_settings, settings_of
from tracker.analyze.summary import finding_selected
from tracker.records.keys import Selection, VersionPair, systems_of
from tracker.records.results import (
    INFERENCE_SOFTWARE,
    OUTPUT_TOKENS_PER_S,
    AnalysisSample,
    Configuration,
    SeriesPoint,
    SweepSample,
    VersionInfo,
)
from tracker.report.inputs import (
    TRAINING_SOFTWARE,
    AnalysisCounts,
    PairRun,
    PointOrder,
    PowerResult,
    ReportInput,
    SystemInfo,
    TrainingScore,
    power_result,
    settings_used,
    training_scores,
)
from tracker.report.pages.platforms import PlatformSamples
from tracker.report.render import check_output_folder
from tracker.report.site import render_site
from tracker.stats import SeriesSamples, collect_evidence, decide_verdicts
from tracker.store.facade import Store
from tracker.versions import version_orders, version_sort_key

__all__ = ["gather_report_input", "publish_report", "version_pairs"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _ordered(
    versions: Sequence[VersionInfo],
) -> tuple[dict[str, tuple[str, ...]], list[VersionInfo]]:
    """Each software's version order, and ``versions`` in it (by software, then version)."""
    orders = version_orders(versions)
    known = {(v.software, v.version): v for v in versions}
    return orders, [known[(software, v)] for software, order in orders.items() for v in order]


def version_pairs(order: Sequence[str]) -> list[tuple[str, str, bool, bool]]:
    """(baseline, candidate, is_latest, is_baseline) of every pair a software is compared on:
    each consecutive pair, and the newest version against the first when they are not one."""
    pairs = [
        (old, new, i == len(order) - 2, len(order) == 2)
        for i, (old, new) in enumerate(zip(order, order[1:], strict=False))
    ]
    if len(order) > 2:
        pairs.append((order[0], order[-1], False, True))
    return pairs


def _pair_runs(
    outcome: AnalysisOutcome, settings: AnalysisSettings, seed: int
) -> Iterator[PairRun]:
    """Each compared pair, computed when asked for (one pair's comparisons at a time)."""
    by_software: dict[str, list[SeriesSamples]] = defaultdict(list)
    for series in outcome.series:
        by_software[outcome.infos[series.key].software].append(series)
    for software in sorted(by_software):
        members = by_software[software]
        for baseline, candidate, latest, first in version_pairs(outcome.version_order[software]):
            both = [
                s
                for s in members
                if s.index(baseline) is not None and s.index(candidate) is not None
            ]
            if not both:
                continue
            pair = VersionPair(baseline, candidate)
            rule = apply_rule({pair: both}, outcome.infos, outcome.sides)
            kept = rule.software.get(pair, [])
            rng = np.random.default_rng(seed)
            found = collect_evidence(kept, baseline, candidate, rng=rng, policy=settings.compare)
            run = decide_verdicts(
                found.evidence,
                q_level=settings.compare.q_level,
                family_method=settings.family_method,
                missing=found.missing,
            )
            yield PairRun(
                software,
                baseline,
                candidate,
                run,
                latest,
                first,
                changes=configuration_changes(rule),
                besides={key: b.text for (key, _p), b in rule.besides.items()},
                twins=rule.twins,
            )


_SYSTEM_FIELDS = (
    "submitters",
    "accelerators",
    "accelerator_counts",
    "nodes",
    "host_cpus",
    "divisions",
    "software_stacks",
)


class _Systems:
    """The systems' descriptions, gathered while the samples stream into the analysis."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], set[tuple[str | int | None, ...]]] = defaultdict(set)
        self._configurations: dict[tuple[str, str], dict[str, Configuration]] = defaultdict(dict)

    def watch(self, samples: Iterable[AnalysisSample]) -> Iterator[AnalysisSample]:
        """``samples``, unchanged; each system's distinct field values are noted, and its
        configuration in each version (its round's description)."""
        seen = self._seen
        for s in samples:
            if s.configuration is not None:
                self._configurations[(s.system_key, s.system)].setdefault(
                    s.version, s.configuration
                )
            seen[(s.system_key, s.system)].add(
                (
                    s.submitter,
                    s.accelerator,
                    s.accelerators_total,
                    s.nodes,
                    s.host_cpu,
                    s.division,
                    s.software_stack,
                )
            )
            yield s

    def infos(self) -> tuple[SystemInfo, ...]:
        """One description per system (by key), each field's values sorted."""
        out = []
        for (key, name), combos in sorted(self._seen.items()):
            fields: dict[str, tuple[Any, ...]] = {}
            for index, field_name in enumerate(_SYSTEM_FIELDS):
                values: set[Any] = {c[index] for c in combos} - {None, ""}
                if values:
                    fields[field_name] = tuple(sorted(values))
            by_version = self._configurations.get((key, name), {})
            configurations = tuple(
                (v, by_version[v]) for v in sorted(by_version, key=version_sort_key)
            )
            out.append(SystemInfo(name, key, **fields, configurations=configurations))
        return tuple(out)


_Labelled = TypeVar("_Labelled", AnalysisSample, SweepSample, SeriesPoint)
_T = TypeVar("_T")


def _selected(items: Iterable[_Labelled], selection: Selection) -> Iterator[_Labelled]:
    """The samples or points of the series ``selection`` picks."""
    for item in items:
        systems = systems_of(item.system_key, getattr(item, "system", ""))
        if selection.matches(item.software, item.benchmark, systems):
            yield item


def _of(version: VersionInfo, selection: Selection) -> bool:
    """Whether ``version`` belongs to a software ``selection`` picks."""
    return not selection.software or selection.matches(version.software, "", ())


def gather_report_input(
    store: Store,
    *,
    overrides: ReportOverrides | None = None,
    rng_seed: int = DEFAULT_SEED,
    selection: Selection | None = None,
) -> ReportInput:
    """Everything the report shows, read from ``store`` and analysed (nothing is stored).

    The analysis uses the settings (and price book) of the latest stored analysis, else
    the defaults, with ``overrides`` over them. The points are read from ``store`` and the
    pairs compared as the report reaches them: keep ``store`` open until the report is
    rendered, and render the input once. ``selection`` (``--software``, ``--benchmark``,
    ``--system``): only the series it picks (and no MLPerf Training scores)."""
    only = selection or Selection()
    chosen = report_settings(store.latest_analysis_settings(), overrides)
    conf = settings_of(chosen.run)
    orders, versions = _ordered([v for v in store.list_versions() if _of(v, only)])
    systems, platforms = _Systems(), PlatformSamples()
    sweeps = tuple(_selected(store.iter_sweep_samples(metric=OUTPUT_TOKENS_PER_S.name), only))
    outcome = analyse(
        platforms.watch(systems.watch(_selected(store.iter_analysis_samples(), only))),
        sweeps,
        orders,
        settings=conf,
        price_book=chosen.run.price_book,
        rng_seed=rng_seed,
        analysed_at=_EPOCH,
    )
    stored = [f for f in store.list_findings() if finding_selected(f, only)]

    def read_points(order: PointOrder) -> Iterator[SeriesPoint]:
        return _selected(store.iter_series_points(order=order), only)

    return ReportInput(
        points=(),
        read_points=read_points,
        versions=tuple(versions),
        systems=systems.infos(),
        series=outcome.series,
        infos=outcome.infos,
        pairs=_pair_runs(outcome, conf, rng_seed),
        change_points=outcome.change_points,
        scaling=_by_software(outcome.scaling),
        scaling_issues=_by_software(outcome.scaling_issues),
        targets=outcome.targets,
        sweep_points=sweeps,
        findings=tuple(stored) if stored else outcome.findings,
        findings_stored=bool(stored),
        target_tokens_per_s_per_user=conf.target_tokens_per_s_per_user,
        efficiency_floor=conf.efficiency_floor,
        settings=settings_used(chosen.run, chosen.overridden),
        training=_training(store) if only.is_everything else (),
        platforms=_rankings(platforms),
        stack_rankings=outcome.stack_rankings,
        round_gains=_round_gains(platforms),
        power=_power(store, only),
        analysis=_analysis_counts(outcome),
        gains=outcome.gains,
    )


def _rankings(platforms: PlatformSamples) -> tuple[PlatformRanking, ...]:
    """Each round's platforms per accelerator, by round."""
    return tuple(
        ranking
        for round_label, ranked in sorted(platforms.by_round().items())
        for ranking in rank_platforms(ranked, round_label=round_label)
    )


def _analysis_counts(outcome: AnalysisOutcome) -> AnalysisCounts:
    """The counts ``tracker analyze`` prints of ``outcome`` (:mod:`tracker.analyze.summary`)."""
    run = outcome.comparisons
    return AnalysisCounts(
        series=len(outcome.series),
        samples=outcome.samples,
        invalid_samples=outcome.invalid_samples,
        compared=len(run.comparisons),
        verdicts=tuple((v.value, n) for v, n in run.counts().items()),
        configuration_changed=len(outcome.configuration_changes),
    )


def _round_gains(platforms: PlatformSamples) -> tuple[RoundGain, ...]:
    """Each MLPerf round against the one before it (in version order): the same systems'
    results (the round pages; other software has no round pages)."""
    by_round = platforms.by_round()
    mlperf = [v for v in by_round if platforms.software.get(v, "").startswith("mlperf")]
    rounds = sorted(mlperf, key=version_sort_key)
    return tuple(
        gain
        for old, new in zip(rounds, rounds[1:], strict=False)
        for gain in round_gains([*by_round[old], *by_round[new]], old_round=old, new_round=new)
    )


def _power(store: Store, only: Selection) -> tuple[PowerResult, ...]:
    """The MLPerf Inference results stored with their measured power (of the series
    ``only`` picks)."""
    found = (power_result(row) for row in store.iter_export_rows(software=INFERENCE_SOFTWARE))
    return tuple(
        p
        for p in found
        if p is not None
        and only.matches(INFERENCE_SOFTWARE, p.benchmark, systems_of(p.system_key, p.system))
    )


def _by_software(found: Mapping[str, Sequence[_T]]) -> tuple[tuple[str, _T], ...]:
    """``(software, item)`` of each item, by software."""
    return tuple((sw, item) for sw in sorted(found) for item in found[sw])


def _training(store: Store) -> tuple[TrainingScore, ...]:
    """The stored MLPerf Training scores with their runs."""
    return training_scores(store.iter_export_rows(software=TRAINING_SOFTWARE))


def publish_report(
    store: Store,
    out_dir: Path,
    *,
    generated_at: str,
    overrides: ReportOverrides | None = None,
    on_page: Callable[[int, str], None] | None = None,
    force: bool = False,
    selection: Selection | None = None,
) -> Path:
    """Render the report of everything in ``store`` (``selection``: of the series it picks)
    into ``out_dir``; return the index page.

    ``overrides``: the report's own analysis options (see :func:`gather_report_input`).
    ``on_page(pages_written, relative_path)`` is called after each page (progress).
    A folder the tracker did not make is refused before anything is read, unless
    ``force`` (see :func:`tracker.report.render.check_output_folder`).
    """
    check_output_folder(out_dir, force=force)
    data = gather_report_input(store, overrides=overrides, selection=selection)
    return render_site(data, out_dir, generated_at=generated_at, on_page=on_page, force=force)
