"""Local MLPerf LoadGen output folders: one run per folder holding LoadGen logs.

Every folder (at any depth) holding ``mlperf_log_summary.txt`` or
``mlperf_log_detail.txt`` is one run; runs found under one source with the
same labels are repeats of one measurement. LoadGen names only its SUT, so the
benchmark comes from the labels (the SUT name is the fallback, with a note).
"""

from __future__ import annotations

from collections.abc import Iterator
from posixpath import dirname, join

from tracker.errors import ParseError
from tracker.formats.loadgen.parse import DETAIL_LOG_NAME, SUMMARY_LOG_NAME, parse_loadgen_run
from tracker.formats.reader import ProgressCallback, Reading, label_result, require_labels
from tracker.records.results import ParsedResult, SourceSpec
from tracker.sources.tree import SourceTree

__all__ = ["ACCURACY_ONLY_NOTE", "LoadGenReader", "find_run_dirs"]


_LOG_NAMES = (SUMMARY_LOG_NAME, DETAIL_LOG_NAME)
ACCURACY_ONLY_NOTE = (
    "accuracy-only runs (LoadGen's AccuracyOnly mode) measure no performance: nothing of "
    "them is stored; ingest the performance runs (PerformanceOnly mode)"
)
"""The note of a source with runs that hold no performance result."""


def find_run_dirs(tree: SourceTree) -> list[str]:
    """Relative folders holding LoadGen logs ("" for the source root itself)."""
    return sorted({dirname(path) for path in tree.files() if path.rsplit("/", 1)[-1] in _LOG_NAMES})


class LoadGenReader:
    """Reader of local LoadGen runs (``--kind loadgen``)."""

    kind = "loadgen"
    looks_for = f"{SUMMARY_LOG_NAME} or {DETAIL_LOG_NAME}"

    def detect(self, tree: SourceTree) -> bool:
        return bool(find_run_dirs(tree))

    def read(
        self,
        tree: SourceTree,
        spec: SourceSpec,
        *,
        strict: bool,
        progress: ProgressCallback | None,
    ) -> Reading:
        require_labels(spec, what_files_lack="LoadGen logs")
        run_dirs = find_run_dirs(tree)
        reading = Reading(runs_found=len(run_dirs))
        for done, run_dir in enumerate(run_dirs, start=1):
            try:
                self._read_run(tree, spec, run_dir, reading)
            except ParseError as error:
                if strict:
                    raise
                reading.errors.append(error)
            if progress is not None:
                progress(done, len(run_dirs), run_dir)
        return reading

    def _read_run(self, tree: SourceTree, spec: SourceSpec, run_dir: str, reading: Reading) -> None:
        summary_path, detail_path = join(run_dir, SUMMARY_LOG_NAME), join(run_dir, DETAIL_LOG_NAME)
        files = set(tree.files())
        summary = tree.read_bytes(summary_path) if summary_path in files else None
        try:
            parsed = self._parse(tree, spec, summary, summary_path, detail_path, files)
        except ParseError as error:
            if error.path in (tree.shown_path(summary_path), tree.shown_path(detail_path)):
                raise  # the tree's own error (a file it cannot read) names it as shown
            raise ParseError(tree.shown_path(error.path), error.message, line=error.line) from None
        if not parsed:  # LoadGen's AccuracyOnly mode: accuracy, and no performance figure
            reading.notes.add(ACCURACY_ONLY_NOTE)
        for result in parsed:
            artifact = tree.artifact(result.artifact_path)
            assert artifact is not None, result.artifact_path
            benchmark = spec.labels.benchmark or result.benchmark or _sut_name(result)
            if benchmark != spec.labels.benchmark and not result.benchmark:
                reading.notes.add(
                    f"no benchmark named: stored under the SUT name {benchmark!r} "
                    "(pass --benchmark)"
                )
            reading.results.append(
                label_result(
                    result,
                    spec,
                    artifact_sha256=artifact.sha256,
                    benchmark=benchmark,
                    run_label=run_dir,
                )
            )

    def _parse(
        self,
        tree: SourceTree,
        spec: SourceSpec,
        summary: bytes | None,
        summary_path: str,
        detail_path: str,
        files: set[str],
    ) -> list[ParsedResult]:
        if detail_path not in files:
            return _parse_logs(spec, summary, summary_path, None, detail_path)
        with tree.open_lines(detail_path) as lines:
            return _parse_logs(spec, summary, summary_path, lines, detail_path)


def _parse_logs(
    spec: SourceSpec,
    summary: bytes | None,
    summary_path: str,
    detail_lines: Iterator[bytes] | None,
    detail_path: str,
) -> list[ParsedResult]:
    return parse_loadgen_run(
        summary=summary,
        summary_path=summary_path,
        detail_lines=detail_lines,
        detail_path=detail_path,
        benchmark=spec.labels.benchmark,
    )


def _sut_name(parsed: ParsedResult) -> str:
    name = parsed.extra.get("sut_name")
    return name if isinstance(name, str) and name else "loadgen"
