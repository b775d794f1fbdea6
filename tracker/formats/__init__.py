"""Source readers: one per kind of source, found by name or recognised from the files.

A reader walks a :class:`tracker.sources.tree.SourceTree`, hands the bytes to a parser
(a ``parse*`` module of its format's folder), applies the labels of the :class:`SourceSpec` and
returns a :class:`Reading`. Adding a kind is adding a module here, its kind in
``KINDS`` (:mod:`tracker.kinds`) and a case in ``_load``.

A reader's module (and its parsers) is imported when its kind is first asked for,
or when detection reaches it: an ingest of one kind loads that kind's reader, not
all twelve (``tests/cli/test_startup.py`` checks it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from tracker.errors import ConfigError
from tracker.formats.reader import Reader, Reading
from tracker.kinds import KINDS
from tracker.sources.tree import SourceTree

__all__ = ["KINDS", "READERS", "Reader", "Reading", "detect_kind", "reader_for"]


def _load(kind: str) -> Reader:
    """The reader of ``kind`` (one of :data:`KINDS`), its module imported now."""
    match kind:
        case "mlperf-inference":
            from tracker.formats.mlperf_inference.read import MLPerfInferenceReader

            return MLPerfInferenceReader()
        case "mlperf-table":
            from tracker.formats.mlperf_inference.read import MLPerfTableReader

            return MLPerfTableReader()
        case "mlperf-training":
            from tracker.formats.mlperf_training.read import MLPerfTrainingReader

            return MLPerfTrainingReader()
        case "aiperf":
            from tracker.formats.serving.read import AIPerfReader

            return AIPerfReader()
        case "genai-perf":
            from tracker.formats.serving.read import GenAIPerfReader

            return GenAIPerfReader()
        case "mlperf-endpoints":
            from tracker.formats.mlperf_endpoints.read import EndpointsReader

            return EndpointsReader()
        case "inferencex":
            from tracker.formats.serving.read import InferenceXReader

            return InferenceXReader()
        case "vllm-bench":
            from tracker.formats.serving.read import VLLMBenchReader

            return VLLMBenchReader()
        case "loadgen":
            from tracker.formats.loadgen.read import LoadGenReader

            return LoadGenReader()
        case "google-benchmark":
            from tracker.formats.microbench.read import google_benchmark_reader

            return google_benchmark_reader
        case "pytest-benchmark":
            from tracker.formats.microbench.read import pytest_benchmark_reader

            return pytest_benchmark_reader
        case "bench-json":
            from tracker.formats.microbench.read import bench_json_reader

            return bench_json_reader
    raise KeyError(kind)


class _Readers(Mapping[str, Reader]):
    """Kind -> reader, in :data:`KINDS` order; each reader made (imported) on first access."""

    def __init__(self) -> None:
        self._made: dict[str, Reader] = {}

    def __getitem__(self, kind: str) -> Reader:
        reader = self._made.get(kind)
        if reader is None:
            if kind not in KINDS:
                raise KeyError(kind)
            reader = self._made[kind] = _load(kind)
        return reader

    def __iter__(self) -> Iterator[str]:
        return iter(KINDS)

    def __len__(self) -> int:
        return len(KINDS)

    def __contains__(self, kind: object) -> bool:
        return kind in KINDS


READERS: Mapping[str, Reader] = _Readers()
"""Every reader by its kind, in detection order (a reader's module loads on first access)."""


def reader_for(kind: str) -> Reader:
    """The reader of ``kind``."""
    if kind not in READERS:
        raise ConfigError(f"unknown kind {kind!r}; supported kinds: auto, {', '.join(KINDS)}")
    return READERS[kind]


def detect_kind(tree: SourceTree) -> str:
    """The kind of the source, recognised from its files; the first reader that claims it.

    Readers are loaded one by one as detection reaches them (the first usually claims it).
    """
    for reader in READERS.values():
        if reader.detect(tree):
            return reader.kind
    looked_for = "; ".join(f"{r.kind}: {r.looks_for}" for r in READERS.values())
    raise ConfigError(
        f"{tree.location}: cannot tell what kind of results this is; looked for {looked_for}. "
        f"Supported kinds: {', '.join(KINDS)}; pass --kind to choose one"
    )
