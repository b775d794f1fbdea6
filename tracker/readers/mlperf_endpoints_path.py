"""An MLPerf Endpoints result folder named on its own, inside a round tree: labelled by its path.

``tracker ingest --kind mlperf-endpoints <round>/<division>/<submitter>/results/
<system>/<benchmark>/<scenario>`` is read exactly as ingesting the whole round
reads that folder (:mod:`tracker.readers.mlperf`): round, division, submitter,
system (and ``systems/<system>.json``: accelerators, nodes, software),
benchmark and scenario from the path, the round's table for the cross-check.
The round is seen through a :class:`ScopedRoundTree`, the round's folder in
which only the path down to the result folder is listed; what it read is
then taken into the source's own tree under paths relative to the source
(``../../../../systems/<system>.json``), so the source's artifacts and trail
cover every file the result came from. The result keeps the round's location
(its identity: the same published result, however it is read); its
``artifact_path`` is relative to the source, as for any source.
"""

from __future__ import annotations

import posixpath
from dataclasses import replace
from pathlib import Path

from tracker.parsers.mlperf_endpoints_result import RESULT_SUMMARY
from tracker.parsers.mlperf_rules import folder_scenario
from tracker.readers.base import ProgressCallback, Reading
from tracker.readers.mlperf import (
    Assembler,
    finish_reading,
    ignored_labels,
    layout_notes,
)
from tracker.readers.mlperf_layout import DIVISIONS, walk_round
from tracker.readers.mlperf_read import read_round
from tracker.readers.mlperf_results import resolve_round
from tracker.records import ResultRecord, SourceSpec
from tracker.sources.tree import SourceTree
from tracker.sources.tree_parts import PartedFolderTree, TreePart

__all__ = ["ScopedRoundTree", "read_in_round", "round_scope"]

_DEPTH = 6
"""``<division>/<submitter>/results/<system>/<benchmark>/<scenario>``."""


def round_scope(tree: SourceTree) -> tuple[PartedFolderTree, Path, str] | None:
    """The tree, its round's folder and its path in it, when ``tree`` is a local
    Endpoints result folder at ``<division>/<submitter>/results/<system>/<benchmark>/
    <scenario>`` of a round tree; else ``None`` (a standalone folder)."""
    if not isinstance(tree, PartedFolderTree):
        return None
    root = tree.root.resolve()
    parts = root.parts[-_DEPTH:]
    if len(root.parts) <= _DEPTH or parts[0] not in DIVISIONS or parts[2] != "results":
        return None
    if folder_scenario(parts[5]) is None or not tree.exists(RESULT_SUMMARY):
        return None
    return tree, root.parents[_DEPTH - 1], "/".join(parts)


class ScopedRoundTree(PartedFolderTree):
    """A round's folder in which only the path down to one result folder is listed
    (with its submitter's files and the one system description); inside the result
    folder, and everywhere else it is asked about, it is the round's folder itself."""

    def __init__(self, root: Path, scope: str, *, location: str) -> None:
        super().__init__(root, location=location)
        division, submitter, _results, system, benchmark, scenario = scope.split("/")
        sub = f"{division}/{submitter}"
        self.scope = scope
        self._only_dirs = {
            "": division,
            division: submitter,
            f"{sub}/results": system,
            f"{sub}/results/{system}": benchmark,
            f"{sub}/results/{system}/{benchmark}": scenario,
        }
        self._only_files = {f"{sub}/systems": f"{system}.json"}

    def list_dir(self, path: str) -> tuple[list[str], list[str]]:
        dirs, files = super().list_dir(path)
        folder = path.strip("/")
        if folder in self._only_dirs:
            dirs = [name for name in dirs if name == self._only_dirs[folder]]
        if folder in self._only_files:
            files = [name for name in files if name == self._only_files[folder]]
        return dirs, files

    def relative(self, path: str) -> str:
        """``path`` of the round relative to the result folder (a folder keeps its ``/``)."""
        folder = path.endswith("/")
        found = posixpath.relpath(path.rstrip("/") or ".", self.scope)
        if not folder:
            return found
        return "./" if found == "." else f"{found}/"

    def part_for_source(self) -> TreePart:
        """What this tree read, listed and could not take, under the result folder's paths."""
        part = self.part()
        return TreePart(
            read=tuple((self.relative(p), sha256, size) for p, sha256, size in part.read),
            trail=tuple((self.relative(p), found) for p, found in part.trail),
            problems=tuple((self.relative(p), shown, why) for p, shown, why in part.problems),
            not_regular=part.not_regular,
        )


def read_in_round(
    tree: PartedFolderTree,
    round_root: Path,
    scope: str,
    spec: SourceSpec,
    *,
    strict: bool,
    progress: ProgressCallback | None,
) -> Reading:
    """The result of the source's folder as the whole round's ingest gives it."""
    location = posixpath.normpath(posixpath.join(tree.location, *[".."] * _DEPTH))
    scoped = ScopedRoundTree(round_root, scope, location=location)
    try:
        reading = _read(scoped, spec, strict=strict, progress=progress)
    finally:
        tree.absorb(scoped.part_for_source())
    reading.results = [_from_source(scoped, result) for result in reading.results]
    return reading


def _read(
    tree: ScopedRoundTree,
    spec: SourceSpec,
    *,
    strict: bool,
    progress: ProgressCallback | None,
) -> Reading:
    """:meth:`tracker.readers.mlperf.MLPerfInferenceReader.read` for one result folder: the
    round's table is used for this folder's row only (its other rows are not here)."""
    layout = walk_round(tree)
    files = read_round(tree, layout, strict=strict, progress=progress)
    folders = [(sub, f) for sub in layout.submitters for f in sub.folders if not f.unsupported]
    unsupported = (f.unsupported for sub in layout.submitters for f in sub.folders)
    reading = Reading(runs_found=len(folders), notes=layout_notes(layout.notes, unsupported))
    reading.errors.extend(files.errors[path] for path in sorted(files.errors))
    table = files.table.rows if files.table else []
    rows = {row.location: row for row in table if row.location == tree.scope}
    round_label = resolve_round((r.round for r in table), spec, tree, reading.notes)
    ignored_labels(spec, reading.notes)
    assembler = Assembler(tree, files, round_label, rows, strict=strict)
    return finish_reading(reading, assembler, folders, has_table=bool(table))


def _from_source(tree: ScopedRoundTree, result: ResultRecord) -> ResultRecord:
    return replace(result, artifact_path=tree.relative(result.artifact_path))
