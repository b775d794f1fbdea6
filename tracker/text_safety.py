"""Text from labels and files, made safe for two sinks that interpret it: CSV and charts.

* :func:`csv_cell`: a spreadsheet opening a CSV file runs a text cell that
  starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return, which
  some strip first) as a formula. Such a cell gets a leading ``'`` (OWASP's
  advice for CSV injection), which spreadsheets show as text; numbers (``int``,
  ``float``, ``bool``) are never changed, so ``-8.0`` stays ``-8.0``.
* :func:`chart_text`: plotly.js renders a subset of HTML in every text it draws
  (trace names, tick labels, hover text, axis titles, annotations), links
  included; ``<``, ``>`` and ``&`` become entities, which plotly shows as the
  characters themselves.

Standard library only: the report and the CLI both import it.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["CSV_FORMULA_STARTS", "chart_text", "chart_value", "csv_cell"]

CSV_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a text cell as a formula."""

_CHART_ENTITIES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})

T = TypeVar("T")


def csv_cell(value: T) -> T | str:
    """``value`` as a CSV cell a spreadsheet cannot run: text starting like a formula
    gets a leading ``'``; anything that is not text is returned unchanged.

    >>> csv_cell("=HYPERLINK(1)"), csv_cell("-rc1"), csv_cell(-8.0), csv_cell("vllm")
    ("'=HYPERLINK(1)", "'-rc1", -8.0, 'vllm')
    """
    if isinstance(value, str) and value.startswith(CSV_FORMULA_STARTS):
        return "'" + value
    return value


def chart_text(text: str) -> str:
    """``text`` as plotly shows it literally: ``<``, ``>`` and ``&`` as entities.

    >>> chart_text('<a href="https://x">v1</a> & co')
    '&lt;a href="https://x"&gt;v1&lt;/a&gt; &amp; co'
    """
    return text.translate(_CHART_ENTITIES)


def chart_value(value: T) -> T | str:
    """A data value of a chart (an x or y coordinate, a category): text through
    :func:`chart_text` (a category is a tick label and the ``%{x}`` of hover
    text), numbers unchanged."""
    return chart_text(value) if isinstance(value, str) else value
