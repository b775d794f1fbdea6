"""Getting results in and out: ``ingest``, ``pull``, ``export`` and ``db``."""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tracker.cli.common import (
    cache_dir,
    download_bar,
    echo_label,
    echo_plain,
    echo_retry,
    open_store,
    progress_bar,
)
from tracker.errors import EXIT_DATA_ERROR, ConfigError
from tracker.ingest.jobs import GITHUB
from tracker.kinds import KINDS, PULLABLE
from tracker.records.results import LabelError, Labels, SourceSpec, checked_label

# The ingest use case, the store and the network client are imported inside the
# commands that use them, so that `tracker --help` starts at once.
if TYPE_CHECKING:
    from tracker.ingest.run import SourceOutcome

MAX_ACCELERATORS = 1_000_000
"""The most accelerators ``--accelerators`` accepts (more than any system has)."""

_REPLACE_OPTION = click.option(
    "--replace",
    "replace_differing",
    is_flag=True,
    help="Stored results the source now disagrees with (an upstream correction) take its "
    "values; the old ones are kept in each result's history.",
)
"""``--replace``, of ``ingest`` and ``pull``."""


@click.command()
@click.argument("sources", nargs=-1, required=True)
@click.option(
    "--kind",
    type=click.Choice(["auto", *KINDS]),
    default="auto",
    show_default=True,
    help="Format of the source; auto recognises it from the files.",
)
@click.option("--software", help="Software name (default: 'local' for local runs).")
@click.option("--software-version", help="Version label the results belong to, e.g. 2.0.13.")
@click.option("--system", help="System under test, e.g. 'node-a (8x H200)'.")
@click.option(
    "--accelerators",
    type=click.IntRange(min=1, max=MAX_ACCELERATORS),
    help="Accelerators in the system.",
)
@click.option("--benchmark", help="Benchmark or workload, for files that do not name one.")
@click.option("--strict", is_flag=True, help="Store nothing of a source that has a bad file.")
@_REPLACE_OPTION
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    help="Processes that read a large folder source (an MLPerf round) [default: all cores].",
)
@click.pass_context
def ingest(
    ctx: click.Context,
    /,
    sources: tuple[str, ...],
    kind: str,
    strict: bool,
    replace_differing: bool,
    jobs: int | None,
    **label_options: Any,
) -> None:
    """Ingest result folders, archives, URLs or ingest jobs (*.toml) into the database.

    Each source is stored all or nothing; ingesting the same files again stores
    nothing new (an unchanged source is recognised without reading it again; see
    TRACKER_CACHE_DIR). A folder with one run per subfolder is stored as repeats.
    A published MLPerf Inference round (folder, .tar.gz, .zip or URL) and its
    summary_results.json are recognised; the round is their software version.
    Without --strict, the good runs of a source with a bad file are stored and
    the bad files are listed; the exit code is then 2. A stored result whose
    value the source disagrees with (a corrected round) is kept and named;
    --replace takes the new value, keeping the old one in the result's history.

    \b
    Example:
        tracker ingest out/loadgen --kind loadgen --software vllm \\
            --software-version 0.11.0 --system node-a --benchmark llama2-70b
        tracker ingest inference_results_v5.1/ summary_results_v6.0.json
        tracker ingest jobs/demo.toml
    """
    from tracker.ingest.parallel import default_jobs
    from tracker.ingest.run import ingest_source

    labels = _flag_labels(label_options)
    specs = [spec for source in sources for spec in _specs(source, kind, labels)]
    outcomes = []
    with (
        open_store(ctx, create=True, defer=True) as store,
        progress_bar("ingest") as progress,
        download_bar() as download,
    ):
        for spec in specs:
            outcome = ingest_source(
                store,
                spec,
                strict=strict,
                progress=progress,
                cache_dir=cache_dir(),
                download_progress=download,
                replace_differing=replace_differing,
                jobs=jobs or default_jobs(),
                download_retry=echo_retry,
            )
            _echo_outcome(outcome)
            outcomes.append(outcome)
    if len(outcomes) > 1:
        _echo_totals(outcomes)
    if any(outcome.errors for outcome in outcomes):
        ctx.exit(EXIT_DATA_ERROR)


def _flag_labels(options: dict[str, Any]) -> Labels:
    """The labels the flags give, checked and without surrounding whitespace, before
    anything is stored (:meth:`Labels.checked`: the same rules on every database)."""
    try:
        return Labels(**options).checked()
    except LabelError as error:
        raise ConfigError(f"--{error.field.replace('_', '-')}: {error}") from None


def _specs(source: str, kind: str, labels: Labels) -> list[SourceSpec]:
    if not source.endswith(".toml"):
        return [SourceSpec(location=source, kind=kind, labels=labels)]
    from tracker.ingest.run import read_job

    _job, specs = read_job(Path(source))
    given = {k: v for k, v in asdict(labels).items() if v is not None and v is not False}
    return [
        replace(spec, labels=replace(spec.labels, **_gaps(spec.labels, given))) for spec in specs
    ]


