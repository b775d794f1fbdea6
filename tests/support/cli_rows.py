"""The command line in this process with a download/snapshot cache of the test's own,
and the stored results as ``tracker export --format json`` gives them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from tracker.cli import cli

Row = dict[str, Any]


def tracker(database_url: str, cache: Path, *args: str) -> Result:
    """``tracker --database-url URL ARGS`` with ``TRACKER_CACHE_DIR`` at ``cache``."""
    env = {"TRACKER_CACHE_DIR": str(cache)}
    return CliRunner().invoke(cli, ["--database-url", database_url, *args], env=env)


def export(database_url: str, cache: Path) -> list[Row]:
    """Every stored result, as the JSON export writes it (the export must succeed)."""
    result = tracker(database_url, cache, "export", "--format", "json")
    assert result.exit_code == 0, result.output
    rows: list[Row] = json.loads(result.stdout)
    return rows


def stored_nothing(database_url: str, cache: Path) -> bool:
    """Whether nothing is stored: a SQLite file a failed command never created (it leaves
    no empty database behind), or a database without results."""
    if database_url.startswith("sqlite:///") and not Path(database_url[10:]).exists():
        return True
    return export(database_url, cache) == []
