"""An MLPerf Endpoints result folder inside a round: one result, labelled like a LoadGen
one (and the round's YAML files decoded).

An MLPerf Endpoints result folder inside a round: one result, labelled like a LoadGen one.

The folder's files were read in the round's one pass (:mod:`.mlperf_read`);
here they become the result the checker would publish
(:func:`tracker.formats.mlperf_endpoints.parse_result.parse_endpoints_result`), with
round, division, submitter, system and location from the tree, the model from
``config.yaml``, the accuracy from ``accuracy/accuracy_results.json``, and the
file's own figures and the round's table cross-checked.

A YAML mapping decoded with PyYAML's safe loader, malformed input refused with its line.

The parsers stay pure (standard library only); the readers decode the YAML
files they hand over (an Endpoints ``point.yaml`` or ``config.yaml``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from tracker.errors import ParseError
from tracker.formats.mlperf_endpoints.parse_result import (
    EndpointsRoundResult,
    parse_endpoints_accuracy,
    parse_endpoints_result,
)
from tracker.formats.mlperf_inference.parse import (
    mlperf_model,
    scenario_reasons,
    spelling_extra,
)
from tracker.formats.mlperf_inference.parse_table import ParsedSystem, TableRow
from tracker.formats.mlperf_inference.read_tree import ResultFolder, RoundFiles, folder_result
from tracker.formats.parse_json import check_nesting
from tracker.records.results import ExtraValue, ResultRecord
from tracker.sources.tree import SourceTree

__all__ = ["TABLE_TOLERANCE", "decode_yaml", "endpoints_result"]


def decode_yaml(data: bytes, *, path: str) -> Mapping[str, Any]:
    """A YAML mapping (safe loader); malformed YAML names its line.

    A value the loader cannot build (a date such as ``2024-13-01``, an integer
    of more than 4300 digits), nesting too deep for it, and aliases that nest
    or multiply the document beyond its size are malformed too.
    """
    try:
        doc = yaml.safe_load(data)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or "malformed"
        line = mark.line + 1 if mark is not None else None
        raise ParseError(path, f"not valid YAML ({problem})", line=line) from None
    except ValueError as error:  # a date such as 2024-13-01; an integer too long for int()
        problem = "a number too long" if "integer string" in str(error) else str(error)
        raise ParseError(path, f"not valid YAML ({problem})") from None
    except RecursionError:
        raise ParseError(path, "not valid YAML (nested too deeply)") from None
    if not isinstance(doc, Mapping):
        raise ParseError(path, "not a YAML mapping of point settings")
    check_nesting(doc, path=path, max_values=2 * len(data) + 16)
    return doc


TABLE_TOLERANCE = 1e-6
"""The table copies the file's ``tps``/``qps`` (it differs in the last digit printed only)."""


def endpoints_result(
    tree: SourceTree,
    files: RoundFiles,
    folder: ResultFolder,
    system: ParsedSystem,
    *,
    round_label: str,
    row: TableRow | None,
    disagreements: list[str],
    within_files: list[str],
    mapping: Mapping[str, str] | None = None,
) -> ResultRecord | None:
    """The result of an Endpoints folder; ``None`` when its summary could not be read."""
    summary_path = folder.endpoints_summary
    data = files.raw.get(summary_path)
    artifact = tree.artifact(summary_path)
    if data is None or artifact is None:
        return None
    shown = tree.shown_path(summary_path)
    model = mlperf_model(folder.benchmark, mapping)
    config_path, accuracy_path = folder.endpoints_files
    config = _config(tree, files, config_path)
    parsed = parse_endpoints_result(
        data,
        path=shown,
        model=model,
        scenario=folder.scenario,
        round_label=round_label,
        config=config,
    )
    extra = _extra(tree, files, folder, system, parsed, model, accuracy_path)
    for disagreement in parsed.disagreements:
        within_files.append(f"{folder.path}: {disagreement}")
    extra.update(_official(folder, row, parsed.value, parsed.metric.unit, disagreements))
    reasons = parsed.invalid_reasons + tuple(
        scenario_reasons(
            model,
            folder.scenario,
            round_label=round_label,
            system_type=system.system_type,
            division=folder.division,
        )
    )
    return folder_result(
        folder,
        system,
        artifact,
        parsed.metric,
        parsed.value,
        round_label=round_label,
        reasons=reasons,
        extra=extra,
    )


def _extra(
    tree: SourceTree,
    files: RoundFiles,
    folder: ResultFolder,
    system: ParsedSystem,
    parsed: EndpointsRoundResult,
    model: str,
    accuracy_path: str | None,
) -> dict[str, ExtraValue]:
    """What an Endpoints result keeps beside its value: the file's extras, the names the
    round uses, the system's, and its accuracy file's figures."""
    extra: dict[str, ExtraValue] = {
        **parsed.extra,
        **spelling_extra(folder.benchmark, folder.scenario_dir),
        "mlperf_model": model,
        "mlperf_scenario": folder.scenario,
        "primary_metric_key": parsed.key,
        "primary_metric_from": "MLPerf Endpoints result_summary.json",
        "system_name": system.system_name,
        "system_type": system.system_type,
    }
    if system.operating_system:
        extra["operating_system"] = system.operating_system
    if accuracy_path and accuracy_path in files.raw:
        extra.update(
            parse_endpoints_accuracy(files.raw[accuracy_path], path=tree.shown_path(accuracy_path))
        )
    return extra


def _config(tree: SourceTree, files: RoundFiles, path: str | None) -> Mapping[str, Any] | None:
    if not path or path not in files.raw:
        return None
    try:
        return decode_yaml(files.raw[path], path=tree.shown_path(path))
    except ParseError:
        return None  # the model name is a label only; the result stands without it


def _official(
    folder: ResultFolder,
    row: TableRow | None,
    value: float,
    unit: str,
    disagreements: list[str],
) -> dict[str, ExtraValue]:
    if row is None:
        return {}
    official: dict[str, ExtraValue] = {"official_unit": row.unit_label}
    for name, text in (("result_id", row.result_id), ("weight_data_types", row.weight_data_types)):
        if text:
            official[name] = text
    if abs(value - row.value) > TABLE_TOLERANCE * max(abs(row.value), 1e-12):
        official["official_value"] = row.value
        disagreements.append(
            f"{folder.path}: the Endpoints result gives {value:.6g} {unit}, "
            f"the results table {row.value:.6g} {row.unit_label}"
        )
    return official
