"""MLPerf Endpoints points: submission trees, run folders, and ``mlperf-viz`` bundles.

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
"""

from __future__ import annotations

from collections.abc import Mapping
from posixpath import basename, dirname, join
from typing import Any

from tracker.errors import ConfigError
from tracker.parsers.mlperf_endpoints import (
    POINT_NAME,
    SUMMARY_NAME,
    SYSTEM_NAME,
    looks_like_viz_bundle,
    parse_endpoints_point,
    parse_system_desc,
    parse_viz_bundle,
)
from tracker.readers.base import ProgressCallback, Reading
from tracker.readers.mlperf_endpoints_path import read_in_round, round_scope
from tracker.readers.serving import (
    SNIFF_LIMIT,
    Unit,
    has_loadgen_logs,
    json_candidates,
    label_points,
    read_units,
    sniff_json,
)
from tracker.readers.yaml_mapping import decode_yaml
from tracker.records import ParsedResult, SourceSpec
from tracker.sources.tree import SourceTree

__all__ = ["EndpointsReader", "decode_yaml"]

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
