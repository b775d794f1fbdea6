"""Where the files of a published MLPerf Training round are.

A round repository (``mlcommons/training_results_vX.Y``) holds one folder
per submitter at its top, each with ``systems/<system>.json`` and
``results/<system>/<benchmark>/`` folders; a benchmark folder holds one
``result_<i>.txt`` per run, optionally ``scaling.json`` and
``power/result_<i>/node_<n>.txt`` (and ``sw_<n>.txt``) power logs. A single
submitter's folder (``results/`` and ``systems/`` at the top) is read the same
way, the submitter being the folder's name. ``benchmarks/`` (code) is never listed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tracker.sources.tree import SourceTree

__all__ = ["TrainingFolder", "TrainingRound", "is_training_tree", "walk_training"]

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
