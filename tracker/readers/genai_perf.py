"""GenAI-Perf artifact folders: every ``*_genai_perf.json`` is one run (one point).

GenAI-Perf writes one artifact folder per run
(``artifacts/<model>-<service>-<endpoint>-concurrency<N>/``); the runs of one
``artifacts/`` folder are tied together as one sweep.
"""

from __future__ import annotations

from posixpath import dirname

from tracker.parsers.genai_perf import SUMMARY_SUFFIX, parse_genai_perf_summary
from tracker.readers.base import ProgressCallback, Reading
from tracker.readers.serving import Unit, label_points, read_units
from tracker.records import ParsedResult, SourceSpec
from tracker.sources.tree import SourceTree

__all__ = ["GenAIPerfReader"]


def find_genai_perf_runs(tree: SourceTree) -> list[Unit]:
    """One unit per GenAI-Perf summary file."""
    return [
        Unit(run_label=dirname(path), group=dirname(dirname(path)), paths=(path,))
        for path in tree.files()
        if path.endswith(SUMMARY_SUFFIX)
    ]


class GenAIPerfReader:
    """Reader of GenAI-Perf runs (``--kind genai-perf``)."""

    kind = "genai-perf"
    looks_for = f"*{SUMMARY_SUFFIX} (GenAI-Perf artifact folders)"

    def detect(self, tree: SourceTree) -> bool:
        return bool(find_genai_perf_runs(tree))

    def read(
        self,
        tree: SourceTree,
        spec: SourceSpec,
        *,
        strict: bool,
        progress: ProgressCallback | None,
    ) -> Reading:
        units = find_genai_perf_runs(tree)
        reading, parsed = read_units(tree, units, _parse_genai_perf, strict=strict, progress=progress)
        label_points(tree, spec, self.kind, parsed, reading)
        return reading


def _parse_genai_perf(tree: SourceTree, unit: Unit) -> list[ParsedResult]:
    (path,) = unit.paths
    return parse_genai_perf_summary(tree.read_bytes(path), path=path)
