"""Long tables split into pages of at most :data:`PAGE_ROWS` rows, linked to each other.

A comparison of 10,000 series or 30,000 findings is one page per thousand rows:
the first keeps the page's usual path (``compare/<slug>.html``,
``findings.html``), the next ones add ``-2``, ``-3``… (:func:`page_href`), and
every page links to all of them with relative links. Rows keep their order
across pages (worst first, open first); a click on a column sorts one page.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from tracker.report.common import PAGE_ROWS, PageLink, page_href

__all__ = ["PAGE_ROWS", "Pager", "paginate"]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Pager:
    """Where one page is among the pages of a table."""

    number: int = field(metadata={"help": "This page's number, from 1."})
    count: int = field(metadata={"help": "How many pages the table has (at least 1)."})
    first_row: int = field(metadata={"help": "Number of the page's first row, from 1."})
    last_row: int = field(metadata={"help": "Number of its last row."})
    total_rows: int = field(metadata={"help": "Rows over all pages."})
    links: tuple[PageLink, ...] = field(
        metadata={"help": "Every page (text: its number), relative to this page's folder."}
    )
    previous: str = field(metadata={"help": "The page before, or empty on the first."})
    next: str = field(metadata={"help": "The page after, or empty on the last."})


def _local(href: str) -> str:
    """A path relative to the site root, as seen from a page in the same folder."""
    return href.rpartition("/")[2]


def paginate(
    rows: Sequence[_T], first: str, *, size: int = PAGE_ROWS
) -> Iterator[tuple[str, Pager, Sequence[_T]]]:
    """(path, pager, rows) of each page of ``rows``; ``first`` is the first page's path.

    No rows still give one (empty) page.
    """
    count = max(1, -(-len(rows) // size))
    hrefs = [page_href(first, n) for n in range(1, count + 1)]
    links = tuple(PageLink(str(n), _local(h)) for n, h in enumerate(hrefs, start=1))
    for index, href in enumerate(hrefs):
        chunk = rows[index * size : (index + 1) * size]
        pager = Pager(
            number=index + 1,
            count=count,
            first_row=index * size + 1 if chunk else 0,
            last_row=index * size + len(chunk),
            total_rows=len(rows),
            links=links,
            previous=_local(hrefs[index - 1]) if index else "",
            next=_local(hrefs[index + 1]) if index + 1 < count else "",
        )
        yield href, pager, chunk
