"""The explicit order of software versions.

Versions are ordered by a sort key computed from the label, never by the
order of ingestion. A label that PEP 440 accepts (``2.0.13``, ``v6.0``,
``1.0.0rc1``, ``1.0.0-rc.1``, ``2.0.post1``) is ordered as PEP 440 says;
any other label (``nightly-2026-11-02``, ``r24.10``) is ordered naturally,
digit runs compared as numbers, after every PEP 440 label. When every version
of one software has a release date, the dates decide instead.

A version is its label (surrounding whitespace is removed when a label is read,
:func:`tracker.records.results.checked_label`): ``v1.0``, ``1.0`` and ``1.0.0`` are three
versions, shown as written (MLPerf rounds are spelled ``v5.1``). PEP 440 puts
them at one place in the order (:func:`version_place_key`), and the label text
decides among them (``1.0 < 1.0.0 < v1.0``), so that two versions have the same
sort key exactly when they are the same version and the order never depends on
the order of ingestion.

The sort key of a label of at most ``LABEL_MAX["software_version"]``
characters has at most :data:`SORT_KEY_MAX` characters (the ``sort_key``
column): numbers are written with their length first (``7`` is ``17``, ``13`` is
``213``), not padded to a fixed width.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Final, TypeVar

from packaging.version import Version

from tracker.records.results import VersionInfo

__all__ = [
    "SORT_KEY_MAX",
    "order_versions",
    "version_orders",
    "version_place_key",
    "version_sort_key",
]

SORT_KEY_MAX: Final = 400
"""The most characters a stored sort key may have (the ``sort_key`` column)."""
_DIGITS_MAX = 18
"""Numbers longer than this many digits are ordered as the largest 18-digit number."""
# Phase markers sort below "." so that "2" + any phase sorts before "2.0.1".
_DEV, _PRE_A, _PRE_B, _PRE_RC, _FINAL, _POST = "!", "#", "$", "%", "*", "+"
_PRE_MARKERS = {"a": _PRE_A, "b": _PRE_B, "rc": _PRE_RC}
_DIGITS = re.compile(r"([0-9]+)")
_SEPARATOR = " "
"""Between a label's place and its text in the sort key: below every character of a
place, so that a place that is a prefix of another still sorts first."""
_LOWEST_IN_PLACE = "!"
"""Characters of a natural label below this one (a space, control characters) are
written as this one, so that no place holds a character at or below the separator."""


def _number(value: int | str) -> str:
    """A number (or a run of ASCII digits) as text whose plain order is the numbers' order.

    Its count of digits comes first, then the digits: one character for 1 to 8
    digits (``1``..``8``), two for 9 to 18 (``90``..``99``); no text is a prefix
    of another's, so a number is compared whole before what follows it.
    """
    digits = str(value).lstrip("0") or "0"
    if len(digits) > _DIGITS_MAX:
        digits = "9" * _DIGITS_MAX
    count = len(digits)
    return (str(count) if count < 9 else f"9{count - 9}") + digits


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
    return ".".join(_number(s) if s.isdigit() else "0" + s for s in local.split("."))


def _natural_key(label: str) -> str:
    chunks = _DIGITS.split(label)
    text = "".join(_number(c) if c.isdigit() else c for c in chunks)
    return "".join(_lower(c) if c >= _LOWEST_IN_PLACE else _LOWEST_IN_PLACE for c in text)


def _lower(character: str) -> str:
    """A character in lower case, kept as it is where that would lengthen it (``İ``)."""
    lower = character.lower()
    return lower if len(lower) == 1 else character


@lru_cache(maxsize=8192)
def version_place_key(label: str) -> str:
    """The key of a label's place in the order: the same for the spellings PEP 440
    says are one version (``1.0``, ``1.0.0``, ``v1.0``), as version ranges compare them.

    >>> version_place_key("v1.0") == version_place_key("1.0.0")
    True
    """
    try:
        return "1" + _pep440_key(Version(label))
    except ValueError:  # InvalidVersion, or a number too long for int()
        return "2" + _natural_key(label.strip())


@lru_cache(maxsize=8192)
def version_sort_key(label: str) -> str:
    """A string whose plain (byte-wise) order is the order of the versions; equal
    for two labels exactly when they are the same label (see the module's text).

    >>> version_sort_key("2.0.9") < version_sort_key("2.0.13")
    True
    >>> version_sort_key("1.0rc1") < version_sort_key("1.0") < version_sort_key("1.0.post1")
    True
    >>> version_sort_key("1.0") < version_sort_key("1.0.0") < version_sort_key("v1.0")
    True
    """
    return version_place_key(label) + _SEPARATOR + label


_V = TypeVar("_V", bound=VersionInfo)


def order_versions(versions: Iterable[_V]) -> list[_V]:
    """Versions of one software in their explicit order.

    Release dates decide when every version has one; otherwise the sort key.
    The keys are computed from the labels, so the order does not depend on the
    ``sort_key`` a database stored (one written by an older tracker).
    """
    items = list(versions)
    if items and all(v.release_date is not None for v in items):
        return sorted(items, key=lambda v: (v.release_date, version_sort_key(v.version)))
    return sorted(items, key=lambda v: version_sort_key(v.version))


def version_orders(versions: Iterable[VersionInfo]) -> dict[str, tuple[str, ...]]:
    """Each software's versions in their explicit order, by software name: the one place a
    run orders the versions it was given."""
    by_software: dict[str, list[VersionInfo]] = {}
    for v in versions:
        by_software.setdefault(v.software, []).append(v)
    return {
        software: tuple(v.version for v in order_versions(found))
        for software, found in sorted(by_software.items())
    }
