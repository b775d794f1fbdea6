"""The ``tracker`` command line: the only place that prints, reads the environment or exits.

Exit codes: 0 success; 1 reserved for a failed gate (regressions found);
2 usage, configuration or data error (``Error: ...`` on stderr).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TransferSpeedColumn,
)

from tracker import __version__
from tracker.demo import run_demo
from tracker.errors import TrackerError
from tracker.fetch import DEFAULT_CACHE_DIR
from tracker.ingest import KINDS, SourceOutcome, ingest_source, read_job
from tracker.publish import publish_report
from tracker.pull import PULLABLE, pull_round
from tracker.records import ExportRow, Labels, SourceSpec
from tracker.remote import GITHUB
from tracker.schema import head_revision
from tracker.store import Store

DEFAULT_DATABASE_URL = "sqlite:///tracker.db"
EXIT_DATA_ERROR = 2
_err = Console(stderr=True)


class TrackerCommandError(click.ClickException):
    """A :class:`TrackerError` shown as ``Error: ...`` with exit code 2."""

    exit_code = EXIT_DATA_ERROR


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except TrackerError as error:
            raise TrackerCommandError(str(error)) from None


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="tracker")
@click.option(
    "--database-url",
    envvar="TRACKER_DATABASE_URL",
    default=DEFAULT_DATABASE_URL,
    show_default=True,
    help="SQLAlchemy URL: sqlite:///FILE or postgresql+psycopg://USER@HOST/DB "
    "(also TRACKER_DATABASE_URL).",
)
@click.pass_context
def cli(ctx: click.Context, database_url: str) -> None:
    """Track MLPerf-style benchmark results across software versions.

    \b
    Example:
        tracker ingest runs/2.0.13 --kind loadgen --software-version 2.0.13 --system node-a
        tracker report --out site/
    """
    ctx.obj = database_url


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


@contextmanager
def _open_store(ctx: click.Context, *, upgrade: bool = True) -> Iterator[Store]:
    store = Store.open(ctx.find_root().obj, upgrade=upgrade)
    try:
        yield store
    finally:
        store.close()


@contextmanager
def _progress(label: str) -> Iterator[Any]:
    """A progress bar on stderr (hidden when stderr is not a terminal)."""
    with Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        console=_err,
        transient=True,
        disable=not _err.is_terminal,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int, _what: str) -> None:
            bar.update(task, completed=done, total=total)

        yield update


@contextmanager
def _download_bar() -> Iterator[Any]:
    """A download progress bar on stderr (hidden when stderr is not a terminal)."""
    with Progress(
        TextColumn("download"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        console=_err,
        transient=True,
        disable=not _err.is_terminal,
    ) as bar:
        task = bar.add_task("download", total=None)

        def update(received: int, total: int | None) -> None:
            bar.update(task, completed=received, total=total)

        yield update


def _cache_dir() -> Path:
    """Downloads and snapshots: ``TRACKER_CACHE_DIR``, else ``$XDG_CACHE_HOME/tracker``."""
    if os.environ.get("TRACKER_CACHE_DIR"):
        return Path(os.environ["TRACKER_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "tracker"
    return DEFAULT_CACHE_DIR


@cli.group()
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
    with _open_store(ctx) as store:
        click.echo(f"{store.url}: schema at revision {store.revision()} (head)")


@db.command("current")
@click.pass_context
def db_current(ctx: click.Context) -> None:
    """Show the schema revision of the database, without changing it.

    \b
    Example:
        tracker db current
    """
    with _open_store(ctx, upgrade=False) as store:
        revision = store.revision()
        head = head_revision()
        if revision is None:
            click.echo(f"{store.url}: empty (no schema yet; run `tracker db upgrade`)")
        else:
            state = "head" if revision == head else f"behind head {head}"
            click.echo(f"{store.url}: revision {revision} ({state})")


@cli.command()
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
@click.option("--accelerators", type=click.IntRange(min=1), help="Accelerators in the system.")
@click.option("--benchmark", help="Benchmark or workload, for files that do not name one.")
@click.option("--strict", is_flag=True, help="Store nothing of a source that has a bad file.")
@click.pass_context
def ingest(
    ctx: click.Context,
    /,
    sources: tuple[str, ...],
    kind: str,
    strict: bool,
    **label_options: Any,
) -> None:
    """Ingest result folders, archives, URLs or ingest jobs (*.toml) into the database.

    Each source is stored all or nothing; ingesting the same files again stores
    nothing new (an unchanged source is recognised without reading it again; see
    TRACKER_CACHE_DIR). A folder with one run per subfolder is stored as repeats.
    A published MLPerf Inference round (folder, .tar.gz, .zip or URL) and its
    summary_results.json are recognised; the round is their software version.
    Without --strict, the good runs of a source with a bad file are stored and
    the bad files are listed; the exit code is then 2.

    \b
    Example:
        tracker ingest out/loadgen --kind loadgen --software vllm \\
            --software-version 0.11.0 --system node-a --benchmark llama2-70b
        tracker ingest inference_results_v5.1/ summary_results_v6.0.json
        tracker ingest ingest/demo.toml
    """
    labels = Labels(**label_options)
    specs = [spec for source in sources for spec in _specs(source, kind, labels)]
    outcomes = []
    with (
        _open_store(ctx) as store,
        _progress("ingest") as progress,
        _download_bar() as download,
    ):
        for spec in specs:
            outcome = ingest_source(
                store,
                spec,
                strict=strict,
                progress=progress,
                cache_dir=_cache_dir(),
                download_progress=download,
            )
            _echo_outcome(outcome)
            outcomes.append(outcome)
    if len(outcomes) > 1:
        _echo_totals(outcomes)
    if any(outcome.errors for outcome in outcomes):
        ctx.exit(EXIT_DATA_ERROR)


def _specs(source: str, kind: str, labels: Labels) -> list[SourceSpec]:
    if not source.endswith(".toml"):
        return [SourceSpec(location=source, kind=kind, labels=labels)]
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
        click.echo(f"{download.url}: {fetched} (sha256 {download.sha256})")
    saved = outcome.saved
    if saved is None:
        summary = "nothing stored"
    elif saved.source_was_known:
        summary = "unchanged, already stored"
    else:
        summary = f"{saved.results_stored} results stored" + (
            f", {saved.results_already_stored} already stored"
            if saved.results_already_stored
            else ""
        )
    if outcome.runs_failed:
        summary += f", {outcome.runs_failed} failed (see the errors)"
    click.echo(f"{outcome.location}: {outcome.runs_found} runs ({outcome.kind}), {summary}")
    for note in outcome.notes:
        click.echo(f"  note: {note}")
    for error in outcome.errors:
        click.echo(f"Error: {error}", err=True)


def _echo_totals(outcomes: list[SourceOutcome]) -> None:
    stored = sum(o.saved.results_stored for o in outcomes if o.saved)
    unchanged = sum(o.saved.results_already_stored for o in outcomes if o.saved)
    failed = sum(o.runs_failed for o in outcomes)
    click.echo(
        f"Total: {len(outcomes)} sources, {stored} results stored, "
        f"{unchanged} unchanged (already stored), {failed} failed"
    )


@cli.command()
@click.argument("what", type=click.Choice(PULLABLE))
@click.option("--round", "round_label", required=True, help="The round, e.g. v5.1.")
@click.option("--ref", help="Commit, tag or branch to pin (default: the default branch).")
@click.option(
    "--base-url",
    default=GITHUB,
    show_default=True,
    help="Where the mlcommons/inference_results_vX.Y repositories are served.",
)
@click.option("--strict", is_flag=True, help="Store nothing of the round if a file is bad.")
@click.pass_context
def pull(
    ctx: click.Context, what: str, round_label: str, ref: str | None, base_url: str, strict: bool
) -> None:
    """Download a published MLPerf Inference round and ingest it.

    Streams the GitHub archive of mlcommons/inference_results_vX.Y (pinned with
    --ref) into the download cache (TRACKER_CACHE_DIR, default ~/.cache/tracker);
    pulling an unchanged round again downloads nothing and stores nothing.

    \b
    Example:
        tracker pull mlperf-inference --round v5.1
        tracker pull mlperf-inference --round v6.0 --ref 4d3916ac9cf474b679cdfcf492d43a0559418ad1
    """
    with (
        _open_store(ctx) as store,
        _progress("ingest") as progress,
        _download_bar() as download,
    ):
        outcome = pull_round(
            store,
            round_label,
            ref=ref,
            base_url=base_url,
            strict=strict,
            cache_dir=_cache_dir(),
            progress=progress,
            download_progress=download,
        )
    _echo_outcome(outcome)
    if outcome.errors:
        ctx.exit(EXIT_DATA_ERROR)


@cli.command()
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

    \b
    Example:
        tracker export --format json | jq '.[] | select(.valid == false)'
        tracker export --format csv --out results.csv
    """
    with _open_store(ctx) as store:
        rows = store.iter_export_rows()
        if out is None:
            _write_export(rows, sys.stdout, output_format)
        else:
            with out.open("w", encoding="utf-8", newline="") as stream:
                _write_export(rows, stream, output_format)


