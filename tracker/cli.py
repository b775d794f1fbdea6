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
from typing import IO, TYPE_CHECKING, Any

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
from rich.table import Table

from tracker import __version__
from tracker.errors import TrackerError
from tracker.ingest.pull import PULLABLE, pull_round
from tracker.ingest.run import KINDS, SourceOutcome, ingest_source, read_job
from tracker.records import FINDING_STATUSES, ExportRow, Labels, SourceSpec
from tracker.sources.fetch import DEFAULT_CACHE_DIR
from tracker.sources.remote import GITHUB
from tracker.store.facade import Store
from tracker.store.schema import head_revision

# The analysis, report, gate and demo modules (numpy, scipy, jinja2) are imported
# inside the commands that use them, so that `tracker ingest` and `--help` start fast.
if TYPE_CHECKING:
    from tracker.gate.decision import GateResult

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
def _count_bar(label: str) -> Iterator[Any]:
    """A counter of pages written on stderr, total unknown (hidden when not a terminal)."""
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed} pages"),
        console=_err,
        transient=True,
        disable=not _err.is_terminal,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(pages: int, relative: str) -> None:
            bar.update(task, completed=pages, description=f"report: {relative}")

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
    if saved is not None and saved.retries:
        times = "once" if saved.retries == 1 else f"{saved.retries} times"
        summary += f" (retried {times} after a conflict with a concurrent writer)"
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
    "--target-tokens-per-s-per-user",
    "target",
    type=click.FloatRange(min=0.0, min_open=True),
    default=50.0,
    show_default=True,
    help="Interactivity target where sweeps are read (50 tokens/s/user = 20 ms per token).",
)
@click.option(
    "--price-book",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='TOML file of accelerator model = $/hour (e.g. "NVIDIA B200-SXM-180GB" = 6.25).',
)
@click.option(
    "--efficiency-floor",
    type=click.FloatRange(min=0.0, max=1.0, min_open=True),
    default=0.90,
    show_default=True,
    help="Scaling efficiency below this is a finding.",
)
@click.pass_context
def analyze(
    ctx: click.Context, target: float, price_book: Path | None, efficiency_floor: float
) -> None:
    """Analyse every stored series and store the findings, keeping their triage states.

    Compares each series' newest version with its previous one (one
    Benjamini-Hochberg family per run), finds change points, scaling-efficiency
    drops, software gains, throughput at the interactivity target and, with a
    price book, cost per token. Findings that no longer hold are closed.

    \b
    Example:
        tracker analyze
        tracker analyze --target-tokens-per-s-per-user 30 --price-book prices.toml
    """
    from tracker.analysis import (
        parse_price_book,
    )
    from tracker.analyze.run import AnalysisSettings, run_analysis
    from tracker.analyze.summary import summary_lines

    book = None
    if price_book is not None:
        book = parse_price_book(price_book.read_bytes(), source=str(price_book))
    settings = AnalysisSettings(
        target_tokens_per_s_per_user=target, efficiency_floor=efficiency_floor
    )
    with _open_store(ctx) as store:
        outcome = run_analysis(store, policy=settings, price_book=book)
    for line in summary_lines(outcome):
        click.echo(line)


