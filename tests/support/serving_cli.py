"""Helpers for the CLI-level tests of the serving kinds: run ``tracker``, read the export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from tracker.cli import cli
from tracker.store.facade import Store

Row = dict[str, Any]


def tracker(database_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", database_url, *args])


def ingest(database_url: str, source: Path, *args: str, version: str = "2.0.12") -> Result:
    """``tracker ingest SOURCE`` with a software version (and whatever else is given)."""
    return tracker(database_url, "ingest", str(source), "--software-version", version, *args)


def ingest_ok(database_url: str, source: Path, *args: str, version: str = "2.0.12") -> Result:
    result = ingest(database_url, source, *args, version=version)
    assert result.exit_code == 0, result.output
    return result


def export(database_url: str) -> list[Row]:
    result = tracker(database_url, "export", "--format", "json")
    assert result.exit_code == 0, result.output
    rows: list[Row] = json.loads(result.stdout)
    return rows


def primary_rows(database_url: str) -> list[Row]:
    """The ``output_tokens_per_s`` result of every stored point."""
    return [row for row in export(database_url) if row["metric"] == "output_tokens_per_s"]


def counts(database_url: str) -> dict[str, int]:
    with Store.open(database_url) as store:
        return store.count_rows()


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
