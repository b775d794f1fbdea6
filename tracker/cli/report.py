"""``tracker report``: the static HTML report of what is stored."""

from __future__ import annotations

from pathlib import Path

import click

from tracker.cli.common import (
    count_bar,
    database_target,
    echo_label,
    now,
    open_store,
    refuse_database_overlap,
    writing_into,
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
@click.option(
    "--target-tokens-per-s-per-user",
    "target",
    type=click.FloatRange(min=0.0, min_open=True),
    help="Interactivity target [default: the latest `tracker analyze`'s, else 50].",
)
@click.option(
    "--price-book",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="TOML file of accelerator model = $/hour [default: the latest `tracker analyze`'s].",
)
@click.option(
    "--efficiency-floor",
    type=click.FloatRange(min=0.0, max=1.0, min_open=True),
    help="Scaling efficiency floor [default: the latest `tracker analyze`'s, else 0.9].",
)
@click.pass_context
def report(
    ctx: click.Context,
    out: Path,
    force: bool,
    target: float | None,
    price_book: Path | None,
    efficiency_floor: float | None,
) -> None:
    """Render the static HTML report (works from file://, no network needed).

    The pages use the settings of the latest stored analysis (interactivity
    target, efficiency floor, price book), or the defaults when none is stored;
    the options override them, and the pages name the settings they used.

    --out belongs to the tracker once it made it (its .report-files marker lists
    what it wrote); a non-empty folder without that marker is refused unless
    --force. A render replaces or removes only files it wrote that are unchanged
    since, never the database nor anything outside --out.

    \b
    Example:
        tracker report --out site/ && python -m http.server -d site
        tracker report --out site/ --target-tokens-per-s-per-user 30 --price-book prices.toml
    """
    from tracker.analyze.settings import (
        ReportOverrides,
        read_settings_file,
        report_settings,
        settings_line,
    )
    from tracker.report.publish import publish_report
    from tracker.stats import parse_price_book

    refuse_database_overlap(database_target(ctx), out, folder=True)
    book = None
    if price_book is not None:
        book = parse_price_book(
            read_settings_file(price_book, "price book"), source=str(price_book)
        )
    overrides = ReportOverrides(target, efficiency_floor, book, str(price_book or ""))
    with open_store(ctx, reads_only=True) as store:
        chosen = report_settings(store.latest_analysis_settings(), overrides)
        echo_label(settings_line(chosen))
        with count_bar("report: analysing") as progress, writing_into(out):
            index = publish_report(
                store, out, generated_at=now(), overrides=overrides, on_page=progress, force=force
            )
    echo_label(f"Report: {index}")
