"""Slugs and links of the report's pages: pure functions of labels, stdlib only.

Links are relative to the site root (``benchmark/<slug>.html``); a page in a
sub-folder gets ``root = "../"`` from the renderer and prefixes them. The gate
imports these to link into a report without loading the report's renderer.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache

__all__ = ["benchmark_href", "compare_href", "page_href", "slug", "system_href"]

_UNSAFE = re.compile(r"[^a-z0-9]+")


@lru_cache(maxsize=65536)
def slug(*parts: str) -> str:
    """A file-name-safe, deterministic slug of ``parts``, unique per distinct ``parts``.

    Readable ASCII (lower-case letters, digits and ``-``, at most 48 characters)
    followed by 10 hex digits of a SHA-256 of the exact parts, so names that
    differ only in case, punctuation or non-ASCII letters never share a file.
    """
    readable = _UNSAFE.sub("-", "-".join(parts).lower()).strip("-")[:48].strip("-")
    digest = hashlib.sha256(json.dumps(list(parts)).encode()).hexdigest()[:10]
    return f"{readable}-{digest}" if readable else digest


def benchmark_href(benchmark: str, scenario: str) -> str:
    """The page of one benchmark and scenario."""
    return f"benchmark/{slug(benchmark, scenario)}.html"


def system_href(system_key: str) -> str:
    """The page of one system, by its identity (``submitter/name``)."""
    return f"system/{slug(system_key)}.html"


def compare_href(software: str, baseline: str, candidate: str) -> str:
    """The (first) comparison page of one version pair of one software."""
    return f"compare/{slug(software, baseline, candidate)}.html"


def page_href(first: str, number: int) -> str:
    """Page ``number`` (from 1) of a paginated page whose first page is ``first``.

    >>> page_href("compare/a-0123456789.html", 1), page_href("findings.html", 3)
    ('compare/a-0123456789.html', 'findings-3.html')
    """
    return first if number == 1 else f"{first.removesuffix('.html')}-{number}.html"
