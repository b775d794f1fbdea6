"""A round's published results table and its systems' description JSON.

A round's published results table: ``summary_results.json`` or v6.1's ``summary.json``.

``summary_results.json`` is a JSON array of rows produced by the MLCommons
final-report generator (``Performance_Result``, ``Performance_Units``,
``Power_Result``...). v6.1's ``summary.json`` is an object keyed ``"0"``,
``"1"``... whose rows use the checker's CSV columns (``Result``, ``Units``,
``Organization``...), a power result being a row of its own. Both become
:class:`TableRow` records; a row that lacks what a result needs is reported
with its number and the row is skipped.

``Location`` names the scenario folder (v5.x) or its ``performance/run_1``
folder with a ``./`` prefix (v6.0); it is normalised to the scenario folder,
repository-relative, as results read from logs are.

System description JSON of an MLPerf submission (``systems/<system>.json``).

Counts come as int or string (``18``, ``"1"``) and are 0 for CPU-only
systems, whose ``accelerator_model_name`` is ``"N/A"`` (stored as no
accelerator). Total accelerators are the checker's ``nodes × per node`` (what
the official table and its per-accelerator figures use), whatever the
accelerator string says; where it states another count (``"... (x94)"`` on
12 × 8 nodes, or the sum of a heterogeneous cluster's ``(x16), (x8)``), that
count is kept beside it (``accelerators_stated``), and it stands in only when
nodes or accelerators per node are missing. ``framework`` and
``other_software_stack`` (a string or an object) become the stack
description; the raw JSON text is kept as it is.

The rest of the configuration (:func:`configuration_facts`): host CPUs per node
and their cores, host memory, the accelerator interconnect, the driver (from
the stack), the notes (``hw_notes. sw_notes``, as the table's ``Notes``), and
from the notes and names the power mode (``MaxQ`` in the system's name, a power
cap: ``Power Cap 1000 W``, ``GPU 450W / 600W``), the TGP (``B200 TGP 1100W``,
``1200W TGP Per GPU``) and whether it ran on the CPU only (no accelerator, 0 per
node, or notes saying ``CPU only``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from tracker.errors import ParseError
from tracker.formats.parse_json import check_nesting
from tracker.records.results import SystemRecord

__all__ = [
    "ParsedSystem",
    "TableRow",
    "TableRows",
    "clean_accelerator",
    "configuration_facts",
    "looks_like_results_table",
    "normalize_location",
    "parse_results_table",
    "parse_system_json",
    "stated_accelerators",
    "total_accelerators",
]


_POWER_UNITS = frozenset({"watts", "millijoules"})
_LOCATION = re.compile(r"(?:^|/)((?:closed|open|network)/[^/]+/results/.+)$")
_RUN_FOLDER = re.compile(r"/performance/run_\d+$")
_MAX_COUNT = 2**31 - 1  # counts are INTEGER columns


@dataclass(frozen=True, slots=True)
class TableRow:
    """One published result as the table states it."""

    row: int
    round: str
    division: str
    submitter: str
    platform: str
    system_name: str
    system_type: str
    availability: str | None
    benchmark: str
    model: str
    scenario: str
    location: str
    value: float
    unit_label: str
    power_value: float | None
    power_unit: str | None
    accelerator: str | None
    nodes: int | None
    accelerators_per_node: int | None
    accelerators_total: int | None
    host_cpu: str | None
    software: str | None
    result_id: str | None
    accuracy: str | None
    inferred: bool
    weight_data_types: str | None
    host_cpus_per_node: int | None = None
    host_cores: int | None = None
    notes: str | None = None


@dataclass(frozen=True, slots=True)
class TableRows:
    """The rows read from a table and the rows refused (with their number)."""

    rows: tuple[TableRow, ...]
    problems: tuple[ParseError, ...]


def normalize_location(location: str) -> str:
    """``./closed/X/results/S/B/Offline/performance/run_1`` → ``closed/X/results/S/B/Offline``."""
    text = location.strip().replace("\\", "/").rstrip("/")
    text = _RUN_FOLDER.sub("", text)
    match = _LOCATION.search(text)
    return match.group(1) if match else text.removeprefix("./")


def parse_results_table(data: bytes, *, path: str) -> TableRows:
    """The rows of a results table; raises :class:`ParseError` if it is not one."""
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ParseError(path, f"not a valid results table JSON ({error})") from None
    check_nesting(document, path=path)
    if isinstance(document, dict) and all(isinstance(v, dict) for v in document.values()):
        raw = [document[k] for k in sorted(document, key=_numeric_key)]
        return _rows([_from_csv_columns(r) for r in raw], path=path, merge_power=True)
    if isinstance(document, list) and all(isinstance(v, dict) for v in document):
        return _rows(document, path=path, merge_power=False)
    raise ParseError(path, "not a results table: expected a list of rows or an object of rows")


def looks_like_results_table(data: bytes) -> bool:
    """Whether a JSON document has the shape and columns of a results table."""
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    rows = list(document.values()) if isinstance(document, dict) else document
    if not isinstance(rows, list) or not rows or not isinstance(rows[0], dict):
        return False
    first = rows[0]
    return "Platform" in first and ("Performance_Result" in first or "Result" in first)


def _numeric_key(key: str) -> tuple[int, str]:
    numeric = key.isascii() and key.isdigit() and len(key) < 18
    return (int(key), key) if numeric else (1 << 62, key)


_CSV_COLUMNS = {
    "Organization": "Submitter",
    "Division": "Category",
    "SystemType": "Suite",
    "SystemName": "System",
    "Model": "UsedModel",
    "MlperfModel": "Model",
    "Result": "Performance_Result",
    "Units": "Performance_Units",
    "number_of_nodes": "Nodes",
    "host_processor_model_name": "Processor",
    "accelerator_model_name": "Accelerator",
    "accelerators_per_node": "a#",
    "total_accelerators": "Total Accelerators",
    "framework": "Software",
    "PrivateID": "ID",
    "notes": "Notes",
}


def _from_csv_columns(row: Mapping[str, object]) -> dict[str, object]:
    return {_CSV_COLUMNS.get(key, key): value for key, value in row.items()}


def _rows(raw: list[dict[str, object]], *, path: str, merge_power: bool) -> TableRows:
    rows: dict[tuple[str, str], TableRow] = {}
    power: dict[tuple[str, str], tuple[float, str]] = {}
    problems: list[ParseError] = []
    for number, row in enumerate(raw, start=1):
        try:
            unit = str(row.get("Performance_Units", "")).strip()
            if merge_power and unit.lower() in _POWER_UNITS:
                power[_row_key(row)] = (_float(row, "Performance_Result", number, path), unit)
                continue
            parsed = _row(row, number, path)
        except ParseError as error:
            problems.append(error)
            continue
        rows.setdefault((parsed.location, parsed.benchmark), parsed)
    merged = [_with_power(row, power.get((row.location, row.benchmark))) for row in rows.values()]
    return TableRows(tuple(merged), tuple(problems))


def _row_key(row: Mapping[str, object]) -> tuple[str, str]:
    return normalize_location(str(row.get("Location", ""))), str(row.get("UsedModel", ""))


def _with_power(row: TableRow, power: tuple[float, str] | None) -> TableRow:
    if power is None or row.power_value is not None:
        return row
    return replace(row, power_value=power[0], power_unit=power[1])


def _row(row: Mapping[str, object], number: int, path: str) -> TableRow:
    location = normalize_location(_required_text(row, "Location", number, path))
    parts = location.split("/")
    if len(parts) != 6 or parts[2] != "results":
        raise ParseError(path, f"row {number}: 'Location' {row.get('Location')!r} is not a result")
    return TableRow(
        row=number,
        round=_required_text(row, "version", number, path),
        division=parts[0],
        submitter=parts[1],
        platform=parts[3],
        system_name=_text(row, "System") or parts[3],
        system_type=_text(row, "Suite") or "",
        availability=(_text(row, "Availability") or "").lower() or None,
        benchmark=parts[4],
        model=_text(row, "Model") or parts[4],
        scenario=parts[5],
        location=location,
        value=_float(row, "Performance_Result", number, path),
        unit_label=_required_text(row, "Performance_Units", number, path),
        power_value=_optional_float(row, "Power_Result", number, path),
        power_unit=_text(row, "Power_Units"),
        accelerator=_text(row, "Accelerator"),
        nodes=_count(row, "Nodes"),
        accelerators_per_node=_count(row, "a#"),
        accelerators_total=_count(row, "Total Accelerators"),
        host_cpu=_text(row, "Processor"),
        software=_text(row, "Software"),
        result_id=_text(row, "ID"),
        accuracy=_text(row, "Accuracy"),
        inferred=str(row.get("inferred", "0")).strip() in ("1", "True", "true"),
        weight_data_types=_text(row, "weight_data_types"),
        host_cpus_per_node=_count(row, "host_processors_per_node") or _count(row, "p#"),
        host_cores=_count(row, "host_processor_core_count"),
        notes=_notes(_text(row, "Notes")),
    )


def _text(row: Mapping[str, object], key: str) -> str | None:
    """The text at ``row[key]`` (a table row or a system description), stripped; ``None``
    when absent, empty or not a scalar."""
    value = row.get(key)
    if value is None or isinstance(value, dict | list):
        return None
    text = str(value).strip()
    return text or None


def _required_text(row: Mapping[str, object], key: str, number: int, path: str) -> str:
    text = _text(row, key)
    if text is None:
        raise ParseError(path, f"row {number}: no '{key}'")
    return text


def _optional_float(row: Mapping[str, object], key: str, number: int, path: str) -> float | None:
    value = row.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return _float(row, key, number, path)


def _float(row: Mapping[str, object], key: str, number: int, path: str) -> float:
    value = row.get(key)
    if value is None:
        raise ParseError(path, f"row {number}: no '{key}'")
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ParseError(path, f"row {number}: '{key}' is {value!r}, not a number")
    try:
        number_value = float(value)
    except ValueError:
        raise ParseError(path, f"row {number}: '{key}' is {value!r}, not a number") from None
    except OverflowError:  # a whole number beyond the range of a double
        number_value = float("inf")
    if number_value != number_value or abs(number_value) == float("inf"):
        raise ParseError(path, f"row {number}: '{key}' is {value!r}, not a finite number")
    if number_value < 0:
        raise ParseError(path, f"row {number}: '{key}' is {value!r}, a negative result")
    return number_value


def _count(row: Mapping[str, object], key: str) -> int | None:
    value = row.get(key)
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value <= _MAX_COUNT else None
    match = re.fullmatch(r"\s*(\d{1,10})(?:\.0+)?\s*", str(value)) if value is not None else None
    count = int(match.group(1)) if match else None
    return count if count is None or count <= _MAX_COUNT else None


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


@dataclass(frozen=True, slots=True)
class ParsedSystem:
    """The fields of a system JSON the tracker uses, plus the raw text."""

    record: SystemRecord
    system_name: str
    system_type: str
    software_stack: str | None
    operating_system: str | None


def parse_system_json(
    data: bytes, *, path: str, platform: str, submitter: str, division: str
) -> ParsedSystem:
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
    accelerator = clean_accelerator(_text(document, "accelerator_model_name"))
    other = _other_stack(document)
    notes = ". ".join(n for n in (_text(document, k) for k in _NOTES) if n) or None
    record = SystemRecord(
        name=platform,
        submitter=submitter,
        accelerator=accelerator,
        accelerators_per_node=per_node,
        nodes=nodes,
        accelerators_total=total_accelerators(accelerator, nodes, per_node),
        host_cpu=_text(document, "host_processor_model_name"),
        division=division,
        availability=_availability(document),
        raw_json=text,
        host_cpus_per_node=_lenient_count(document, "host_processors_per_node"),
        host_cores=_lenient_count(document, "host_processor_core_count"),
        host_memory=_text(document, "host_memory_capacity"),
        interconnect=_stated(_text(document, "accelerator_interconnect")),
        framework=_text(document, "framework"),
        software=other,
        driver=_driver(document.get("other_software_stack")),
        **configuration_facts(platform, accelerator, per_node, nodes, notes),
    )
    return ParsedSystem(
        record=record,
        system_name=(_text(document, "system_name") or platform),
        system_type=(_text(document, "system_type") or ""),
        software_stack=_stack(document),
        operating_system=_text(document, "operating_system"),
    )


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


def _lenient_count(document: Mapping[str, object], key: str) -> int | None:
    """A count the configuration shows but nothing depends on: ``None`` when unreadable."""
    value = document.get(key)
    if isinstance(value, bool) or value is None:
        return None
    match = re.match(r"\s*(\d{1,9})(?![\d.])", str(value))
    return int(match.group(1)) if match else None


_NOTES = ("hw_notes", "sw_notes")
_NOT_STATED = frozenset({"", "n/a", "na", "none", "-", "unknown"})


def _stated(text: str | None) -> str | None:
    return None if text is None or text.strip().lower() in _NOT_STATED else text


def _notes(text: str | None) -> str | None:
    """The table's notes without the empty parts its generator joins (``". "``)."""
    parts = [p.strip() for p in (text or "").split(". ")]
    joined = ". ".join(p for p in parts if p and p.lower() not in _NOT_STATED)
    return joined or None


