"""SemiAnalysis InferenceX rows: ``agg_*.json`` files, API/DB row arrays, AgentX aggregates.

``agg_*.json`` files are read by name; other JSON files are read when their
content is InferenceX rows (``conc`` and ``hw``/``hardware``). A raw
vLLM-style result found beside them is the same run as its ``agg_`` row, so it
is skipped with a note (ingest it with ``--kind vllm-bench`` to store it);
``power_validation_*.json`` sidecars hold no result and are skipped. Rows name
their hardware, framework and container image, which label the results where
the command line does not (image tag → software version, hardware and
topology → system).
"""

from __future__ import annotations

from collections.abc import Mapping
from posixpath import basename, dirname

from tracker.errors import ConfigError
from tracker.parsers.inferencex import looks_like_inferencex_row, parse_inferencex_rows
from tracker.readers.base import ProgressCallback, Reading
from tracker.readers.serving import (
    SNIFF_LIMIT,
    Unit,
    has_loadgen_logs,
    json_candidates,
    label_points,
    read_units,
    sniff_json,
)
from tracker.readers.vllm_bench import is_vllm_like
from tracker.records import ParsedResult, SourceSpec
from tracker.sources.tree import SourceTree

__all__ = ["InferenceXReader"]

_AGG_PREFIX = "agg_"
_SIDECAR_PREFIX = "power_validation_"


def _is_agg(path: str) -> bool:
    return basename(path).startswith(_AGG_PREFIX) and path.endswith(".json")


def _inferencex_excluded(path: str) -> bool:
    return basename(path).startswith(_SIDECAR_PREFIX)


def _is_row_like(doc: object) -> bool:
    rows = doc if isinstance(doc, list) else [doc]
    return bool(rows) and isinstance(rows[0], Mapping) and looks_like_inferencex_row(rows[0])


class InferenceXReader:
    """Reader of InferenceX result rows (``--kind inferencex``)."""

    kind = "inferencex"
    looks_for = "agg_*.json or JSON rows with conc and hw (InferenceX)"

    def detect(self, tree: SourceTree) -> bool:
        if any(_is_agg(path) for path in tree.files()):
            return True
        if has_loadgen_logs(tree):
            return False
        candidates = json_candidates(tree, exclude=_inferencex_excluded)[:SNIFF_LIMIT]
        return any(_is_row_like(sniff_json(tree, path)) for path in candidates)

    def read(
        self,
        tree: SourceTree,
        spec: SourceSpec,
        *,
        strict: bool,
        progress: ProgressCallback | None,
    ) -> Reading:
        units, raw = [], []
        for path in json_candidates(tree, exclude=_inferencex_excluded):
            doc = None if _is_agg(path) else sniff_json(tree, path)
            if _is_agg(path) or doc is None or _is_row_like(doc):
                units.append(Unit(run_label=path, group=dirname(path), paths=(path,)))
            elif is_vllm_like(doc):
                raw.append(path)
        if not units:
            raise ConfigError(f"{spec.location}: no InferenceX rows (agg_*.json) found")
        reading, parsed = read_units(tree, units, _parse_inferencex, strict=strict, progress=progress)
        if raw:
            reading.notes.add(
                f"skipped {len(raw)} vLLM-style raw result(s) beside the rows, e.g. {raw[0]} "
                "(the rows hold the same runs; ingest them with --kind vllm-bench to store them)"
            )
        label_points(tree, spec, self.kind, parsed, reading)
        return reading


def _parse_inferencex(tree: SourceTree, unit: Unit) -> list[ParsedResult]:
    (path,) = unit.paths
    return parse_inferencex_rows(tree.read_bytes(path), path=path)
