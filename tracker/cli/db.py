"""The database itself: ``tracker db`` (upgrade, current) and ``tracker export``.

``export`` writes every stored result as CSV or JSON.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from dataclasses import asdict, fields
from pathlib import Path
from typing import IO

import click

from tracker.cli.common import (
    atomic_output,
    database_target,
    echo_label,
    open_store,
    refuse_database_overlap,
)
from tracker.cli.options import format_option
from tracker.records.results import ExportRow
from tracker.text_safety import csv_cell


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
    with open_store(ctx, upgrade=False, reads_only=True) as store:
        status = store.schema_status()
        revision, head = status.revision, status.head
        if revision is None:
            echo_label(f"{store.url}: empty (no schema yet; run `tracker db upgrade`)")
        elif not status.known:
            echo_label(
                f"{store.url}: revision {revision} (newer than this tracker, whose head is "
                f"{head}: a newer tracker wrote it)"
            )
        else:
            state = "head" if revision == head else f"behind head {head}"
            echo_label(f"{store.url}: revision {revision} ({state})")


@click.command()
@format_option("json", "csv")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    help="File to write; - (the default) is stdout.",
)
@click.pass_context
def export(ctx: click.Context, output_format: str, out: Path | None) -> None:
    """Print every stored result, one object (JSON) or row (CSV) per result.

    --out is written under a temporary name beside it and renamed at the end:
    a failed export (disk full) leaves no partial file. It may not be the
    database itself, nor a device, a FIFO or a link (- is stdout).

    \b
    Example:
        tracker export --format json | jq '.[] | select(.valid == false)'
        tracker export --format csv --out results.csv
    """
    if out == Path("-"):
        out = None
    if out is not None:
        refuse_database_overlap(database_target(ctx), out, reader="export")
    with open_store(ctx, reads_only=True) as store:
        rows = store.iter_export_rows()
        if out is None:
            _write_export(rows, sys.stdout, output_format)
        else:
            with atomic_output(out) as stream:
                _write_export(rows, stream, output_format)


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
