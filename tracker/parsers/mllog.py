"""MLPerf logging lines (``:::MLLOG {json}``), as MLPerf Training result files hold them.

Every line that contains ``:::MLLOG `` carries one JSON object after that
token; text before it (a rank prefix such as `` 0: ``) is allowed and other
lines are ignored, as the MLCommons ``mlperf-logging`` package reads them.
The object has ``key``, ``value``, ``time_ms`` and ``metadata`` (``file``,
``lineno``; ``status`` on ``run_stop``; ``epoch_num`` or ``samples_count`` on
evaluations). Lines need not be in ``time_ms`` order.

Parsing is line by line over an iterable of ``bytes`` (a log may be large;
nothing but the lines asked for is kept). A line whose payload is not a JSON
object with a string ``key`` and a numeric ``time_ms`` (a truncated line, a
non-JSON payload) raises :class:`~tracker.errors.ParseError` naming the file
and line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from tracker.errors import ParseError

__all__ = ["MLLOG_TOKEN", "LogLine", "iter_mllog", "parse_mllog_line"]

MLLOG_TOKEN = b":::MLLOG"
_TOKEN_LENGTH = len(MLLOG_TOKEN)
_MAX_SHOWN = 60
_EMPTY: Mapping[str, Any] = {}
_DECODE = json.JSONDecoder().decode
_NUMBERS = (int, float)


class LogLine(NamedTuple):
    """One ``:::MLLOG`` line: its 1-based line number in the file and its fields.

    (A named tuple: a log has a line per second of power readings, and a tuple
    is the cheapest record to make for each.)
    """

    line: int
    key: str
    value: Any
    time_ms: float
    metadata: Mapping[str, Any]
    event_type: str = ""


def iter_mllog(lines: Iterable[bytes], *, path: str) -> Iterator[LogLine]:
    """Every ``:::MLLOG`` line of a file, in file order; other lines are skipped."""
    for number, raw in enumerate(lines, start=1):
        start = raw.find(MLLOG_TOKEN)
        if start >= 0:
            yield parse_mllog_line(raw[start + _TOKEN_LENGTH :], path=path, line=number)


def parse_mllog_line(payload: bytes, *, path: str, line: int) -> LogLine:
    """The fields of one line, given what follows the ``:::MLLOG`` token."""
    try:
        document = _DECODE(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        reason = f"the :::MLLOG payload is not JSON ({_short(error)}): {_shown(payload)}"
        raise ParseError(path, reason, line=line) from None
    if not isinstance(document, dict):
        raise ParseError(path, "the :::MLLOG payload is not a JSON object", line=line)
    key = document.get("key")
    if not isinstance(key, str) or not key:
        raise ParseError(path, "the :::MLLOG line has no 'key'", line=line)
    time_ms: float = document.get("time_ms")  # type: ignore[assignment]  # checked next
    if type(time_ms) not in _NUMBERS:  # bool is not a number here
        raise ParseError(path, f"the :::MLLOG line {key!r} has no numeric 'time_ms'", line=line)
    if not math.isfinite(time_ms):
        raise ParseError(path, f"the :::MLLOG line {key!r} has a 'time_ms' of {time_ms}", line=line)
    metadata = document.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise ParseError(path, f"the :::MLLOG line {key!r} has a non-object 'metadata'", line=line)
    event = document.get("event_type")
    event = event if isinstance(event, str) else ""
    return LogLine(line, key, document.get("value"), time_ms, metadata or _EMPTY, event)


def _short(error: Exception) -> str:
    text = str(error)
    return text if len(text) <= _MAX_SHOWN else f"{text[:_MAX_SHOWN]}..."


def _shown(payload: bytes) -> str:
    text = payload.strip().decode("utf-8", errors="replace")
    return repr(text if len(text) <= _MAX_SHOWN else f"{text[:_MAX_SHOWN]}...")
