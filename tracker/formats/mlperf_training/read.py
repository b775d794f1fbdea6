"""Published MLPerf Training rounds (``--kind mlperf-training``): folders scored and stored.

Published MLPerf Training rounds (``--kind mlperf-training``).

A round tree (:mod:`tracker.formats.mlperf_training.read_tree`) is read file by
file in the order the tree reads best (an archive front to back); each
``result_<i>.txt`` is checked line by line (:func:`tracker.formats.mlperf_training.parse.check_run`)
and each result folder is scored as the MLCommons result summarizer scores it
(:func:`tracker.formats.mlperf_training.parse.score_folder`).

What is stored, software ``mlperf-training`` at version = the round:

* per folder, the official score: ``time_to_train_minutes`` (lower is
  better), with the olympic selection (runs used and dropped, and why), the
  scaling factor, global batch size, samples to converge and the energy
  (where power logs exist) in ``extra``; a folder with too many
  non-converged runs gets no score, and a note says why;
* per run, a sample of ``run_time_to_train_minutes``: valid when the run
  converged, else invalid with the reasons (a run without ``run_stop`` has no
  time and is only named in its folder's score).

The compliance checks are those the logs decide; what needs the submitters'
code (``<submitter>/benchmarks/``, never read) and the checks not repeated are
named in a note of every ingest
(:data:`~tracker.formats.mlperf_training.parse_checks.SKIPPED_CHECKS`).

The system (accelerator, nodes, total accelerators, division) comes from
``systems/<system>.json``; submitter and system are the folder names (the
logs' own ``submission_org`` is not reliable).

From one scored MLPerf Training folder to stored results (for the Training reader).

The folder's score is one result (``time_to_train_minutes``, one sample per
round and folder); each run with a time is one sample of
``run_time_to_train_minutes``, valid when it converged. Runs and score carry
what the olympic selection did with them in ``extra``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from tracker.errors import ConfigError, ParseError
from tracker.formats.mlperf_inference.parse_table import ParsedSystem, parse_system_json
from tracker.formats.mlperf_inference.read_tree import resolve_round
from tracker.formats.mlperf_training.parse import (
    RESULT_FILE_COUNTS,
    FolderScore,
    RunCheck,
    check_run,
    node_power,
    parse_scaling_json,
    ruleset_for,
    run_energy,
    score_folder,
    switch_power,
)
from tracker.formats.mlperf_training.parse_checks import (
    NOT_CHECKED,
    SKIPPED_CHECKS,
    check_seeds,
    rules_for,
)
from tracker.formats.mlperf_training.read_tree import (
    ScoreToCheck,
    TrainingFolder,
    cross_check,
    is_training_tree,
    walk_training,
)
from tracker.formats.reader import ProgressCallback, Reading, ignored_label_notes, read_in_order
from tracker.records.results import (
    RUN_TIME_TO_TRAIN,
    TIME_TO_TRAIN,
    TRAINING_SOFTWARE,
    ExtraValue,
    MetricRecord,
    ResultRecord,
    SoftwareRecord,
    SourceSpec,
)
from tracker.sources.tree import SourceTree

__all__ = ["MLPerfTrainingReader", "RUN_TIME_TO_TRAIN", "SCORE", "SOFTWARE", "folder_results"]


SOFTWARE = TRAINING_SOFTWARE
SCORE = TIME_TO_TRAIN
_MAX_REASONS = 3


def folder_results(
    tree: SourceTree,
    folder: TrainingFolder,
    system: ParsedSystem,
    *,
    runs: Sequence[RunCheck],
    unreadable: Sequence[str],
    scaling: float | None,
    power: Mapping[str, float],
    round_label: str,
    ruleset: str,
    expected_files: int | None,
) -> tuple[list[ResultRecord], list[str], bool]:
    """The score and run samples of a folder, the notes about it, and whether it has a score."""
    energies, notes = _energies(folder, runs, power)
    names = [path.rsplit("/", 1)[-1] for path in unreadable]
    score = score_folder(
        runs,
        benchmark=folder.benchmark,
        scaling_factor=1.0 if scaling is None else scaling,
        energies=energies,
        unreadable=names,
    )
    roles = {role.file: role.role for role in score.roles}
    base = _Base(tree, folder, system, round_label)
    results = [base.run(run, roles[run.file]) for run in runs if run.minutes is not None]
    count = len(folder.results)
    if expected_files is not None and count != expected_files:
        notes.append(
            f"{folder.path}: {count} result files; the package checker requires "
            f"{expected_files} for {folder.benchmark}"
        )
    warned = _warnings(runs)
    if warned:
        notes.append(
            f"{folder.path}: compliance warnings, runs kept as mlperf-logging keeps them: {warned}"
        )
    seeds = _seed_check(runs, names, system)
    if seeds.startswith("failed"):
        notes.append(f"{folder.path}: seed check {seeds} (the score does not depend on it)")
    if score.score_minutes is None:
        notes.append(f"{folder.path}: no score: {score.no_score_reason}; {_non_converged(runs)}")
        return results, notes, False
    extra = _score_extra(score, runs, names, system, ruleset, scaling is not None)
    if seeds:
        extra["seed_check"] = seeds
    if warned:
        extra["compliance_warnings"] = warned
    extra["result_files"] = count
    if expected_files is not None:
        extra["expected_result_files"] = expected_files
    results.insert(0, base.score(score, runs, extra))
    return results, notes, True


class _Base:
    """What a folder's results share."""

    def __init__(
        self, tree: SourceTree, folder: TrainingFolder, system: ParsedSystem, round_label: str
    ) -> None:
        self.tree = tree
        self.folder = folder
        self.system = system
        self.round = round_label

    def run(self, run: RunCheck, role: str) -> ResultRecord:
        path = f"{self.folder.path}/{run.file}"
        extra: dict[str, ExtraValue] = {"role": role, "compliant": run.converged}
        if run.run_stop_status is not None:
            extra["run_stop_status"] = run.run_stop_status
        if run.reasons:
            extra["invalid_reason"] = "; ".join(run.reasons)
        if run.warnings:
            extra["compliance_warnings"] = "; ".join(run.warnings)
        value = run.minutes or 0.0
        return self._record(RUN_TIME_TO_TRAIN, value, path, run.line, extra, run.converged, run)

    def score(
        self, score: FolderScore, runs: Sequence[RunCheck], extra: dict[str, ExtraValue]
    ) -> ResultRecord:
        # the artifact is the first run used (a score comes from several files)
        used = next(r for r in runs if r.file in _used(score))
        path = f"{self.folder.path}/{used.file}"
        return self._record(SCORE, score.score_minutes or 0.0, path, None, extra, True, None)

    def _record(
        self,
        metric: MetricRecord,
        value: float,
        path: str,
        line: int | None,
        extra: dict[str, ExtraValue],
        valid: bool,
        run: RunCheck | None,
    ) -> ResultRecord:
        artifact = self.tree.artifact(path)
        extra["system_name"] = self.system.system_name
        return ResultRecord(
            system=self.system.record,
            software=SoftwareRecord(software=SOFTWARE, version=self.round),
            benchmark=self.folder.benchmark,
            scenario="",
            metric=metric,
            value=value,
            is_valid=valid,
            artifact_path=path,
            artifact_sha256=artifact.sha256 if artifact is not None else "",
            line=line,
            location=self.folder.path,
            round=self.round,
            run_label=run.file.removesuffix(".txt") if run is not None else "",
            software_stack=self.system.software_stack,
            extra=dict(sorted(extra.items())),
            sample_id=f"{SOFTWARE}:{self.folder.path}"
            + (f"/{run.file}" if run is not None else ""),
        )


