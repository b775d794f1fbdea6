"""The ``tracker`` console script (:func:`tracker.cli.main`): the command group's exit code
and output, and a shutdown that skips one walk of every object (``gc.freeze``, issue 19).

Each case runs in a fresh interpreter, as the script does; an ``atexit`` handler,
which runs after the command has ended, reports whether the collector was frozen.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tracker import __version__

_SCRIPT = """
import atexit, gc, sys
atexit.register(lambda: print("frozen:", gc.get_freeze_count() > 0, file=sys.stderr))
sys.argv = ["tracker", *sys.argv[1:]]
from tracker.cli import main
main()
"""


def _tracker(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRACKER_")}
    return subprocess.run(
        [sys.executable, "-c", _SCRIPT, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**env, "PYTHONPATH": str(REPO_ROOT)},
        timeout=120,
        check=False,
    )


def test_a_command_that_succeeds_exits_0_with_its_output_and_a_frozen_collector(
    tmp_path: Path,
) -> None:
    done = _tracker("--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert __version__ in done.stdout
    assert done.stderr.strip() == "frozen: True"


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (("export", "--database-url", "sqlite:///missing.db"), 2, "Error: no database at"),
        (("ingest",), 2, "Missing argument 'SOURCES...'"),
    ],
)
def test_a_command_that_fails_keeps_its_exit_code_and_message(
    tmp_path: Path, args: tuple[str, ...], code: int, said: str
) -> None:
    done = _tracker(*args, cwd=tmp_path)
    assert done.returncode == code, done.stderr
    assert said in done.stderr
    assert done.stderr.strip().endswith("frozen: True")
    assert not (tmp_path / "missing.db").exists()


def test_an_ingest_through_the_script_stores_and_leaves_only_the_database(
    tmp_path: Path,
) -> None:
    source = REPO_ROOT / "tests" / "data" / "generic" / "generic.json"
    done = _tracker(
        "--database-url",
        f"sqlite:///{tmp_path / 'tracker.db'}",
        "ingest",
        "--software-version",
        "1.0",
        "--system",
        "node-a",
        str(source),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "stored" in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tracker.db"]  # no -wal or -shm left
