"""Issue 32, safety round two: each numbered failure, through the real command line.

Every case runs ``python -m tracker`` in a process of its own (as a user or CI runs it),
except where a fault must be planted inside the process (an unexpected error). The
device cases use a stand-in character device made with ``mknod`` (the same major and
minor numbers as ``/dev/null`` and ``/dev/zero``) in the test's own folder, never the
machine's ``/dev``; the read-only database is mounted read-only in a private mount
namespace (``unshare -m``). Both need root (the tests run as root here and in CI) and
are skipped, with the reason, where the machine cannot make them.

1. no output path is, holds or replaces the database; 2. a device stays a device,
``-`` is stdout; 3. a folder the tracker did not make is refused (``--force`` keeps the
user's files); 4. no link out of a source folder is followed; 5. a member's size is
refused on its header; 6. settings files are regular files of bounded size; 7. a crash
is ``Error:`` and exit 2, never 1; 8. ``fail_on = []`` is said; 9. encodings and names
that are not UTF-8; 10. a planted temporary folder is kept; 11. links only http(s) or
relative; 12. no password printed; 13. a read-only database is read; 14. a closed
stdout; 15. nothing stored says why, no Python internals, a silent server is given up.
"""

from __future__ import annotations

import gzip
import hashlib
import http.server
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import REPO_ROOT
from tests.support.files import snapshot_tree
from tracker.cli import cli
from tracker.report.render import MANIFEST, MANIFEST_HEADER, STAGE_MARKER


class Done:
    """What one ``tracker`` process did: its exit code and output (decoded, undecodable
    bytes escaped)."""

    def __init__(self, code: int, stdout: bytes, stderr: bytes) -> None:
        self.code = code
        self.stdout = stdout.decode("utf-8", "backslashreplace")
        self.stderr = stderr.decode("utf-8", "backslashreplace")

    def __repr__(self) -> str:
        return f"exit {self.code}\nstdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}"


