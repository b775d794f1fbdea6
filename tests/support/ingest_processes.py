"""Helpers for the tests that run `tracker ingest` as real processes (crash safety, concurrency).

* :func:`write_table`: a synthetic MLPerf Inference results table (``summary_results.json``)
  whose rows share systems, benchmarks and metrics with any other table written here;
  the same row number gives the same result (the same sample key) in every table.
* :func:`start_ingest`: ``python -m tracker ingest`` in a subprocess, its output in files.
* :func:`dump`: every row of every table, for "the database is exactly as before".
* :func:`stored_results`: every stored result as the export gives it, sorted.
* :func:`reference`: what an uninterrupted, sequential ingest into a fresh database stores.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import MetaData, create_engine, select, text
from sqlalchemy.engine import make_url
from sqlmodel import col

from tracker.ingest.run import ingest_source
from tracker.records.results import Labels, SourceSpec
from tracker.store.facade import Store, normalise_database_url
from tracker.store.models import (
    Artifact,
    Benchmark,
    Metric,
    Result,
    SoftwareVersion,
    Source,
    System,
)

REPO_ROOT = Path(__file__).resolve().parents[2]

_UNITS = {
    ("resnet", "Offline"): "Samples/s",
    ("resnet", "Server"): "Queries/s",
    ("llama2-70b-99", "Offline"): "Tokens/s",
    ("llama2-70b-99", "Server"): "Tokens/s",
}


def _row(number: int, round_label: str) -> dict[str, Any]:
    """Row ``number``: one of 60 systems, one of 2 scenarios, benchmark ``number // 120``."""
    scenario = ("Offline", "Server")[number % 2]
    platform = (number // 2) % 60
    submitter = f"Submitter{platform % 5}"
    group = number // 120
    model = ("resnet", "llama2-70b-99")[group % 2]
    benchmark = f"{model}-{group}"
    return {
        "ID": f"{round_label}-{number:05d}",
        "Submitter": submitter,
        "Availability": "available",
        "Category": "closed",
        "Suite": "datacenter",
        "System": f"System {platform} (synthetic test data)",
        "Platform": f"Platform{platform}",
        "UsedModel": benchmark,
        "Model": model,
        "Scenario": scenario,
        "Accuracy": "acc: 76.1",
        "Nodes": 1,
        "Processor": "Example CPU",
        "host_processors_per_node": 2,
        "Accelerator": "Example Accelerator",
        "a#": 8,
        "Location": f"closed/{submitter}/results/Platform{platform}/{benchmark}/{scenario}",
        "Software": "Example stack 1.0",
        "version": round_label,
        "inferred": 0,
        "has_power": False,
        "Performance_Result": 1000.0 + number,
        "Performance_Units": _UNITS[model, scenario],
    }


def write_table(folder: Path, rows: range, *, round_label: str = "v5.1") -> Path:
    """A folder holding a results table with one result per row number in ``rows``."""
    folder.mkdir(parents=True, exist_ok=True)
    table = [_row(number, round_label) for number in rows]
    (folder / "summary_results.json").write_text(json.dumps(table), encoding="utf-8")
    return folder


def write_job(path: Path, sources: Sequence[Path]) -> Path:
    """An ingest job listing ``sources`` (absolute locations) in order."""
    entries = "".join(f'\n[[source]]\nlocation = "{source}"\n' for source in sources)
    path.write_text(f'[job]\nname = "test"\n{entries}', encoding="utf-8")
    return path


@dataclass
class IngestProcess:
    """A running ``tracker ingest``; stdout and stderr go to files beside each other."""

    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path

    def output(self) -> str:
        return self.stdout.read_text(encoding="utf-8", errors="replace")

    def errors(self) -> str:
        return self.stderr.read_text(encoding="utf-8", errors="replace")

    def wait(self, timeout: float = 60.0) -> int:
        return self.process.wait(timeout=timeout)

    def finish(self, timeout: float = 60.0) -> int:
        """Wait for the exit code; the process is killed if it takes longer."""
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise


def start_ingest(database_url: str, *sources: Path, out: Path) -> IngestProcess:
    """``python -m tracker --database-url URL ingest SOURCES...`` in a subprocess."""
    out.parent.mkdir(parents=True, exist_ok=True)
    stdout, stderr = out.with_suffix(".out"), out.with_suffix(".err")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    command = [sys.executable, "-m", "tracker", "--database-url", database_url, "ingest"]
    with stdout.open("wb") as out_file, stderr.open("wb") as err_file:
        process = subprocess.Popen(
            [*command, *map(str, sources)],
            stdout=out_file,
            stderr=err_file,
            env=env,
            cwd=REPO_ROOT,
        )
    return IngestProcess(process, stdout, stderr)


def freeze_mid_write(ingest: IngestProcess, mid_write: Callable[[], bool], timeout: float) -> None:
    """SIGSTOP ``ingest`` once ``mid_write()`` holds, and make sure it still holds while frozen.

    The condition is checked again on the frozen process, so whatever is done
    to it next (SIGKILL, or SIGCONT once other writers queue behind it)
    certainly happens inside its write transaction.
    """
    pid = ingest.process.pid
    deadline = time.monotonic() + timeout
    while True:
        if ingest.process.poll() is not None:
            raise AssertionError(
                f"the ingest ended (exit {ingest.process.returncode}) before it was caught "
                f"mid-write: {ingest.output()}{ingest.errors()}"
            )
        if time.monotonic() > deadline:
            ingest.process.kill()
            ingest.process.wait()
            raise AssertionError("the ingest was never seen mid-write")
        if mid_write():
            os.kill(pid, signal.SIGSTOP)
            if mid_write():
                return
            os.kill(pid, signal.SIGCONT)
        time.sleep(0.005)


def kill_mid_write(ingest: IngestProcess, mid_write: Callable[[], bool], timeout: float) -> None:
    """SIGKILL ``ingest`` inside its write transaction (see :func:`freeze_mid_write`)."""
    freeze_mid_write(ingest, mid_write, timeout)
    os.kill(ingest.process.pid, signal.SIGKILL)
    assert ingest.process.wait(timeout=10) == -signal.SIGKILL


def resume(ingest: IngestProcess) -> None:
    os.kill(ingest.process.pid, signal.SIGCONT)


def sqlite_path(database_url: str) -> Path:
    database = make_url(database_url).database
    assert database, database_url
    return Path(database)


def sqlite_write_locked(path: Path) -> bool:
    """Whether another connection holds the write lock (BEGIN IMMEDIATE fails at once)."""
    connection = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:
        return True
    else:
        connection.execute("ROLLBACK")
        return False
    finally:
        connection.close()


def uncommitted_wal_frames(path: Path) -> int:
    """Pages written to the write-ahead log after its last commit frame (a transaction's)."""
    try:
        wal = path.with_name(path.name + "-wal").read_bytes()
    except FileNotFoundError:
        return 0
    if len(wal) < 32:
        return 0
    page_size = int.from_bytes(wal[8:12], "big")
    salts = wal[16:24]
    pending, offset = 0, 32
    while offset + 24 + page_size <= len(wal):
        header = wal[offset : offset + 24]
        if header[8:16] != salts:
            break  # a frame left from before the log was restarted
        pending = 0 if int.from_bytes(header[4:8], "big") else pending + 1
        offset += 24 + page_size
    return pending


@dataclass(frozen=True)
class Backend:
    """A PostgreSQL backend of one ingest process, as the server sees it."""

    pid: int
    inserting_results: bool
    """Holds the insert lock on ``result`` (granted): it has inserted results."""
    wrote: bool
    """Its transaction has an id: it has written something not yet committed."""
    blocked: bool
    """Waits for a lock another transaction holds."""


_BACKENDS = text(
    "SELECT a.pid, "
    "coalesce(bool_or(l.relation = to_regclass('result') "
    "                 AND l.mode = 'RowExclusiveLock' AND l.granted), false), "
    "a.backend_xid IS NOT NULL, cardinality(pg_blocking_pids(a.pid)) > 0 "
    "FROM pg_stat_activity a LEFT JOIN pg_locks l ON l.pid = a.pid "
    "WHERE a.application_name = :application GROUP BY a.pid, a.backend_xid"
)


class Watch:
    """Watches the ingest processes of one test database from outside.

    ``url(name)`` is the URL to give process ``name`` (on PostgreSQL it carries
    an application name, so the server's view of that process can be found).
    """

    def __init__(self, database_url: str, test: str) -> None:
        self.database_url = database_url
        self.test = test
        self.sqlite = database_url.startswith("sqlite")
        self.monitor = None if self.sqlite else create_engine(normalise_database_url(database_url))

    def url(self, name: str) -> str:
        if self.sqlite:
            return self.database_url
        url = make_url(normalise_database_url(self.database_url))
        url = url.update_query_dict({"application_name": self._application(name)})
        return url.render_as_string(hide_password=False)

    def _application(self, name: str) -> str:
        return f"{self.test[:40]}-{name}"

    def backends(self, name: str) -> list[Backend]:
        assert self.monitor is not None
        with self.monitor.connect() as connection:
            rows = connection.execute(_BACKENDS, {"application": self._application(name)})
            return [Backend(int(p), bool(i), bool(w), bool(b)) for p, i, w, b in rows]

    def mid_write(self, name: str) -> Callable[[], bool]:
        """Whether process ``name`` is inside its write transaction, with rows written.

        SQLite: the write lock is held and the write-ahead log has pages after
        its last commit. PostgreSQL: the backend has inserted into ``result``
        and its transaction has an id.
        """
        if self.sqlite:
            path = sqlite_path(self.database_url)
            return lambda: sqlite_write_locked(path) and uncommitted_wal_frames(path) > 0
        return lambda: any(b.inserting_results and b.wrote for b in self.backends(name))

    def in_transaction(self, name: str) -> Callable[[], bool]:
        """Whether process ``name`` is inside its write transaction (written rows or not).

        SQLite: the write lock is held (with the schema in place beforehand, only
        a source's transaction takes it). PostgreSQL: as :meth:`mid_write`.
        """
        if self.sqlite:
            path = sqlite_path(self.database_url)
            return lambda: sqlite_write_locked(path)
        return self.mid_write(name)

    def blocked(self, name: str) -> bool:
        """PostgreSQL: whether process ``name`` waits for another transaction's lock."""
        return any(b.blocked for b in self.backends(name))

    def wait_for(self, condition: Callable[[], bool], timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, "timed out"
            time.sleep(0.01)

    def gone(self, name: str) -> None:
        """Wait until the server has ended process ``name``'s backend (and rolled it back)."""
        if not self.sqlite:
            self.wait_for(lambda: not self.backends(name), timeout=10.0)

    def close(self) -> None:
        if self.monitor is not None:
            self.monitor.dispose()


def dump(database_url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (the schema's version included), in primary-key order."""
    with Store.open(database_url, upgrade=False) as store:
        metadata = MetaData()
        metadata.reflect(store.engine)
        with store.engine.connect() as connection:
            return {
                name: [
                    tuple(row)
                    for row in connection.execute(
                        select(table).order_by(*(table.primary_key.columns or table.columns))
                    )
                ]
                for name, table in sorted(metadata.tables.items())
            }


def stored_results(database_url: str) -> list[tuple[Any, ...]]:
    """Every stored result with its labels, source and file, by sample key (ids left out)."""
    columns: list[Any] = [
        Result.sample_key,
        Source.kind,
        Source.location,
        Source.identity_sha256,
        Artifact.path,
        Artifact.sha256,
        System.key,
        System.name,
        System.accelerators_total,
        SoftwareVersion.software,
        SoftwareVersion.version,
        Benchmark.name,
        Benchmark.scenario,
        Metric.name,
        Metric.unit,
        Metric.higher_is_better,
        Result.value,
        Result.is_valid,
        Result.workload,
        Result.concurrency,
        Result.line,
        Result.location,
        Result.round,
        Result.run_label,
        Result.sweep_key,
        Result.software_stack,
        Result.extra,
    ]
    query = (
        select(*columns)
        .join(Source, col(Result.source_id) == col(Source.id))
        .join(Artifact, col(Result.artifact_id) == col(Artifact.id))
        .join(System, col(Result.system_id) == col(System.id))
        .join(SoftwareVersion, col(Result.software_version_id) == col(SoftwareVersion.id))
        .join(Benchmark, col(Result.benchmark_id) == col(Benchmark.id))
        .join(Metric, col(Result.metric_id) == col(Metric.id))
        .order_by(col(Result.sample_key))
    )
    with Store.open(database_url, upgrade=False) as store, store.engine.connect() as connection:
        return [tuple(row) for row in connection.execute(query)]


def without_source(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """:func:`stored_results` without what says which source stored each result.

    That is the source and file columns, and the row number in the table read.
    """
    return [
        (*row[:1], *row[6:-1], {k: v for k, v in row[-1].items() if k != "table_row"})
        for row in rows
    ]


def counts(database_url: str) -> dict[str, int]:
    with Store.open(database_url, upgrade=False) as store:
        return store.count_rows()


def ingest_sequentially(database_url: str, sources: Sequence[Path]) -> None:
    """Ingest ``sources`` one after the other in this process (no snapshot cache)."""
    with Store.open(database_url) as store:
        for source in sources:
            spec = SourceSpec(location=str(source), kind="auto", labels=Labels())
            outcome = ingest_source(store, spec)
            assert outcome.saved is not None and not outcome.errors, outcome


@dataclass(frozen=True)
class Reference:
    """What an uninterrupted ingest of some sources into a fresh database stores."""

    counts: dict[str, int]
    results: list[tuple[Any, ...]]


def reference(folder: Path, sources: Sequence[Path]) -> Reference:
    """Ingest ``sources`` into a fresh SQLite database under ``folder``; what it stores."""
    folder.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{folder / 'reference.db'}"
    ingest_sequentially(url, sources)
    return Reference(counts(url), stored_results(url))
