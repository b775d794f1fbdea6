"""Errors instead of tracebacks, and honest messages (issue 16, items 6 and 7).

Each case runs the real ``tracker`` console script in a subprocess and asserts the
exact lines a user sees: ``Error: ...`` naming the thing and the next step, exit
code 2, no traceback. A reader that closes the pipe early (``tracker gate | head -1``)
leaves the gate's own exit code (0 passed, 1 failed) and prints nothing on stderr.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Mapping
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.conftest import RunTracker
from tests.gate.test_gate import seed
from tests.support.analysis_trees import write_mlperf_result
from tracker.errors import EXIT_DATA_ERROR, EXIT_GATE_FAILED, EXIT_OK
from tracker.store.facade import normalise_database_url
from tracker.store.schema import head_revision

TRACKER = str(Path(sys.executable).with_name("tracker"))
NEXT_STEP = "check --database-url / TRACKER_DATABASE_URL"


def run(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, stdout: int | None = None
) -> subprocess.CompletedProcess[str]:
    """``tracker ARGS`` in a subprocess, in ``cwd``; no ``TRACKER_DATABASE_URL`` unless given."""
    environment = {k: v for k, v in os.environ.items() if k != "TRACKER_DATABASE_URL"}
    environment.update({"COLUMNS": "100", **(env or {})})
    return subprocess.run(
        [TRACKER, *args],
        cwd=cwd,
        env=environment,
        stdout=subprocess.PIPE if stdout is None else stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )


def refused(done: subprocess.CompletedProcess[str], line: str) -> None:
    """Exit 2 and exactly ``line`` on stderr: no traceback, nothing else."""
    assert done.stderr.splitlines() == [line], done.stderr
    assert done.returncode == EXIT_DATA_ERROR


# Item 6: errors, not tracebacks


def test_a_postgresql_database_that_does_not_exist_says_to_create_it(tmp_path: Path) -> None:
    base = os.environ.get("TRACKER_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("TRACKER_TEST_POSTGRES_URL is not set (a PostgreSQL server to ask)")
    name = f"tracker_no_such_{uuid.uuid4().hex[:8]}"
    url = make_url(normalise_database_url(base)).set(database=name)
    shown = url.render_as_string(hide_password=True)
    done = run("--database-url", shown, "db", "current", cwd=tmp_path)
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"Error: cannot open the database {shown}: connection failed: ")
    assert line.endswith(
        f'database "{name}" does not exist; create it first (createdb {name}, or CREATE '
        f"DATABASE as a user allowed to) or {NEXT_STEP}"
    )
    assert "server is running" not in line and done.returncode == EXIT_DATA_ERROR


def test_a_sqlite_url_naming_a_text_file_says_it_is_not_a_database(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("meeting notes\n" * 200, "utf-8")
    done = run("--database-url", "sqlite:///notes.txt", "report", "--out", "site", cwd=tmp_path)
    refused(
        done,
        "Error: cannot open the database sqlite:///notes.txt: file is not a database; point "
        "--database-url (or TRACKER_DATABASE_URL) at the tracker's database, or at a new file "
        "name to start one",
    )
    assert (tmp_path / "notes.txt").read_text("utf-8") == "meeting notes\n" * 200


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite database with 2.0.11, 2.0.12 (the same) and 2.0.13 (-8%): a gate that
    passes (2.0.12) and one that fails (2.0.13)."""
    folder = tmp_path_factory.mktemp("versions")
    url = f"sqlite:///{folder / 'tracker.db'}"
    levels = [("2.0.11", 2600.0), ("2.0.12", 2600.0), ("2.0.13", 2392.0)]
    seed(url, folder / "data", levels)
    return url


