"""Property (issue 32): whatever ``--out`` holds, ``tracker report`` changes no byte it did
not write.

Hypothesis draws a layout: ``--out`` missing, empty or holding the user's files and
folders (some where the report writes its own), symbolic links out of it, the database
inside it, an earlier real render (some of whose files the user then changed), a marker
that is the tracker's, forged (hashes that do not match), garbage or a link, and a
temporary folder of a "killed render" planted beside it; with ``--force`` or without.
After ``tracker report`` (the real command group, in this process for speed) every path
that was there is byte for byte as it was, unless it lies inside ``--out`` and was a
regular file whose bytes the marker before the run listed for that path (the tracker
wrote it); the database never changes; nothing appears outside ``--out``; a refusal
(exit 2) changes nothing at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.support.files import snapshot_tree
from tracker.cli import cli
from tracker.report.render import MANIFEST, MANIFEST_HEADER, STAGE_MARKER, listed_files

PLACES = (
    "index.html",
    "report.json",
    "results.csv",
    "notes.txt",
    "static/report.css",
    "static",
    "system",
    "benchmark/mine.html",
    "drafts/plan.md",
)
"""Where the layout puts things: the report's own files and folders, and others."""

entries = st.lists(
    st.tuples(
        st.sampled_from(PLACES),
        st.sampled_from(["file", "folder", "link-file", "link-folder"]),
        st.binary(min_size=0, max_size=40),
    ),
    max_size=5,
    unique_by=lambda entry: entry[0],
)
layouts = st.fixed_dictionaries(
    {
        "start": st.sampled_from(["missing", "empty", "users", "earlier render"]),
        "entries": entries,
        "marker": st.sampled_from(["as is", "forged", "garbage", "link", "none"]),
        "database_inside": st.booleans(),
        "planted_stage": st.booleans(),
        "force": st.booleans(),
    }
)


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("property-db")
    path = folder / "tracker.db"
    for version, value in (("1.0", 100.0), ("2.0", 80.0)):
        source = folder / f"{version}.json"
        source.write_text(json.dumps({"results": [{"name": "b", "unit": "x/s", "value": value}]}))
        done = CliRunner().invoke(
            cli,
            ["--database-url", f"sqlite:///{path}", "ingest", str(source)]
            + ["--software-version", version, "--system", "n"],
        )
        assert done.exit_code == 0, done.output
    return path


def _report(database: Path, out: Path, *extra: str) -> int:
    done = CliRunner().invoke(
        cli, ["--database-url", f"sqlite:///{database}", "report", "--out", str(out), *extra]
    )
    assert "Traceback" not in done.output, done.output
    return done.exit_code


def _under_a_non_folder(out: Path, path: Path) -> bool:
    """Whether a folder ``path`` would be made in is there as a file or a link (``static``
    placed as a file, then ``static/report.css``): the entry cannot be placed."""
    return any(
        os.path.lexists(p) and (p.is_symlink() or not p.is_dir())
        for p in path.parents
        if p.is_relative_to(out) and p != out
    )


def _place(out: Path, outside: Path, relative: str, kind: str, data: bytes) -> None:
    path = out / relative
    if os.path.lexists(path) or _under_a_non_folder(out, path):
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "file":
        path.write_bytes(data)
    elif kind == "folder":
        path.mkdir()
        (path / "kept.txt").write_bytes(data)
    elif kind == "link-file":
        path.symlink_to(outside / "precious.txt")
    else:
        path.symlink_to(outside / "keys")


def _set_marker(out: Path, outside: Path, how: str) -> None:
    marker = out / MANIFEST
    if how == "as is" or not out.is_dir():
        return
    if os.path.lexists(marker):
        marker.unlink()
    if how == "forged":
        lines = [f"{hashlib.sha256(p.encode()).hexdigest()}  {p}" for p in PLACES]
        lines += [f"{'0' * 64}  ../outside/precious.txt", f"{'1' * 64}  tracker.db"]
        marker.write_text("".join(f"{line}\n" for line in [MANIFEST_HEADER, *lines]))
    elif how == "garbage":
        marker.write_text("index.html\nstatic/report.css\n../outside/precious.txt\n")
    elif how == "link":
        marker.symlink_to(outside / "list")


def _build(root: Path, database: Path, layout: dict[str, object]) -> tuple[Path, Path]:
    """The layout under ``root``; returns ``--out`` and the database to report from."""
    outside = root / "outside"
    (outside / "keys").mkdir(parents=True)
    (outside / "keys" / "authorized_keys").write_text("ssh-ed25519 AAAA me\n")
    (outside / "precious.txt").write_text("precious\n")
    (outside / "list").write_text(f"{MANIFEST_HEADER}\n{'2' * 64}  index.html\n")
    out = root / "site"
    db = root / "db" / "tracker.db"
    if layout["start"] != "missing":
        out.mkdir()
    if layout["start"] == "earlier render":
        shutil.rmtree(out)
        (root / "db").mkdir()
        shutil.copyfile(database, db)
        assert _report(db, out) == 0
    for relative, kind, data in layout["entries"]:  # type: ignore[attr-defined]
        if layout["start"] != "missing":
            if layout["start"] == "earlier render" and (out / relative).is_file():
                (out / relative).write_bytes(data)  # the user changed a page of the site
            else:
                _place(out, outside, relative, kind, data)
    _set_marker(out, outside, str(layout["marker"]))
    if layout["database_inside"] and out.is_dir():
        db = out / "tracker.db"
    if not db.exists():
        db.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(database, db)
    if layout["planted_stage"]:
        stage = root / ".site.tmp-0123456789ab"
        stage.mkdir()
        (stage / STAGE_MARKER).write_text("999999999\n")
        (stage / "mine.txt").write_text("mine\n")
    return out, db


def _tracker_files(out: Path) -> dict[str, set[str]]:
    """The files of ``out`` whose bytes the marker lists (the ones the tracker wrote)."""
    if not out.is_dir():
        return {}
    return listed_files(out) or {}


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(layout=layouts)
@example(  # a file where the report's folder goes, then a file inside it: the second is skipped
    layout={
        "start": "empty",
        "entries": [("static", "file", b""), ("static/report.css", "file", b"")],
        "marker": "as is",
        "database_inside": False,
        "planted_stage": False,
        "force": False,
    }
)
def test_no_byte_outside_what_the_tracker_wrote_changes(
    database: Path, layout: dict[str, object]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        out, db = _build(root, database, layout)
        before = snapshot_tree(root)
        db_bytes = db.read_bytes()
        ours = _tracker_files(out)
        marker_was_ours = out.is_dir() and listed_files(out) is not None

        code = _report(db, out, *(["--force"] if layout["force"] else []))

        after = snapshot_tree(root)
        assert code in (0, 2)
        assert db.read_bytes() == db_bytes
        if code == 2:
            assert after == before
            return
        for path, content in before.items():
            if after.get(path) == content:
                continue
            relative = os.path.relpath(root / path, out)
            if relative == MANIFEST:
                assert marker_was_ours, path
                continue
            assert not relative.startswith(".."), f"{path} outside --out changed"
            assert isinstance(content, bytes), f"{path}: a link, not the tracker's"
            assert hashlib.sha256(content).hexdigest() in ours.get(relative, set()), path
        new = set(after) - set(before)
        assert all(not os.path.relpath(root / p, out).startswith("..") for p in new), new
        assert db.parent != out, "a render into the folder that holds the database"
