"""Getting results in and out: ``ingest``, ``pull``, ``export`` and ``db``."""

from __future__ import annotations

import csv
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from tracker.cli.common import atomic_output, cache_dir, echo_label, open_store
from tracker.cli.progress import download_bar, echo_plain, echo_retry, progress_bar
from tracker.errors import EXIT_DATA_ERROR, ConfigError
from tracker.ingest.kinds import KINDS, PULLABLE
from tracker.records import ExportRow, LabelError, Labels, SourceSpec, checked_label
from tracker.sources.remote import GITHUB
from tracker.text_safety import csv_cell

# The ingest use case, the store and the network client are imported inside the
# commands that use them, so that `tracker --help` starts at once.
if TYPE_CHECKING:
    from tracker.ingest.run import SourceOutcome

MAX_ACCELERATORS = 1_000_000
"""The most accelerators ``--accelerators`` accepts (more than any system has)."""


@click.group()
def db() -> None:
    """Database schema commands.

    \b
    Example:
        tracker db upgrade
        tracker --database-url postgresql+psycopg://tracker@127.0.0.1/tracker db current
    """


@db.command("upgrade")
@click.pass_context
def db_upgrade(ctx: click.Context) -> None:
    """Bring the database schema up to the latest migration.

    Other commands do this on first use; run it explicitly in a deploy step.

    \b
    Example:
        tracker --database-url sqlite:///results.db db upgrade
    """
    with open_store(ctx, create=True) as store:
        echo_label(f"{store.url}: schema at revision {store.revision()} (head)")


@db.command("current")
@click.pass_context
def db_current(ctx: click.Context) -> None:
    """Show the schema revision of the database, without changing it (or creating it).

    \b
    Example:
        tracker db current
    """
    with open_store(ctx, upgrade=False) as store:
        from tracker.store.first_use import HEAD_REVISION, is_shipped_revision

        revision = store.revision()
        head = HEAD_REVISION
        if revision is None:
            echo_label(f"{store.url}: empty (no schema yet; run `tracker db upgrade`)")
        elif revision != head and not is_shipped_revision(revision):
            echo_label(
                f"{store.url}: revision {revision} (newer than this tracker, whose head is "
                f"{head}: a newer tracker wrote it)"
            )
        else:
            state = "head" if revision == head else f"behind head {head}"
            echo_label(f"{store.url}: revision {revision} ({state})")


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
@click.option(
    "--replace",
    "replace_differing",
    is_flag=True,
    help="Stored results the source now disagrees with (an upstream correction) take its "
    "values; the old ones are kept in each result's history.",
)
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
        tracker ingest ingest/demo.toml
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
        summary = "nothing stored"
    elif saved.source_was_known:
        summary = (
            "already stored" if saved.differing or saved.replaced else "unchanged, already stored"
        )
    else:
        summary = f"{saved.results_stored} results stored" + (
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
    echo_label(f"{outcome.location}: {outcome.runs_found} runs ({outcome.kind}), {summary}")
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
        f"Total: {len(outcomes)} sources, {stored} results stored, "
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
@click.option(
    "--replace",
    "replace_differing",
    is_flag=True,
    help="Stored results the source now disagrees with (an upstream correction) take its "
    "values; the old ones are kept in each result's history.",
)
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
    from tracker.ingest.pull import pull_round, round_repository

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


@click.command()
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["json", "csv"]),
    default="json",
    show_default=True,
)
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), help="File (default: stdout)."
)
@click.pass_context
def export(ctx: click.Context, output_format: str, out: Path | None) -> None:
    """Print every stored result, one object (JSON) or row (CSV) per result.

    --out is written under a temporary name beside it and renamed at the end:
    a failed export (disk full) leaves no partial file. It may not be the
    database itself.

    \b
    Example:
        tracker export --format json | jq '.[] | select(.valid == false)'
        tracker export --format csv --out results.csv
    """
    if out is not None:
        _refuse_input_as_output(ctx.find_root().obj, out)
    with open_store(ctx) as store:
        rows = store.iter_export_rows()
        if out is None:
            _write_export(rows, sys.stdout, output_format)
        else:
            with atomic_output(out) as stream:
                _write_export(rows, stream, output_format)


def _refuse_input_as_output(database_url: str, out: Path) -> None:
    """A :class:`ConfigError` when ``out`` is the SQLite database (or one of its
    journal files) the export reads: writing it would destroy what is exported."""
    from tracker.store.engine import parse_database_url, sqlite_file

    database = sqlite_file(parse_database_url(database_url))
    if database is None:
        return
    target = out.resolve()
    for suffix in ("", "-wal", "-shm", "-journal"):
        read = Path(f"{database}{suffix}")
        same = target == read.resolve()
        if not same and out.exists() and read.exists():
            same = os.path.samefile(out, read)
        if same:
            raise ConfigError(
                f"--out {out} is the database the export reads ({read}); give another file name"
            )


def _write_export(rows: Iterator[ExportRow], stream: IO[str], output_format: str) -> None:
    if output_format == "csv":
        names = [f.name for f in fields(ExportRow)]
        writer = csv.DictWriter(stream, fieldnames=names, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            record = asdict(row)
            record["extra"] = json.dumps(record["extra"], sort_keys=True)
            writer.writerow({name: csv_cell(value) for name, value in record.items()})
        return
    stream.write("[")
    for n, row in enumerate(rows):
        stream.write(",\n" if n else "\n")
        stream.write(json.dumps(asdict(row), sort_keys=True))
    stream.write("\n]\n")