def _env(**changes: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRACKER_")}
    env.update(PYTHONPATH=str(REPO_ROOT), TRACKER_PROGRESS="none")
    env.pop("GITHUB_STEP_SUMMARY", None)
    env.update(changes)
    return env


def tracker(*args: str | bytes | Path, cwd: Path, timeout: float = 120, **env: str) -> Done:
    """``python -m tracker ARGS`` in ``cwd`` (its own cache folder there)."""
    done = subprocess.run(
        [sys.executable, "-m", "tracker", *(os.fspath(a) for a in args)],
        cwd=cwd,
        capture_output=True,
        env=_env(TRACKER_CACHE_DIR=str(cwd / ".cache"), **env),
        timeout=timeout,
        check=False,
    )
    return Done(done.returncode, done.stdout, done.stderr)


def refused(done: Done, *phrases: str) -> None:
    """Exit 2 with ``Error: ...`` naming each phrase, and no traceback."""
    assert done.code == 2, done
    assert done.stderr.startswith("Error: ") or "\nError: " in done.stderr, done
    assert "Traceback" not in done.stderr, done
    for phrase in phrases:
        assert phrase in done.stderr, (phrase, done)


def _results(path: Path, value: float, *, name: str = "encode") -> Path:
    path.write_text(
        json.dumps({"results": [{"name": name, "unit": "items/s", "value": value}]}), "utf-8"
    )
    return path


def _seeded(folder: Path, base: float = 100.0, candidate: float = 50.0) -> Path:
    """A database with one series at two versions: ``candidate`` against ``base``."""
    folder.mkdir(parents=True, exist_ok=True)
    database = folder / "tracker.db"
    for version, value in (("1.0", base), ("2.0", candidate)):
        source = _results(folder / f"v{version}.json", value)
        done = CliRunner().invoke(
            cli,
            ["--database-url", f"sqlite:///{database}", "ingest", str(source)]
            + ["--software-version", version, "--system", "node"],
        )
        assert done.exit_code == 0, done.output
        source.unlink()
    return database


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with a regression of 2.0 against 1.0 (never written by the tests)."""
    return _seeded(tmp_path_factory.mktemp("seeded"))


@pytest.fixture
def db(seeded: Path, tmp_path: Path) -> Path:
    """A copy of the seeded database of the test's own."""
    copy = tmp_path / "tracker.db"
    shutil.copyfile(seeded, copy)
    return copy


def _url(database: Path) -> str:
    return f"sqlite:///{database}"


def _stand_in_device(path: Path, minor: int) -> Path:
    """A character device at ``path`` with the numbers of ``/dev/null`` (3) or ``/dev/zero``
    (5): what ``/dev/null`` is, in the test's own folder."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    except (PermissionError, AttributeError, OSError) as error:
        pytest.skip(f"cannot make a stand-in character device here (needs root): {error}")
    return path


# 1 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["report.db", "report.json", "index.html"])
def test_a_report_never_writes_over_a_database_inside_its_folder(
    seeded: Path, tmp_path: Path, name: str
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    database = site / name
    shutil.copyfile(seeded, database)
    before = database.read_bytes()
    refused(
        tracker("--database-url", _url(database), "report", "--out", site, cwd=tmp_path),
        f"--out {site} holds the database ({database})",
    )
    refused(
        tracker("--database-url", _url(database), "report", "--out", site, "--force", cwd=tmp_path),
        "holds the database",
    )
    assert database.read_bytes() == before
    assert sorted(p.name for p in site.iterdir()) == [name]


def test_a_planted_marker_listing_the_database_removes_nothing(db: Path, tmp_path: Path) -> None:
    """The database inside the site under another name (a hard link) and another database,
    both listed by a forged marker: neither is the tracker's file, and both stay."""
    site = tmp_path / "site"
    assert tracker("--database-url", _url(db), "report", "--out", site, cwd=tmp_path).code == 0
    other = tmp_path / "other.db"
    shutil.copyfile(db, other)
    os.link(db, site / "tracker.db")
    os.link(other, site / "old.db")
    forged = "".join(
        f"{hashlib.sha256(data).hexdigest()}  {name}\n"
        for data, name in ((b"anything", "tracker.db"), (db.read_bytes()[:100], "old.db"))
    )
    with (site / MANIFEST).open("a", encoding="utf-8") as listing:
        listing.write(forged)
    before = db.read_bytes(), other.read_bytes()
    done = tracker("--database-url", _url(db), "report", "--out", site, cwd=tmp_path)
    assert done.code == 0, done
    assert (db.read_bytes(), other.read_bytes()) == before
    assert (site / "tracker.db").samefile(db) and (site / "old.db").samefile(other)


# 2 -------------------------------------------------------------------------------------------


def test_export_to_a_device_leaves_the_device_and_dash_is_stdout(db: Path, tmp_path: Path) -> None:
    null = _stand_in_device(tmp_path / "null", 3)
    refused(
        tracker("--database-url", _url(db), "export", "--out", null, cwd=tmp_path),
        f"--out {null} is a character device",
        "- for stdout",
    )
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    (tmp_path / "stdout").symlink_to("/proc/self/fd/1")
    refused(
        tracker("--database-url", _url(db), "export", "--out", tmp_path / "stdout", cwd=tmp_path),
        "is a symbolic link",
    )
    assert (tmp_path / "stdout").is_symlink()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    refused(
        tracker("--database-url", _url(db), "export", "--out", fifo, cwd=tmp_path, timeout=60),
        "is a FIFO",
    )
    done = tracker("--database-url", _url(db), "export", "--out", "-", cwd=tmp_path)
    assert done.code == 0, done
    assert json.loads(done.stdout)[0]["software_version"] in ("1.0", "2.0")
    assert not (tmp_path / "-").exists()


# 3 -------------------------------------------------------------------------------------------


def _users_site(site: Path) -> None:
    (site / "static").mkdir(parents=True)
    (site / "index.html").write_text("<h1>my own page</h1>\n", "utf-8")
    (site / "results.csv").write_text("my,own\n1,2\n", "utf-8")
    (site / "static" / "report.css").write_text("body { color: red }\n", "utf-8")


def test_a_folder_the_tracker_did_not_make_is_refused_and_kept(db: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    _users_site(site)
    before = snapshot_tree(tmp_path)
    done = tracker("--database-url", _url(db), "report", "--out", site, cwd=tmp_path)
    refused(done, f"{site} is not a folder the tracker made", "--force")
    assert snapshot_tree(tmp_path) == before
    done = tracker("--database-url", _url(db), "report", "--out", site, "--force", cwd=tmp_path)
    refused(done, str(site / "index.html"), "not written by the tracker")
    assert snapshot_tree(tmp_path) == before


def test_force_takes_a_folder_over_and_keeps_the_users_files(db: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "notes.txt").write_text("mine\n", "utf-8")
    refused(tracker("--database-url", _url(db), "report", "--out", site, cwd=tmp_path), "--force")
    done = tracker("--database-url", _url(db), "report", "--out", site, "--force", cwd=tmp_path)
    assert done.code == 0, done
    assert (site / "notes.txt").read_text("utf-8") == "mine\n"
    assert (site / MANIFEST).read_text("utf-8").startswith(MANIFEST_HEADER)
    # the folder is the tracker's now: the next render needs no --force
    assert tracker("--database-url", _url(db), "report", "--out", site, cwd=tmp_path).code == 0
    assert (site / "notes.txt").read_text("utf-8") == "mine\n"


def test_demo_into_a_folder_with_the_users_site_is_refused_before_writing(tmp_path: Path) -> None:
    _users_site(tmp_path / "site")
    before = snapshot_tree(tmp_path)
    done = tracker("demo", "--out", ".", cwd=tmp_path, timeout=300)
    refused(done, "site is not a folder the tracker made")
    assert snapshot_tree(tmp_path) == before


# 4 -------------------------------------------------------------------------------------------


def test_a_system_file_that_links_out_of_the_round_is_not_read(
    shared_data: Path, tmp_path: Path
) -> None:
    source = shared_data / "mlperf-inference" / "v5.1" / "closed" / "Lenovo"
    round_dir = tmp_path / "v5.1"
    for part in ("systems", "results", "compliance"):
        shutil.copytree(source / part, round_dir / "closed" / "Lenovo" / part)
    systems = round_dir / "closed" / "Lenovo" / "systems"
    linked = sorted(systems.glob("*.json"))[0]
    secret = tmp_path / "outside" / "secret.json"
    secret.parent.mkdir()
    document = json.loads(linked.read_text("utf-8"))
    document["system_name"] = "SECRET-FROM-OUTSIDE"
    secret.write_text(json.dumps(document), "utf-8")
    linked.unlink()
    linked.symlink_to(secret)
    database = tmp_path / "round.db"
    done = tracker(
        "--database-url",
        _url(database),
        "ingest",
        round_dir,
        "--jobs",
        "1",
        cwd=tmp_path,
        timeout=300,
    )
    assert done.code == 2, done
    assert f"{linked.name}: a symbolic link that leads out of" in done.stderr, done
    exported = tracker("--database-url", _url(database), "export", cwd=tmp_path)
    assert "SECRET-FROM-OUTSIDE" not in exported.stdout + exported.stderr


# 5 -------------------------------------------------------------------------------------------


def _tar_header(name: str, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.mode = size, 0o644
    return info.tobuf(format=tarfile.GNU_FORMAT)


def test_a_huge_member_is_refused_on_its_header_not_inflated(tmp_path: Path) -> None:
    """A 3 GiB member under the archive's ratio bound (13 MB of incompressible padding
    before it): refused at once on its header, before a byte of it is decompressed."""
    padding = os.urandom(13 << 20)
    raw = _tar_header("run/padding.bin", len(padding)) + padding
    raw += bytes(-len(padding) % 512) + _tar_header("run/mlperf_log_detail.txt", 3 << 30)
    raw += bytes(1 << 20)  # the start of its zeros: the rest is never asked for
    archive = tmp_path / "bomb.tar.gz"
    archive.write_bytes(gzip.compress(raw, compresslevel=1))
    started = time.monotonic()
    done = tracker(
        "--database-url",
        _url(tmp_path / "b.db"),
        "ingest",
        archive,
        "--kind",
        "loadgen",
        "--software-version",
        "1",
        "--system",
        "n",
        "--benchmark",
        "b",
        cwd=tmp_path,
    )
    refused(
        done,
        "bomb.tar.gz: refused: one file of 3221225472 bytes, over the 1 GiB limit",
        "run/mlperf_log_detail.txt",
    )
    assert time.monotonic() - started < 30


# 6 -------------------------------------------------------------------------------------------


def test_a_policy_that_is_a_device_is_refused_unread(db: Path, tmp_path: Path) -> None:
    zero = _stand_in_device(tmp_path / "zero", 5)
    done = tracker(
        "--database-url",
        _url(db),
        "gate",
        "--candidate",
        "2.0",
        "--policy",
        zero,
        cwd=tmp_path,
        timeout=60,
    )
    refused(done, f"{zero}: the policy file must be a regular file", "a character device")
    (tmp_path / "gate.toml").write_text('[gate]\nacknowledgements = "zero"\n', "utf-8")
    done = tracker(
        "--database-url",
        _url(db),
        "gate",
        "--candidate",
        "2.0",
        "--policy",
        tmp_path / "gate.toml",
        cwd=tmp_path,
        timeout=60,
    )
    refused(done, f"{zero}: the acknowledgements file must be a regular file")


@pytest.mark.parametrize("command", [["report", "--out", "site"], ["analyze"]], ids=" ".join)
def test_a_price_book_that_is_a_fifo_is_refused_without_waiting(
    db: Path, tmp_path: Path, command: list[str]
) -> None:
    fifo = tmp_path / "prices.toml"
    os.mkfifo(fifo)
    done = tracker(
        "--database-url", _url(db), *command, "--price-book", fifo, cwd=tmp_path, timeout=60
    )
    refused(done, f"{fifo}: the price book must be a regular file", "a FIFO")
    assert not (tmp_path / "site").exists()


def test_a_settings_file_over_the_limit_is_refused(db: Path, tmp_path: Path) -> None:
    big = tmp_path / "gate.toml"
    with big.open("wb") as stream:
        stream.truncate((16 << 20) + 1)  # sparse: no disk used
    done = tracker(
        "--database-url", _url(db), "gate", "--candidate", "2.0", "--policy", big, cwd=tmp_path
    )
    refused(done, f"{big}: over 16 MiB, too big for a policy file")


# 7 -------------------------------------------------------------------------------------------


def test_extreme_values_give_a_verdict_not_a_crash(tmp_path: Path) -> None:
    database = _seeded(tmp_path / "extreme", base=1e300, candidate=1e-300)
    for output in ("text", "markdown", "json"):
        done = tracker(
            "--database-url",
            _url(database),
            "gate",
            "--candidate",
            "2.0",
            "--format",
            output,
            cwd=tmp_path,
        )
        assert done.code == 1, done  # a regression: the verdict, not a crash
        assert "Traceback" not in done.stderr and "Error" not in done.stderr
    for command in (["analyze"], ["report", "--out", "site"]):
        done = tracker("--database-url", _url(database), *command, cwd=tmp_path)
        assert done.code == 0, done


def test_an_unexpected_error_is_error_and_exit_2_never_1(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug planted in the gate (inside the process: nothing else can plant one)."""
    import tracker.gate.decision as decision

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise ValueError("math domain error")

    monkeypatch.setattr(decision, "run_gate", broken)
    for debug in ([], ["--debug"]):
        done = CliRunner().invoke(
            cli, [*debug, "--database-url", _url(db), "gate", "--candidate", "2.0"]
        )
        assert done.exit_code == 2, done.output
        assert "Error: the command stopped on an unexpected error (math domain error)" in (
            done.stderr
        )
        assert "run the command again with --debug" in done.stderr
        assert ("Traceback" in done.stderr) == bool(debug)
        assert "ValueError" not in done.stderr.rpartition("Error:")[2]


# 8 -------------------------------------------------------------------------------------------


def test_a_policy_under_which_nothing_can_fail_says_so(db: Path, tmp_path: Path) -> None:
    policy = tmp_path / "gate.toml"
    policy.write_text("[gate]\nfail_on = []\n", "utf-8")
    for output in ("text", "markdown"):
        done = tracker(
            "--database-url",
            _url(db),
            "gate",
            "--candidate",
            "2.0",
            "--policy",
            policy,
            "--format",
            output,
            cwd=tmp_path,
        )
        assert done.code == 0, done
        assert done.stderr.startswith(f"Warning: {policy}: fail_on is empty, so nothing can fail")
    assert "> ⚠️" in done.stdout and "nothing can fail this gate" in done.stdout


# 9 -------------------------------------------------------------------------------------------


def test_an_ascii_terminal_gets_escapes_not_a_traceback(db: Path, tmp_path: Path) -> None:
    for output in ("text", "markdown", "json"):
        done = tracker(
            "--database-url",
            _url(db),
            "gate",
            "--candidate",
            "2.0",
            "--format",
            output,
            cwd=tmp_path,
            PYTHONIOENCODING="ascii",
        )
        assert done.code == 1, done
        assert "Traceback" not in done.stderr and "UnicodeEncodeError" not in done.stderr
        assert "1.0 \\u2192 2.0" in done.stdout or "1.0 → 2.0" in done.stdout, done


def test_a_folder_whose_name_is_not_utf8_is_ingested_and_shown_escaped(
    tmp_path: Path,
) -> None:
    folder = os.fsencode(tmp_path) + b"/runs\xff"
    os.mkdir(folder)
    _results(Path(os.fsdecode(folder)) / "results.json", 42.0)
    database = tmp_path / "t.db"
    done = tracker(
        "--database-url",
        _url(database),
        "ingest",
        folder,
        "--software-version",
        "1",
        "--system",
        "n",
        cwd=tmp_path,
    )
    assert done.code == 0, done
    assert "runs\\xff" in done.stdout and "Traceback" not in done.stderr
    exported = tracker("--database-url", _url(database), "export", cwd=tmp_path)
    assert json.loads(exported.stdout)[0]["source_location"].endswith("runs\\xff")
    done = tracker("--database-url", _url(database), "report", "--out", b"site\xff", cwd=tmp_path)
    assert done.code == 0, done
    assert "site\\xff" in done.stdout


# 10 ------------------------------------------------------------------------------------------


def test_a_planted_temporary_folder_beside_the_site_is_kept(db: Path, tmp_path: Path) -> None:
    planted = tmp_path / ".site.tmp-0123456789ab"
    planted.mkdir()
    (planted / "thesis.tex").write_text("mine\n", "utf-8")
    found = os.lstat(planted)
    for marker in ("999999999\n", f"999999999 {found.st_dev} {found.st_ino + 1}\n"):
        (planted / STAGE_MARKER).write_text(marker, "utf-8")
        before = snapshot_tree(planted)
        done = tracker("--database-url", _url(db), "report", "--out", "site", cwd=tmp_path)
        assert done.code == 0, done
        assert snapshot_tree(planted) == before


# 11 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "links",
    [
        ["--report-url", "javascript://x/%0Aalert(1)"],
        ["--report-url", "JavaScript:alert(1)//"],
        ["--report", "javascript:alert(1)"],
        ["--report", "java\tscript:alert(1)"],
        ["--report", "data:text/html,x"],
        ["--report", "//evil.test/site"],
    ],
    ids=lambda links: links[1][:12],
)
def test_links_are_only_http_https_or_relative(db: Path, tmp_path: Path, links: list[str]) -> None:
    done = tracker(
        "--database-url",
        _url(db),
        "gate",
        "--candidate",
        "2.0",
        "--format",
        "markdown",
        *links,
        cwd=tmp_path,
    )
    refused(done, links[0])
    assert "](" not in done.stdout


def test_relative_and_https_links_still_work(db: Path, tmp_path: Path) -> None:
    for links, start in (
        (["--report", "site"], "](site/"),
        (["--report-url", "https://ci.test/run/1/site"], "](https://ci.test/run/1/site/"),
    ):
        done = tracker(
            "--database-url",
            _url(db),
            "gate",
            "--candidate",
            "2.0",
            "--format",
            "markdown",
            *links,
            cwd=tmp_path,
        )
        assert done.code == 1, done
        assert start in done.stdout


# 12 ------------------------------------------------------------------------------------------


class _Failing(http.server.BaseHTTPRequestHandler):
    """Twice HTTP 500 (retried, each retry a line), then 404 (an error)."""

    answers: list[int] = []

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        self.send_response(self.answers.pop(0) if self.answers else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def failing_server() -> Iterator[str]:
    _Failing.answers = [500, 500]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Failing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_password_in_a_url_is_never_printed(failing_server: str, tmp_path: Path) -> None:
    url = f"http://user:s3cr3t-pw@{failing_server}/round.tar.gz?token=tok3n-value"
    done = tracker(
        "--database-url",
        _url(tmp_path / "t.db"),
        "ingest",
        url,
        "--kind",
        "mlperf-inference",
        cwd=tmp_path,
        TRACKER_PROGRESS="lines",
    )
    refused(done, "HTTP 404")
    assert done.stderr.count("attempt") == 2, done  # the two retries were said
    assert "s3cr3t" not in done.stdout + done.stderr and "tok3n" not in done.stdout + done.stderr
    assert "http://user:***@" in done.stderr and "token=***" in done.stderr


# 13 ------------------------------------------------------------------------------------------


def _in_read_only_folder(folder: Path, *commands: Sequence[str | Path]) -> list[Done]:
    """Each command run with ``folder`` mounted read-only (a private mount namespace)."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("unshare and mount are needed for a read-only mount namespace")
    script = f'mount --bind "{folder}" "{folder}" && mount -o remount,bind,ro "{folder}"'
    script += " || exit 99"
    for n, command in enumerate(commands):
        quoted = " ".join(f"'{os.fspath(part)}'" for part in command)
        script += f"; {sys.executable} -m tracker {quoted} >{folder.parent}/out{n} "
        script += f"2>{folder.parent}/err{n}; echo $? >{folder.parent}/code{n}"
    done = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script],
        capture_output=True,
        env=_env(TRACKER_CACHE_DIR=str(folder.parent / ".cache")),
        cwd=folder.parent,
        timeout=300,
        check=False,
    )
    if done.returncode == 99 or done.returncode and b"unshare" in done.stderr:
        pytest.skip(f"cannot mount read-only here: {done.stderr.decode(errors='replace')}")
    parent = folder.parent
    return [
        Done(
            int((parent / f"code{n}").read_text()),
            (parent / f"out{n}").read_bytes(),
            (parent / f"err{n}").read_bytes(),
        )
        for n in range(len(commands))
    ]


def test_commands_that_only_read_read_a_database_in_a_read_only_folder(
    db: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    database = folder / "tracker.db"
    shutil.copyfile(db, database)
    before = database.read_bytes()
    url = ["--database-url", _url(database)]
    reading = [
        [*url, "export"],
        [*url, "findings"],
        [*url, "db", "current"],
        [*url, "gate", "--candidate", "2.0"],
        [*url, "report", "--out", str(tmp_path / "site")],
        [*url, "systems"],
    ]
    writing = [[*url, "analyze"]]
    done = _in_read_only_folder(folder, *reading, *writing)
    for command, result in zip(reading, done, strict=False):
        assert result.code in (0, 1), (command, result)
        assert "Traceback" not in result.stderr
    assert json.loads(done[0].stdout)[0]["system"] == "node"
    assert (tmp_path / "site" / "index.html").is_file()
    refused(done[-1], "read-only")
    assert "sqlite3." not in done[-1].stderr
    assert database.read_bytes() == before


# 14 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "code"),
    [(["gate", "--candidate", "2.0"], 1), (["export"], 0), (["findings"], 0)],
    ids=lambda value: value[0] if isinstance(value, list) else str(value),
)
def test_a_closed_stdout_ends_quietly_with_the_commands_own_code(
    db: Path, tmp_path: Path, command: list[str], code: int
) -> None:
    quoted = " ".join(f"'{part}'" for part in ["--database-url", _url(db), *command])
    done = subprocess.run(
        ["sh", "-c", f"exec {sys.executable} -m tracker {quoted} >&-"],
        capture_output=False,
        stderr=subprocess.PIPE,
        env=_env(TRACKER_CACHE_DIR=str(tmp_path / ".cache")),
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == code, done.stderr
    assert done.stderr == b""
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [
        "tracker.db"
    ]


# 15 ------------------------------------------------------------------------------------------


def test_an_ingest_of_accuracy_only_runs_says_why_nothing_was_stored(
    loadgen_local: Path, tmp_path: Path
) -> None:
    run = tmp_path / "accuracy" / "run_1"
    shutil.copytree(loadgen_local / "Offline", run)
    for name in ("mlperf_log_detail.txt", "mlperf_log_summary.txt"):
        text = (run / name).read_text("utf-8")
        (run / name).write_text(text.replace("PerformanceOnly", "AccuracyOnly"), "utf-8")
    done = tracker(
        "--database-url",
        _url(tmp_path / "t.db"),
        "ingest",
        run.parent,
        "--kind",
        "loadgen",
        "--software-version",
        "1",
        "--system",
        "n",
        "--benchmark",
        "r",
        cwd=tmp_path,
    )
    assert done.code == 0, done
    assert "nothing stored (see the note below)" in done.stdout
    assert "note: accuracy-only runs (LoadGen's AccuracyOnly mode) measure no performance" in (
        done.stdout
    )


def test_a_read_only_database_refuses_an_ingest_in_words(db: Path, tmp_path: Path) -> None:
    source = _results(tmp_path / "more.json", 10.0, name="other")
    url = f"sqlite:///file:{db}?mode=ro&uri=true"
    done = tracker(
        "--database-url",
        url,
        "ingest",
        source,
        "--software-version",
        "3.0",
        "--system",
        "node",
        cwd=tmp_path,
    )
    refused(done, "attempt to write a readonly database", "read-only")
    assert "sqlite3." not in done.stderr and "OperationalError" not in done.stderr
    assert "[(" not in done.stderr and "[SQL" not in done.stderr


def test_a_server_that_accepts_and_never_answers_is_given_up_on_in_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two silent attempts, not four: with the shipped read timeout (30 s) that is about a
    minute; here the timeout is 0.5 s, so the test waits for two of them."""
    import functools

    import tracker.ingest.run as run
    from tracker.sources.fetch import FetchOptions

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # accepts (the kernel does) and never answers
    port = listener.getsockname()[1]
    monkeypatch.setattr(
        run, "FetchOptions", functools.partial(FetchOptions, read_timeout_s=0.5, backoff_s=0.1)
    )
    started = time.monotonic()
    try:
        done = CliRunner().invoke(
            cli,
            ["--database-url", _url(tmp_path / "t.db"), "ingest"]
            + [f"http://127.0.0.1:{port}/round.tar.gz", "--kind", "mlperf-inference"],
        )
    finally:
        listener.close()
    assert done.exit_code == 2, done.output
    assert "the server accepted 2 connections and sent nothing back, each for 0.5 s" in (
        done.stderr
    )
    assert time.monotonic() - started < 10
    shipped = FetchOptions()
    assert shipped.silent_attempts * shipped.read_timeout_s + shipped.backoff_s <= 90