@cli.group(invoke_without_command=True)
@click.option(
    "--status",
    type=click.Choice([*FINDING_STATUSES, "all"]),
    default="open",
    show_default=True,
    help="Only findings with this triage state.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
@click.pass_context
def findings(ctx: click.Context, status: str, output_format: str) -> None:
    """List the stored findings with their evidence and triage state.

    \b
    Example:
        tracker findings
        tracker findings --status all --format json | jq '.[] | select(.kind == "regression")'
    """
    from tracker.analyze.summary import (
        FINDING_COLUMNS,
        finding_cells,
        finding_json,
    )

    if ctx.invoked_subcommand is not None:
        return
    with _open_store(ctx) as store:
        found = store.list_findings(status=None if status == "all" else status)
    if output_format == "json":
        click.echo(json.dumps([finding_json(f) for f in found], indent=2, sort_keys=True))
        return
    table = Table(*FINDING_COLUMNS, title=f"{len(found)} findings ({status})")
    for finding in found:
        table.add_row(*finding_cells(finding))
    Console(width=None if sys.stdout.isatty() else 200).print(table)


@findings.command("set-status")
@click.argument("finding_id", type=int)
@click.argument("status", type=click.Choice(FINDING_STATUSES))
@click.option("--note", help="Why; kept with the finding.")
@click.pass_context
def findings_set_status(ctx: click.Context, finding_id: int, status: str, note: str | None) -> None:
    """Triage one finding: acknowledged, expected, fixed, or open again.

    Analysis keeps the status while the finding still holds.

    \b
    Example:
        tracker findings set-status 12 expected --note "FP8 KV cache: known trade-off"
    """
    with _open_store(ctx) as store:
        finding = store.set_finding_status(finding_id, status=status, note=note)
    click.echo(f"Finding {finding.id} ({finding.kind}, {finding.series_key}): {finding.status}")


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
    from tracker.report.publish import (
        publish_report,
    )

    with _open_store(ctx) as store, _count_bar("report: analysing") as progress:
        index = publish_report(store, out, generated_at=_now(), on_page=progress)
    click.echo(f"Report: {index}")


@cli.command()
@click.option(
    "--baseline", help="Version to compare against (default: the one before --candidate)."
)
@click.option("--candidate", required=True, help="Version under test, e.g. 2.0.13.")
@click.option(
    "--policy",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="TOML policy: floors and q per pattern, target, failing kinds, acknowledgements file.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
)
@click.option(
    "--strict", is_flag=True, help="Exit 3 when the worst result is suspect or inconclusive."
)
@click.option(
    "--report",
    "report_dir",
    help="Report folder (as seen by the reader) to link each series into, e.g. site.",
)
@click.pass_context
def gate(
    ctx: click.Context,
    baseline: str | None,
    candidate: str,
    policy: Path | None,
    output_format: str,
    strict: bool,
    report_dir: str | None,
) -> None:
    """Gate a release: exit 1 when the candidate regressed against the baseline.

    Exit codes: 0 no regression (improvements never fail; acknowledged ones are
    listed); 1 at least one regression; 2 usage, configuration or data error
    (unknown version, no series in common); 3 only with --strict, when the worst
    result is suspect or inconclusive. Markdown also goes to $GITHUB_STEP_SUMMARY
    when that is set. Nothing is stored: findings and their triage stay as they are.

    \b
    Example:
        tracker gate --baseline 2.0.12 --candidate 2.0.13 --format markdown
        tracker gate --candidate 2.0.13 --policy gate.toml --strict --report site
    """
    from tracker.gate.decision import run_gate
    from tracker.gate.output import gate_json, gate_markdown
    from tracker.gate.policy import GatePolicy, load_policy

    rules = load_policy(policy) if policy is not None else GatePolicy()
    with _open_store(ctx) as store:
        result = run_gate(
            store,
            rules,
            candidate=candidate,
            baseline=baseline,
            today=datetime.now(UTC).date(),
            strict=strict,
        )
    markdown = gate_markdown(result, report=report_dir)
    if output_format == "json":
        click.echo(gate_json(result, report=report_dir))
    elif output_format == "markdown":
        click.echo(markdown, nl=False)
    else:
        _echo_gate_table(result)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file and output_format == "markdown":
        with open(summary_file, "a", encoding="utf-8") as stream:
            stream.write(markdown + "\n")
    ctx.exit(result.exit_code)


def _echo_gate_table(result: GateResult) -> None:
    from tracker.gate.output import (
        GATE_COLUMNS,
        gate_cells,
        settings_lines,
    )

    console = Console(width=None if sys.stdout.isatty() else 200)
    console.print(result.summary, markup=False, highlight=False)
    if result.items:
        table = Table(*GATE_COLUMNS)
        for item in result.items:
            table.add_row(*gate_cells(item))
        console.print(table)
    for line in settings_lines(result):
        console.print(line, markup=False, highlight=False)


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
    """Write seeded example data, ingest it through ingest/demo.toml, analyse, report, gate.

    The example data (LoadGen runs, AIPerf sweeps, MLPerf-layout rounds) follows
    the public figures of an optimised serving stack and MLPerf rounds; all of it
    is labelled example data. The demo uses its own database, OUT/demo.db, made
    afresh each time, unless --database-url is given on the command line. It ends
    by gating the newest example version, which has a planted regression: it
    prints "gate: 1 (...)" but the demo itself exits 0.

    \b
    Example:
        tracker demo --out /tmp/tracker-demo
    """
    from tracker.analyze.summary import (
        summary_lines,
    )
    from tracker.demo.run import run_demo
    from tracker.gate.output import gate_cells

    root = ctx.find_root()
    if root.get_parameter_source("database_url") != click.core.ParameterSource.COMMANDLINE:
        if out.exists():
            shutil.rmtree(out / "data", ignore_errors=True)
            for name in ("demo.db", "demo.db-wal", "demo.db-shm"):
                (out / name).unlink(missing_ok=True)
        out.mkdir(parents=True, exist_ok=True)
        root.obj = f"sqlite:///{out / 'demo.db'}"
    with _open_store(ctx) as store, _progress("demo") as progress:
        outcome = run_demo(
            store, out, generated_at=_now(), today=datetime.now(UTC).date(), progress=progress
        )
        rows = store.count_rows()["result"]
    click.echo(
        f"Example data: {outcome.runs_written} runs and sweeps written to {outcome.data_dir}; "
        f"{rows} results stored in {store.url}"
    )
    for line in summary_lines(outcome.analysis):
        click.echo(line)
    click.echo(outcome.gate.summary)
    for item in outcome.gate.with_state("failing"):
        click.echo(f"  {' | '.join(gate_cells(item)[1:5])}")
    click.echo(f"Report: {outcome.index_page.resolve()}")
