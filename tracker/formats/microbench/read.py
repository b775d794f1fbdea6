"""Microbenchmark results: the generic format (and BMF), Google Benchmark and pytest-benchmark.

Each is one JSON file per run, recognised by content (``docs/formats/generic-benchmark.md``):
every JSON file of the source that is of the kind is read (one that is not valid JSON
is reported, not skipped); other JSON files are skipped with a note. The files name
each benchmark, but neither the software version nor the system: ``--software-version``
and ``--system`` are required (a CI runner's host name changes from run to run, so the
host name the file records is kept in ``extra`` only). ``--benchmark`` does not apply.

Every result is a sample of its series (software, system, benchmark, metric, labels):
the repeats of one file are told apart by their index, several files of the same run
(one per repetition of the suite) are repeats too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from tracker.errors import ConfigError
from tracker.formats.microbench.parse import (
    looks_like_bmf,
    looks_like_generic_bench,
    parse_generic_bench,
)
from tracker.formats.microbench.parse_google import (
    looks_like_google_benchmark,
    parse_google_benchmark,
)
from tracker.formats.microbench.parse_pytest import (
    looks_like_pytest_benchmark,
    parse_pytest_benchmark,
)
from tracker.formats.reader import Reading, label_result, require_labels
from tracker.formats.serving.read import Parsed, SniffedReader, sniff_json
from tracker.records.results import ParsedResult, SourceSpec
from tracker.sources.tree import SourceTree

__all__ = [
    "BenchFileReader",
    "bench_json_reader",
    "google_benchmark_reader",
    "pytest_benchmark_reader",
]


Recognise = Callable[[object], bool]
ParseFile = Callable[..., list[ParsedResult]]


class BenchFileReader(SniffedReader):
    """Reader of one kind of microbenchmark result file (one JSON file per run)."""

    def __init__(
        self, kind: str, what: str, looks_for: str, recognise: Recognise, parse: ParseFile
    ) -> None:
        self.kind = kind
        self.what = what
        self.looks_for = looks_for
        self.missing = f"{what} results found ({looks_for})"
        self._recognise = recognise
        self._parse_file = parse

    def _excluded(self, path: str) -> bool:
        return path.endswith(".jsonl")

    def _looks_like(self, doc: object) -> bool:
        return self._recognise(doc)

    def _reads(self, tree: SourceTree, path: str) -> bool:
        doc = sniff_json(tree, path)
        return doc is None or self._recognise(doc)

    def _skipped_note(self, skipped: Sequence[str]) -> str:
        return (
            f"skipped {len(skipped)} JSON file(s) that are not {self.what} results, "
            f"e.g. {skipped[0]}"
        )

    def _parse(self, data: bytes, path: str) -> list[ParsedResult]:
        return self._parse_file(data, path=path)

    def _check(self, spec: SourceSpec) -> None:
        if spec.labels.benchmark:
            raise ConfigError(
                f"{spec.location}: {self.what} files name each benchmark; --benchmark does "
                "not apply to them (leave it out; --software names the project)"
            )
        require_labels(spec, what_files_lack=f"{self.what} files")

    def _label(self, tree: SourceTree, spec: SourceSpec, parsed: Parsed, reading: Reading) -> None:
        """Every result labelled; a repeat's sample is named by its file's hash and its index."""
        aggregated = set()
        for unit, results in parsed:
            for result in results:
                artifact = tree.artifact(result.artifact_path)
                assert artifact is not None, result.artifact_path
                assert result.benchmark is not None, result.artifact_path
                record = label_result(
                    result,
                    spec,
                    artifact_sha256=artifact.sha256,
                    benchmark=result.benchmark,
                    run_label=unit.run_label,
                )
                repeat = result.extra.get("repeat_index")
                if repeat is not None:
                    record = replace(record, sample_id=f"{artifact.sha256}#{repeat}")
                if "aggregate" in result.extra:
                    aggregated.add(result.benchmark)
                reading.results.append(record)
        if aggregated:
            reading.notes.add(
                f"{len(aggregated)} benchmark(s) reported by their aggregates alone, one sample "
                "each (the median): leave out --benchmark_report_aggregates_only to store every "
                "repetition as a sample"
            )


google_benchmark_reader = BenchFileReader(
    "google-benchmark",
    "Google Benchmark",
    "JSON with context and benchmarks (a binary run with --benchmark_format=json)",
    looks_like_google_benchmark,
    parse_google_benchmark,
)
pytest_benchmark_reader = BenchFileReader(
    "pytest-benchmark",
    "pytest-benchmark",
    "JSON with machine_info and benchmarks (pytest --benchmark-json=FILE)",
    looks_like_pytest_benchmark,
    parse_pytest_benchmark,
)
bench_json_reader = BenchFileReader(
    "bench-json",
    "generic benchmark",
    'JSON with a results array, or Bencher\'s {"<benchmark>": {"<measure>": {"value"}}}',
    lambda doc: looks_like_generic_bench(doc) or looks_like_bmf(doc),
    parse_generic_bench,
)
