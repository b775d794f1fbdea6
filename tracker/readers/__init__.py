"""Source readers: one per kind of source, found by name or recognised from the files.

A reader walks a :class:`tracker.sources.tree.SourceTree`, hands the bytes to a parser
(:mod:`tracker.parsers`), applies the labels of the :class:`SourceSpec` and
returns a :class:`Reading`. Adding a kind is adding a module here and a line
in ``READERS``.
"""

from __future__ import annotations

from tracker.errors import ConfigError
from tracker.readers.aiperf import AIPerfReader
from tracker.readers.base import Reader, Reading
from tracker.readers.genai_perf import GenAIPerfReader
from tracker.readers.generic_bench import (
    bench_json_reader,
    google_benchmark_reader,
    pytest_benchmark_reader,
)
from tracker.readers.inferencex import InferenceXReader
from tracker.readers.loadgen import LoadGenReader
from tracker.readers.mlperf import MLPerfInferenceReader
from tracker.readers.mlperf_endpoints import EndpointsReader
from tracker.readers.mlperf_table import MLPerfTableReader
from tracker.readers.mlperf_training import MLPerfTrainingReader
from tracker.readers.vllm_bench import VLLMBenchReader
from tracker.sources.tree import SourceTree

__all__ = ["KINDS", "READERS", "Reader", "Reading", "detect_kind", "reader_for"]

READERS: dict[str, Reader] = {
    reader.kind: reader
    for reader in (
        # a published MLPerf round first: its tree also holds LoadGen logs and JSON files
        MLPerfInferenceReader(),
        MLPerfTableReader(),
        MLPerfTrainingReader(),
        # recognised by file names first, then by content (InferenceX before vLLM:
        # an InferenceX folder may hold the raw vLLM files its rows were made from)
        AIPerfReader(),
        GenAIPerfReader(),
        EndpointsReader(),
        InferenceXReader(),
        VLLMBenchReader(),
        LoadGenReader(),
        # microbenchmark files, by content; BMF's shape is the loosest: last
        google_benchmark_reader,
        pytest_benchmark_reader,
        bench_json_reader,
    )
}
KINDS: tuple[str, ...] = tuple(READERS)


def reader_for(kind: str) -> Reader:
    """The reader of ``kind``."""
    if kind not in READERS:
        raise ConfigError(f"unknown kind {kind!r}; supported kinds: auto, {', '.join(KINDS)}")
    return READERS[kind]


def detect_kind(tree: SourceTree) -> str:
    """The kind of the source, recognised from its files; the first reader that claims it."""
    for reader in READERS.values():
        if reader.detect(tree):
            return reader.kind
    looked_for = "; ".join(f"{r.kind}: {r.looks_for}" for r in READERS.values())
    raise ConfigError(
        f"{tree.location}: cannot tell what kind of results this is; looked for {looked_for}. "
        f"Supported kinds: {', '.join(KINDS)}; pass --kind to choose one"
    )
