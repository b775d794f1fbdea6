"""``tracker report``: the static HTML report of what is stored."""

from __future__ import annotations

from pathlib import Path

import click

from tracker.cli.common import count_bar, echo_label, now, open_store, writing_into


@click.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder to write the static site into.",
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
    target: float | None,
    price_book: Path | None,
    efficiency_floor: float | None,
) -> None:
    """Render the static HTML report (works from file://, no network needed).

    The pages use the settings of the latest stored analysis (interactivity
    target, efficiency floor, price book), or the defaults when none is stored;
    the options override them, and the pages name the settings they used.

    \b
    Example:
        tracker report --out site/ && python -m http.server -d site
        tracker report --out site/ --target-tokens-per-s-per-user 30 --price-book prices.toml
    """
    from tracker.analyze.settings import ReportOverrides, report_settings, settings_line
    from tracker.report.publish import publish_report
    from tracker.stats import parse_price_book

    book = None
    if price_book is not None:
        book = parse_price_book(price_book.read_bytes(), source=str(price_book))
    overrides = ReportOverrides(target, efficiency_floor, book, str(price_book or ""))
    with open_store(ctx) as store:
        chosen = report_settings(store.latest_analysis_settings(), overrides)
        echo_label(settings_line(chosen))
        with count_bar("report: analysing") as progress, writing_into(out):
            index = publish_report(
                store, out, generated_at=now(), overrides=overrides, on_page=progress
            )
    echo_label(f"Report: {index}")
