"""`tracker demo --out DIR` removes only what a demo wrote (item 2 of issue #21).

A ``data/`` folder or ``demo.db`` of the user's own (or a link in their place)
stops the demo with an error naming it, every byte left as it was; a folder an
earlier demo wrote (marked) is renewed, and the user's files beside it survive.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from tests.support.files import snapshot_tree
from tracker.cli import cli
from tracker.demo import DEMO_MARKER, prepare_demo_folder


def _demo(out: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, [*args, "demo", "--out", str(out)])


def _refused(result: Result, named: Path) -> None:
    assert result.exit_code == 2, result.output
    assert f"{named} was not written by `tracker demo`" in result.output
    assert "move it away, or give another folder with --out" in result.output


def test_a_data_folder_of_the_users_own_is_refused_and_kept(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "thesis.csv").write_text("mine\n")
    (tmp_path / "demo.db").write_bytes(b"not the demo's")
    before = snapshot_tree(tmp_path)
    _refused(_demo(tmp_path), tmp_path / "data")
    assert snapshot_tree(tmp_path) == before


def test_a_data_link_is_refused_and_its_target_kept(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "thesis.csv").write_text("mine\n")
    (outside / DEMO_MARKER).write_text("planted\n")  # a marker behind a link counts for nothing
    out = tmp_path / "demo"
    out.mkdir()
    (out / "data").symlink_to(outside)
    before = snapshot_tree(tmp_path)
    _refused(_demo(out), out / "data")
    assert snapshot_tree(tmp_path) == before


def test_a_database_of_the_users_own_is_refused_and_kept(tmp_path: Path) -> None:
    (tmp_path / "demo.db").write_bytes(b"my own database")
    _refused(_demo(tmp_path), tmp_path / "demo.db")
    assert (tmp_path / "demo.db").read_bytes() == b"my own database"
    assert not (tmp_path / "data").exists()


def test_with_a_database_url_a_users_data_folder_is_refused_too(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "README.md").write_text("mine\n")
    url = f"sqlite:///{tmp_path / 'other.db'}"
    _refused(_demo(tmp_path, "--database-url", url), tmp_path / "data")
    assert (tmp_path / "data" / "README.md").read_text() == "mine\n"


def test_a_second_demo_renews_its_own_folder_and_keeps_the_users_files(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    assert _demo(out).exit_code == 0
    assert (out / "data" / DEMO_MARKER).is_file()
    (out / "notes.txt").write_text("mine\n")
    (out / "site" / "notes.txt").write_text("mine too\n")
    (out / "data" / "leftover.txt").write_text("the demo's folder: renewed\n")
    result = _demo(out)
    assert result.exit_code == 0, result.output
    assert (out / "notes.txt").read_text() == "mine\n"
    assert (out / "site" / "notes.txt").read_text() == "mine too\n"
    assert not (out / "data" / "leftover.txt").exists()
    assert (out / "data" / DEMO_MARKER).is_file()


def test_prepare_removes_only_a_marked_folder_and_its_database(tmp_path: Path) -> None:
    prepare_demo_folder(tmp_path, fresh_database=True)
    (tmp_path / "data" / "old.txt").write_text("old\n")
    (tmp_path / "demo.db").write_bytes(b"old demo database")
    (tmp_path / "mine.txt").write_text("mine\n")
    prepare_demo_folder(tmp_path, fresh_database=True)
    assert snapshot_tree(tmp_path).keys() == {f"data/{DEMO_MARKER}", "mine.txt"}