_DRIVER = re.compile(r"\bdriver\s*:?\s*v?(\d[\w.\-]*)", re.IGNORECASE)


def _driver(stack: object) -> str | None:
    """The driver version a stack names (``Driver 570.148``; an object's ``*driver*`` key)."""
    if isinstance(stack, dict):
        for key, value in stack.items():
            if "driver" in str(key).lower() and str(value).strip():
                return str(value).strip()
        return None
    found = _DRIVER.search(str(stack)) if stack is not None else None
    return found.group(1) if found else None


_MAXQ = re.compile(r"max[\s_-]?q(?![a-z])", re.IGNORECASE)
_POWER_CAP = re.compile(r"power[\s_-]*cap[\s_-]*(\d{2,5})[\s_]*W\b", re.IGNORECASE)
_POWER_LIMIT = re.compile(r"\b(\d{2,5})\s*W\s*/\s*(\d{2,5})\s*W\b", re.IGNORECASE)
_TGP = re.compile(
    r"\bTGP\s*(?:of\s*)?(\d{2,5}(?:\.\d+)?)\s*W\b|\b(\d{2,5}(?:\.\d+)?)\s*W\s*TGP\b",
    re.IGNORECASE,
)
_CPU_ONLY = re.compile(r"\bCPU[\s_-]*only\b", re.IGNORECASE)


