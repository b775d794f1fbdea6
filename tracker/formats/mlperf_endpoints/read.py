"""MLPerf Endpoints points (``--kind mlperf-endpoints``): submission trees, run folders,
``mlperf-viz`` bundles, and a result folder named on its own inside a round tree.

MLPerf Endpoints points: submission trees, run folders, and ``mlperf-viz`` bundles.

A point folder holds ``result_summary.json`` (directly or in ``performance/``)
beside ``point.yaml`` and/or ``system_desc.json`` (the v1.0 submission tree
``results/<System>/<Model>/r<N>/`` and the submission CLI's run folder); a
source whose root is a bare report folder is read too. ``system_desc.json`` is
taken from the point folder or the nearest folder above it. The points of one
model folder form one sweep. An ``mlperf-viz --export`` bundle is read when
the source has no point folders (it is derived from them; with both, the
bundle is skipped with a note). ``point.yaml`` is decoded here with PyYAML's
safe loader (:mod:`.yaml_mapping`); the parsers stay pure.

A local folder that is a result folder of a round tree
(``<round>/<division>/<submitter>/results/<system>/<benchmark>/<scenario>``,
v6.1's Endpoints results) is read as ingesting the whole round reads it, its
labels taken from the path (:mod:`.mlperf_endpoints_path`).

An MLPerf Endpoints result folder named on its own, inside a round tree: labelled by its path.

``tracker ingest --kind mlperf-endpoints <round>/<division>/<submitter>/results/
<system>/<benchmark>/<scenario>`` is read exactly as ingesting the whole round
reads that folder (:mod:`tracker.formats.mlperf_inference.read`): round, division, submitter,
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
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from posixpath import basename, dirname, join
from typing import Any

from tracker.errors import ConfigError
from tracker.formats.mlperf_endpoints.parse import (
    POINT_NAME,
    SUMMARY_NAME,
    SYSTEM_NAME,
    looks_like_viz_bundle,
    parse_endpoints_point,
    parse_system_desc,
    parse_viz_bundle,
)
from tracker.formats.mlperf_endpoints.parse_result import RESULT_SUMMARY
from tracker.formats.mlperf_endpoints.read_round import decode_yaml
from tracker.formats.mlperf_inference.parse import folder_scenario
from tracker.formats.mlperf_inference.read import (
    Assembler,
    finish_reading,
    ignored_labels,
    layout_notes,
)
from tracker.formats.mlperf_inference.read_tree import (
    DIVISIONS,
    read_round,
    resolve_round,
    walk_round,
)
from tracker.formats.reader import ProgressCallback, Reading
from tracker.formats.serving.read import (
    SNIFF_LIMIT,
    Unit,
    has_loadgen_logs,
    json_candidates,
    label_points,
    read_units,
    sniff_json,
)
from tracker.records.results import ParsedResult, ResultRecord, SourceSpec
from tracker.sources.tree import PartedFolderTree, SourceTree, TreePart

__all__ = ["EndpointsReader", "ScopedRoundTree", "decode_yaml", "read_in_round", "round_scope"]


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
    """:meth:`~tracker.formats.mlperf_inference.read.MLPerfInferenceReader.read` for one
    result folder: the round's table is used for this folder's row only (its other rows
    are not here)."""
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


_MARKERS = (POINT_NAME, SYSTEM_NAME)
_KNOWN = (SUMMARY_NAME, SYSTEM_NAME, "accuracy_results.json", "final_snapshot.json")


def find_points(tree: SourceTree) -> list[Unit]:
    """One unit per point folder: (summary, point.yaml or "", system_desc.json or "")."""
    files = set(tree.files())
    units = []
    for path in sorted(files):
        if basename(path) != SUMMARY_NAME:
            continue
        folder = dirname(path)
        if basename(folder) == "performance":
            folder = dirname(folder)
        markers = [join(folder, name) for name in _MARKERS]
        if not any(m in files for m in markers) and folder != "":
            continue
        point = markers[0] if markers[0] in files else ""
        units.append(
            Unit(folder, dirname(folder), (path, point, _nearest(files, folder, SYSTEM_NAME)))
        )
    return units


def _nearest(files: set[str], folder: str, name: str) -> str:
    while True:
        candidate = join(folder, name) if folder else name
        if candidate in files:
            return candidate
        if not folder:
            return ""
        folder = dirname(folder)


def find_bundles(tree: SourceTree, *, limit: int | None = None) -> list[str]:
    """``mlperf-viz`` export bundles among the source's JSON files."""
    candidates = json_candidates(tree, exclude=lambda p: basename(p) in _KNOWN)[:limit]
    return [path for path in candidates if looks_like_viz_bundle(sniff_json(tree, path))]


class EndpointsReader:
    """Reader of MLPerf Endpoints points (``--kind mlperf-endpoints``)."""

    kind = "mlperf-endpoints"
    looks_for = f"{SUMMARY_NAME} beside {POINT_NAME}/{SYSTEM_NAME}, or an mlperf-viz bundle"

    def detect(self, tree: SourceTree) -> bool:
        if find_points(tree):
            return True
        return not has_loadgen_logs(tree) and bool(find_bundles(tree, limit=SNIFF_LIMIT))

    def read(
        self,
        tree: SourceTree,
        spec: SourceSpec,
        *,
        strict: bool,
        progress: ProgressCallback | None,
    ) -> Reading:
        scope = round_scope(tree)
        if scope is not None:
            return read_in_round(*scope, spec, strict=strict, progress=progress)
        units = find_points(tree)
        bundles = find_bundles(tree)
        if units and bundles:
            skipped = ", ".join(bundles)
            note = f"skipped the mlperf-viz bundle(s) {skipped}: the point folders are read instead"
        else:
            units += [Unit(path, dirname(path), (path,)) for path in bundles]
            note = ""
        if not units:
            raise ConfigError(f"{spec.location}: no MLPerf Endpoints {SUMMARY_NAME} found")
        reading, parsed = read_units(tree, units, _Parser().parse, strict=strict, progress=progress)
        if note:
            reading.notes.add(note)
        label_points(tree, spec, self.kind, parsed, reading)
        return reading


class _Parser:
    """Parses points, reading each system description once."""

    def __init__(self) -> None:
        self.systems: dict[str, Mapping[str, Any]] = {}

    def parse(self, tree: SourceTree, unit: Unit) -> list[ParsedResult]:
        if len(unit.paths) == 1:
            (path,) = unit.paths
            return parse_viz_bundle(tree.read_bytes(path), path=path)
        summary, point_path, system_path = unit.paths
        point = decode_yaml(tree.read_bytes(point_path), path=point_path) if point_path else None
        return parse_endpoints_point(
            tree.read_bytes(summary),
            summary_path=summary,
            point=point,
            point_path=point_path or join(unit.run_label, POINT_NAME),
            system=self._system(tree, system_path) if system_path else None,
        )

    def _system(self, tree: SourceTree, path: str) -> Mapping[str, Any]:
        if path not in self.systems:
            self.systems[path] = parse_system_desc(tree.read_bytes(path), path=path)
        return self.systems[path]
