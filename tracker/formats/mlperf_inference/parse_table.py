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
from dataclasses import dataclass, replace

from tracker.errors import ParseError
from tracker.formats.parse_json import check_nesting
from tracker.records.results import SystemRecord

__all__ = [
    "SystemDescription",
    "TableRow",
    "TableRows",
    "clean_accelerator",
    "looks_like_results_table",
    "normalize_location",
    "parse_results_table",
    "parse_system_json",
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
    accelerator = clean_accelerator(_text(document, "accelerator_model_name"))
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
    )
    return SystemDescription(
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
    status = _text(document, "status")
    if status is None:
        return None
    return _AVAILABILITY.get(status.lower(), status.lower())


def _stack(document: Mapping[str, object]) -> str | None:
    parts = [_text(document, "framework")]
    other = document.get("other_software_stack")
    if isinstance(other, dict):
        parts.append(", ".join(f"{key} {value}" for key, value in other.items()))
    elif other is not None:
        parts.append(str(other).strip())
    unique = [p for n, p in enumerate(parts) if p and p not in parts[:n]]
    return "; ".join(unique) or None
