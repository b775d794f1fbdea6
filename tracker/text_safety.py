"""Text from labels and files, made safe for the sinks that interpret it.

* :func:`csv_cell`: a spreadsheet opening a CSV file runs a text cell that
  starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return, which
  some strip first) as a formula. Such a cell gets a leading ``'`` (OWASP's
  advice for CSV injection), which spreadsheets show as text; numbers (``int``,
  ``float``, ``bool``) are never changed, so ``-8.0`` stays ``-8.0``.
* :func:`chart_text`: plotly.js renders a subset of HTML in every text it draws
  (trace names, tick labels, hover text, axis titles, annotations), links
  included; ``<``, ``>`` and ``&`` become entities, which plotly shows as the
  characters themselves.
* :func:`terminal_text`: a terminal runs escape sequences (colours, cursor
  moves, window titles, hyperlinks, clearing the screen) and obeys other
  control characters; every label the CLI prints goes through it, which shows
  each C0 and C1 control character, DEL and each bidirectional-override
  character as visible text (``\\x1b``, ``\\x9b``, ``\\u202e``). Newlines
  in a label are shown as ``\\n`` too: one label, one line.
* :func:`markdown_text`: GitHub renders Markdown links, images, HTML and bare
  URLs in the gate's step summary; the characters that start them are
  backslash-escaped (``\\[``, ``\\<``, ``\\&``, ``https\\://``, ``www\\.``),
  as is ``|`` (a table cell's end), after :func:`terminal_text`. Other
  Markdown (``_``, ``*``, parentheses) is left as it is: it can only change
  how a label looks, never make it a link.
* :func:`json_text`: JSON text whose strings may hold the characters
  :func:`terminal_text` escapes, with each of them as a ``\\uXXXX`` escape
  (``json.dumps`` escapes C0 characters, but with ``ensure_ascii=False`` not
  DEL, C1 or bidirectional overrides); the JSON means the same.
* :func:`xml_text`: XML 1.0 has no way to write most C0 control characters (nor
  U+FFFE, U+FFFF or a lone surrogate), so a label holding one would make the
  gate's JUnit file unreadable; they are shown as visible escapes (``\\x1b``), as
  are C1 and bidirectional-override characters (what :func:`terminal_text` shows).
  Tabs and newlines stay. Markup characters are left to the XML writer.
* :func:`is_safe_link`: a link target written into Markdown or HTML may only be
  ``http``, ``https`` or relative: ``javascript:``, ``data:``, ``file:`` and the
  like (however written: ``JaVaScRiPt:``, ``java\tscript:``, ``//host``) never are.

Standard library only: the report and the CLI both import it.
"""

from __future__ import annotations

import re
from typing import TypeVar

__all__ = [
    "CSV_FORMULA_STARTS",
    "chart_text",
    "chart_value",
    "csv_cell",
    "is_safe_link",
    "json_text",
    "markdown_text",
    "terminal_text",
    "xml_text",
]

CSV_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a text cell as a formula."""

_CHART_ENTITIES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})

_BIDI_CONTROLS = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_TERMINAL_ESCAPES = {
    **{code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0))},
    **{code: f"\\u{code:04x}" for code in _BIDI_CONTROLS},
    ord("\t"): "\\t",
    ord("\n"): "\\n",
    ord("\r"): "\\r",
}
_JSON_RAW_CONTROLS = re.compile("[\x7f-\x9f" + "".join(chr(code) for code in _BIDI_CONTROLS) + "]")
_MARKDOWN_SPECIAL = re.compile(r"[\\`\[\]<>&|]|:(?=//)|(?<=www)\.", re.IGNORECASE)

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


def terminal_text(text: str) -> str:
    """``text`` safe to print to a terminal: control characters shown as escapes.

    >>> terminal_text("v1\\x1b]0;pwned\\x07 \\u202eevil\\nnext")
    'v1\\\\x1b]0;pwned\\\\x07 \\\\u202eevil\\\\nnext'
    """
    return text.translate(_TERMINAL_ESCAPES)


def markdown_text(text: str) -> str:
    """``text`` as Markdown that shows it literally and links nowhere (after :func:`terminal_text`).

    >>> markdown_text("![x](https://e.test/a.png) <img> www.e.test a|b")
    '!\\\\[x\\\\](https\\\\://e.test/a.png) \\\\<img\\\\> www\\\\.e.test a\\\\|b'
    """
    return _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(0), terminal_text(text))


def json_text(text: str) -> str:
    """JSON text (``json.dumps`` output) with DEL, C1 and bidi-override characters as escapes.

    >>> json_text('{"v": "1\\x9b2J\\u202e"}')
    '{"v": "1\\\\u009b2J\\\\u202e"}'
    """
    return _JSON_RAW_CONTROLS.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*):", re.IGNORECASE)
_IGNORED_IN_URLS = re.compile(r"[\x00-\x20\x7f-\x9f]")
"""What browsers strip from a URL before reading its scheme (``java\tscript:``)."""


def is_safe_link(target: str) -> bool:
    """Whether ``target`` may be a link in Markdown or HTML: an ``http`` or ``https`` URL
    with a host, or a relative path (no scheme, not ``//host``, no backslash).

    >>> [is_safe_link(t) for t in ("https://ci.test/site", "site/x.html", "javascript:1")]
    [True, True, False]
    >>> [is_safe_link(t) for t in ("java\tscript://x", "//evil.test", "data:text/html,x")]
    [False, False, False]
    """
    bare = _IGNORED_IN_URLS.sub("", target)
    if "\\" in bare:
        return False
    scheme = _SCHEME.match(bare)
    if scheme is None:
        return not bare.startswith("//")
    return scheme.group(1).lower() in ("http", "https") and bare[scheme.end() :].startswith("//")


_XML_ESCAPES = {
    **{c: e for c, e in _TERMINAL_ESCAPES.items() if c not in (ord("\t"), ord("\n"))},
    ord("\r"): "\\r",
    0xFFFE: "\\ufffe",
    0xFFFF: "\\uffff",
    **{code: f"\\u{code:04x}" for code in range(0xD800, 0xE000)},
}


def xml_text(text: str) -> str:
    """``text`` that XML 1.0 can hold: control characters (but tab and newline) shown as
    escapes; ``<``, ``&`` and quotes are left to the writer (``xml.sax.saxutils``).

    >>> xml_text("a\\x1bb\\tc")
    'a\\\\x1bb\\tc'
    """
    return text.translate(_XML_ESCAPES)