def _used(score: FolderScore) -> set[str]:
    return {role.file for role in score.roles if role.role == "used"}


def _score_extra(
    score: FolderScore,
    runs: Sequence[RunCheck],
    unreadable: Sequence[str],
    system: ParsedSystem,
    ruleset: str,
    has_scaling: bool,
) -> dict[str, ExtraValue]:
    extra: dict[str, ExtraValue] = {
        "ruleset": ruleset,
        "runs_used": score.runs_used,
        "runs_dropped": score.runs_dropped,
        "dropped_fastest": score.dropped_fastest,
        "dropped_slowest": score.dropped_slowest,
        "dropped_non_converged": score.non_converged,
        "converged_runs": score.converged,
        "non_converged_runs": score.non_converged,
        "scaling_factor": score.scaling_factor,
        "scaling_json": has_scaling,
        "olympic_mean_unscaled_minutes": score.olympic_mean_minutes or 0.0,
        "runs": "; ".join(_run_line(run, score) for run in runs),
        "checks_not_done": NOT_CHECKED,
    }
    if score.non_converged:
        extra["non_converged"] = _non_converged(runs, unreadable)
    sizes = {run.global_batch_size for run in runs if run.global_batch_size is not None}
    if len(sizes) == 1:
        extra["global_batch_size"] = sizes.pop()
    if score.samples_to_converge is not None:
        extra["samples_to_converge"] = score.samples_to_converge
    if score.energy_j is not None:
        extra["energy_j"] = score.energy_j
    if system.record.accelerators_total is not None:
        extra["accelerators"] = system.record.accelerators_total
    return extra


