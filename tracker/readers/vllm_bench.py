"""``vllm bench serve --save-result`` files (and the InferenceX fork's): one or more points each.

vLLM lets the user name the result file, so files are recognised by content:
every JSON file of the source whose object has vLLM's result keys is read (a
malformed one is reported, not skipped); other JSON files are skipped with a
note. The points of one folder with the same labels and workload form one sweep.
"""

from __future__ import annotations

from collections.abc import Mapping
from posixpath import basename, dirname

from tracker.errors import ConfigError
from tracker.parsers.vllm_bench import parse_vllm_result
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
from tracker.records import ParsedResult, SourceSpec
from tracker.sources.tree import SourceTree

__all__ = ["VLLMBenchReader", "is_vllm_like"]

_SIGNS = ("output_throughput", "request_throughput", "total_token_throughput", "mean_ttft_ms")
_OTHER_TOOLS = ("profile_export", "result_summary.json", "system_desc.json", "inputs.json")


def is_vllm_like(doc: object) -> bool:
    """Whether a decoded document carries vLLM result keys (enough to be read as one)."""
    return isinstance(doc, Mapping) and any(key in doc for key in _SIGNS)


def _vllm_excluded(path: str) -> bool:
    return basename(path).startswith(_OTHER_TOOLS)


class VLLMBenchReader:
    """Reader of vLLM benchmark result files (``--kind vllm-bench``)."""

    kind = "vllm-bench"
    looks_for = "JSON with output_throughput/request_throughput (vllm bench serve --save-result)"

    def detect(self, tree: SourceTree) -> bool:
        if has_loadgen_logs(tree):
            return False
        candidates = json_candidates(tree, exclude=_vllm_excluded)[:SNIFF_LIMIT]
        return any(is_vllm_like(sniff_json(tree, path)) for path in candidates)

    def read(
        self,
        tree: SourceTree,
        spec: SourceSpec,
        *,
        strict: bool,
        progress: ProgressCallback | None,
    ) -> Reading:
        units, skipped = [], []
        for path in json_candidates(tree, exclude=_vllm_excluded):
            doc = sniff_json(tree, path)
            if doc is None or is_vllm_like(doc):
                units.append(Unit(run_label=path, group=dirname(path), paths=(path,)))
            else:
                skipped.append(path)
        if not units:
            raise ConfigError(
                f"{spec.location}: no vLLM benchmark results (JSON with output_throughput) found"
            )
        reading, parsed = read_units(tree, units, _parse_vllm_bench, strict=strict, progress=progress)
        if skipped:
            reading.notes.add(
                f"skipped {len(skipped)} JSON file(s) that are not vLLM results, e.g. {skipped[0]}"
            )
        label_points(tree, spec, self.kind, parsed, reading)
        return reading


def _parse_vllm_bench(tree: SourceTree, unit: Unit) -> list[ParsedResult]:
    (path,) = unit.paths
    return parse_vllm_result(tree.read_bytes(path), path=path)
