"""Where the files of a published MLPerf Training round are, and the optional cross-check
of every score against MLCommons' ``mlperf-logging``.

Where the files of a published MLPerf Training round are.

A round repository (``mlcommons/training_results_vX.Y``) holds one folder
per submitter at its top, each with ``systems/<system>.json`` and
``results/<system>/<benchmark>/`` folders; a benchmark folder holds one
``result_<i>.txt`` per run, optionally ``scaling.json`` and
``power/result_<i>/node_<n>.txt`` (and ``sw_<n>.txt``) power logs. A single
submitter's folder (``results/`` and ``systems/`` at the top) is read the same
way, the submitter being the folder's name. ``benchmarks/`` (code) is never listed.

Optional cross-check of every Training score against MLCommons' ``mlperf-logging``.

When the package is importable (``pip install 'mlperf-results-tracker[training-check]'``),
each scored folder is copied into a temporary folder (its ``result_*.txt``,
``scaling.json`` and power logs: the package reads files, and never the
user's copy) and scored again by the package's own result summarizer
(``result_summarizer._compute_strong_score_standalone``, the function behind
its results tables). Scores that differ by more than 1e-9 relative, and runs
that one side counts as converged and the other does not, are listed as notes,
like the Inference results-table cross-check. Without the package nothing is done.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import logging
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from tracker.sources.tree import SourceTree

__all__ = [
    "ScoreToCheck",
    "MAX_LISTED",
    "TrainingFolder",
    "TrainingRound",
    "cross_check",
    "disagreements_of",
    "is_training_tree",
    "summarizer",
    "walk_training",
]


_RESULT_FILE = re.compile(r"result_[^/]*\.txt")
_POWER_FILE = re.compile(r"(?:node|sw)_[^/]*\.txt")
_NOT_SUBMITTERS = frozenset({"closed", "open", "network", ".git", ".github"})


@dataclass(frozen=True, slots=True)
class TrainingFolder:
    """One ``results/<system>/<benchmark>`` folder and its files."""

    path: str
    submitter: str
    submitter_path: str
    """The submitter's folder ("" when the tree is that folder)."""
    system: str
    benchmark: str
    results: tuple[str, ...]
    scaling: str | None
    power: dict[str, tuple[str, ...]]
    """Per run (``result_<i>``), its power log files."""

    def paths(self) -> list[str]:
        """Every file of the folder to read."""
        power = [p for files in self.power.values() for p in files]
        return [*self.results, *([self.scaling] if self.scaling else []), *power]


@dataclass(slots=True)
class TrainingRound:
    """The folders of a round and, per submitter path, its system JSON files by system."""

    folders: list[TrainingFolder] = field(default_factory=list)
    systems: dict[str, dict[str, str]] = field(default_factory=dict)
    """``submitter path → {system: systems/<system>.json}``."""
    notes: list[str] = field(default_factory=list)


def _submitter_paths(tree: SourceTree) -> list[tuple[str, str]]:
    """``(submitter, path)`` of every submitter folder ("" when the tree is one)."""
    dirs, _files = tree.list_dir("")
    if "results" in dirs and "systems" in dirs:
        return [(tree.root_name, "")]
    return [(name, name) for name in dirs if name not in _NOT_SUBMITTERS]


def is_training_tree(tree: SourceTree) -> bool:
    """Whether some ``<submitter>/results/<system>/<benchmark>/`` holds ``result_*.txt``."""
    for _submitter, path in _submitter_paths(tree):
        dirs, _files = tree.list_dir(path)
        if "results" not in dirs or "systems" not in dirs:
            continue
        results = _join(path, "results")
        for system in tree.list_dir(results)[0]:
            for benchmark in tree.list_dir(f"{results}/{system}")[0]:
                files = tree.list_dir(f"{results}/{system}/{benchmark}")[1]
                if any(_RESULT_FILE.fullmatch(name) for name in files):
                    return True
    return False


def walk_training(tree: SourceTree) -> TrainingRound:
    """Every result folder of the round, with the files each needs."""
    found = TrainingRound()
    for submitter, path in _submitter_paths(tree):
        dirs, _files = tree.list_dir(path)
        if "results" not in dirs:
            continue
        systems = tree.list_dir(_join(path, "systems"))[1]
        found.systems[path] = {
            name.removesuffix(".json"): _join(path, f"systems/{name}")
            for name in systems
            if name.endswith(".json")
        }
        results = _join(path, "results")
        for system in tree.list_dir(results)[0]:
            for benchmark in tree.list_dir(f"{results}/{system}")[0]:
                folder = _folder(tree, f"{results}/{system}/{benchmark}", (submitter, path), system)
                if folder.results:
                    found.folders.append(folder)
                else:
                    found.notes.append(f"{folder.path}: no result_*.txt, skipped")
    return found


