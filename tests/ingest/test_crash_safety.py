"""A `tracker ingest` killed (SIGKILL) in the middle of writing leaves the database as it was.

The real command runs in a subprocess on a large source (a 5,000-row MLPerf
results table: a few seconds of reading and writing). It is caught inside its
write transaction (SQLite: the write lock is held and the write-ahead log has
pages after its last commit; PostgreSQL: its backend holds the insert lock on
``result`` and has a transaction id), frozen, checked again, and killed. Then:

* every row of every table equals the dump taken before (not only the counts);
* ingesting again stores every result exactly once: counts and exported rows
  equal those of an uninterrupted ingest into a fresh database;
* killed during the third source of a job, the first two stay stored and the
  third is absent; the job run again stores just the third.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.ingest_processes import (
    Reference,
    Watch,
    counts,
    dump,
    ingest_sequentially,
    kill_mid_write,
    reference,
    start_ingest,
    stored_results,
    write_job,
    write_table,
)

BIG_ROWS = 5_000


class Sources:
    """Two small tables of one round and a large one of the next, sharing systems."""

    def __init__(self, root: Path) -> None:
        self.small_a = write_table(root / "small-a", range(400), round_label="v5.0")
        self.small_b = write_table(root / "small-b", range(400, 800), round_label="v5.0")
        self.big = write_table(root / "big", range(BIG_ROWS), round_label="v5.1")


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Sources:
    return Sources(tmp_path_factory.mktemp("sources"))


@pytest.fixture(scope="module")
def small_reference(tmp_path_factory: pytest.TempPathFactory, sources: Sources) -> Reference:
    return reference(tmp_path_factory.mktemp("ref-small"), [sources.small_a, sources.small_b])


@pytest.fixture(scope="module")
def full_reference(tmp_path_factory: pytest.TempPathFactory, sources: Sources) -> Reference:
    folder = tmp_path_factory.mktemp("ref-full")
    return reference(folder, [sources.small_a, sources.small_b, sources.big])


@pytest.fixture
def watch(database_url: str, tmp_path: Path) -> Iterator[Watch]:
    watching = Watch(database_url, tmp_path.name)
    yield watching
    watching.close()


def test_killed_mid_write_leaves_the_database_as_it_was_and_a_rerun_stores_it_once(
    database_url: str,
    tmp_path: Path,
    watch: Watch,
    sources: Sources,
    full_reference: Reference,
) -> None:
    ingest_sequentially(database_url, [sources.small_a, sources.small_b])
    before = dump(database_url)
    assert len(before["result"]) == 800 and len(before["source"]) == 2
    url = watch.url("killed")
    killed = start_ingest(url, sources.big, out=tmp_path / "killed")
    kill_mid_write(killed, watch.mid_write("killed"), timeout=60)
    watch.gone("killed")

    after = dump(database_url)
    assert after == before  # every row of every table, the schema version included

    rerun = start_ingest(watch.url("rerun"), sources.big, out=tmp_path / "rerun")
    assert rerun.finish() == 0, rerun.output() + rerun.errors()
    assert f"{BIG_ROWS} runs (mlperf-table), {BIG_ROWS} results stored" in rerun.output()
    assert counts(database_url) == full_reference.counts
    assert stored_results(database_url) == full_reference.results


def test_killed_in_the_third_source_of_a_job_keeps_the_first_two(
    database_url: str,
    tmp_path: Path,
    watch: Watch,
    sources: Sources,
    small_reference: Reference,
    full_reference: Reference,
) -> None:
    job = write_job(tmp_path / "job.toml", [sources.small_a, sources.small_b, sources.big])
    url, mid_write = watch.url("killed"), watch.mid_write("killed")

    def third_source_mid_write() -> bool:
        return killed.output().count(" results stored") == 2 and mid_write()

    killed = start_ingest(url, job, out=tmp_path / "killed")
    kill_mid_write(killed, third_source_mid_write, timeout=60)
    watch.gone("killed")

    assert killed.output().splitlines() == [
        f"{sources.small_a}: 400 runs (mlperf-table), 400 results stored",
        f"{sources.small_b}: 400 runs (mlperf-table), 400 results stored",
    ]
    assert counts(database_url) == small_reference.counts
    assert stored_results(database_url) == small_reference.results
    assert str(sources.big) not in {row[2] for row in stored_results(database_url)}

    rerun = start_ingest(watch.url("rerun"), job, out=tmp_path / "rerun")
    assert rerun.finish() == 0, rerun.output() + rerun.errors()
    assert rerun.output().splitlines()[:3] == [
        f"{sources.small_a}: 400 runs (mlperf-table), unchanged, already stored",
        f"{sources.small_b}: 400 runs (mlperf-table), unchanged, already stored",
        f"{sources.big}: {BIG_ROWS} runs (mlperf-table), {BIG_ROWS} results stored",
    ]
    assert counts(database_url) == full_reference.counts
    assert stored_results(database_url) == full_reference.results
