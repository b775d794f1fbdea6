"""Formatting for the report templates, registered as Jinja filters.

Templates only loop and branch; every number or label they show goes through
one of these functions, so the formatting has unit tests and one home.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

__all__ = [
    "FILTERS",
    "format_count",
    "format_direction",
    "format_invalid",
    "format_label",
    "format_number",
    "format_range",
    "format_repeats",
    "format_value",
]

_NO_VALUE = "\N{EM DASH}"


def format_number(value: float) -> str:
    """A number with 3-4 significant digits; whole numbers with thousands separators.

    >>> format_number(309777.6), format_number(12.3456), format_number(0.0035212)
    ('309,778', '12.35', '0.00352')
    """
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 999.5:
        return f"{value:,.0f}"
    if magnitude >= 1:
        return f"{value:.4g}"
    return f"{value:.3g}"


def format_value(value: float, unit: str) -> str:
    """A number followed by its unit: ``1,997 tokens/s``."""
    number = format_number(value)
    return f"{number} {unit}" if unit else number


def format_range(low: float, high: float, unit: str) -> str:
    """The spread of the samples: ``1,990 – 2,003 tokens/s``."""
    return format_value(low, "") + " \N{EN DASH} " + format_value(high, unit)


def format_direction(higher_is_better: bool) -> str:
    """Which way is better, in words."""
    return "higher is better" if higher_is_better else "lower is better"


def format_count(n: int, singular: str, plural: str | None = None) -> str:
    """A count and its noun: ``1 series``, ``1,200 samples``."""
    noun = singular if n == 1 else (plural if plural is not None else singular + "s")
    return f"{n:,} {noun}"


def format_repeats(n: int) -> str:
    """The number of samples behind a value: ``n=3``."""
    return f"n={n:,}"


def format_invalid(valid_count: int, n: int) -> str:
    """How many samples came from invalid runs: ``1 of 3 samples invalid``."""
    invalid = n - valid_count
    noun = "sample" if n == 1 else "samples"
    return f"{invalid:,} of {n:,} {noun} invalid"


def format_label(text: str) -> str:
    """A label, or an em dash when it is empty."""
    return text if text else _NO_VALUE


FILTERS: Mapping[str, Callable[..., str]] = {
    "format_count": format_count,
    "format_direction": format_direction,
    "format_invalid": format_invalid,
    "format_label": format_label,
    "format_number": format_number,
    "format_range": format_range,
    "format_repeats": format_repeats,
    "format_value": format_value,
}
"""Every filter the templates may use, by the name they use it under."""