def _folder(tree: SourceTree, path: str, submitter: tuple[str, str], system: str) -> TrainingFolder:
    dirs, files = tree.list_dir(path)
    power: dict[str, tuple[str, ...]] = {}
    if "power" in dirs:
        for run in tree.list_dir(f"{path}/power")[0]:
            logs = tree.list_dir(f"{path}/power/{run}")[1]
            power[run] = tuple(
                f"{path}/power/{run}/{name}" for name in logs if _POWER_FILE.fullmatch(name)
            )
    return TrainingFolder(
        path=path,
        submitter=submitter[0],
        submitter_path=submitter[1],
        system=system,
        benchmark=path.rsplit("/", 1)[-1],
        results=tuple(f"{path}/{name}" for name in files if _RESULT_FILE.fullmatch(name)),
        scaling=f"{path}/scaling.json" if "scaling.json" in files else None,
        power=power,
    )


def _join(base: str, name: str) -> str:
    return f"{base}/{name}" if base else name


MAX_LISTED = 20
TOLERANCE = 1e-9
_MODULE = "mlperf_logging.result_summarizer.result_summarizer"


@dataclass(frozen=True, slots=True)
class ScoreToCheck:
    """What the tracker made of one folder: its score and its converged runs' minutes."""

    folder: TrainingFolder
    score_minutes: float | None
    converged: Mapping[str, float]
    """``result_<i>.txt`` → minutes, the runs that converged."""


def summarizer() -> tuple[Any, str] | None:
    """The package's result summarizer module and the package version, or ``None``."""
    try:
        module = importlib.import_module(_MODULE)
    except ImportError:
        return None
    try:
        version = metadata.version("mlperf-logging")
    except metadata.PackageNotFoundError:
        version = "(version unknown)"
    return module, version


def _close(mine: float, theirs: float) -> bool:
    return abs(mine - theirs) <= TOLERANCE * max(abs(theirs), 1e-12)


def _copy(tree: SourceTree, folder: TrainingFolder, into: Path) -> Path:
    """The folder's files under ``into/<benchmark>`` (the layout the package reads)."""
    target = into / folder.benchmark
    for path in folder.paths():
        relative = path.removeprefix(folder.path + "/")
        file = target / relative
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(tree.read_bytes(path))
    return target


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The package prints and logs as it checks: kept off the terminal."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        logging.disable(previous)


def _package_score(
    module: Any, tree: SourceTree, folder: TrainingFolder, ruleset: str
) -> tuple[float | None, dict[str, float]]:
    with tempfile.TemporaryDirectory(prefix="tracker-mlperf-logging-") as work:
        target = _copy(tree, folder, Path(work))
        with _quiet():
            runs, _power, score, _energy, _factor = module._compute_strong_score_standalone(
                folder.benchmark,
                folder.system,
                bool(folder.power),
                str(target),
                "training",
                ruleset,
                desc={"submitter": folder.submitter},
                return_full_scores=True,
            )
    return score, {Path(name).name: float(minutes) for name, minutes in runs.items()}


def disagreements_of(
    mine: ScoreToCheck, score: float | None, runs: Mapping[str, float]
) -> list[str]:
    path = mine.folder.path
    out = []
    if (score is None) != (mine.score_minutes is None) or (
        score is not None
        and mine.score_minutes is not None
        and not _close(mine.score_minutes, score)
    ):
        ours = "no score" if mine.score_minutes is None else f"{mine.score_minutes:.6f} minutes"
        theirs = "no score" if score is None else f"{score:.6f} minutes"
        out.append(f"{path}: the tracker gives {ours}, mlperf-logging {theirs}")
    for name in sorted(set(runs) ^ set(mine.converged)):
        side = "mlperf-logging" if name in runs else "the tracker"
        out.append(f"{path}/{name}: only {side} counts this run as converged")
    return out


def cross_check(tree: SourceTree, scores: Sequence[ScoreToCheck], ruleset: str) -> tuple[str, ...]:
    """Notes: the folders whose score or converged runs differ from the package's.

    Nothing when the package is not installed.
    """
    found = summarizer()
    if found is None or not scores:
        return ()
    module, version = found
    if not hasattr(module, "_compute_strong_score_standalone"):
        return (
            f"mlperf-logging {version} has no result summarizer this tracker knows; no cross-check",
        )
    disagreements: list[str] = []
    for mine in scores:
        try:
            score, runs = _package_score(module, tree, mine.folder, ruleset)
        except Exception as error:  # noqa: BLE001 - the package's failure is a note, not ours
            disagreements.append(f"{mine.folder.path}: mlperf-logging failed: {error}")
            continue
        disagreements.extend(disagreements_of(mine, score, runs))
    notes = [f"mlperf-logging {version} disagrees: {d}" for d in disagreements[:MAX_LISTED]]
    if len(disagreements) > MAX_LISTED:
        notes.append(
            f"mlperf-logging {version} disagrees on {len(disagreements) - MAX_LISTED} more"
        )
    outcome = (
        _counted(len(disagreements), "disagreement") if disagreements else "every score agrees"
    )
    notes.append(
        f"cross-checked {_counted(len(scores), 'folder')} "
        f"against mlperf-logging {version}: {outcome}"
    )
    return tuple(notes)


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