def _write_export(rows: Iterator[ExportRow], stream: IO[str], output_format: str) -> None:
    if output_format == "csv":
        names = [f.name for f in fields(ExportRow)]
        writer = csv.DictWriter(stream, fieldnames=names, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            record = asdict(row)
            record["extra"] = json.dumps(record["extra"], sort_keys=True)
            writer.writerow(record)
        return
    stream.write("[")
    for n, row in enumerate(rows):
        stream.write(",\n" if n else "\n")
        stream.write(json.dumps(asdict(row), sort_keys=True))
    stream.write("\n]\n")


@cli.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder to write the static site into.",
)
@click.pass_context
def report(ctx: click.Context, out: Path) -> None:
    """Render the static HTML report (works from file://, no network needed).

    \b
    Example:
        tracker report --out site/ && python -m http.server -d site
    """
    with _open_store(ctx) as store:
        index = publish_report(store, out, generated_at=_now())
    click.echo(f"Report: {index}")


@cli.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("demo"),
    show_default=True,
    help="Folder for the example data (data/), database (demo.db) and report (site/).",
)
@click.pass_context
def demo(ctx: click.Context, out: Path) -> None:
    """Write seeded example data, ingest it through ingest/demo.toml and render the report.

    The demo uses its own database, OUT/demo.db, made afresh each time, unless
    --database-url is given on the command line. All of it is example data.

    \b
    Example:
        tracker demo --out /tmp/tracker-demo
    """
    root = ctx.find_root()
    if root.get_parameter_source("database_url") != click.core.ParameterSource.COMMANDLINE:
        if out.exists():
            shutil.rmtree(out / "data", ignore_errors=True)
            (out / "demo.db").unlink(missing_ok=True)
        out.mkdir(parents=True, exist_ok=True)
        root.obj = f"sqlite:///{out / 'demo.db'}"
    with _open_store(ctx) as store, _progress("demo") as progress:
        outcome = run_demo(store, out, generated_at=_now(), progress=progress)
        rows = store.count_rows()["result"]
    click.echo(
        f"Example data: {outcome.runs_written} LoadGen runs written to {outcome.data_dir}; "
        f"{rows} results stored in {store.url}"
    )
    click.echo(f"Report: {outcome.index_page.resolve()}")
