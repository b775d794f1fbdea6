"""System description JSON of an MLPerf submission (``systems/<system>.json``).

Counts come as int or string (``18``, ``"1"``) and are 0 for CPU-only
systems, whose ``accelerator_model_name`` is ``"N/A"`` (stored as no
accelerator). Total accelerators are the checker's ``nodes × per node``,
except where the accelerator string lists its own counts, as heterogeneous
clusters do (``"MI325X ... (x16), MI300X ... (x8)"`` → 24): the product is
wrong there. ``framework`` and ``other_software_stack`` (a string or an
object) become the stack description; the raw JSON text is kept as it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from tracker.errors import ParseError
from tracker.parsers.json_fields import check_nesting
from tracker.records import SystemRecord

__all__ = ["SystemDescription", "clean_accelerator", "parse_system_json", "total_accelerators"]

_AVAILABILITY = {
    "available": "available",
    "preview": "preview",
    "rdi": "rdi",
    "research": "rdi",
    "available on-premise": "available",
    "available cloud": "available",
}
_NO_ACCELERATOR = frozenset({"", "n/a", "na", "none", "-", "cpu"})
_COUNT_MARK = re.compile(r"\(\s*x\s*(\d{1,7})\s*\)", re.IGNORECASE)
_MAX_COUNT = 2**31 - 1  # counts are INTEGER columns


@dataclass(frozen=True, slots=True)
class SystemDescription:
    """The fields of a system JSON the tracker uses, plus the raw text."""

    record: SystemRecord
    system_name: str
    system_type: str
    software_stack: str | None
    operating_system: str | None


def parse_system_json(
    data: bytes, *, path: str, platform: str, submitter: str, division: str
) -> SystemDescription:
    """Parse ``systems/<platform>.json`` of ``submitter`` in ``division``.

    The folder names identify the system (``submitter/platform``), as in the
    published table; the JSON's own ``submitter`` may differ in case (``DELL``).
    """
    try:
        text = data.decode("utf-8-sig")
        document = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ParseError(path, f"not a valid system description JSON ({error})") from None
    check_nesting(document, path=path)
    if not isinstance(document, dict):
        raise ParseError(path, "a system description must be a JSON object")
    per_node = _document_count(document, "accelerators_per_node", path)
    nodes = _document_count(document, "number_of_nodes", path)
    accelerator = clean_accelerator(_document_text(document, "accelerator_model_name"))
    record = SystemRecord(
        name=platform,
        submitter=submitter,
        accelerator=accelerator,
        accelerators_per_node=per_node,
        nodes=nodes,
        accelerators_total=total_accelerators(accelerator, nodes, per_node),
        host_cpu=_document_text(document, "host_processor_model_name"),
        division=division,
        availability=_availability(document),
        raw_json=text,
    )
    return SystemDescription(
        record=record,
        system_name=(_document_text(document, "system_name") or platform),
        system_type=(_document_text(document, "system_type") or ""),
        software_stack=_stack(document),
        operating_system=_document_text(document, "operating_system"),
    )


def _document_text(document: Mapping[str, object], key: str) -> str | None:
    value = document.get(key)
    if value is None or isinstance(value, dict | list):
        return None
    text = str(value).strip()
    return text or None


def _document_count(document: Mapping[str, object], key: str, path: str) -> int | None:
    value = document.get(key)
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, dict | list):
        raise ParseError(path, f"'{key}' is not a count; fix the system description")
    count = None
    if isinstance(value, int):
        count = value
    elif isinstance(value, float) and value.is_integer():
        count = int(value)
    elif match := re.match(r"\s*(\d{1,10})(?!\d)", str(value)):
        count = int(match.group(1))
    elif str(value).strip().lower() in ("", "n/a", "na", "-"):
        return None
    if count is None or not 0 <= count <= _MAX_COUNT:
        raise ParseError(path, f"'{key}' is {value!r}, not a count; fix the system description")
    return count


def clean_accelerator(name: str | None) -> str | None:
    """The accelerator model, or ``None`` for a CPU-only system (``"N/A"``, ``""``)."""
    if name is None or name.strip().lower() in _NO_ACCELERATOR:
        return None
    return name.strip()


def total_accelerators(
    accelerator: str | None, nodes: int | None, per_node: int | None
) -> int | None:
    """``nodes × per node``, unless the accelerator string counts them itself.

    ``None`` when unknown, or beyond what a count can be.
    """
    marked = sum(int(mark) for mark in _COUNT_MARK.findall(accelerator or ""))
    product = None if nodes is None or per_node is None else nodes * per_node
    if marked and not (marked == per_node and product is not None):
        product = marked  # "(x16), (x8)" or "(x87)" on 11 x 8 nodes: the string knows better
    return product if product is None or 0 <= product <= _MAX_COUNT else None


def _availability(document: Mapping[str, object]) -> str | None:
    status = _document_text(document, "status")
    if status is None:
        return None
    return _AVAILABILITY.get(status.lower(), status.lower())


def _stack(document: Mapping[str, object]) -> str | None:
    parts = [_document_text(document, "framework")]
    other = document.get("other_software_stack")
    if isinstance(other, dict):
        parts.append(", ".join(f"{key} {value}" for key, value in other.items()))
    elif other is not None:
        parts.append(str(other).strip())
    unique = [p for n, p in enumerate(parts) if p and p not in parts[:n]]
    return "; ".join(unique) or None
