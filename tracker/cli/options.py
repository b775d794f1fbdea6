"""Options several commands share, declared once (as sqlite-utils does)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from tracker.records.keys import Selection

__all__ = ["format_option", "selection_of", "selection_options", "terminal_width"]

F = TypeVar("F", bound=Callable[..., Any])


def format_option(*choices: str) -> Callable[[F], F]:
    """``--format`` (the ``output_format`` parameter): one of ``choices``, the first by default."""
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(choices),
        default=choices[0],
        show_default=True,
    )


def selection_options(command: F) -> F:
    """``--software``, ``--benchmark`` and ``--system`` (each repeatable, shell globs): the
    ``selection`` parameter, a :class:`~tracker.records.keys.Selection`."""

    options = [
        click.option(
            f"--{name}",
            f"select_{name}",
            multiple=True,
            metavar="GLOB",
            help=f"Only series of this {name} (a shell glob such as {example}; repeat for more).",
        )
        for name, example in (
            ("software", "'mylib*'"),
            ("benchmark", "'llama2-70b-*'"),
            ("system", "'*GB300*'"),
        )
    ]
    for option in reversed(options):
        command = option(command)
    return command


def selection_of(
    software: tuple[str, ...], benchmark: tuple[str, ...], system: tuple[str, ...]
) -> Selection:
    """The :class:`Selection` of the three options' values."""
    return Selection(software=tuple(software), benchmark=tuple(benchmark), system=tuple(system))


def terminal_width() -> int | None:
    """The width to fit: the terminal's (``COLUMNS`` first) when stdout is one, else
    ``COLUMNS`` when set; ``None`` (never cut) for a pipe or a file."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None