def test_report_into_a_folder_under_a_file_names_the_file(versions: str, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a folder\n", "utf-8")
    done = run("--database-url", versions, "report", "--out", "notes.txt/site", cwd=tmp_path)
    refused(
        done,
        "Error: cannot write into notes.txt/site: notes.txt is a file, not a folder; choose "
        "another --out: a folder that exists, or can be made, and can be written",
    )


@pytest.mark.skipif(
    os.geteuid() == 0, reason="root writes into a mode-0o500 folder anyway: nothing to refuse"
)
def test_report_into_a_folder_it_cannot_write_says_so(versions: str, tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        done = run("--database-url", versions, "report", "--out", "locked/site", cwd=tmp_path)
    finally:
        locked.chmod(0o700)
    (line,) = done.stderr.splitlines()
    assert line.startswith("Error: cannot write into locked/site: Permission denied")
    assert line.endswith(
        "choose another --out: a folder that exists, or can be made, and can be written"
    )
    assert done.returncode == EXIT_DATA_ERROR


@pytest.mark.parametrize(("candidate", "code"), [("2.0.12", EXIT_OK), ("2.0.13", EXIT_GATE_FAILED)])
def test_a_closed_pipe_keeps_the_gates_exit_code(
    versions: str, tmp_path: Path, candidate: str, code: int
) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the gate writes (`| head -1` at its end)
    try:
        done = run(
            "--database-url",
            versions,
            "gate",
            "--candidate",
            candidate,
            cwd=tmp_path,
            stdout=write_end,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (code, "")


# Item 7: messages that say what is so


def test_kind_aiperf_on_a_loadgen_folder_says_which_kind_fits(
    loadgen_local: Path, tmp_path: Path
) -> None:
    source = str(loadgen_local / "Offline")
    done = run(
        "--database-url", "sqlite:///t.db", "ingest", source, "--kind", "aiperf",
        "--software-version", "1.0", "--system", "node-a", cwd=tmp_path,
    )  # fmt: skip
    refused(
        done,
        f"Error: {source}: nothing to ingest, no aiperf results here (looked for "
        "profile_export_aiperf.json (AIPerf run folders, concurrency_N/ sweeps)); the files "
        "look like loadgen results (mlperf_log_summary.txt or mlperf_log_detail.txt): pass "
        '--kind loadgen (kind = "loadgen" in an ingest job), or leave it out',
    )


def test_an_empty_folder_is_nothing_to_ingest_whatever_the_kind(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    line = (
        "Error: empty: nothing to ingest, no files in it; give the folder that holds the "
        "result files (or the runs' folders)"
    )
    for kind in ("loadgen", "auto"):
        done = run(
            "--database-url", "sqlite:///t.db", "ingest", "empty", "--kind", kind,
            "--software-version", "1.0", "--system", "node-a", cwd=tmp_path,
        )  # fmt: skip
        refused(done, line)


def test_a_sqlite_file_in_a_missing_folder_names_the_folder(
    loadgen_local: Path, tmp_path: Path
) -> None:
    done = run(
        "--database-url", "sqlite:///nosuch/t.db", "ingest", str(loadgen_local / "Offline"),
        "--software-version", "1.0", "--system", "node-a", cwd=tmp_path,
    )  # fmt: skip
    refused(
        done,
        "Error: cannot open the database sqlite:///nosuch/t.db: the folder nosuch does not "
        f"exist; create it (mkdir -p nosuch) or {NEXT_STEP}",
    )
    assert not (tmp_path / "nosuch").exists()


def test_a_mysql_url_names_the_supported_databases(tmp_path: Path) -> None:
    done = run(
        "--database-url", "mysql://tracker@db.example/results", "db", "current", cwd=tmp_path
    )
    refused(
        done,
        "Error: database URL 'mysql://tracker@db.example/results' is not a SQLite or PostgreSQL "
        "database: the tracker supports only these two (not mysql); use sqlite:///FILE or "
        "postgresql+psycopg://USER@HOST/DB",
    )


def test_a_jobs_defaults_are_not_reported_as_flags(tmp_path: Path) -> None:
    write_mlperf_result(tmp_path / "round", "gb300", nodes=1, per_node=4, tokens_per_s=40000.0)
    (tmp_path / "job.toml").write_text(
        '[defaults]\nsoftware = "stack"\nsystem = "node-8x"\naccelerators = 8\n\n'
        '[[source]]\nlocation = "round"\nkind = "mlperf-inference"\nsoftware_version = "v6.0"\n',
        "utf-8",
    )
    done = run(
        "--database-url", "sqlite:///t.db", "ingest", "job.toml", "--benchmark", "deepseek-r1",
        cwd=tmp_path,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (EXIT_OK, "")
    assert done.stdout.splitlines() == [
        "round: 1 run (mlperf-inference), 1 result stored",
        "  note: --benchmark does not apply to an MLPerf round (its files name it); ignored",
    ]


def test_database_url_after_the_command_name_is_used(loadgen_local: Path, tmp_path: Path) -> None:
    source = str(loadgen_local / "Offline")
    done = run(
        "ingest", "--database-url", "sqlite:///after.db", source, "--benchmark", "resnet50",
        "--software-version", "1.0", "--system", "node-a", cwd=tmp_path,
        env={"TRACKER_DATABASE_URL": "sqlite:///from-environment.db"},
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (EXIT_OK, "")
    assert done.stdout.splitlines() == [f"{source}: 1 run (loadgen), 1 result stored"]
    assert (tmp_path / "after.db").is_file() and not (tmp_path / "from-environment.db").exists()


def test_database_url_before_or_after_the_command_name_and_from_the_environment(
    run_tracker: RunTracker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("env.db", "group.db", "command.db"):
        (tmp_path / name).touch()  # empty databases: `db current` says which it opened
    env = {"TRACKER_DATABASE_URL": "sqlite:///env.db"}
    for args, shown in (
        (["db", "current"], "sqlite:///env.db"),
        (["--database-url", "sqlite:///group.db", "db", "current"], "sqlite:///group.db"),
        (["db", "current", "--database-url", "sqlite:///command.db"], "sqlite:///command.db"),
        (["--database-url", "sqlite:///group.db", "db", "--database-url", "sqlite:///command.db",
          "current"], "sqlite:///command.db"),
    ):  # fmt: skip
        done = run_tracker(args, env=env)
        assert done.stdout == f"{shown}: empty (no schema yet; run `tracker db upgrade`)\n", args


def test_a_database_a_newer_tracker_migrated_is_refused_untouched(
    run_tracker: RunTracker, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'newer.db'}"
    assert run_tracker(["--database-url", url, "db", "upgrade"]).exit_code == EXIT_OK
    with sqlite3.connect(tmp_path / "newer.db") as connection:
        connection.execute("UPDATE alembic_version SET version_num = 'f00dfeedf00d'")
    head = head_revision()
    current = run_tracker(["--database-url", url, "db", "current"])
    assert current.stdout == (
        f"{url}: revision f00dfeedf00d (newer than this tracker, whose head is {head}: "
        "a newer tracker wrote it)\n"
    )
    done = run_tracker(["--database-url", url, "gate", "--candidate", "1.0"])
    assert (done.exit_code, done.stderr) == (
        EXIT_DATA_ERROR,
        f"Error: the database {url} is at schema revision f00dfeedf00d, which this tracker does "
        f"not know (its newest is {head}): a newer tracker migrated it; upgrade the tracker to "
        "use it, or give another --database-url\n",
    )


def test_a_postgresql_driver_other_than_psycopg_is_named(run_tracker: RunTracker) -> None:
    done = run_tracker(["--database-url", "postgresql+asyncpg://u@db.example/t", "db", "current"])
    assert (done.exit_code, done.stderr) == (
        EXIT_DATA_ERROR,
        "Error: database URL 'postgresql+asyncpg://u@db.example/t': the driver "
        "'postgresql+asyncpg' is not supported; the tracker talks to SQLite through Python's "
        "sqlite3 and to PostgreSQL through psycopg 3: use sqlite:///FILE or "
        "postgresql+psycopg://USER@HOST/DB\n",
    )
