"""``tracker demo``: seeded example data, ingested, analysed, reported and gated end to end."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click

from tracker.cli.common import (
    DATABASE_URL_GIVEN,
    database_target,
    echo_label,
    now,
    open_store,
    progress_bar,
    refuse_database_overlap,
    writing_into,
)
from tracker.store import DatabaseTarget


@click.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("demo"),
    show_default=True,
    help="Folder for the example data (data/), database (demo.db) and report (site/).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Let the report take over a site/ folder the tracker did not make (see `tracker "
    "report --force`).",
)
@click.pass_context
def demo(ctx: click.Context, out: Path, force: bool) -> None:
    """Write seeded example data, ingest it through jobs/demo.toml, analyse, report, gate.

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
    from tracker.analyze.summary import summary_lines
    from tracker.demo import prepare_demo_folder, run_demo
    from tracker.gate.output import issue_line

    root = ctx.find_root()
    own_database = not root.meta.get(DATABASE_URL_GIVEN, False)
    if not own_database:
        for folder in (out / "site", out / "data"):
            refuse_database_overlap(database_target(ctx), folder, folder=True)
    with writing_into(out):
        prepare_demo_folder(out, fresh_database=own_database, force=force)
    if own_database:
        root.obj = DatabaseTarget(f"sqlite:///{out / 'demo.db'}")
    with open_store(ctx, create=True, memory=True) as store, progress_bar("demo") as progress:
        outcome = run_demo(
            store,
            out,
            generated_at=now(),
            today=datetime.now(UTC).date(),
            progress=progress,
            force=force,
        )
        rows = store.count_rows()["result"]
    echo_label(
        f"Example data: {outcome.runs_written} runs and sweeps written to {outcome.data_dir}; "
        f"{rows} results stored in {store.url}"
    )
    for line in summary_lines(outcome.analysis):
        echo_label(line)
    echo_label(outcome.gate.summary)
    for issue in outcome.gate.issues_in("failing"):
        echo_label(f"  {issue_line(issue)}")
    echo_label(f"Report: {outcome.index_page.resolve()}")
