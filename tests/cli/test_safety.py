"""Issue 21, through the command line (in-process): what the CLI writes, refuses and prints.

* 3, 6: ``export --out`` never overwrites the database it reads, and writes
  through a temporary file: a failed write (disk full) leaves no partial file;
* 4: commands that read what an ingest stored refuse a missing SQLite file (and
  do not create it); ``sqlite://`` is refused where nothing would be kept;
* 10: a wrong acknowledgement file and an unwritable ``$GITHUB_STEP_SUMMARY``;
* 14, 15: control characters and Markdown links in labels never reach the
  terminal or the step summary as such;
* 18, 20: ``Error:`` and exit 2, never a traceback or an SQL statement; a path
  in a message is printed once.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from sqlalchemy import text

from tests.conftest import RunTracker
from tracker.demo import SERVING_WORKLOADS, write_aiperf_sweep
from tracker.store.facade import Store

HOSTILE_SYSTEM = "node\x1b]0;pwned\x07 [x](https://evil.test) ![i](https://evil.test/i.png) <b>"
HOSTILE_VERSION = "2.1\x1b[2J\x9b"
ESCAPES = ("\x1b", "\x07", "\x9b")


def _seed(run_tracker: RunTracker, url: str, root: Path, *, system: str = "node-4x") -> None:
    """Three AIPerf sweeps per version; the candidate ``HOSTILE_VERSION`` 8% slower.

    The flags refuse control characters (issue 21, item 19), so the hostile labels are
    written into the database afterwards, as one written before labels were checked
    holds them."""
    _seed_labelled(run_tracker, url, root)
    with Store.open(url) as store, store.engine.begin() as connection:
        connection.execute(
            text("UPDATE software_version SET version = :new WHERE version = :old"),
            {"new": HOSTILE_VERSION, "old": _PLAIN_VERSION},
        )
        connection.execute(
            text("UPDATE system SET key = :key, name = :name WHERE key = :old"),
            {"key": f"/{system}", "name": system, "old": "/node-4x"},
        )


_PLAIN_VERSION = "2.1"


def _seed_labelled(run_tracker: RunTracker, url: str, root: Path) -> None:
    for n, (version, level) in enumerate((("2.0", 2400.0), (_PLAIN_VERSION, 2200.0))):
        folder = root / f"v{n}"
        for trial, noise in enumerate((1.0, 1.004, 0.996)):
            at = level * noise
            points = [(c, at * (1.0 + 0.008 * (50.0 - x)), x) for c, x in ((2, 75.0), (8, 40.0))]
            write_aiperf_sweep(folder / f"trial_{trial}", points, SERVING_WORKLOADS[1])
        done = run_tracker(
            ["--database-url", url, "ingest", str(folder), "--kind", "aiperf"]
            + ["--software", "stack", "--software-version", version, "--system", "node-4x"]
            + ["--accelerators", "4"]
        )
        assert done.exit_code == 0, done.stdout + done.stderr


def _refused(done: Any, *phrases: str) -> None:
    assert done.exit_code == 2, done.stdout + done.stderr
    assert done.stderr.startswith("Error: "), done.stderr
    assert "Traceback" not in done.stderr and "[SQL:" not in done.stderr
    for phrase in phrases:
        assert phrase in done.stderr, done.stderr


@pytest.fixture
def sqlite_db(run_tracker: RunTracker, tmp_path: Path) -> Path:
    database = tmp_path / "e.db"
    _seed(run_tracker, f"sqlite:///{database}", tmp_path / "data")
    return database


# 3 ------------------------------------------------------------------------------------------


def test_export_refuses_to_write_over_the_database_it_reads(
    run_tracker: RunTracker, sqlite_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = sqlite_db.read_bytes()
    (tmp_path / "link.db").symlink_to(sqlite_db)
    monkeypatch.chdir(tmp_path)
    for out in ("e.db", str(sqlite_db), "link.db"):
        done = run_tracker(["--database-url", "sqlite:///e.db", "export", "--out", out])
        _refused(done, "is the database the export reads", "give another file name")
    assert sqlite_db.read_bytes() == before
    done = run_tracker(["--database-url", "sqlite:///e.db", "export", "--out", "results.json"])
    assert done.exit_code == 0 and (tmp_path / "results.json").read_text("utf-8").startswith("[")


# 6 ------------------------------------------------------------------------------------------


def test_a_failed_export_leaves_no_partial_file_and_no_traceback(
    run_tracker: RunTracker,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _seed(run_tracker, database_url, tmp_path / "data")
    out = tmp_path / "out" / "results.csv"
    out.parent.mkdir()
    out.write_text("an earlier export\n", "utf-8")
    from tracker.cli import db as cli_db

    real = cli_db._write_export

    def disk_full(rows: Iterator[Any], stream: IO[str], output_format: str) -> None:
        real(rows, stream, output_format)  # the whole export, then the disk is full
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(cli_db, "_write_export", disk_full)
    done = run_tracker(
        ["--database-url", database_url, "export", "--format", "csv", "--out", str(out)]
    )
    _refused(done, f"cannot write {out}: No space left on device", "nothing was written")
    assert out.read_text("utf-8") == "an earlier export\n"
    assert sorted(p.name for p in out.parent.iterdir()) == ["results.csv"]
    monkeypatch.setattr(cli_db, "_write_export", real)
    done = run_tracker(
        ["--database-url", database_url, "export", "--format", "csv", "--out", str(out)]
    )
    assert done.exit_code == 0, done.stderr
    assert out.read_text("utf-8").startswith("source_kind,")
    assert sorted(p.name for p in out.parent.iterdir()) == ["results.csv"]


# 4 ------------------------------------------------------------------------------------------

READING_COMMANDS = [
    ["report", "--out", "site"],
    ["gate", "--candidate", "2.0"],
    ["findings"],
    ["findings", "set-status", "1", "fixed"],
    ["export"],
    ["analyze"],
    ["db", "current"],
]


@pytest.mark.parametrize("command", READING_COMMANDS, ids=" ".join)
def test_reading_commands_refuse_a_missing_database_and_create_none(
    run_tracker: RunTracker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("the published site", "utf-8")
    done = run_tracker(["--database-url", "sqlite:///missing.db", *command])
    _refused(done, "no database at missing.db; run `tracker ingest` first", "--database-url")
    assert not (tmp_path / "missing.db").exists()
    assert (tmp_path / "site" / "index.html").read_text("utf-8") == "the published site"
    done = run_tracker(["--database-url", "sqlite://", *command])
    _refused(done, "sqlite:// is an in-memory database", "use sqlite:///FILE")


def test_an_empty_database_file_is_no_database_to_report_from(
    run_tracker: RunTracker, tmp_path: Path
) -> None:
    (tmp_path / "empty.db").touch()
    done = run_tracker(
        ["--database-url", f"sqlite:///{tmp_path / 'empty.db'}", "report"]
        + ["--out", str(tmp_path / "site")]
    )
    _refused(done, "holds no tracker data", "run `tracker ingest` first")
    assert not (tmp_path / "site").exists()


def test_storing_commands_refuse_an_in_memory_database(
    run_tracker: RunTracker, tmp_path: Path
) -> None:
    for command in (["ingest", str(tmp_path)], ["db", "upgrade"]):
        _refused(run_tracker(["--database-url", "sqlite://", *command]), "in-memory database")
    done = run_tracker(["--database-url", f"sqlite:///{tmp_path / 'new.db'}", "db", "upgrade"])
    assert done.exit_code == 0 and (tmp_path / "new.db").is_file()


# 10 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expires", "got"),
    [
        ("2027-01-31T00:00:00", "a date-time"),
        ('"2027-01-31"', "a string"),
        ("20270131", "an integer"),
    ],
)
def test_a_wrongly_typed_acknowledgement_expiry_is_an_error_naming_file_and_key(
    run_tracker: RunTracker, tmp_path: Path, expires: str, got: str
) -> None:
    acks = tmp_path / "acks.toml"
    acks.write_text(
        '[[acknowledgement]]\nseries = "*"\nversions = "2.1"\nreason = "known"\n'
        f"expires = {expires}\n",
        "utf-8",
    )
    (tmp_path / "gate.toml").write_text('[gate]\nacknowledgements = "acks.toml"\n', "utf-8")
    done = run_tracker(
        ["--database-url", f"sqlite:///{tmp_path / 'x.db'}", "gate", "--candidate", "2.1"]
        + ["--policy", str(tmp_path / "gate.toml")]
    )
    _refused(done, f"{acks}: acknowledgement 1: 'expires' must be a date", got)


def test_an_unwritable_step_summary_is_a_warning_and_the_gate_keeps_its_code(
    run_tracker: RunTracker, database_url: str, tmp_path: Path
) -> None:
    _seed(run_tracker, database_url, tmp_path / "data")
    done = run_tracker(
        ["--database-url", database_url, "gate", "--candidate", HOSTILE_VERSION]
        + ["--format", "markdown"],
        env={"GITHUB_STEP_SUMMARY": str(tmp_path)},  # a folder: it cannot be appended to
    )
    assert done.exit_code == 1, done.stdout + done.stderr
    assert done.stderr.startswith("Warning: cannot append the gate's summary")
    assert str(tmp_path) in done.stderr and "Traceback" not in done.stderr
    assert done.stdout.startswith("## ❌ gate: 1")


# 14, 15 -------------------------------------------------------------------------------------


def test_labels_reach_terminal_and_step_summary_without_escapes_links_or_html(
    run_tracker: RunTracker, database_url: str, tmp_path: Path
) -> None:
    hostile_folder = tmp_path / "runs\x1b[31m"
    _seed(run_tracker, database_url, hostile_folder, system=HOSTILE_SYSTEM)
    url = ["--database-url", database_url]
    summary = tmp_path / "summary.md"
    outputs = {
        "analyze": run_tracker([*url, "analyze"]),
        "findings": run_tracker([*url, "findings", "--status", "all"]),
        "gate": run_tracker([*url, "gate", "--candidate", HOSTILE_VERSION]),
        "gate json": run_tracker(
            [*url, "gate", "--candidate", HOSTILE_VERSION, "--format", "json"]
        ),
        "gate markdown": run_tracker(
            [*url, "gate", "--candidate", HOSTILE_VERSION, "--format", "markdown"]
            + ["--report", "my site (new)"],
            env={"GITHUB_STEP_SUMMARY": str(summary)},
        ),
        "ingest": run_tracker(
            [*url, "ingest", str(hostile_folder / "v1"), "--kind", "aiperf", "--software", "s"]
            + ["--software-version", "x", "--system", "y"]
        ),
    }
    for name, done in outputs.items():
        assert done.exit_code in (0, 1), (name, done.stdout, done.stderr)
        for escape in ESCAPES:
            assert escape not in done.stdout + done.stderr, (name, done.stdout)
    assert (
        "\\x1b[2J" in outputs["gate"].stdout and "node\\x1b]0;pwned\\x07" in outputs["gate"].stdout
    )
    assert "\\x1b[2J" in outputs["analyze"].stdout and "\\x1b]0;pwned" in outputs["findings"].stdout
    assert "runs\\x1b[31m" in outputs["ingest"].stdout
    assert "\\u009b" in outputs["gate json"].stdout
    markdown = summary.read_text("utf-8")
    assert markdown == outputs["gate markdown"].stdout + "\n"
    for live in ("](https://evil", "<b>", "\x1b", "![i]"):
        assert live not in markdown, live
    assert "\\[x\\](https\\://evil.test)" in markdown and "\\<b\\>" in markdown
    assert "](my%20site%20%28new%29/" in markdown


# 18, 20 -------------------------------------------------------------------------------------


def test_huge_numbers_are_errors_not_tracebacks(
    run_tracker: RunTracker, database_url: str, tmp_path: Path
) -> None:
    _seed(run_tracker, database_url, tmp_path / "data")
    big = "99999999999999999999"
    done = run_tracker(["--database-url", database_url, "findings", "set-status", big, "fixed"])
    _refused(done, f"no finding has id {big}")
    done = run_tracker(
        [
            "--database-url",
            database_url,
            "ingest",
            str(tmp_path / "data" / "v0"),
            "--kind",
            "aiperf",
        ]
        + ["--software", "s", "--software-version", "9", "--system", "n", "--accelerators", big]
    )
    assert (
        done.exit_code == 2 and "--accelerators" in done.stderr and "Traceback" not in done.stderr
    )


def test_a_read_only_database_refuses_triage_in_words(
    run_tracker: RunTracker, sqlite_db: Path
) -> None:
    run_tracker(["--database-url", f"sqlite:///{sqlite_db}", "analyze"])
    sqlite_db.chmod(0o444)  # read-only for anyone but root; the URI says so to root too
    read_only = f"sqlite:///file:{sqlite_db}?mode=ro&uri=true"
    done = run_tracker(["--database-url", read_only, "findings", "set-status", "1", "fixed"])
    _refused(done, "cannot write to the database", "read-only")
    assert "UPDATE" not in done.stderr


def test_db_current_on_what_is_not_a_database(run_tracker: RunTracker, tmp_path: Path) -> None:
    (tmp_path / "notes.db").write_text("not a database\n" * 100, "utf-8")
    for url, phrase in (
        ("sqlite:////nonexistent/x.db", "no database at /nonexistent/x.db"),
        (f"sqlite:///{tmp_path / 'notes.db'}", "file is not a database"),
        ("http://user:secret@example.test/db", "is not a SQLite or PostgreSQL database"),
    ):
        done = run_tracker(["--database-url", url, "db", "current"])
        _refused(done, phrase)
        assert "secret" not in done.stderr


def test_an_unreadable_file_is_named_once(
    run_tracker: RunTracker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loadgen_local: Path
) -> None:
    import shutil

    import tracker.sources.tree as tree

    source = tmp_path / "lg2"
    for run in ("run_1", "run_2"):
        shutil.copytree(loadgen_local / "Offline", source / run)
    real_open = os.open

    def denied(path: Any, *args: Any, **kwargs: Any) -> int:
        if str(path).endswith("run_2/mlperf_log_detail.txt"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(tree.os, "open", denied)
    monkeypatch.chdir(tmp_path)
    done = run_tracker(
        ["--database-url", "sqlite:///t.db", "ingest", "lg2", "--kind", "loadgen", "--strict"]
        + ["--software", "s", "--software-version", "1", "--system", "n", "--benchmark", "b"]
    )
    _refused(done, "Error: lg2/run_2/mlperf_log_detail.txt: cannot read (Permission denied)")


def test_store_errors_carry_no_sql() -> None:
    from tracker.errors import StoreError

    raw = (
        "could not store x: (sqlite3.IntegrityError) UNIQUE constraint failed: result.id\n"
        "[SQL: INSERT INTO result (id) VALUES (?)]\n[parameters: (1,)]\n"
        "(Background on this error at: https://sqlalche.me/e/20/gkpj); nothing of it was stored"
    )
    assert str(StoreError(raw)) == (
        "could not store x: (sqlite3.IntegrityError) UNIQUE constraint failed: result.id; "
        "nothing of it was stored"
    )