def _warnings(runs: Sequence[RunCheck]) -> str:
    """The runs' compliance warnings, each once with how many runs it concerns."""
    files: dict[str, list[str]] = {}
    for run in runs:
        for warning in run.warnings:
            files.setdefault(warning, []).append(run.file)
    return "; ".join(
        f"{warning} ({len(names)} of {len(runs)} runs)" for warning, names in files.items()
    )


def _seed_check(runs: Sequence[RunCheck], unreadable: Sequence[str], system: ParsedSystem) -> str:
    """``passed``, ``failed: <why>``, or "" where the package skips it (open division)."""
    if system.record.division != "closed":
        return ""
    problems = [f"{name}: the log does not parse" for name in unreadable]
    problems += check_seeds([(run.file, run.seeds) for run in runs])
    return f"failed: {'; '.join(problems)}" if problems else "passed"


def _run_line(run: RunCheck, score: FolderScore) -> str:
    role = next(r.role for r in score.roles if r.file == run.file)
    minutes = "no time" if run.minutes is None else f"{run.minutes:.4f} min"
    return f"{run.file} {minutes} {role}"


def _non_converged(runs: Sequence[RunCheck], unreadable: Sequence[str] = ()) -> str:
    parts = [
        f"{run.file}: {'; '.join(run.reasons[:_MAX_REASONS])}" for run in runs if not run.converged
    ]
    parts += [f"{name}: the log does not parse" for name in unreadable]
    return " | ".join(parts) or "no run converged"


def _energies(
    folder: TrainingFolder, runs: Sequence[RunCheck], power: Mapping[str, float]
) -> tuple[dict[str, float] | None, list[str]]:
    """Joules per converged run from the folder's power logs (``None`` without power logs)."""
    if not folder.power:
        return None, []
    energies: dict[str, float] = {}
    for run in runs:
        logs = folder.power.get(run.file.removesuffix(".txt"), ())
        powers = [power[p] for p in logs if p in power]
        if run.converged and run.time_to_train_ms is not None:
            if not powers or len(powers) != len(logs):
                return None, [f"{folder.path}: no readable power log for {run.file}; no energy"]
            energies[run.file] = run_energy(powers, run.time_to_train_ms)
    return energies, []


@dataclass(slots=True)
class TrainingFiles:
    """What one pass over the round's files found, by file path."""

    systems: dict[str, ParsedSystem] = field(default_factory=dict)
    runs: dict[str, RunCheck] = field(default_factory=dict)
    scaling: dict[str, float] = field(default_factory=dict)
    power: dict[str, float] = field(default_factory=dict)
    errors: dict[str, ParseError] = field(default_factory=dict)


class MLPerfTrainingReader:
    """Reader of a published MLPerf Training round (``--kind mlperf-training``)."""

    kind = "mlperf-training"
    looks_for = "<submitter>/results/<system>/<benchmark>/result_*.txt (an MLPerf Training round)"

    def detect(self, tree: SourceTree) -> bool:
        return is_training_tree(tree)

    def read(
        self,
        tree: SourceTree,
        spec: SourceSpec,
        *,
        strict: bool,
        progress: ProgressCallback | None,
    ) -> Reading:
        layout = walk_training(tree)
        if not layout.folders:
            raise ConfigError(
                f"{spec.location}: no <submitter>/results/<system>/<benchmark>/result_*.txt: "
                "not an MLPerf Training round"
            )
        reading = Reading(runs_found=len(layout.folders), notes=set(layout.notes))
        round_label = resolve_round((), spec, tree, reading.notes)
        _ignored_labels(spec, reading.notes)
        ruleset = ruleset_for(round_label)
        rules, exact = rules_for(ruleset)
        if not exact:
            reading.notes.add(
                f"no compliance rule table for ruleset {ruleset} (round {round_label}); "
                f"its runs are checked with the rules of {rules.version} ({rules.source})"
            )
        files = _read_files(tree, layout.folders, layout.systems, ruleset, strict, progress)
        reading.errors.extend(files.errors[path] for path in sorted(files.errors))
        scored = 0
        checked: list[ScoreToCheck] = []
        for folder in layout.folders:
            found = _folder_results(tree, folder, layout.systems, files, round_label, ruleset)
            if found is None:
                continue
            results, notes, has_score = found
            reading.results.extend(results)
            reading.notes.update(notes)
            scored += has_score
            checked.append(_checked(folder, results, files))
        reading.runs_failed = len(layout.folders) - scored
        reading.notes.update(cross_check(tree, checked, ruleset))
        reading.notes.add(SKIPPED_CHECKS)
        return reading


