"""The explicit order of software versions.

Versions are ordered by a sort key computed from the label, never by the
order of ingestion. A label that PEP 440 accepts (``2.0.13``, ``v6.0``,
``1.0.0rc1``, ``1.0.0-rc.1``, ``2.0.post1``) is ordered as PEP 440 says;
any other label (``nightly-2026-11-02``, ``r24.10``) is ordered naturally,
digit runs compared as numbers, after every PEP 440 label. When every version
of one software has a release date, the dates decide instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypeVar

from packaging.version import InvalidVersion, Version

from tracker.records import VersionInfo

__all__ = ["order_versions", "version_sort_key"]

_WIDTH = 12
# Phase markers sort below "." so that "2" + any phase sorts before "2.0.1".
_DEV, _PRE_A, _PRE_B, _PRE_RC, _FINAL, _POST = "!", "#", "$", "%", "*", "+"
_PRE_MARKERS = {"a": _PRE_A, "b": _PRE_B, "rc": _PRE_RC}
_DIGITS = re.compile(r"(\d+)")


def _number(value: int) -> str:
    return str(min(value, 10**_WIDTH - 1)).zfill(_WIDTH)


def _pep440_key(version: Version) -> str:
    release = list(version.release)
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    parts = [_number(version.epoch), "~", ".".join(_number(n) for n in release)]
    if version.pre is not None:
        parts += [_PRE_MARKERS[version.pre[0]], _number(version.pre[1])]
    elif version.dev is not None and version.post is None:
        parts += [_DEV]
    else:
        parts += [_FINAL]
    if version.post is not None:
        parts += [_POST, _number(version.post)]
    if version.dev is not None:
        parts += [_DEV, _number(version.dev)]
    else:
        parts += [_FINAL]
    if version.local is not None:
        parts += ["+", _local_key(version.local)]
    return "".join(parts)


def _local_key(local: str) -> str:
    """PEP 440 local segments: numbers sort above words, numbers compared as numbers."""
    return ".".join("1" + _number(int(s)) if s.isdigit() else "0" + s for s in local.split("."))


def _natural_key(label: str) -> str:
    chunks = _DIGITS.split(label.lower())
    return "".join(_number(int(c)) if c.isdigit() else c for c in chunks)


def version_sort_key(label: str) -> str:
    """A string whose plain (byte-wise) order is the order of the versions.

    >>> version_sort_key("2.0.9") < version_sort_key("2.0.13")
    True
    >>> version_sort_key("1.0rc1") < version_sort_key("1.0") < version_sort_key("1.0.post1")
    True
    """
    try:
        return "1" + _pep440_key(Version(label))
    except InvalidVersion:
        return "2" + _natural_key(label)


_V = TypeVar("_V", bound=VersionInfo)


def order_versions(versions: Iterable[_V]) -> list[_V]:
    """Versions of one software in their explicit order.

    Release dates decide when every version has one; otherwise the sort key.
    """
    items = list(versions)
    if items and all(v.release_date is not None for v in items):
        return sorted(items, key=lambda v: (v.release_date, v.sort_key, v.version))
    return sorted(items, key=lambda v: (v.sort_key, v.version))
