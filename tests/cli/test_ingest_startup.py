"""`tracker ingest FOLDER` imports what reading and storing the folder needs, nothing more:
no network client, no migration tool (the database is new, or at head), no statistics or
template library, and only the readers of the kind it reads (checked in a fresh process,
as ``tests/cli/test_startup.py`` checks ``--help``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

NOT_FOR_A_FOLDER = ("httpx", "alembic", "numpy", "scipy", "jinja2")
"""Libraries a folder ingest never needs: downloads, migrations, analysis, the report."""
OTHER_THAN_MLPERF = (
    "tracker.formats.serving.read",
    "tracker.formats.microbench.read",
    "tracker.formats.loadgen.read",
    "tracker.formats.mlperf_endpoints.read",
    "tracker.formats.mlperf_training.read",
    "tracker.formats.mlperf_inference.read_parallel",  # read in parts only with more than one job
    "tracker.store.findings",
)
"""Readers (and store modules) an ingest of an MLPerf Inference round does not use."""
PROBE = """
import contextlib, io, json, sys
from tracker.cli import cli
code = 0
with contextlib.redirect_stdout(io.StringIO()):
    try:
        cli(sys.argv[1:], prog_name="tracker")
    except SystemExit as stop:
        code = stop.code
print(json.dumps([code, sorted(m for m in {watched!r} if m in sys.modules)]))
"""


def _loaded(arguments: list[str], watched: tuple[str, ...], cache: Path) -> tuple[int, list[str]]:
    """The exit code of ``tracker ARGUMENTS`` in a fresh process, and which of ``watched``
    modules it imported."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(watched=watched), *arguments],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, "TRACKER_CACHE_DIR": str(cache), "TRACKER_PROGRESS": "none"},
    )
    code, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    return int(code), loaded


@pytest.mark.parametrize("database", ["new", "at head"])
def test_a_round_folder_ingest_imports_no_network_migration_or_report_library(
    database: str, shared_data: Path, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'tracker.db'}"
    if database == "at head":
        assert _loaded(["--database-url", url, "db", "upgrade"], (), tmp_path / "cache")[0] == 0
    folder = shared_data / "mlperf-inference" / "v5.1"
    ingest = ["--database-url", url, "ingest", "--jobs", "1", str(folder)]
    watched = (*NOT_FOR_A_FOLDER, *OTHER_THAN_MLPERF, "tracker.formats.mlperf_inference.read")
    assert _loaded(ingest, watched, tmp_path / "cache") == (
        0,
        ["tracker.formats.mlperf_inference.read"],
    )


def test_a_named_kind_loads_its_reader_alone(loadgen_local: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tracker.db'}"
    labels = ["--software-version", "1.0", "--system", "node-a", "--benchmark", "llama"]
    ingest = ["--database-url", url, "ingest", str(loadgen_local / "Offline"), "--kind", "loadgen"]
    readers = tuple(m for m in OTHER_THAN_MLPERF if m.startswith("tracker.formats"))
    watched = (*NOT_FOR_A_FOLDER, *readers, "tracker.formats.mlperf_inference.read")
    assert _loaded([*ingest, *labels], watched, tmp_path / "cache") == (
        0,
        ["tracker.formats.loadgen.read"],
    )


DATABASE_LIBRARIES = ("sqlalchemy", "sqlmodel", "alembic", "httpx")


def test_an_unchanged_folder_is_recognised_without_the_database_libraries(
    loadgen_local: Path, tmp_path: Path
) -> None:
    """A SQLite file at head answers "is this source stored?" through Python's sqlite3."""
    folder = shutil.copytree(loadgen_local / "Offline", tmp_path / "Offline")
    url = f"sqlite:///{tmp_path / 'tracker.db'}"
    labels = ["--software-version", "1.0", "--system", "node-a", "--benchmark", "llama"]
    ingest = ["--database-url", url, "ingest", str(folder), *labels]
    cache = tmp_path / "cache"
    assert _loaded(ingest, (), cache) == (0, [])
    assert _loaded(ingest, DATABASE_LIBRARIES, cache) == (0, [])
    shutil.rmtree(cache)  # no snapshot: the folder is read, and the store opened to save it
    assert _loaded(ingest, ("sqlalchemy",), cache) == (0, ["sqlalchemy"])


def test_an_unchanged_pull_answered_304_loads_no_database_library(
    shared_data: Path, tmp_path: Path
) -> None:
    from tests.ingest.test_pull import REF, Served, serve

    archive = tmp_path / "round.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        lenovo = shared_data / "mlperf-inference" / "v5.1" / "closed" / "Lenovo"
        tar.add(lenovo, arcname=f"inference_results_v5.1-{REF}/closed/Lenovo")
    url = f"sqlite:///{tmp_path / 'tracker.db'}"
    with serve(Served(archive=archive.read_bytes())) as base_url:
        pull = ["pull", "mlperf-inference", "--round", "v5.1", "--ref", REF, "--base-url", base_url]
        assert _loaded(["--database-url", url, *pull], (), tmp_path / "cache") == (0, [])
        again = _loaded(
            ["--database-url", url, *pull], ("sqlalchemy", "sqlmodel"), tmp_path / "cache"
        )
    assert again == (0, [])
