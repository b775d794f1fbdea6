"""Options several commands share, declared once (as sqlite-utils does)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

__all__ = ["format_option"]

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
