"""Published MLPerf Training rounds (``--kind mlperf-training``).

A round tree (:mod:`tracker.readers.mlperf_training_layout`) is read file by
file in the order the tree reads best (an archive front to back); each
``result_<i>.txt`` is checked line by line (:func:`tracker.parsers.mlperf_training.check_run`)
and each result folder is scored as the MLCommons result summarizer scores it
(:func:`tracker.parsers.mlperf_training.score_folder`).

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
named in a note of every ingest (:data:`~tracker.parsers.mlperf_training_checks.SKIPPED_CHECKS`).

The system (accelerator, nodes, total accelerators, division) comes from
``systems/<system>.json``; submitter and system are the folder names (the
logs' own ``submission_org`` is not reliable).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from tracker.errors import ConfigError, ParseError
from tracker.parsers.mlperf_system import SystemDescription, parse_system_json
from tracker.parsers.mlperf_training import (
    RESULT_FILE_COUNTS,
    RunCheck,
    check_run,
    node_power,
    parse_scaling_json,
    ruleset_for,
    switch_power,
)
from tracker.parsers.mlperf_training_checks import SKIPPED_CHECKS
from tracker.readers.base import ProgressCallback, Reading, ignored_label_notes
from tracker.readers.mlperf_results import resolve_round
from tracker.readers.mlperf_training_check import FolderScore, cross_check
from tracker.readers.mlperf_training_layout import (
    TrainingFolder,
    is_training_tree,
    walk_training,
)
from tracker.readers.mlperf_training_score import SCORE, folder_results
from tracker.records import ResultRecord, SourceSpec
from tracker.sources.tree import SourceTree

__all__ = ["MLPerfTrainingReader"]


@dataclass(slots=True)
class TrainingFiles:
    """What one pass over the round's files found, by file path."""

    systems: dict[str, SystemDescription] = field(default_factory=dict)
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
        files = _read_files(tree, layout.folders, layout.systems, ruleset, strict, progress)
        reading.errors.extend(files.errors[path] for path in sorted(files.errors))
        scored = 0
        checked: list[FolderScore] = []
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
) -> FolderScore:
    """What the cross-check compares: the folder's score and its converged runs."""
    score = next((r.value for r in results if r.metric == SCORE), None)
    runs = (files.runs[p] for p in folder.results if p in files.runs)
    converged = {r.file: r.minutes for r in runs if r.converged and r.minutes is not None}
    return FolderScore(folder, score, converged)


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
    order = tree.read_order(handlers)
    for done, path in enumerate(order, start=1):
        try:
            handlers[path]()
        except ParseError as error:
            if strict:
                raise
            found.errors[path] = error
        if progress is not None:
            progress(done, len(order), path)
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
