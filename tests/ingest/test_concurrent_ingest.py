"""Several `tracker ingest` processes writing one database at once: no failure, nothing twice.

The sources are synthetic MLPerf results tables of one round: A (rows 0–1,999),
B (1,500–3,499: 500 results in common with A), C (3,500–5,499) and D
(5,000–6,999: 500 in common with C); they share the 60 systems, the software
version, the metrics and some benchmarks, which every ingest gets or creates.
The union is 7,000 results.

* four processes, each source in two of them (A+C, B+D, C+A, D+B), started
  together on a fresh database (the schema is created by whichever gets there
  first): every process exits 0 and the database holds what a sequential ingest
  into a fresh database holds (4 sources, 7,000 results, each once);
* PostgreSQL, forced: one process is frozen inside its transaction until three
  others (the same source, an overlapping one, a disjoint one sharing systems)
  are blocked on its uncommitted rows; once it commits they hit unique
  violations, retry, and succeed ("already stored" for the same source);
* SQLite, forced: three processes queue behind one holding the write lock
  (busy timeout, BEGIN IMMEDIATE), while a reader still reads (write-ahead log).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.ingest_processes import (
    IngestProcess,
    Reference,
    Watch,
    counts,
    freeze_mid_write,
    reference,
    resume,
    start_ingest,
    stored_results,
    without_source,
    write_table,
)
from tracker.store.facade import Store


class Sources:
    def __init__(self, root: Path) -> None:
        self.a = write_table(root / "a", range(2000))
        self.b = write_table(root / "b", range(1500, 3500))
        self.c = write_table(root / "c", range(3500, 5500))
        self.d = write_table(root / "d", range(5000, 7000))


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Sources:
    return Sources(tmp_path_factory.mktemp("sources"))


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory, sources: Sources) -> Reference:
    return reference(tmp_path_factory.mktemp("ref"), [sources.a, sources.b, sources.c, sources.d])


@pytest.fixture
def watch(database_url: str, tmp_path: Path) -> Iterator[Watch]:
    watching = Watch(database_url, tmp_path.name)
    yield watching
    watching.close()


_LINE = re.compile(
    r"^(?P<location>\S+): (?P<runs>\d+) runs \(mlperf-table\), (?P<what>.*?)"
    r"(?: \(retried (?P<retries>once|\d+ times) after a conflict with a concurrent writer\))?$"
)


def _outcomes(process: IngestProcess) -> dict[str, tuple[str, int]]:
    """Each source's summary and retries, from a finished process's output."""
    found: dict[str, tuple[str, int]] = {}
    for line in process.output().splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        retries = match["retries"] or "0"
        found[match["location"]] = (
            match["what"],
            1 if retries == "once" else int(retries.split()[0]),
        )
    return found


def _finish_all(processes: dict[str, IngestProcess]) -> dict[str, dict[str, tuple[str, int]]]:
    for name, process in processes.items():
        code = process.finish(timeout=60)
        assert code == 0, f"{name} exited {code}: {process.output()}{process.errors()}"
        assert process.errors() == "", process.errors()
    return {name: _outcomes(process) for name, process in processes.items()}


def _assert_each_result_stored_once(database_url: str, expected: Reference) -> None:
    assert counts(database_url) == expected.counts
    assert without_source(stored_results(database_url)) == without_source(expected.results)


def test_four_processes_with_overlapping_sources_store_everything_once(
    database_url: str, tmp_path: Path, watch: Watch, sources: Sources, expected: Reference
) -> None:
    plan = {
        "p1": (sources.a, sources.c),
        "p2": (sources.b, sources.d),
        "p3": (sources.c, sources.a),
        "p4": (sources.d, sources.b),
    }
    processes = {
        name: start_ingest(watch.url(name), *plan[name], out=tmp_path / name) for name in plan
    }
    outcomes = _finish_all(processes)

    _assert_each_result_stored_once(database_url, expected)
    stored_total = 0
    for source in (sources.a, sources.b, sources.c, sources.d):
        summaries = sorted(outcomes[name][str(source)][0] for name in plan if source in plan[name])
        # one process stored the source, the other found it stored
        assert len(summaries) == 2 and summaries[1] == "unchanged, already stored", summaries
        stored = re.fullmatch(r"(\d+) results stored(?:, (\d+) already stored)?", summaries[0])
        assert stored is not None, summaries
        stored_total += int(stored[1])
    assert stored_total == 7_000


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_postgres_writers_blocked_on_uncommitted_rows_retry_and_succeed(
    database_url: str, tmp_path: Path, watch: Watch, sources: Sources
) -> None:
    """PostgreSQL: row locks and unique violations (SQLite queues writers instead)."""
    first = start_ingest(watch.url("first"), sources.a, out=tmp_path / "first")
    freeze_mid_write(first, watch.mid_write("first"), timeout=60)
    others = {
        "same": start_ingest(watch.url("same"), sources.a, out=tmp_path / "same"),
        "overlapping": start_ingest(watch.url("overlapping"), sources.b, out=tmp_path / "overl"),
        "disjoint": start_ingest(watch.url("disjoint"), sources.c, out=tmp_path / "disjoint"),
    }
    for name in others:
        watch.wait_for(lambda name=name: watch.blocked(name))  # type: ignore[misc]
    resume(first)
    outcomes = _finish_all({"first": first, **others})

    assert outcomes["first"][str(sources.a)] == ("2000 results stored", 0)
    assert outcomes["same"][str(sources.a)][0] == "unchanged, already stored"
    assert outcomes["overlapping"][str(sources.b)][0] == "1500 results stored, 500 already stored"
    assert outcomes["disjoint"][str(sources.c)][0] == "2000 results stored"
    blocked = {"same": sources.a, "overlapping": sources.b, "disjoint": sources.c}
    retries = {name: outcomes[name][str(source)][1] for name, source in blocked.items()}
    assert all(count >= 1 for count in retries.values()), retries

    assert counts(database_url)["source"] == 3
    rows = stored_results(database_url)
    assert len(rows) == 5500 == len({row[0] for row in rows})


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_sqlite_writers_queue_behind_the_write_lock_while_readers_read(
    database_url: str, tmp_path: Path, watch: Watch, sources: Sources, expected: Reference
) -> None:
    """SQLite: one writer at a time, the others wait for the lock; readers go on."""
    Store.open(database_url).close()  # the schema first: the write lock is then the ingest's
    first = start_ingest(database_url, sources.a, out=tmp_path / "first")
    freeze_mid_write(first, watch.in_transaction("first"), timeout=60)
    others = {
        name: start_ingest(database_url, source, out=tmp_path / name)
        for name, source in (("b", sources.b), ("c", sources.c), ("d", sources.d))
    }
    # they read their tables (about a second) and then wait for the lock; a reader is not held up
    for _ in range(20):
        assert counts(database_url)["result"] == 0
        assert all(process.process.poll() is None for process in others.values())
        time.sleep(0.1)
    resume(first)
    outcomes = _finish_all({"first": first, **others})

    assert outcomes["first"][str(sources.a)] == ("2000 results stored", 0)
    assert all(retries == 0 for per in outcomes.values() for _what, retries in per.values())
    _assert_each_result_stored_once(database_url, expected)
