"""Many processes using a new SQLite database at once migrate it once, and all succeed.

Eight worker processes are started once; for each of 20 fresh database files
they meet at a barrier (each touches a "ready" file, then waits for the test's
"go" file) and then all open the same new file with ``Store.open`` (which
brings the schema to head) and count its rows. Every worker must succeed on
every file, and each file must end with exactly the schema a single process
creates: the tables and indexes once, the revision at head.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tracker.store.facade import Store
from tracker.store.schema import head_revision

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKERS = 8
ROUNDS = 20
TIMEOUT_S = 120.0

_WORKER = """
import sys, time
from pathlib import Path
from tracker.store.facade import Store

folder, name, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for number in range(rounds):
    (folder / f"ready-{number}-{name}").touch()
    while not (folder / f"go-{number}").exists():
        time.sleep(0.001)
    try:
        with Store.open(f"sqlite:///{folder / str(number) / 'tracker.db'}") as store:
            rows = sum(store.count_rows().values())
            print(number, "ok", store.revision(), rows, flush=True)
    except Exception as error:
        print(number, "failed", repr(error), flush=True)
"""


def _schema(path: Path) -> list[tuple[str, str, str, str]]:
    """Every table and index of a SQLite file, with the SQL that made it."""
    connection = sqlite3.connect(path)
    try:
        rows = connection.execute(
            "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master"
            " WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name"
        ).fetchall()
        versions = connection.execute("SELECT version_num FROM alembic_version").fetchall()
    finally:
        connection.close()
    assert versions == [(head_revision(),)], f"{path}: revisions {versions}"
    return rows


def _start_workers(folder: Path) -> list[subprocess.Popen[str]]:
    return [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(folder), f"w{index}", str(ROUNDS)],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index in range(WORKERS)
    ]


def _release_each_round(folder: Path, workers: list[subprocess.Popen[str]]) -> None:
    """Start round n once every worker is waiting at its barrier."""
    deadline = time.monotonic() + TIMEOUT_S
    for number in range(ROUNDS):
        (folder / str(number)).mkdir()
        while len(list(folder.glob(f"ready-{number}-*"))) < WORKERS:
            finished = [w.returncode for w in workers if w.poll() is not None]
            assert not finished, f"a worker exited early ({finished}) before round {number}"
            assert time.monotonic() < deadline, f"workers not ready for round {number}"
            time.sleep(0.005)
        (folder / f"go-{number}").touch()


def test_eight_processes_on_new_files_migrate_each_once(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'reference.db'}"):
        pass
    expected = _schema(tmp_path / "reference.db")
    folder = tmp_path / "rounds"
    folder.mkdir()
    workers = _start_workers(folder)
    try:
        _release_each_round(folder, workers)
        outputs = [worker.communicate(timeout=TIMEOUT_S) for worker in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    for worker, (stdout, stderr) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, stderr
        assert stderr == "", stderr
        lines = stdout.splitlines()
        assert lines == [f"{n} ok {head_revision()} 0" for n in range(ROUNDS)], stdout
    for number in range(ROUNDS):
        assert _schema(folder / str(number) / "tracker.db") == expected, f"round {number}"