def _gaps(labels: Labels, given: dict[str, Any]) -> dict[str, Any]:
    """Command-line labels for the fields a job entry leaves empty."""
    return {k: v for k, v in given.items() if getattr(labels, k) is None}


def _echo_outcome(outcome: SourceOutcome) -> None:
    download = outcome.download
    if download is not None:
        fetched = (
            "not modified, nothing downloaded"
            if download.not_modified
            else f"downloaded {download.bytes_transferred} bytes"
        )
        echo_label(f"{download.url}: {fetched} (sha256 {download.sha256})")
    saved = outcome.saved
    if saved is None:
        summary = (
            "nothing stored ("
            + (
                "see the errors below"
                if outcome.errors
                else "see the note below"
                if outcome.notes
                else "the files hold no result to store"
            )
            + ")"
        )
    elif saved.source_was_known:
        summary = (
            "already stored" if saved.differing or saved.replaced else "unchanged, already stored"
        )
    else:
        n = saved.results_stored
        summary = f"{n} result{'' if n == 1 else 's'} stored" + (
            f", {saved.results_already_stored} already stored"
            if saved.results_already_stored
            else ""
        )
    if saved is not None and saved.replaced:
        count = len(saved.replaced)
        summary += f", {count} result{'' if count == 1 else 's'} replaced"
    if saved is not None and saved.retries:
        times = "once" if saved.retries == 1 else f"{saved.retries} times"
        summary += f" (retried {times} after a conflict with a concurrent writer)"
    if outcome.runs_failed:
        summary += f", {outcome.runs_failed} failed (see the errors)"
    runs = f"{outcome.runs_found} run{'' if outcome.runs_found == 1 else 's'}"
    echo_label(f"{outcome.location}: {runs} ({outcome.kind}), {summary}")
    for note in outcome.notes:
        echo_label(f"  note: {note}")
    for error in outcome.errors:
        echo_label(f"Error: {error}", err=True)


def _echo_totals(outcomes: list[SourceOutcome]) -> None:
    stored = sum(o.saved.results_stored for o in outcomes if o.saved)
    unchanged = sum(o.saved.results_already_stored for o in outcomes if o.saved)
    failed = sum(o.runs_failed for o in outcomes)
    replaced = sum(len(o.saved.replaced) for o in outcomes if o.saved)
    click.echo(
        f"Total: {len(outcomes)} source{'' if len(outcomes) == 1 else 's'}, "
        f"{stored} result{'' if stored == 1 else 's'} stored, "
        f"{unchanged} unchanged (already stored), "
        + (f"{replaced} replaced, " if replaced else "")
        + f"{failed} failed"
    )


@click.command()
@click.argument("what", type=click.Choice(PULLABLE))
@click.option("--round", "round_label", required=True, help="The round, e.g. v5.1.")
@click.option("--ref", help="Commit, tag or branch to pin (default: the default branch).")
@click.option(
    "--base-url",
    default=GITHUB,
    show_default=True,
    help="Where the mlcommons/{inference,training}_results_vX.Y repositories are served.",
)
@click.option("--strict", is_flag=True, help="Store nothing of the round if a file is bad.")
@_REPLACE_OPTION
@click.pass_context
def pull(
    ctx: click.Context,
    what: str,
    round_label: str,
    ref: str | None,
    base_url: str,
    strict: bool,
    replace_differing: bool,
) -> None:
    """Download a published MLPerf Inference or Training round and ingest it.

    Streams the GitHub archive of mlcommons/inference_results_vX.Y (or
    training_results_vX.Y, pinned with --ref) into the download cache
    (TRACKER_CACHE_DIR, default ~/.cache/tracker); pulling an unchanged round
    again downloads nothing and stores nothing. Results of a corrected round
    that differ from the stored ones are named; --replace takes the new values.

    \b
    Example:
        tracker pull mlperf-inference --round v5.1
        tracker pull mlperf-inference --round v6.0 --ref 4d3916ac9cf474b679cdfcf492d43a0559418ad1
        tracker pull mlperf-training --round v5.1
    """
    from tracker.ingest.run import pull_round, round_repository

    try:
        round_label = checked_label("software_version", round_label)
    except LabelError as error:
        raise ConfigError(f"--round: {error}") from None
    repository = round_repository(round_label, base_url=base_url, kind=what)
    echo_plain(f"pull: downloading the archive of {repository}")
    with (
        open_store(ctx, create=True, defer=True) as store,
        progress_bar("ingest") as progress,
        download_bar() as download,
    ):
        outcome = pull_round(
            store,
            round_label,
            kind=what,
            ref=ref,
            base_url=base_url,
            strict=strict,
            cache_dir=cache_dir(),
            progress=progress,
            download_progress=download,
            replace_differing=replace_differing,
            download_retry=echo_retry,
        )
    _echo_outcome(outcome)
    if outcome.errors:
        ctx.exit(EXIT_DATA_ERROR)
