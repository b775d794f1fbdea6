"""Published MLPerf Inference rounds (``--kind mlperf-inference``) and a round's results
table on its own (``--kind mlperf-table``).

Published MLPerf Inference rounds (``--kind mlperf-inference``).

A round repository (v4.1–v5.1 layout with ``measurements/`` and
``compliance/`` beside ``results/``, or v6.0+ with both inside the scenario
folder) is walked (:mod:`tracker.formats.mlperf_inference.read_tree`), its files are read
once (:mod:`tracker.formats.mlperf_inference.read_tree`), and each result folder becomes one
result whose value is the official primary metric (:mod:`tracker.formats.mlperf_inference.parse`):
detail log preferred, summary log as the fallback, inferred edge results,
canonical units with a direction, validity with the reasons, accuracy,
compliance outcomes and power as secondary metrics. A result the checker
would reject is stored invalid with its reasons: a scenario its model and
system type do not allow (:mod:`tracker.formats.mlperf_inference.parse`), or an
accuracy-mode log where the performance run belongs (with ``--strict``, the
latter refuses the round as before). An MLPerf Endpoints folder (v6.1) is read
as the checker reads it (:mod:`tracker.formats.mlperf_endpoints.read_round`); other
result formats are counted per kind in one note each, and skipped.

When the round's table (``summary_results.json``) is there too, each result
carries the table's unit label (``official_unit``, which the table gets wrong
for whisper and llama3.1-8b Interactive) and ID, and every disagreement
between logs and table is listed. The round (the software version) comes from
the table, else ``--software-version``, else the folder or archive name.

A round's published results table on its own (``--kind mlperf-table``).

``summary_results.json`` (or v6.1's ``summary.json``) lists every published
result of a round with its system, so ingesting the table alone is the
quickest way to track every submitter of every round. Each row becomes a
result under the same identity as the one read from the logs
(:func:`tracker.formats.mlperf_inference.read_tree.sample_id`), so a round ingested both
ways is stored once. The metric and its canonical unit follow the checker's
rules for the row's benchmark and scenario; the table's label is kept as
``official_unit`` (it says ``Samples/s`` for whisper's tokens/s), and a label
that cannot be the metric's (a latency for a throughput) is an error.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping

from tracker.errors import ConfigError, ParseError
from tracker.formats.loadgen.parse import Entry, detail_extras, entry_number
from tracker.formats.mlperf_endpoints.read_round import endpoints_result
from tracker.formats.mlperf_inference.parse import (
    PrimaryMetric,
    canonical_benchmark,
    canonical_scenario,
    folder_scenario,
    metric_for,
    mlperf_model,
    primary_metric,
    round_key,
    scenario_reasons,
    spelling_extra,
)
from tracker.formats.mlperf_inference.parse_logs import (
    compliance_outcome,
    parse_accuracy,
    power_metric,
)
from tracker.formats.mlperf_inference.parse_table import (
    ParsedSystem,
    TableRow,
    clean_accelerator,
    configuration_facts,
    looks_like_results_table,
    parse_results_table,
    total_accelerators,
)
from tracker.formats.mlperf_inference.read_tree import (
    TABLE_NAMES,
    ResultFolder,
    RoundFiles,
    SubmitterTree,
    cross_check_notes,
    folder_result,
    is_round_tree,
    mark_twins,
    normalize_round,
    read_round,
    resolve_round,
    sample_id,
    software,
    walk_round,
)
from tracker.formats.reader import ProgressCallback, Reading, ignored_label_notes
from tracker.records.results import ExtraValue, MetricRecord, ResultRecord, SourceSpec, SystemRecord
from tracker.sources.tree import SourceTree

__all__ = [
    "Assembler",
    "MLPerfInferenceReader",
    "MLPerfTableReader",
    "assemble_results",
    "cross_check_notes",
    "find_table",
    "finish_reading",
    "ignored_labels",
    "layout_notes",
]


_DETAIL_TOLERANCE = 1e-4
_SUMMARY_TOLERANCE = 1e-3


class _DependencyFailed(Exception):
    """A file the result needs was refused (its error is already listed)."""


class MLPerfInferenceReader:
    """Reader of a published MLPerf Inference round (``--kind mlperf-inference``)."""

    kind = "mlperf-inference"
    looks_for = "closed|open|network/<submitter>/results/ (an MLPerf Inference round)"

    def detect(self, tree: SourceTree) -> bool:
        return is_round_tree(tree)

    def read(
        self,
        tree: SourceTree,
        spec: SourceSpec,
        *,
        strict: bool,
        progress: ProgressCallback | None,
    ) -> Reading:
        layout = walk_round(tree)
        if not any(sub.folders for sub in layout.submitters):
            raise ConfigError(
                f"{spec.location}: no <division>/<submitter>/results/<system>/<benchmark>/"
                "<scenario> folders: not an MLPerf Inference round"
            )
        files = read_round(tree, layout, strict=strict, progress=progress)
        folders = [(sub, f) for sub in layout.submitters for f in sub.folders if not f.unsupported]
        unsupported = (f.unsupported for sub in layout.submitters for f in sub.folders)
        reading = Reading(runs_found=len(folders), notes=layout_notes(layout.notes, unsupported))
        reading.errors.extend(files.errors[path] for path in sorted(files.errors))
        rows = {row.location: row for row in files.table.rows} if files.table else {}
        if files.table and files.table.problems:
            if strict:
                raise files.table.problems[0]
            reading.errors.extend(files.table.problems)
        round_label = resolve_round((r.round for r in rows.values()), spec, tree, reading.notes)
        ignored_labels(spec, reading.notes)
        assembler = Assembler(tree, files, round_label, rows, strict=strict)
        return finish_reading(reading, assembler, folders, has_table=bool(rows))


def finish_reading(
    reading: Reading,
    assembler: Assembler,
    folders: list[tuple[SubmitterTree, ResultFolder]],
    *,
    has_table: bool,
) -> Reading:
    """``reading`` with the results of ``folders`` (twins marked) and the cross-check notes."""
    results = assemble_results(assembler, folders, reading, strict=assembler.strict)
    reading.runs_failed = len(folders) - len(results)
    reading.results = mark_twins(results, assembler.files.run_digest)
    notes = cross_check_notes(
        assembler.disagreements, assembler.rows, results, has_table, assembler.within_files
    )
    reading.notes.update(notes)
    return reading


def assemble_results(
    assembler: Assembler,
    folders: list[tuple[SubmitterTree, ResultFolder]],
    reading: Reading,
    *,
    strict: bool,
) -> list[ResultRecord]:
    results: list[ResultRecord] = []
    for sub, folder in folders:
        try:
            results.append(assembler.result(sub, folder))
        except _DependencyFailed:
            continue  # its file's error is listed once, not once per result
        except ParseError as error:
            if strict:
                raise
            reading.errors.append(error)
    return results


def layout_notes(remarks: Iterable[str], unsupported: Iterable[str | None]) -> set[str]:
    """The layout's remarks, and one line per kind of result file the tracker does not read
    (``unsupported``: each folder's kind, ``None`` for one read)."""
    notes = set(remarks)
    kinds = Counter(unsupported)
    for kind, count in sorted((k, n) for k, n in kinds.items() if k):
        results = "result" if count == 1 else "results"
        notes.add(f"{count} {results} in a format the tracker does not read: {kind}; skipped")
    return notes


def ignored_labels(spec: SourceSpec, notes: set[str]) -> None:
    ignored_label_notes(spec, notes, source="an MLPerf round")


class Assembler:
    """Builds the result of each folder from what was read."""

    def __init__(
        self,
        tree: SourceTree,
        files: RoundFiles,
        round_label: str,
        rows: Mapping[str, TableRow],
        *,
        strict: bool,
    ) -> None:
        self.tree = tree
        self.files = files
        self.round = round_label
        self.rows = rows
        self.strict = strict
        self.disagreements: list[str] = []
        """Where a result and its row of the results table differ."""
        self.within_files: list[str] = []
        """Where a result file disagrees with itself (an Endpoints file's own tps/qps)."""

    def result(self, sub: SubmitterTree, folder: ResultFolder) -> ResultRecord:
        system = self._system(sub, folder)
        if folder.endpoints:
            found = endpoints_result(
                self.tree,
                self.files,
                folder,
                system,
                round_label=self.round,
                row=self.rows.get(folder.path),
                disagreements=self.disagreements,
                within_files=self.within_files,
                mapping=self.files.mappings.get(sub.path),
            )
            if found is None:
                raise _DependencyFailed(folder.endpoints_summary)
            return found
        log, log_path = self._log(folder)
        model = mlperf_model(folder.benchmark, self.files.mappings.get(sub.path))
        shown = self.tree.shown_path(log_path)
        primary = primary_metric(
            log,
            model=model,
            scenario=folder.scenario,
            round_label=self.round,
            system_type=system.system_type,
            path=shown,
        )
        if self.strict and not primary.measured:
            raise ParseError(
                shown, "an accuracy-mode log where the performance run belongs", line=primary.line
            )
        rejected = scenario_reasons(
            model,
            folder.scenario,
            round_label=self.round,
            system_type=system.system_type,
            division=folder.division,
        )
        if self.strict and rejected:
            raise ParseError(shown, f"the submission checker rejects it: {'; '.join(rejected)}")
        extra = self._extra(folder, system, log, primary, model, shown)
        artifact = self.tree.artifact(log_path)
        if artifact is None:
            raise _DependencyFailed(log_path)
        return folder_result(
            folder,
            system,
            artifact,
            primary.metric,
            primary.value,
            round_label=self.round,
            reasons=primary.invalid_reasons + tuple(rejected),
            extra=extra,
            line=primary.line,
        )

    def _system(self, sub: SubmitterTree, folder: ResultFolder) -> ParsedSystem:
        path = sub.systems.get(folder.system)
        if path is None:
            raise ParseError(
                self.tree.shown_path(folder.path),
                f"no systems/{folder.system}.json describes this result's system",
            )
        if path in self.files.errors or path not in self.files.systems:
            raise _DependencyFailed(path)
        return self.files.systems[path]

    def _log(self, folder: ResultFolder) -> tuple[dict[str, Entry], str]:
        log_path = folder.detail or folder.summary
        if log_path is None:
            raise ParseError(
                self.tree.shown_path(folder.path),
                "no mlperf_log_summary.txt or mlperf_log_detail.txt in performance/run_1; "
                "is the result complete?",
            )
        if log_path in self.files.errors or folder.path not in self.files.logs:
            raise _DependencyFailed(log_path)
        return self.files.logs[folder.path], log_path

    def _extra(
        self,
        folder: ResultFolder,
        system: ParsedSystem,
        log: Mapping[str, Entry],
        primary: PrimaryMetric,
        model: str,
        shown: str,
    ) -> dict[str, ExtraValue]:
        summary_only = folder.path in self.files.from_summary
        extra = detail_extras(log, primary_key=primary.key, path=shown)
        extra.update(spelling_extra(folder.benchmark, folder.scenario_dir))
        extra.update(
            mlperf_model=model,
            mlperf_scenario=folder.scenario,
            loadgen_scenario=primary.loadgen_scenario,
            inferred=primary.inferred,
            primary_metric_key=primary.key,
            primary_metric_from=_metric_from(primary, summary_only),
            system_name=system.system_name,
            system_type=system.system_type,
        )
        if system.operating_system:
            extra["operating_system"] = system.operating_system
        if folder.accuracy and folder.accuracy in self.files.raw:
            data = self.files.raw[folder.accuracy]
            extra.update(
                parse_accuracy(data, path=self.tree.shown_path(folder.accuracy), model=model)
            )
        extra.update(self._compliance(folder, model))
        extra.update(self._power(folder, log, primary, shown))
        extra.update(self._official(folder, primary, summary_only, extra))
        return extra

    def _compliance(self, folder: ResultFolder, model: str) -> dict[str, ExtraValue]:
        outcomes: dict[str, ExtraValue] = {}
        for test in folder.compliance:
            verdicts = [self.files.verdicts.get(path) for path in test.verify]
            raw = self.files.raw
            outcome = compliance_outcome(
                verdicts,
                model=model,
                baseline=raw.get(test.baseline_accuracy or ""),
                compliance=raw.get(test.compliance_accuracy or ""),
                path=self.tree.shown_path(folder.path),
            )
            if outcome is not None:
                outcomes[f"compliance_{test.name}"] = outcome
        return outcomes

    def _power(
        self, folder: ResultFolder, log: Mapping[str, Entry], primary: PrimaryMetric, shown: str
    ) -> dict[str, ExtraValue]:
        samples = self.files.power.get(folder.spl or "")
        begin, end = log.get("power_begin"), log.get("power_end")
        if not samples or begin is None or end is None:
            return {}
        count = log.get("result_query_count")
        found = power_metric(
            samples,
            begin=str(begin.value),
            end=str(end.value),
            scenario=folder.scenario,
            loadgen_scenario=primary.loadgen_scenario,
            query_count=None if count is None else entry_number(count, key="x", path=shown),
            path=shown,
        )
        return {} if found is None else {found[0]: found[1]}

    def _official(
        self,
        folder: ResultFolder,
        primary: PrimaryMetric,
        summary_only: bool,
        extra: Mapping[str, ExtraValue],
    ) -> dict[str, ExtraValue]:
        row = self.rows.get(folder.path)
        if row is None:
            return {}
        official: dict[str, ExtraValue] = {"official_unit": row.unit_label}
        if row.result_id:
            official["result_id"] = row.result_id
        if row.weight_data_types:
            official["weight_data_types"] = row.weight_data_types
        tolerance = _SUMMARY_TOLERANCE if summary_only else _DETAIL_TOLERANCE
        if not _close(primary.value, row.value, tolerance):
            official["official_value"] = row.value
            self.disagreements.append(
                f"{folder.path}: the logs give {primary.value:.6g} {primary.metric.unit}, "
                f"the results table {row.value:.6g} {row.unit_label}"
            )
        official.update(self._official_power(folder, row, extra))
        return official

    def _official_power(
        self, folder: ResultFolder, row: TableRow, extra: Mapping[str, ExtraValue]
    ) -> dict[str, ExtraValue]:
        if row.power_value is None:
            return {}
        name = "power_w" if (row.power_unit or "").lower() == "watts" else "energy_per_query_mj"
        mine = extra.get(name)
        if isinstance(mine, float) and not _close(mine, row.power_value, _DETAIL_TOLERANCE):
            self.disagreements.append(
                f"{folder.path}: the power logs give {mine:.6g}, the table {row.power_value:.6g}"
            )
        return {f"official_{name}": row.power_value}


def _metric_from(primary: PrimaryMetric, summary_only: bool) -> str:
    if not primary.measured:
        return "none (an accuracy-mode log)"
    return "summary log" if summary_only else "detail log"


def _close(mine: float, official: float, tolerance: float) -> bool:
    scale = max(abs(official), 1e-12)
    return abs(mine - official) / scale <= tolerance


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
    """The system of a table row; its count is the checker's (nodes × per node, which
    the table's own total is), so a round's logs and its table store the same one."""
    accelerator = clean_accelerator(row.accelerator)
    per_node = row.accelerators_per_node
    if per_node is None and accelerator is None and row.accelerators_total == 0:
        per_node = 0  # the table writes "" for a CPU-only system's 0
    total = total_accelerators(accelerator, row.nodes, per_node)
    if total is None:
        total = row.accelerators_total
    return SystemRecord(
        name=row.platform,
        submitter=row.submitter,
        accelerator=accelerator,
        accelerators_per_node=per_node,
        nodes=row.nodes,
        accelerators_total=total,
        host_cpu=row.host_cpu,
        division=row.division,
        availability=row.availability,
        host_cpus_per_node=row.host_cpus_per_node,
        host_cores=row.host_cores,
        framework=row.software,
        **configuration_facts(row.platform, accelerator, per_node, row.nodes, row.notes),
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
