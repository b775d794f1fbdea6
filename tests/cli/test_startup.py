"""`tracker --help` and every command's --help start at once: no database, network,
statistics or template library is imported for them (checked in a fresh process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tracker import kinds
from tracker.cli import cli
from tracker.formats import KINDS
from tracker.ingest.run import ROUND_REPOSITORIES

HEAVY = ("sqlalchemy", "sqlmodel", "alembic", "numpy", "scipy", "httpx", "jinja2", "yaml")
PROBE = """
import contextlib, io, json, sys
from tracker.cli import cli
with contextlib.redirect_stdout(io.StringIO()):
    try:
        cli(sys.argv[1:], prog_name="tracker")
    except SystemExit:
        pass
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


def _commands() -> list[list[str]]:
    found = [[]]
    for name, command in cli.commands.items():  # type: ignore[attr-defined]
        found.append([name])
        for sub in getattr(command, "commands", {}):
            found.append([name, sub])
    return found


@pytest.mark.parametrize("command", _commands(), ids=lambda c: " ".join(c) or "tracker")
def test_help_imports_no_heavy_library(command: list[str]) -> None:
    probe = PROBE.format(heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", probe, *command, "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_the_light_kind_lists_match_the_readers_and_the_pull() -> None:
    assert kinds.KINDS == KINDS
    assert kinds.PULLABLE == tuple(ROUND_REPOSITORIES)


STATISTICS = ("numpy", "scipy", "alembic", "httpx", "jinja2")
"""What listing stored findings never needs: the statistics, migrations, network, templates."""


@pytest.mark.parametrize("extra", [[], ["--format", "json"]], ids=["table", "json"])
def test_listing_findings_imports_no_statistics(extra: list[str], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tracker.db'}"
    subprocess.run(
        [sys.executable, "-m", "tracker", "--database-url", url, "db", "upgrade"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=STATISTICS), "--database-url", url]
        + ["findings", *extra],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