def configuration_facts(
    platform: str,
    accelerator: str | None,
    per_node: int | None,
    nodes: int | None,
    notes: str | None,
    accelerator_text: str | None = None,
) -> dict[str, Any]:
    """What the names and notes say of a system's configuration, as
    :class:`~tracker.records.results.SystemRecord` fields: the count its accelerator
    text states (where it differs from the checker's), power mode, TGP, CPU-only,
    notes (``accelerator_text``: the raw accelerator text, when ``accelerator`` is the
    cleaned one of a CPU-only system)."""
    text = accelerator or accelerator_text or ""
    cap = _POWER_CAP.search(f"{platform} {text} {notes or ''}")
    limit = _POWER_LIMIT.search(notes or "")
    power = "MaxQ" if _MAXQ.search(platform) else None
    if cap is not None:
        power = f"power cap {int(cap.group(1))} W"
    elif limit is not None and int(limit.group(1)) < int(limit.group(2)):
        power = f"power cap {int(limit.group(1))} W"
    tgp = _TGP.search(notes or "")
    cpu_only = accelerator is None or per_node == 0 or bool(_CPU_ONLY.search(notes or ""))
    return {
        "accelerators_stated": stated_accelerators(accelerator, nodes, per_node),
        "power_mode": power,
        "tgp_w": float(tgp.group(1) or tgp.group(2)) if tgp else None,
        "cpu_only": True if cpu_only else None,
        "notes": notes,
    }


