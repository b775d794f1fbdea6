"""Reading the stored results: ``analyze``, ``findings`` and ``report``.

The analysis and report modules (numpy, scipy, jinja2) are imported inside the
commands, so that ``tracker ingest`` and ``--help`` start fast.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from tracker.cli.common import (
    analysis_lines,
    count_bar,
    database_target,
    echo_label,
    now,
    open_store,
    refuse_database_overlap,
    writing_into,
)
from tracker.cli.options import format_option, selection_of, selection_options, terminal_width
from tracker.errors import ConfigError
from tracker.records.findings import FINDING_STATUSES
from tracker.text_safety import terminal_text

F = TypeVar("F", bound=Callable[..., Any])

MAX_FINDING_ID = 2**63 - 1
"""The largest id a database row can have (SQLite and PostgreSQL BIGINT)."""


def _settings_options(*, analyze: bool) -> Callable[[F], F]:
    """The options of the analysis settings (interactivity target, price book, efficiency
    floor): ``tracker analyze`` sets them, with their defaults; ``tracker report``
    overrides those of the latest stored analysis."""
    latest = "the latest `tracker analyze`'s"
    options = (
        click.option(
            "--target-tokens-per-s-per-user",
            "target",
            type=click.FloatRange(min=0.0, min_open=True),
            default=50.0 if analyze else None,
            show_default=analyze,
            help="Interactivity target where sweeps are read (50 tokens/s/user = 20 ms per token)."
            if analyze
            else f"Interactivity target [default: {latest}, else 50].",
        ),
        click.option(
            "--price-book",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help='TOML file of accelerator model = $/hour (e.g. "NVIDIA B200-SXM-180GB" = 6.25).'
            if analyze
            else f"TOML file of accelerator model = $/hour [default: {latest}].",
        ),
        click.option(
            "--efficiency-floor",
            type=click.FloatRange(min=0.0, max=1.0, min_open=True),
            default=0.90 if analyze else None,
            show_default=analyze,
            help="Scaling efficiency below this is a finding."
            if analyze
            else f"Scaling efficiency floor [default: {latest}, else 0.9].",
        ),
    )

    def with_options(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return with_options


def _price_book(path: Path | None) -> dict[str, float] | None:
    """The price book of ``--price-book``, if given."""
    from tracker.analyze.settings import read_settings_file
    from tracker.stats import parse_price_book

    if path is None:
        return None
    return parse_price_book(read_settings_file(path, "price book"), source=str(path))


@click.command()
@_settings_options(analyze=True)
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
    from tracker.analyze.run import run_analysis
    from tracker.analyze.settings import AnalysisSettings
    from tracker.analyze.summary import summary_lines

    book = _price_book(price_book)
    settings = AnalysisSettings(
        target_tokens_per_s_per_user=target, efficiency_floor=efficiency_floor
    )
    source = "" if price_book is None else str(price_book)
    with open_store(ctx) as store, analysis_lines(f"analysing the stored results in {store.url}"):
        outcome = run_analysis(store, policy=settings, price_book=book, price_book_source=source)
    for line in summary_lines(outcome):
        echo_label(line)


@click.group(invoke_without_command=True)
@click.option(
    "--status",
    type=click.Choice([*FINDING_STATUSES, "all"]),
    default="open",
    show_default=True,
    help="Only findings with this triage state.",
)
@format_option("text", "json")
@selection_options
@click.pass_context
def findings(
    ctx: click.Context,
    status: str,
    output_format: str,
    select_software: tuple[str, ...],
    select_benchmark: tuple[str, ...],
    select_system: tuple[str, ...],
) -> None:
    """List the stored findings with their evidence and triage state.

    Findings that share a cause (the points of one sweep, the per-accelerator
    form, the series at the interactivity target) are one issue, one line, under
    the id of its first finding (the id the gate and the report show); the JSON
    lists every finding, each naming its issue and the issue's members. A scaling
    finding reads "E 0.97 → 0.84 (floor 0.90), 8 → 32 accelerators". On a
    terminal the series is cut to fit its width; piped, lines are whole.
    --software, --benchmark and --system (repeatable, shell globs) pick findings.

    \b
    Example:
        tracker findings
        tracker findings --status all --format json | jq '.[] | select(.kind == "regression")'
        tracker findings --software mylib --benchmark 'llama*'
    """
    if ctx.invoked_subcommand is not None:
        return
    from tracker.analyze.summary import (
        finding_json,
        finding_lines,
        finding_selected,
        group_finding_issues,
    )

    selection = selection_of(select_software, select_benchmark, select_system)
    with open_store(ctx, reads_only=True) as store:
        stored = store.list_findings(status=None if status == "all" else status)
    found = [f for f in stored if finding_selected(f, selection)]
    if output_format == "json":
        docs = [finding_json(f, issue) for issue in group_finding_issues(found) for f in issue]
        docs.sort(key=lambda d: int(d["id"]))
        click.echo(json.dumps(docs, indent=2, sort_keys=True))
        return
    for line in finding_lines(found, status, terminal_width()):
        click.echo(terminal_text(line))


@findings.command("set-status")
@click.argument("finding_id", type=int)
@click.argument("status", type=click.Choice(FINDING_STATUSES))
@click.option("--note", help="Why (and who); kept with the finding, shown by the gate.")
@click.option(
    "--acknowledgements",
    "acknowledgements_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also append the issue to this acknowledgements file (TOML, made when missing) "
    "for version control; needs --note and acknowledged or expected.",
)
@click.pass_context
def findings_set_status(
    ctx: click.Context,
    finding_id: int,
    status: str,
    note: str | None,
    acknowledgements_file: Path | None,
) -> None:
    """Triage one issue: acknowledged, expected, fixed, or open again.

    The status applies to the finding and the other findings of its issue (the
    line `tracker findings` shows under its id). Analysis keeps the status while
    a finding still holds. `tracker gate` counts a finding of the candidate
    acknowledged or expected as acknowledged, with the note as the reason; an
    entry of the gate's acknowledgements file wins where both apply.

    \b
    Example:
        tracker findings set-status 12 expected --note "FP8 KV cache: known trade-off"
        tracker findings set-status 12 acknowledged --note "perf-team: new scheduler" \\
            --acknowledgements gate/acknowledgements.toml
    """
    from tracker.analyze.summary import group_finding_issues, issue_text
    from tracker.gate.policy import TRIAGED, acknowledgement_entries, append_entries

    if not 1 <= finding_id <= MAX_FINDING_ID:
        raise ConfigError(
            f"no finding has id {finding_id}; list them with `tracker findings --status all`"
        )
    if acknowledgements_file is not None and (status not in TRIAGED or not (note or "").strip()):
        raise ConfigError(
            "--acknowledgements needs a status of acknowledged or expected and a --note "
            "(the entry's reason)"
        )
    if acknowledgements_file is not None:
        refuse_database_overlap(database_target(ctx), acknowledgements_file, "--acknowledgements")
    with open_store(ctx) as store:
        issues = group_finding_issues(store.list_findings())
        issue = next((i for i in issues if finding_id in {f.id for f in i}), None)
        if issue is None:
            store.set_finding_status(finding_id, status=status, note=note)  # names the error
            raise ConfigError(f"no finding has id {finding_id}")
        total = 0
        if acknowledgements_file is not None:  # first: a file that cannot be written stops it
            entries = acknowledgement_entries(issue, reason=note or "", title=issue_text(issue))
            total = append_entries(acknowledgements_file, entries)
        done = [store.set_finding_status(f.id, status=status, note=note) for f in issue]
    head = next(f for f in done if f.id == finding_id)
    more = f" and {len(done) - 1} more of its issue" if len(done) > 1 else ""
    echo_label(f"Finding {head.id}{more} ({head.kind}, {issue_text(issue)}): {head.status}")
    if acknowledgements_file is not None:
        echo_label(
            f"Appended to {acknowledgements_file} "
            f"({total} {'entry' if total == 1 else 'entries'} now): commit it; "
            f"the gate reads it through the policy's acknowledgements key"
        )


@click.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder to write the static site into: a new or empty one, or one the tracker made.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Write into a non-empty folder the tracker did not make; files of yours there are "
    "kept, and one where the report writes a file stops it.",
)
@_settings_options(analyze=False)
@selection_options
@click.pass_context
def report(
    ctx: click.Context,
    out: Path,
    force: bool,
    target: float | None,
    price_book: Path | None,
    efficiency_floor: float | None,
    select_software: tuple[str, ...],
    select_benchmark: tuple[str, ...],
    select_system: tuple[str, ...],
) -> None:
    """Render the static HTML report (works from file://, no network needed).

    The pages use the settings of the latest stored analysis (interactivity
    target, efficiency floor, price book), or the defaults when none is stored;
    the options override them, and the pages name the settings they used.

    --out belongs to the tracker once it made it (its .report-files marker lists
    what it wrote); a non-empty folder without that marker is refused unless
    --force. A render replaces or removes only files it wrote that are unchanged
    since, never the database nor anything outside --out. --software,
    --benchmark and --system (repeatable, shell globs) render the report of the
    series they pick (one project's site).

    \b
    Example:
        tracker report --out site/ && python -m http.server -d site
        tracker report --out site/ --target-tokens-per-s-per-user 30 --price-book prices.toml
    """
    from tracker.analyze.settings import ReportOverrides, report_settings, settings_line
    from tracker.report.publish import publish_report

    refuse_database_overlap(database_target(ctx), out, folder=True)
    book = _price_book(price_book)
    overrides = ReportOverrides(target, efficiency_floor, book, str(price_book or ""))
    with open_store(ctx, reads_only=True) as store:
        chosen = report_settings(store.latest_analysis_settings(), overrides)
        echo_label(settings_line(chosen))
        with count_bar("report: analysing") as progress, writing_into(out):
            index = publish_report(
                store,
                out,
                generated_at=now(),
                overrides=overrides,
                on_page=progress,
                force=force,
                selection=selection_of(select_software, select_benchmark, select_system),
            )
    echo_label(f"Report: {index}")
