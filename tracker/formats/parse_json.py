"""Typed access to untrusted JSON: every mistake is a ParseError naming the file and the field.

Field names in messages are dotted paths from the document root
(``input_config.phases[1].concurrency``), so a user can find the spot in the
file. Numbers exclude booleans (``true`` is not 1) and must be finite (a whole
number too big for a double is not). Documents nest at most ``MAX_NESTING``
deep, so nothing that walks or prints them can exhaust the stack.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeGuard

from tracker.errors import ParseError
from tracker.records.results import ExtraValue

__all__ = [
    "JsonObject",
    "MAX_NESTING",
    "as_number",
    "check_nesting",
    "decode_json",
    "decode_json_lines",
    "flatten_scalars",
    "get_int",
    "get_mapping",
    "get_number",
    "get_sequence",
    "get_str",
    "is_number",
]


JsonObject = Mapping[str, Any]
_MAX_EXACT_INT = 2**53
MAX_NESTING = 64
"""The deepest nesting of arrays and objects accepted (real result files nest about 10 deep)."""
_TOO_MANY_DIGITS = f"a number of more than {sys.get_int_max_str_digits()} digits"


def decode_json(data: bytes, *, path: str) -> Any:
    """The JSON document in ``data``; truncated or invalid JSON names the line."""
    text = _decode_text(data, path=path)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ParseError(path, f"not valid JSON ({error.msg})", line=error.lineno) from None
    except ValueError:  # the only other one: an integer too long for int()
        raise ParseError(path, f"not valid JSON ({_TOO_MANY_DIGITS})") from None
    except RecursionError:
        raise ParseError(path, "not valid JSON (nested too deeply)") from None
    check_nesting(document, path=path)
    return document


def decode_json_lines(data: bytes, *, path: str) -> Iterator[tuple[int, Any]]:
    """``(line number, document)`` for each non-empty line of a JSON-lines file."""
    text = _decode_text(data, path=path)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            document = json.loads(line)
        except json.JSONDecodeError as error:
            raise ParseError(path, f"not valid JSON ({error.msg})", line=number) from None
        except ValueError:  # the only other one: an integer too long for int()
            raise ParseError(path, f"not valid JSON ({_TOO_MANY_DIGITS})", line=number) from None
        except RecursionError:
            raise ParseError(path, "not valid JSON (nested too deeply)", line=number) from None
        check_nesting(document, path=path, line=number)
        yield number, document


def check_nesting(
    document: object, *, path: str, line: int | None = None, max_values: int | None = None
) -> None:
    """Raise a ParseError if ``document`` nests deeper than ``MAX_NESTING`` (a cycle does).

    With ``max_values``, also if it holds more values than that, counting a
    value each time it is reached (YAML aliases can make a small file a huge tree).
    """
    if not isinstance(document, dict | list):
        return
    stack: list[tuple[dict[Any, Any] | list[Any], int]] = [(document, 0)]
    values = 1
    while stack:
        value, depth = stack.pop()
        if depth >= MAX_NESTING:
            raise ParseError(
                path, f"nested more than {MAX_NESTING} deep: is this the right file?", line=line
            )
        children = value.values() if isinstance(value, dict) else value
        values += len(children)
        if max_values is not None and values > max_values:
            raise ParseError(path, f"more than {max_values} values (repeated aliases?)", line=line)
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


def _decode_text(data: bytes, *, path: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ParseError(path, f"not UTF-8 text (byte {error.start})") from None


def is_number(value: object) -> TypeGuard[int | float]:
    """Whether ``value`` is a finite JSON number (not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # a whole number beyond the range of a double
        return False


def as_number(value: object, *, path: str, field: str, line: int | None = None) -> float:
    """``value`` as a float, or a ParseError naming ``field``."""
    if not is_number(value):
        raise ParseError(
            path, f"field '{field}' is {_shown(value)}, expected a finite number", line=line
        )
    return float(value)


def get_mapping(
    obj: JsonObject, key: str, *, path: str, field: str, required: bool = True
) -> JsonObject:
    """The object at ``obj[key]`` (``{}`` when absent and not required)."""
    value = obj.get(key)
    if value is None and not required:
        return {}
    if not isinstance(value, Mapping):
        raise ParseError(path, f"field '{field}' is {_shown(value)}, expected an object")
    return value


def get_sequence(
    obj: JsonObject, key: str, *, path: str, field: str, required: bool = True
) -> Sequence[Any]:
    """The array at ``obj[key]`` (``[]`` when absent and not required)."""
    value = obj.get(key)
    if value is None and not required:
        return []
    if not isinstance(value, list):
        raise ParseError(path, f"field '{field}' is {_shown(value)}, expected an array")
    return value


def get_number(
    obj: JsonObject, key: str, *, path: str, field: str, required: bool = True
) -> float | None:
    """The number at ``obj[key]``; ``None`` when absent (or null) and not required."""
    value = obj.get(key)
    if value is None and not required:
        return None
    return as_number(value, path=path, field=field)


def get_int(
    obj: JsonObject, key: str, *, path: str, field: str, required: bool = True
) -> int | None:
    """A whole number at ``obj[key]`` (``16`` or ``16.0``, never ``16.5`` or ``"16"``)."""
    number = get_number(obj, key, path=path, field=field, required=required)
    if number is None:
        return None
    if not number.is_integer():
        raise ParseError(path, f"field '{field}' is {number!r}, expected a whole number")
    return int(number)


def get_str(
    obj: JsonObject, key: str, *, path: str, field: str, required: bool = True
) -> str | None:
    """The string at ``obj[key]``; ``None`` when absent (or null) and not required."""
    value = obj.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise ParseError(path, f"field '{field}' is {_shown(value)}, expected a string")
    return value


def flatten_scalars(
    obj: JsonObject, *, prefix: str = "", skip: frozenset[str] = frozenset()
) -> dict[str, ExtraValue]:
    """Every scalar leaf of ``obj`` as ``{"a_b_c": value}`` (arrays and nulls are left out).

    Keys in ``skip`` (at the top level) are left out. Whole numbers too large to
    survive a round trip through a double (seeds, ids) are kept as strings.
    """
    flat: dict[str, ExtraValue] = {}
    for key, value in obj.items():
        if not prefix and key in skip:
            continue
        name = f"{prefix}_{key}" if prefix else str(key)
        if isinstance(value, Mapping):
            flat.update(flatten_scalars(value, prefix=name))
        elif isinstance(value, bool | str):
            flat[name] = value
        elif isinstance(value, int) and abs(value) >= _MAX_EXACT_INT:
            flat[name] = str(value)
        elif is_number(value):
            flat[name] = value
    return flat


def _shown(value: object) -> str:
    if value is None:
        return "missing or null"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    try:
        text = json.dumps(value)
    except TypeError:  # a date, bytes or set that a YAML file holds
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
