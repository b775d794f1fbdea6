"""What every command shares: the error shown as ``Error: ...``, the store, progress bars.

The group class turns a :class:`TrackerError` into ``Error: <message>`` with
exit code :data:`EXIT_DATA_ERROR`; the progress bars draw on stderr and hide
themselves when stderr is not a terminal.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TransferSpeedColumn,
)

from tracker.errors import EXIT_DATA_ERROR, TrackerError
from tracker.sources.fetch import DEFAULT_CACHE_DIR
from tracker.store.facade import Store

DEFAULT_DATABASE_URL = "sqlite:///tracker.db"
err_console = Console(stderr=True)


class TrackerCommandError(click.ClickException):
    """A :class:`TrackerError` shown as ``Error: ...`` with exit code 2."""

    exit_code = EXIT_DATA_ERROR


class TrackerGroup(click.Group):
    """A command group that shows a :class:`TrackerError` as ``Error: ...`` (exit 2)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except TrackerError as error:
            raise TrackerCommandError(str(error)) from None


def now() -> str:
    """The current UTC time to the second, ISO 8601."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


@contextmanager
def open_store(ctx: click.Context, *, upgrade: bool = True) -> Iterator[Store]:
    """The store at the root context's database URL, closed on the way out."""
    store = Store.open(ctx.find_root().obj, upgrade=upgrade)
    try:
        yield store
    finally:
        store.close()


@contextmanager
def progress_bar(label: str) -> Iterator[Any]:
    """A progress bar on stderr (hidden when stderr is not a terminal)."""
    with Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int, _what: str) -> None:
            bar.update(task, completed=done, total=total)

        yield update


@contextmanager
def count_bar(label: str) -> Iterator[Any]:
    """A counter of pages written on stderr, total unknown (hidden when not a terminal)."""
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed} pages"),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(pages: int, relative: str) -> None:
            bar.update(task, completed=pages, description=f"report: {relative}")

        yield update


@contextmanager
def download_bar() -> Iterator[Any]:
    """A download progress bar on stderr (hidden when stderr is not a terminal)."""
    with Progress(
        TextColumn("download"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    ) as bar:
        task = bar.add_task("download", total=None)

        def update(received: int, total: int | None) -> None:
            bar.update(task, completed=received, total=total)

        yield update


def cache_dir() -> Path:
    """Downloads and snapshots: ``TRACKER_CACHE_DIR``, else ``$XDG_CACHE_HOME/tracker``."""
    if os.environ.get("TRACKER_CACHE_DIR"):
        return Path(os.environ["TRACKER_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "tracker"
    return DEFAULT_CACHE_DIR
