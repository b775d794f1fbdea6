"""Platforms: ``tracker compare`` (per accelerator, within a round, across rounds and sizes)
and ``tracker systems`` (the stored systems, and aliases for renamed ones).

``tracker compare``: platforms per accelerator within a round, across rounds and sizes.

``tracker systems``: the stored systems across rounds, and aliases for renamed ones.
"""

from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.table import Table

from tracker.analyze.platforms import (
    PlatformRanking,
    RoundGain,
    ScalingStep,
    TrainingChange,
    TrainingResult,
    TrainingRoundComparison,
    TrainingUnmatched,
    compare_training_rounds,
    is_glob,
    plain_number,
    rank_platforms,
    round_gains,
    size_scaling,
    system_matches,
)
from tracker.cli.common import TrackerCommandError, open_store
from tracker.records.keys import Selection, system_label
from tracker.records.results import TRAINING_SOFTWARE, AnalysisSample
from tracker.text_safety import terminal_text

__all__ = ["compare", "systems"]


@click.group(invoke_without_command=True)
@click.pass_context
def systems(ctx: click.Context) -> None:
    """The systems stored, one per submitter and name (and division unless closed).

    A system's description (accelerator, counts, host CPU) is that of each round
    it has results in. A system renamed between rounds is linked to the one it
    is with `tracker systems alias`.

    \b
    Example:
        tracker systems
        tracker systems alias "Dell/XE9680_H200" "Dell/XE9680_H200_SXM_141GBx8_TRT"
    """
    if ctx.invoked_subcommand is not None:
        return
    with open_store(ctx, create=False, reads_only=True) as store:
        found = store.list_systems()
    table = Table(title=f"{len(found)} systems")
    for column in ("system", "division", "versions", "results", "aliases"):
        table.add_column(column)
    for s in found:
        table.add_row(
            terminal_text(s.key),
            terminal_text(s.division or ""),
            terminal_text(", ".join(s.versions)),
            str(s.results),
            terminal_text(", ".join(s.aliases)),
        )
    Console(width=None if sys.stdout.isatty() else 200).print(table)


@systems.command("alias")
@click.argument("alias_key")
@click.argument("key")
@click.pass_context
def systems_alias(ctx: click.Context, alias_key: str, key: str) -> None:
    """Record that the system ALIAS_KEY is the system KEY (submitter/name, as listed).

    What is stored under ALIAS_KEY moves to KEY (a round KEY describes already
    keeps its own description), and later ingests of ALIAS_KEY land on KEY, so
    the system's series run across the rename. Run `tracker analyze` afterwards.

    \b
    Example:
        tracker systems alias "Dell/XE9680_H200" "Dell/XE9680_H200_SXM_141GBx8_TRT"
    """
    with open_store(ctx, create=False) as store:
        done = store.alias_system(alias_key, key)
    moved = f"{done.results_moved} results and {done.descriptions_moved} round descriptions"
    if done.renamed:
        click.echo(f"{terminal_text(alias_key)} renamed to {terminal_text(key)}")
    else:
        click.echo(f"{terminal_text(alias_key)} is now an alias of {terminal_text(key)}: {moved}")


@click.command()
@click.option("--round", "round_label", required=True, help="The round compared, e.g. v6.1.")
@click.option(
    "--system",
    "systems",
    multiple=True,
    help="A system (name, submitter/name or a shell glob such as '*GB300*'); repeat it. "
    "Default: every system of the round.",
)
@click.option(
    "--reference",
    help="The system ratios are to. Default: the last --system, else the best of each case.",
)
@click.option(
    "--against-round",
    help="An earlier round: same-system gains, and the same accelerator at other sizes.",
)
@click.option(
    "--benchmark",
    "benchmarks",
    multiple=True,
    metavar="GLOB",
    help="Only this benchmark (e.g. deepseek-r1, or a glob such as 'llama*'); repeat for more.",
)
@click.option(
    "--software",
    "softwares",
    multiple=True,
    metavar="GLOB",
    help="Only results of this software (e.g. mlperf-inference); repeat for more.",
)
@click.option("--scenario", help="Only this scenario (e.g. Interactive).")
@click.pass_context
def compare(
    ctx: click.Context,
    round_label: str,
    systems: tuple[str, ...],
    reference: str | None,
    against_round: str | None,
    benchmarks: tuple[str, ...],
    softwares: tuple[str, ...],
    scenario: str | None,
) -> None:
    """Compare systems per accelerator: rankings with ratios, gains and scaling.

    Per benchmark and scenario of the round, each system's valid throughput per
    accelerator, ranked, with the ratio to the reference and its availability
    (one measurement under several names is one line); the scaling over the sizes
    of each scaling family; with --against-round, each system's gain where nothing
    but the software changed, and apart from it the pairs whose configuration
    changed (host CPU, precision, power mode, size), with what changed.

    MLPerf Training (with --against-round): each system's official time to train
    per benchmark in both rounds, for the same configuration only (accelerators,
    global batch size), with its ratio, the runs used and dropped, whether the
    score is RCP-scaled (and the unscaled olympic mean), and the
    accelerator-hours where the round gives the accelerator count.

    \b
    Example:
        tracker compare --round v6.1 --system VR-NVL72_VR-288GB_aarch64x72_TRT \\
            --system GB300-NVL72_GB300-288GB_aarch64x72_TRT
        tracker compare --round v6.1 --against-round v6.0 \\
            --system GB300-NVL72_GB300-288GB_aarch64x72_TRT --benchmark deepseek-r1
        tracker compare --round v5.1 --against-round v5.0 --benchmark llama2_70b_lora
    """
    named = (*systems, *([reference] if reference else []))
    chosen = Selection(software=softwares, benchmark=benchmarks)
    samples, training = _stored(ctx, round_label, against_round, named, chosen, scenario)
    _check_names(samples, named, round_label, against_round)
    rankings = rank_platforms(
        samples, round_label=round_label, systems=systems, reference=reference
    )
    steps = size_scaling(samples, round_label=round_label, systems=systems)
    gains = (
        round_gains(samples, old_round=against_round, new_round=round_label, systems=systems)
        if against_round
        else []
    )
    if training is not None and not (training.changes or training.unmatched):
        training = None
    if not (rankings or steps or gains or training):
        raise TrackerCommandError(
            f"nothing to compare in {round_label}: no benchmark and scenario has valid "
            "throughput results of two of the systems given (or of one, at two sizes or rounds), "
            "and no MLPerf Training folder of one system is in both rounds"
        )
    _echo_comparison(round_label, against_round, rankings, steps, gains)
    if training is not None:
        _echo_training(training)