def _checked(
    folder: TrainingFolder, results: list[ResultRecord], files: TrainingFiles
) -> ScoreToCheck:
    """What the cross-check compares: the folder's score and its converged runs."""
    score = next((r.value for r in results if r.metric == SCORE), None)
    runs = (files.runs[p] for p in folder.results if p in files.runs)
    converged = {r.file: r.minutes for r in runs if r.converged and r.minutes is not None}
    return ScoreToCheck(folder, score, converged)


def _folder_results(
    tree: SourceTree,
    folder: TrainingFolder,
    systems: dict[str, dict[str, str]],
    files: TrainingFiles,
    round_label: str,
    ruleset: str,
) -> tuple[list[ResultRecord], list[str], bool] | None:
    """The results of one folder, or ``None`` when a file it needs was refused."""
    system_path = systems.get(folder.submitter_path, {}).get(folder.system)
    if system_path is None or system_path not in files.systems:
        if system_path is None:
            files.errors.setdefault(
                folder.path,
                ParseError(
                    tree.shown_path(folder.path),
                    f"no systems/{folder.system}.json describes this result's system",
                ),
            )
        return None
    if folder.scaling and folder.scaling not in files.scaling:
        return None
    return folder_results(
        tree,
        folder,
        files.systems[system_path],
        runs=[files.runs[p] for p in folder.results if p in files.runs],
        unreadable=[p for p in folder.results if p in files.errors],
        scaling=files.scaling.get(folder.scaling or ""),
        power=files.power,
        round_label=round_label,
        ruleset=ruleset,
        expected_files=RESULT_FILE_COUNTS.get(folder.benchmark),
    )


def _read_files(
    tree: SourceTree,
    folders: list[TrainingFolder],
    systems: dict[str, dict[str, str]],
    ruleset: str,
    strict: bool,
    progress: ProgressCallback | None,
) -> TrainingFiles:
    found = TrainingFiles()
    handlers = _handlers(tree, folders, systems, ruleset, found)
    read_in_order(tree, handlers, found.errors, strict=strict, progress=progress)
    return found


def _handlers(
    tree: SourceTree,
    folders: list[TrainingFolder],
    systems: dict[str, dict[str, str]],
    ruleset: str,
    found: TrainingFiles,
) -> dict[str, Callable[[], None]]:
    handlers: dict[str, Callable[[], None]] = {}
    for folder in folders:
        json_path = systems.get(folder.submitter_path, {}).get(folder.system)
        if json_path is not None and json_path not in handlers:
            handlers[json_path] = _system(tree, json_path, folder.submitter, folder.system, found)
    for folder in folders:
        for path in folder.results:
            handlers[path] = _run(tree, path, folder.benchmark, ruleset, found)
        if folder.scaling:
            handlers[folder.scaling] = _scaling(tree, folder.scaling, found)
        for logs in folder.power.values():
            handlers.update({path: _power(tree, path, found) for path in logs})
    return handlers


def _system(
    tree: SourceTree, path: str, submitter: str, system: str, found: TrainingFiles
) -> Callable[[], None]:
    def read() -> None:
        data = tree.read_bytes(path)
        found.systems[path] = parse_system_json(
            data,
            path=tree.shown_path(path),
            platform=system,
            submitter=submitter,
            division=_division(data),
        )

    return read


def _run(
    tree: SourceTree, path: str, benchmark: str, ruleset: str, found: TrainingFiles
) -> Callable[[], None]:
    def read() -> None:
        with tree.open_lines(path) as lines:
            found.runs[path] = check_run(
                lines,
                path=tree.shown_path(path),
                file=path.rsplit("/", 1)[-1],
                benchmark=benchmark,
                ruleset=ruleset,
            )

    return read


def _scaling(tree: SourceTree, path: str, found: TrainingFiles) -> Callable[[], None]:
    def read() -> None:
        data = tree.read_bytes(path)
        found.scaling[path] = parse_scaling_json(data, path=tree.shown_path(path))

    return read


def _power(tree: SourceTree, path: str, found: TrainingFiles) -> Callable[[], None]:
    parse = switch_power if path.rsplit("/", 1)[-1].startswith("sw_") else node_power

    def read() -> None:
        with tree.open_lines(path) as lines:
            found.power[path] = parse(lines, path=tree.shown_path(path))

    return read


def _division(data: bytes) -> str:
    """The system JSON's ``division`` (a Training tree has no division folders)."""
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return "closed"  # parse_system_json reports the bad file
    division = document.get("division") if isinstance(document, dict) else None
    return str(division).strip().lower() if isinstance(division, str) and division else "closed"


def _ignored_labels(spec: SourceSpec, notes: set[str]) -> None:
    ignored_label_notes(spec, notes, source="an MLPerf round")
