"""A round's published results table on its own (``--kind mlperf-table``).

``summary_results.json`` (or v6.1's ``summary.json``) lists every published
result of a round with its system, so ingesting the table alone is the
quickest way to track every submitter of every round. Each row becomes a
result under the same identity as the one read from the logs
(:func:`tracker.readers.mlperf_results.sample_id`), so a round ingested both
ways is stored once. The metric and its canonical unit follow the checker's
rules for the row's benchmark and scenario; the table's label is kept as
``official_unit`` (it says ``Samples/s`` for whisper's tokens/s), and a label
that cannot be the metric's (a latency for a throughput) is an error.
"""

from __future__ import annotations

import math
import re

from tracker.errors import ConfigError, ParseError
from tracker.parsers.mlperf_names import canonical_benchmark, canonical_scenario, spelling_extra
from tracker.parsers.mlperf_rules import folder_scenario, metric_for, mlperf_model, round_key
from tracker.parsers.mlperf_system import clean_accelerator, total_accelerators
from tracker.parsers.mlperf_table import (
    TableRow,
    looks_like_results_table,
    parse_results_table,
)
from tracker.readers.base import ProgressCallback, Reading
from tracker.readers.mlperf_layout import TABLE_NAMES
from tracker.readers.mlperf_results import mark_twins, normalize_round, sample_id, software
from tracker.records import ExtraValue, MetricRecord, ResultRecord, SourceSpec, SystemRecord
from tracker.sources.tree import SourceTree

__all__ = ["MLPerfTableReader", "find_table"]

_LABEL_UNITS = {
    "tokens/s": "tokens/s",
    "samples/s": "samples/s",
    "queries/s": "queries/s",
    "tasks/s": "tasks/s",
    "latency (ms)": "ms",
    "latency (s)": "s",
}
_THROUGHPUT = frozenset({"tokens/s", "samples/s", "queries/s", "tasks/s"})
_BARE_NUMBER = re.compile(r"\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*")
_ACCURACY_ITEM = re.compile(r"([A-Za-z_][\w.]*):\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


def find_table(tree: SourceTree) -> str | None:
    """The results table at the top of the tree (a lone JSON file counts if it is one)."""
    _dirs, files = tree.list_dir("")
    names = [n for n in TABLE_NAMES if n in files]
    if not names and len(files) == 1 and files[0].endswith(".json"):
        names = files
    for name in names:
        try:
            if looks_like_results_table(tree.read_bytes(name)):
                return name
        except ParseError:
            continue
    return None


class MLPerfTableReader:
    """Reader of an MLPerf Inference results table (``--kind mlperf-table``)."""

    kind = "mlperf-table"
    looks_for = "summary_results.json or summary.json (an MLPerf Inference results table)"

    def detect(self, tree: SourceTree) -> bool:
        return find_table(tree) is not None

    def read(
        self,
        tree: SourceTree,
        spec: SourceSpec,
        *,
        strict: bool,
        progress: ProgressCallback | None,
    ) -> Reading:
        path = find_table(tree)
        if path is None:
            raise ConfigError(f"{spec.location}: no MLPerf results table found ({self.looks_for})")
        table = parse_results_table(tree.read_bytes(path), path=tree.shown_path(path))
        artifact = tree.artifact(path)
        assert artifact is not None, path
        reading = Reading(runs_found=len(table.rows) + len(table.problems))
        if table.problems and strict:
            raise table.problems[0]
        reading.errors.extend(table.problems)
        results = []
        for done, row in enumerate(table.rows, start=1):
            try:
                results.append(_result(row, path, artifact.sha256, tree.shown_path(path)))
            except ParseError as error:
                if strict:
                    raise
                reading.errors.append(error)
            if progress is not None:
                progress(done, len(table.rows), row.location)
        values = {r.location or "": f"{r.value!r}/{r.metric.name}" for r in results}
        reading.results = mark_twins(results, values)
        reading.runs_failed = reading.runs_found - len(results)
        return reading


def _result(row: TableRow, path: str, sha256: str, shown: str) -> ResultRecord:
    round_label = normalize_round(row.round)
    model = mlperf_model(row.benchmark, {row.benchmark: row.model})
    metric = _metric(row, model, round_label, shown)
    extra: dict[str, ExtraValue] = {
        "official_unit": row.unit_label,
        "mlperf_model": model,
        "mlperf_scenario": folder_scenario(row.scenario) or row.scenario,
        **spelling_extra(row.benchmark, row.scenario),
        "official_inferred": row.inferred,  # v6.0's generator sets it for any case mismatch
        "primary_metric_from": "results table",
        "system_name": row.system_name,
        "system_type": row.system_type,
        "table_row": row.row,
    }
    for name, value in (("result_id", row.result_id), ("weight_data_types", row.weight_data_types)):
        if value:
            extra[name] = value
    extra.update(_accuracy(row.accuracy))
    if row.power_value is not None:
        unit = (row.power_unit or "").lower()
        extra["power_w" if unit == "watts" else "energy_per_query_mj"] = row.power_value
    return ResultRecord(
        system=_system(row),
        software=software(round_label),
        benchmark=canonical_benchmark(row.benchmark),
        scenario=canonical_scenario(row.scenario),
        metric=metric,
        value=row.value,
        is_valid=True,
        artifact_path=path,
        artifact_sha256=sha256,
        location=row.location,
        round=round_label,
        software_stack=row.software,
        extra=dict(sorted(extra.items())),
        sample_id=sample_id(row.location),
    )


def _metric(row: TableRow, model: str, round_label: str, shown: str) -> MetricRecord:
    scenario = folder_scenario(row.scenario)
    unit = _LABEL_UNITS.get(row.unit_label.strip().lower())
    if scenario is None or unit is None:
        what = f"scenario {row.scenario!r}" if scenario is None else f"unit {row.unit_label!r}"
        raise ParseError(
            shown, f"row {row.row}: unknown {what}; cannot tell the metric's direction"
        )
    metric = metric_for(model, scenario, round_key(round_label))
    if (unit in _THROUGHPUT) != (metric.unit in _THROUGHPUT) or (
        unit not in _THROUGHPUT and unit != metric.unit
    ):
        raise ParseError(
            shown,
            f"row {row.row}: a {model} {scenario} result is in {metric.unit}, "
            f"but the table says {row.unit_label!r}",
        )
    return metric


def _system(row: TableRow) -> SystemRecord:
    accelerator = clean_accelerator(row.accelerator)
    total = row.accelerators_total
    if total is None:
        total = total_accelerators(accelerator, row.nodes, row.accelerators_per_node)
    return SystemRecord(
        name=row.platform,
        submitter=row.submitter,
        accelerator=accelerator,
        accelerators_per_node=row.accelerators_per_node,
        nodes=row.nodes,
        accelerators_total=total,
        host_cpu=row.host_cpu,
        division=row.division,
        availability=row.availability,
    )


def _accuracy(text: str | None) -> dict[str, ExtraValue]:
    """``"ROUGE1: 44.45  TOKENS_PER_SAMPLE: 301.1"`` → ``accuracy_rouge1``, ...

    v6.1's table gives some accuracies as a bare number (``"81.4266"``): ``accuracy``.
    """
    found: dict[str, ExtraValue] = {}
    bare = _BARE_NUMBER.fullmatch(text or "")
    if bare and math.isfinite(float(bare.group(1))):
        return {"accuracy": float(bare.group(1))}
    for name, value in _ACCURACY_ITEM.findall(text or ""):
        number = float(value)
        if math.isfinite(number):  # "1e999" or hundreds of digits overflow to inf
            found[f"accuracy_{name.lower()}"] = number
    return found