def _stored(
    ctx: click.Context,
    round_label: str,
    against_round: str | None,
    named: tuple[str, ...],
    chosen: Selection,
    scenario: str | None,
) -> tuple[list[AnalysisSample], TrainingRoundComparison | None]:
    """The samples selected, and the Training rounds compared (with --against-round)."""
    with open_store(ctx, create=False, reads_only=True) as store:
        samples = [
            s
            for s in store.iter_analysis_samples()
            if chosen.matches(s.software, s.benchmark, ())
            and (scenario is None or s.scenario.lower() == scenario.lower())
        ]
        training_too = not chosen.software or chosen.matches(TRAINING_SOFTWARE, "", ())
        if not against_round or scenario is not None or not training_too:
            return samples, None
        one = chosen.benchmark[0] if len(chosen.benchmark) == 1 else "*"
        benchmark = None if is_glob(one) else one
        training = compare_training_rounds(
            store.iter_export_rows(software=TRAINING_SOFTWARE),
            old_round=against_round,
            new_round=round_label,
            selected=named,
            benchmark=benchmark,
        )
    return samples, training


def _echo_comparison(
    round_label: str,
    against_round: str | None,
    rankings: list[PlatformRanking],
    steps: list[ScalingStep],
    gains: list[RoundGain],
) -> None:
    """The throughput comparisons: rankings, scaling over sizes, gains since a round."""
    for ranking in rankings:
        _echo_ranking(ranking)
    if steps:
        click.echo(f"\nScaling over system sizes in {round_label} (efficiency per accelerator)")
        for step in steps:
            _echo_step(step)
    if against_round and not gains and not rankings and not steps:
        return  # Training only: its own section says what was compared
    if against_round and not gains:
        click.echo(f"\nNothing to compare with {terminal_text(against_round)}.")
    for kind in dict.fromkeys(g.kind for g in gains):
        click.echo(
            f"\n{terminal_text(against_round or '')} → {round_label}, {kind} (per accelerator)"
        )
        for gain in (g for g in gains if g.kind == kind):
            _echo_gain(gain)


def _check_names(
    samples: list[AnalysisSample], named: tuple[str, ...], round_label: str, against: str | None
) -> None:
    """The round has results selected, and each system named (not a glob) is one system."""
    if not any(s.version == round_label for s in samples):
        raise TrackerCommandError(
            f"no results of round {terminal_text(round_label)!r} stored (or selected)"
        )
    for name in named:
        if not is_glob(name):
            _check_unambiguous(samples, name, round_label, against)


def _check_unambiguous(
    samples: list[AnalysisSample], name: str, round_label: str, against: str | None
) -> None:
    """A system name several submitters use (GB300-NVL72_...x72_TRT) must name its submitter."""
    rounds = {round_label, against}
    keys = sorted(
        {
            s.system_key
            for s in samples
            if s.version in rounds and system_matches(s.system, s.system_key, name)
        }
    )
    if len(keys) > 1:
        shown = ", ".join(terminal_text(k) for k in keys[:8])
        raise TrackerCommandError(
            f"{terminal_text(name)!r} names {len(keys)} systems ({shown}); "
            "give one as submitter/name"
        )


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:#.5g}×"


