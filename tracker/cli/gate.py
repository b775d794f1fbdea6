"""Release decisions: ``gate`` and the end-to-end ``demo``.

The gate and demo modules (numpy, scipy, jinja2) are imported inside the
commands, so that ``tracker ingest`` and ``--help`` start fast.
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tracker.cli.common import echo_label, open_store
from tracker.cli.options import format_option, selection_of, selection_options
from tracker.errors import ConfigError
from tracker.text_safety import is_safe_link, terminal_text

if TYPE_CHECKING:
    from tracker.gate.decision import GateResult
    from tracker.records.keys import Selection


@click.command()
@click.option(
    "--baseline", help="Version to compare against (default: the one before --candidate)."
)
@click.option("--candidate", required=True, help="Version under test, e.g. 2.0.13.")
@click.option(
    "--policy",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="TOML policy: floors and q per pattern, target, failing kinds, acknowledgements file.",
)
@format_option("text", "markdown", "json", "junit", "github")
@click.option(
    "--comment",
    is_flag=True,
    help="With --format markdown: a body for one sticky pull-request comment (a hidden "
    "<!-- tracker-gate --> marker first; what fails, a few other issues, missing series "
    "per benchmark).",
)
@click.option(
    "--strict", is_flag=True, help="Exit 3 when the worst result is suspect or inconclusive."
)
@selection_options
@click.option(
    "--verbose", is_flag=True, help="Text: each issue's details, indented under its line."
)
@click.option(
    "--show-missing",
    is_flag=True,
    help="Text: every missing series on a line of its own (default: one line per benchmark).",
)
@click.option(
    "--report",
    "report_dir",
    help="Report folder (as seen by the reader) to link each series into, e.g. site.",
)
@click.option(
    "--report-url",
    help="Where the report is published, e.g. https://ci.example/run/42/site: absolute links "
    "(for $GITHUB_STEP_SUMMARY); replaces --report for the links.",
)
@click.pass_context
def gate(
    ctx: click.Context,
    baseline: str | None,
    candidate: str,
    policy: Path | None,
    output_format: str,
    comment: bool,
    strict: bool,
    select_software: tuple[str, ...],
    select_benchmark: tuple[str, ...],
    select_system: tuple[str, ...],
    verbose: bool,
    show_missing: bool,
    report_dir: str | None,
    report_url: str | None,
) -> None:
    """Gate a release: exit 1 when the candidate regressed against the baseline.

    Findings that share a cause (the points of one sweep, the per-accelerator
    form, the series at the interactivity target) are one issue, one line, what
    fails first; baseline series without a candidate result are summarised per
    benchmark (--show-missing: each on its line). The candidate's scaling
    efficiency below its floor, or fallen since the baseline, fails like a
    regression. --software, --benchmark and --system (repeatable, shell globs)
    gate one project, benchmark or system at a time. A stored finding triaged as
    acknowledged or expected counts as acknowledged. Colour only on a terminal
    (NO_COLOR turns it off).

    Formats: text (one line per issue), markdown (for $GITHUB_STEP_SUMMARY;
    with --comment, a sticky pull-request comment's body), json (every item),
    junit (one test case per gated series: GitLab, Jenkins, Buildkite) and
    github (::error and ::warning annotations).

    Exit codes: 0 no regression (improvements never fail; acknowledged ones are
    listed); 1 at least one regression; 2 usage, configuration or data error
    (unknown version, no series in common); 3 only with --strict, when the worst
    result is suspect or inconclusive. Markdown also goes to $GITHUB_STEP_SUMMARY
    when that is set (a summary file that cannot be written is a warning on
    stderr; the exit code stays the gate's). Nothing is stored: findings and
    their triage stay as they are.

    \b
    Example:
        tracker gate --baseline 2.0.12 --candidate 2.0.13 --format markdown
        tracker gate --candidate 2.0.13 --policy gate.toml --strict --report site
        tracker gate --software mylib --candidate 1.1.0 --verbose
        tracker gate --candidate 2.0.13 --format junit > gate-junit.xml
        tracker gate --candidate 2.0.13 --format markdown --report-url https://ci.example/site
    """
    if comment and output_format != "markdown":
        raise click.UsageError("--comment goes with --format markdown")
    _check_links(report_url, report_dir)
    chosen = selection_of(select_software, select_benchmark, select_system)
    result = _decide(ctx, policy, candidate, baseline, strict=strict, selection=chosen)
    _echo_gate(result, output_format, links=report_url or report_dir, comment=comment,
               verbose=verbose, show_missing=show_missing)  # fmt: skip
    ctx.exit(result.exit_code)


def _decide(
    ctx: click.Context,
    policy: Path | None,
    candidate: str,
    baseline: str | None,
    *,
    strict: bool,
    selection: Selection,
) -> GateResult:
    """Read the policy (its warnings go to stderr) and decide the gate over the store."""
    from tracker.gate.decision import run_gate
    from tracker.gate.policy import GatePolicy, load_policy, policy_warnings

    rules = load_policy(policy) if policy is not None else GatePolicy()
    for warning in policy_warnings(rules):
        echo_label(f"Warning: {warning}", err=True)
    with open_store(ctx, reads_only=True) as store:
        return run_gate(
            store,
            rules,
            candidate=candidate,
            baseline=baseline,
            today=datetime.now(UTC).date(),
            strict=strict,
            selection=selection,
        )


def _echo_gate(
    result: GateResult,
    output_format: str,
    *,
    links: str | None,
    comment: bool,
    verbose: bool,
    show_missing: bool,
) -> None:
    """Print the verdict in ``output_format``; Markdown (not a comment's body) also goes to
    ``$GITHUB_STEP_SUMMARY`` when that is set."""
    from tracker.gate.output import gate_github, gate_json, gate_junit, gate_markdown

    if output_format == "json":
        click.echo(gate_json(result, report=links))
    elif output_format == "junit":
        click.echo(gate_junit(result), nl=False)
    elif output_format == "github":
        click.echo(gate_github(result), nl=False)
    elif output_format == "markdown":
        markdown = gate_markdown(result, report=links, comment=comment)
        click.echo(markdown, nl=False)
        summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary_file and not comment:
            _append_step_summary(summary_file, markdown)
    else:
        _echo_gate_text(result, verbose=verbose, show_missing=show_missing)


def _check_links(report_url: str | None, report_dir: str | None) -> None:
    """Refuse a link base that is not ``http(s)://`` (``--report-url``) or a relative
    folder (``--report``): ``javascript:`` and the like never reach the Markdown."""
    if report_url is not None and (
        not report_url.lower().startswith(("http://", "https://")) or not is_safe_link(report_url)
    ):
        raise ConfigError(
            f"--report-url {report_url!r} is not a URL the summary may link to (http or "
            "https only): give one such as https://ci.example/site (or --report DIR for a "
            "folder)"
        )
    if report_dir is not None and not is_safe_link(report_dir):
        raise ConfigError(
            f"--report {report_dir!r} is not a folder path: give the report's folder as the "
            "reader reaches it, e.g. site (or --report-url https://... for a published one)"
        )


def _append_step_summary(summary_file: str, markdown: str) -> None:
    """Append to GitHub's step summary (appending is its contract); a failure is a warning."""
    try:
        with open(summary_file, "a", encoding="utf-8") as stream:
            stream.write(markdown + "\n")
    except OSError as error:
        echo_label(
            f"Warning: cannot append the gate's summary to $GITHUB_STEP_SUMMARY "
            f"({summary_file}): {error.strerror or error}; the verdict above stands",
            err=True,
        )


def use_colour() -> bool:
    """Colour only on a terminal, and never when ``NO_COLOR`` is set (no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


STATE_COLOURS = {
    "failing": "red",
    "suspect": "yellow",
    "inconclusive": "yellow",
    "acknowledged": "cyan",
    "improvement": "green",
}


def _echo_gate_text(result: GateResult, *, verbose: bool, show_missing: bool) -> None:
    """One physical line per issue (see :func:`tracker.gate.output.gate_text`)."""
    from tracker.gate.output import gate_text

    colour = use_colour()
    for line in gate_text(result, verbose=verbose, show_missing=show_missing):
        text = terminal_text(str(line))
        if colour and line.state in STATE_COLOURS:
            head = click.style(line.state, fg=STATE_COLOURS[line.state], bold=True)
            text = head + text[len(line.state) :]
        click.echo(text, color=colour)
