"""``tracker demo``: seeded example data, ingested through the demo job, reported.

The demo writes into its own folder (default ``demo/``): ``data/`` holds the
example data in the real formats (LoadGen runs, AIPerf concurrency sweeps and
MLPerf-layout rounds, see :mod:`tracker.demo.data` and :mod:`tracker.demo.serving`),
``site/`` the rendered report. It ingests through ``ingest/demo.toml``, analyses
(storing the findings), renders the report and runs the gate on the newest
version of the example serving stack against the one before, which has a
planted 8% regression (gate verdict 1). Everything it shows is labelled as
example data.

The demo only ever removes what it wrote itself: its ``data/`` folder holds a
marker file (:data:`DEMO_MARKER`) written before anything else, and a later
demo into the same folder removes ``data/`` (and its ``demo.db``) only when
that marker is there; a ``data/`` folder or ``demo.db`` of the user's own stops
the demo with an error that names it (:func:`prepare_demo_folder`).
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from tracker.analyze.run import AnalysisOutcome, run_analysis
from tracker.demo.data import write_demo_data
from tracker.demo.serving import SERVING_VERSIONS, write_mlperf_rounds, write_serving_data
from tracker.errors import ConfigError
from tracker.gate.decision import GateResult, run_gate
from tracker.gate.policy import GatePolicy
from tracker.ingest.run import SourceOutcome, ingest_source, read_job
from tracker.paths import ingest_jobs_dir
from tracker.readers.base import ProgressCallback
from tracker.report.publish import publish_report
from tracker.store.facade import Store

__all__ = [
    "DEMO_DATABASE",
    "DEMO_JOB",
    "DEMO_MARKER",
    "DemoOutcome",
    "prepare_demo_folder",
    "run_demo",
]

DEMO_JOB = "demo.toml"
DEMO_MARKER = ".tracker-demo"
"""The file in ``data/`` that marks the folder as written by ``tracker demo``."""
DEMO_DATABASE = ("demo.db", "demo.db-wal", "demo.db-shm")
"""The demo's own SQLite database (and its journal files) in its folder."""
DEMO_CANDIDATE = SERVING_VERSIONS[-1]
"""The version the demo gates (against the one before it)."""


@dataclass(frozen=True, slots=True)
class DemoOutcome:
    """Where the demo wrote its data and report, and what it stored."""

    data_dir: Path
    index_page: Path
    runs_written: int
    sources: tuple[SourceOutcome, ...]
    analysis: AnalysisOutcome
    gate: GateResult


def run_demo(
    store: Store,
    out_dir: Path,
    *,
    generated_at: str,
    today: date,
    seed: int = 1234,
    progress: ProgressCallback | None = None,
) -> DemoOutcome:
    """Write the example data, ingest it with ``ingest/demo.toml``, analyse, report, gate."""
    data_dir = out_dir / "data"
    _claim(data_dir)
    runs = write_demo_data(data_dir, seed=seed)
    runs += write_serving_data(data_dir, seed=seed)
    runs += write_mlperf_rounds(data_dir)
    _job, specs = read_job(ingest_jobs_dir() / DEMO_JOB, root=data_dir)
    outcomes = []
    for done, spec in enumerate(specs, start=1):
        outcomes.append(ingest_source(store, spec, strict=True))
        if progress is not None:
            progress(done, len(specs), spec.location)
    analysis = run_analysis(store)
    index = publish_report(store, out_dir / "site", generated_at=generated_at)
    gate = run_gate(store, GatePolicy(), candidate=DEMO_CANDIDATE, today=today)
    return DemoOutcome(
        data_dir=data_dir,
        index_page=index,
        runs_written=len(runs),
        sources=tuple(outcomes),
        analysis=analysis,
        gate=gate,
    )


def _mode(path: Path) -> int | None:
    try:
        return os.lstat(path).st_mode
    except FileNotFoundError:
        return None


def _is_demo_data(data_dir: Path) -> bool:
    """Whether ``data_dir`` is a real folder (not a link) holding the demo's marker file."""
    folder, marker = _mode(data_dir), _mode(data_dir / DEMO_MARKER)
    return (
        folder is not None and stat.S_ISDIR(folder) and marker is not None and stat.S_ISREG(marker)
    )


def _not_ours(path: Path, data_dir: Path) -> ConfigError:
    return ConfigError(
        f"{path} was not written by `tracker demo` ({data_dir} has no {DEMO_MARKER} file), "
        "and the demo would replace it: move it away, or give another folder with --out"
    )


def _claim(data_dir: Path) -> None:
    """Make ``data_dir`` the demo's (a new folder, marked); refuse a folder of the user's."""
    if _mode(data_dir) is not None:
        if not _is_demo_data(data_dir):
            raise _not_ours(data_dir, data_dir)
        return
    data_dir.mkdir(parents=True)
    marker = data_dir / DEMO_MARKER
    part = data_dir / f"{DEMO_MARKER}.part"
    part.write_text("Written by `tracker demo`; it removes this folder.\n", encoding="utf-8")
    os.replace(part, marker)


def prepare_demo_folder(out_dir: Path, *, fresh_database: bool) -> None:
    """Remove what an earlier demo wrote into ``out_dir``: its marked ``data/`` folder
    and, with ``fresh_database``, its ``demo.db``; then make ``out_dir/data`` the demo's.

    Raises :class:`~tracker.errors.ConfigError` (nothing removed) when ``data/`` is not
    the demo's, or when ``demo.db`` is there without the demo's ``data/``.
    """
    data_dir = out_dir / "data"
    ours = _is_demo_data(data_dir)
    if _mode(data_dir) is not None and not ours:
        raise _not_ours(data_dir, data_dir)
    databases = [out_dir / n for n in DEMO_DATABASE if _mode(out_dir / n) is not None]
    if fresh_database and databases and not ours:
        raise _not_ours(databases[0], data_dir)
    if ours:
        shutil.rmtree(data_dir)
    for database in databases if fresh_database else []:
        database.unlink()  # a link is removed, never followed
    _claim(data_dir)
