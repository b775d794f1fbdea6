"""The ``tracker`` command line: the only place that prints, reads the environment or exits.

Exit codes (:mod:`tracker.errors`): 0 success; 1 reserved for a failed gate
(regressions found); 2 usage, configuration or data error (``Error: ...`` on
stderr), and any unexpected error (``--debug`` shows its traceback); 3 only for
``gate --strict`` when the worst result is suspect; 130 after Ctrl-C.

One module per command group: :mod:`tracker.cli.ingest` (ingest, pull),
:mod:`tracker.cli.db` (db, export), :mod:`tracker.cli.analyze` (analyze, findings,
report), :mod:`tracker.cli.gate` (gate),
:mod:`tracker.cli.demo` (demo) and :mod:`tracker.cli.platforms` (compare, systems);
:mod:`tracker.cli.common` holds what they share (errors, the store, output files,
progress). This module defines the group, and :func:`main`, the ``tracker`` console script.
"""

from __future__ import annotations

import gc

import click

from tracker import __version__
from tracker.cli import analyze, db, demo, gate, ingest, platforms
from tracker.cli.common import (
    DEBUG,
    DEFAULT_DATABASE_URL,
    TrackerCommandError,
    TrackerGroup,
    add_database_url_option,
    take_database_url,
)

__all__ = ["DEFAULT_DATABASE_URL", "TrackerCommandError", "cli", "main"]


@click.group(cls=TrackerGroup)
@click.version_option(__version__, prog_name="tracker")
@click.option(
    "--database-url",
    envvar="TRACKER_DATABASE_URL",
    default=DEFAULT_DATABASE_URL,
    show_default=True,
    help="SQLAlchemy URL: sqlite:///FILE or postgresql+psycopg://USER@HOST/DB "
    "(also TRACKER_DATABASE_URL; after the command's name too). Only ingest, pull, demo "
    "and db upgrade create a missing SQLite file.",
)
@click.option(
    "--debug",
    is_flag=True,
    envvar="TRACKER_DEBUG",
    help="Show the traceback of an unexpected error (a bug of the tracker), to report it.",
)
@click.pass_context
def cli(ctx: click.Context, database_url: str, debug: bool) -> None:
    """Track MLPerf-style benchmark results across software versions.

    \b
    Example:
        tracker ingest runs/2.0.13 --kind loadgen --software-version 2.0.13 --system node-a
        tracker report --out site/
    """
    ctx.meta[DEBUG] = debug
    source = ctx.get_parameter_source("database_url")
    take_database_url(ctx, source == click.core.ParameterSource.COMMANDLINE, database_url)


for _command in (
    db.db,
    ingest.ingest,
    ingest.pull,
    db.export,
    analyze.analyze,
    analyze.findings,
    analyze.report,
    gate.gate,
    demo.demo,
    platforms.systems,
    platforms.compare,
):
    cli.add_command(_command)
add_database_url_option(cli)  # `tracker ingest --database-url URL ...` works as well


def main() -> None:
    """The ``tracker`` command (console script and ``python -m tracker``): :func:`cli`, then
    a quicker exit.

    When the command is done, whatever it leaves is put out of the cyclic garbage
    collector's reach (``gc.freeze``), so that Python's shutdown does not walk every
    object of the modules the command loaded (SQLAlchemy, SQLModel, pydantic...) once
    more before freeing them: 0.12 s of CPU off an ingest
    (``benchmarks/bench_mlperf_ingest.py``). Nothing else changes: exit code, output,
    ``atexit`` handlers and finalizers are as without it.
    Tests run :func:`cli` in their own process instead, whose collector must keep working.
    """
    try:
        cli()  # standalone: it ends by raising SystemExit with the command's exit code
    finally:
        gc.freeze()