def _echo_ranking(ranking: PlatformRanking) -> None:
    reference = terminal_text(ranking.reference or "not in this case")
    click.echo(
        f"\n{ranking.round} {terminal_text(ranking.benchmark)} {terminal_text(ranking.scenario)}"
        f" ({ranking.unit} per accelerator; reference {reference})"
    )
    for r in ranking.results:
        mark = " (reference)" if r.is_reference else ""
        twins = (
            f"; the same measurement as {', '.join(terminal_text(t) for t in r.twins)}"
            if r.twins
            else ""
        )
        stated = (
            f" (the description says {r.accelerators_stated})"
            if r.accelerators_stated is not None
            else ""
        )
        click.echo(
            f"  {r.rank}. {terminal_text(r.system_key)}{_availability(r.availability)}: "
            f"{r.accelerators} × {terminal_text(r.accelerator or '?')}{stated}, "
            f"{plain_number(r.per_accelerator)} per accelerator ({plain_number(r.value)} total), "
            f"{_ratio(r.ratio)}{mark}{twins}"
        )


def _availability(status: str | None) -> str:
    """`` (preview)`` for a system not available yet (``rdi``, ``preview``); else empty."""
    return f" ({terminal_text(status)})" if status and status != "available" else ""


def _echo_step(step: ScalingStep) -> None:
    click.echo(
        f"  {terminal_text(system_label(step.submitter, step.accelerator) or '?')} "
        f"{terminal_text(step.benchmark)} {terminal_text(step.scenario)}: "
        f"x{step.from_accelerators} → x{step.to_accelerators}: speedup {step.speedup:#.4g}, "
        f"efficiency {step.efficiency:#.5g} (against x{step.smallest_accelerators}: "
        f"{step.efficiency_vs_smallest:#.5g})"
    )


def _echo_gain(gain: RoundGain) -> None:
    sizes = (
        f"x{gain.old_accelerators}"
        if gain.old_accelerators == gain.new_accelerators
        else f"x{gain.old_accelerators} → x{gain.new_accelerators}, different system sizes"
    )
    names = terminal_text(gain.old_system) + _availability(gain.old_availability)
    if gain.new_system != gain.old_system or gain.old_availability != gain.new_availability:
        names = f"{names} → {terminal_text(gain.new_system)}{_availability(gain.new_availability)}"
    click.echo(
        f"  {terminal_text(gain.benchmark)} {terminal_text(gain.scenario)}: {names} ({sizes}): "
        f"{plain_number(gain.old_value)} → {plain_number(gain.new_value)} {gain.unit}, "
        f"{_ratio(gain.ratio)}"
    )
    click.echo(f"    besides the software: {terminal_text(gain.besides)}")


def _speed(ratio: float | None) -> str:
    """``1.043× faster`` (old time / new time above 1), ``1.100× slower``, ``unchanged``."""
    if ratio is None:
        return "—"
    if round(ratio, 3) == 1.0:
        return "unchanged"
    return f"{ratio:.3f}× faster" if ratio > 1.0 else f"{1.0 / ratio:.3f}× slower"


def _runs(folder: TrainingResult) -> str:
    if folder.runs_used is None:
        return "?"
    return f"{folder.runs_used} used, {folder.runs_dropped or 0} dropped"


def _scaled(folder: TrainingResult) -> str:
    return f"RCP-scaled ×{folder.scaling_factor:.4f}" if folder.rcp_scaled else "not RCP-scaled"


def _echo_training(found: TrainingRoundComparison) -> None:
    click.echo(
        f"\n{terminal_text(found.old_round)} → {terminal_text(found.new_round)}, MLPerf Training "
        "time to train (same system and configuration; lower is better)"
    )
    for change in found.changes:
        _echo_training_change(change)
    for skipped in found.unmatched:
        _echo_training_unmatched(skipped)


def _echo_training_change(change: TrainingChange) -> None:
    old, new = change.old, change.new
    click.echo(
        f"  {terminal_text(new.system_key)} {terminal_text(new.benchmark)} "
        f"{old.score_minutes or 0.0:.4f} → {new.score_minutes or 0.0:.4f} minutes "
        f"({_speed(change.speedup)})"
    )
    batch = (
        "" if new.global_batch_size is None else f", global batch size {new.global_batch_size:g}"
    )
    click.echo(
        f"    x{new.accelerators or '?'} {terminal_text(new.accelerator or '?')}{batch}; "
        f"runs {_runs(old)} → {_runs(new)}; {_scaled(old)} → {_scaled(new)}"
    )
    means = (old.olympic_mean_minutes, new.olympic_mean_minutes)
    if (old.rcp_scaled or new.rcp_scaled) and None not in means:
        click.echo(
            f"    unscaled (olympic mean of the runs used) {old.olympic_mean_minutes:.4f} → "
            f"{new.olympic_mean_minutes:.4f} minutes ({_speed(change.unscaled_speedup)})"
        )
    if old.accelerator_hours is not None and new.accelerator_hours is not None:
        click.echo(
            f"    {old.accelerator_hours:.4f} → {new.accelerator_hours:.4f} accelerator-hours "
            "to train (time to train × accelerators)"
        )


def _echo_training_unmatched(skipped: TrainingUnmatched) -> None:
    click.echo(
        f"  not compared: {terminal_text(skipped.new.system_key)} "
        f"{terminal_text(skipped.new.benchmark)}: {terminal_text(skipped.reason)}"
    )