def clean_accelerator(name: str | None) -> str | None:
    """The accelerator model, or ``None`` for a CPU-only system (``"N/A"``, ``""``)."""
    if name is None or name.strip().lower() in _NO_ACCELERATOR:
        return None
    return name.strip()


def total_accelerators(
    accelerator: str | None, nodes: int | None, per_node: int | None
) -> int | None:
    """The checker's count: ``nodes × per node``; the count the accelerator string
    states (``(x16), (x8)``) only where nodes or per node are missing.

    ``None`` when unknown, or beyond what a count can be.
    """
    product = None if nodes is None or per_node is None else nodes * per_node
    if product is None:
        marked = sum(int(mark) for mark in _COUNT_MARK.findall(accelerator or ""))
        product = marked or None
    return product if product is None or 0 <= product <= _MAX_COUNT else None


def stated_accelerators(
    accelerator: str | None, nodes: int | None, per_node: int | None
) -> int | None:
    """The count the accelerator string states (``(x94)``; a heterogeneous cluster's
    sum) where it is not the checker's ``nodes × per node`` (else ``None``)."""
    marked = sum(int(mark) for mark in _COUNT_MARK.findall(accelerator or ""))
    if not marked or marked == per_node or marked > _MAX_COUNT:
        return None  # "(x8)" per node on 2 nodes: the string counts one node
    return None if marked == total_accelerators(accelerator, nodes, per_node) else marked


def _availability(document: Mapping[str, object]) -> str | None:
    status = _text(document, "status")
    if status is None:
        return None
    return _AVAILABILITY.get(status.lower(), status.lower())


def _other_stack(document: Mapping[str, object]) -> str | None:
    other = document.get("other_software_stack")
    if isinstance(other, dict):
        return ", ".join(f"{key} {value}" for key, value in other.items()) or None
    return str(other).strip() or None if other is not None else None


def _stack(document: Mapping[str, object]) -> str | None:
    parts = [_text(document, "framework"), _other_stack(document)]
    unique = [p for n, p in enumerate(parts) if p and p not in parts[:n]]
    return "; ".join(unique) or None
