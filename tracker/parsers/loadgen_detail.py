"""LoadGen's machine log, ``mlperf_log_detail.txt``: one ``:::MLLOG {json}`` event per line.

Events are read line by line, the first occurrence of a key winning, as the
MLCommons checker reads them. Lines in LoadGen's own layout are read in place
(the key, then only the value is decoded), which keeps huge logs cheap; any
other line is decoded in full and reported with its number if it is not JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tracker.errors import ParseError
from tracker.parsers.json_fields import check_nesting

__all__ = ["Entry", "parse_detail_log"]

_MARKER = b":::MLLOG"
_BOM = b"\xef\xbb\xbf"
_SKIPPED_KEYS = frozenset({"loaded_qsl_set", "loadgen_file_sha1", "loadgen_git_log_message"})


@dataclass(frozen=True, slots=True)
class Entry:
    """A value read from a log and the 1-based line it sits on."""

    value: object
    line: int


def parse_detail_log(
    lines: Iterable[bytes], *, path: str, keep: Callable[[str], bool] | None = None
) -> dict[str, Entry]:
    """Read a detail log line by line into ``{key: Entry}`` (first occurrence wins).

    The first non-empty line must be a ``:::MLLOG`` event, as the checker
    demands (a UTF-8 byte-order mark before it is skipped, as on the summary log);
    later lines without the marker are skipped, as its non-strict mode does.
    With ``keep``, only the keys it accepts are decoded and returned (the others
    are skipped unread, which is what makes huge logs cheap). When ``lines``
    also carries the whole file as a ``buffer`` attribute (a tree that read a
    small file at once), the lines are scanned in place, without copying them.
    """
    events = _DetailEvents(path, keep)
    buffer = getattr(lines, "buffer", None)
    if isinstance(buffer, bytes):
        position, number, size = len(_BOM) if buffer.startswith(_BOM) else 0, 0, len(buffer)
        while position < size:
            number += 1
            end = buffer.find(b"\n", position)
            end = size if end < 0 else end + 1
            events.take(buffer, position, end, number)
            position = end
    else:
        for number, raw in enumerate(lines, start=1):
            skip = len(_BOM) if number == 1 and raw.startswith(_BOM) else 0
            events.take(raw, skip, len(raw), number)
    if not events.seen:
        raise ParseError(path, "empty LoadGen detail log: no ':::MLLOG' events")
    return events.found


class _DetailEvents:
    """The events of one detail log, taken one line at a time."""

    __slots__ = ("found", "keep", "names", "path", "seen")

    def __init__(self, path: str, keep: Callable[[str], bool] | None) -> None:
        self.found: dict[str, Entry] = {}
        self.keep = keep
        self.names = _names(keep)
        self.path = path
        self.seen = False

    def _wanted(self, key: str) -> bool:
        return (
            key not in self.found
            and key not in _SKIPPED_KEYS
            and (self.keep is None or self.keep(key))
        )

    def _name(self, raw: bytes) -> str | None:
        """The key ``raw`` names, ``None`` when it is never wanted (remembered, up to a bound)."""
        key = raw.decode("utf-8", "replace")
        name = key if key not in _SKIPPED_KEYS and (self.keep is None or self.keep(key)) else None
        if len(self.names) < _MAX_NAMES:
            self.names[raw] = name
        return name

    def take(self, data: bytes, start: int, end: int, number: int) -> None:
        """The line ``data[start:end]``: an event in LoadGen's layout is read in place."""
        if data.startswith(_KEY_HEAD, start, end):
            self.seen = True
            quote = data.find(b'"', start + len(_KEY_HEAD), end)
            if quote > 0 and data.startswith(_VALUE_HEAD, quote, end):
                raw = data[start + len(_KEY_HEAD) : quote]
                try:
                    key = self.names[raw]
                except KeyError:  # not seen yet in any log: decode and judge it once
                    key = self._name(raw)
                if key is None or key in self.found:
                    return
                value = _fast_value(data, quote + len(_VALUE_HEAD), end)
                if value is not _NO_VALUE:
                    self.found[key] = Entry(value, number)
                    return
        line = data[start:end].strip()
        if not line:
            return
        if not line.startswith(_MARKER):
            if not self.seen:
                raise ParseError(
                    self.path, "not a LoadGen detail log: no ':::MLLOG' marker", line=number
                )
            return
        self.seen = True
        key, value = _decode_event(line, path=self.path, number=number)
        if self._wanted(key):
            self.found[key] = Entry(value, number)


_KEY_HEAD = _MARKER + b' {"key": "'
_VALUE_HEAD = b'", "value": '
_TIME_HEAD = b', "time_ms": '
_NO_VALUE = object()
_JSON_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_PLAIN_STRING = re.compile(rb'"([^"\\\x00-\x1f]*)"')
"""A JSON string without escapes or control characters: its bytes are its text."""
_LITERALS = {b"true": True, b"false": False, b"null": None}
_MAX_NAMES = 4096
_NAMES: dict[Callable[[str], bool] | None, dict[bytes, str | None]] = {}


def _names(keep: Callable[[str], bool] | None) -> dict[bytes, str | None]:
    """The keys already judged under ``keep``: LoadGen logs share their ~100 keys."""
    if keep not in _NAMES and len(_NAMES) >= 8:
        _NAMES.clear()  # many different filters (none in the tracker itself): start again
    return _NAMES.setdefault(keep, {})


def _fast_value(data: bytes, start: int, end: int) -> object:
    """The value of an event in LoadGen's exact layout, decoding only the value.

    The value runs to the last ``, "time_ms": `` of a line that ends in ``}}``.
    Returns ``_NO_VALUE`` for anything else (a backslash in the key, a cut
    line), which is then decoded in full and reported if it is not valid JSON.
    """
    tail = data.rfind(_TIME_HEAD, start, end)
    if tail < 0 or data.rfind(b"}}", tail, end) < 0:
        return _NO_VALUE
    text = data[start:tail]
    try:
        if text.isdigit() and (text[0] != 48 or len(text) == 1):  # no leading zero (48: "0")
            return int(text)  # the common case, without the regular expression
        if text in _LITERALS:
            return _LITERALS[text]
        plain = _PLAIN_STRING.fullmatch(text)
        if plain is not None:
            return plain.group(1).decode("utf-8", "surrogatepass")  # as json.loads decodes
        number = _JSON_NUMBER.fullmatch(text)
        if number is not None:
            return float(text) if number.group(1) or number.group(2) else int(text)
        value = json.loads(text)
    except (ValueError, RecursionError):  # ValueError: also an int of over 4300 digits
        return _NO_VALUE
    return _NO_VALUE if isinstance(value, list | dict) else value  # nesting is checked in full


def _decode_event(line: bytes, *, path: str, number: int) -> tuple[str, object]:
    try:
        event = json.loads(line[len(_MARKER) :])
    except (ValueError, RecursionError) as error:
        raise ParseError(path, f"event is not valid JSON ({error})", line=number) from None
    if not isinstance(event, dict) or not isinstance(event.get("key"), str):
        raise ParseError(path, "event has no 'key' string", line=number)
    check_nesting(event, path=path, line=number)
    return event["key"], event.get("value")
