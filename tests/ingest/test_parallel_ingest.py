"""Folders on all cores: a large MLPerf round folder read by worker processes (``--jobs``)
is stored exactly as one process stores it (issue 19).

* the shared v5.1 and v6.0 rounds and a round of ten copies of v5.1 (820 result
  folders), ingested with ``--jobs 1`` and ``--jobs 2``: the same ingest lines and
  the same ``tracker export`` (JSON and CSV) byte for byte, on both backends;
* the workers' progress counts the systems read, in walk order;
* a bad file read in a worker gives the serial ingest's lines, naming the file
  (listed without ``--strict``, ``Error: ...`` with it);
* Ctrl-C while the workers read leaves nothing stored and no process behind;
* a new SQLite database is created while the workers read (its cost hidden), and an
  error then ends the workers.

Rounds below :data:`MIN_PARALLEL_FOLDERS` are read in one process; the tests
that read the shared rounds in parts lower it (``every_round_in_parts``).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import POSTGRES_URL_VARIABLE, REPO_ROOT, _postgres_schema_url
from tests.support.cli_rows import tracker
from tests.support.round_copies import replace_file, replicate_round
from tracker.errors import StoreError
from tracker.ingest import parallel
from tracker.ingest.run import ingest_source
from tracker.records.results import SourceSpec
from tracker.store.facade import Store

COPIES = 10
"""Copies of v5.1 in the large round: 820 result folders, over MIN_PARALLEL_FOLDERS."""
BAD_LOG = (
    "closed/Dell/results/XE9680_H200_SXM_141GBx8_TRT_r1/retinanet/Offline/"
    "performance/run_1/mlperf_log_detail.txt"
)
"""Read in a worker, before (in serial order) the bad system JSON the main process reads."""
BAD_SYSTEM = "closed/NVIDIA/systems/B200-SXM-180GBx8_TRT_r1.json"


@pytest.fixture(scope="module")
def big_round(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    out = tmp_path_factory.mktemp("copies") / "v5.1"
    replicate_round(shared_data / "mlperf-inference" / "v5.1", out, COPIES)
    return out


@pytest.fixture
def every_round_in_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Even the small shared rounds are read by the workers."""
    monkeypatch.setattr(parallel, "MIN_PARALLEL_FOLDERS", 0)


@pytest.fixture
def other_url(database_url: str, tmp_path: Path) -> Iterator[str]:
    """A second empty database, on the backend of ``database_url``."""
    if database_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'other.db'}"
        return
    urls = _postgres_schema_url(os.environ[POSTGRES_URL_VARIABLE])
    yield next(urls)
    next(urls, None)


@pytest.mark.usefixtures("every_round_in_parts")
def test_a_parallel_ingest_stores_and_exports_the_bytes_a_serial_one_does(
    database_url: str, other_url: str, shared_data: Path, big_round: Path, tmp_path: Path
) -> None:
    rounds = shared_data / "mlperf-inference"
    sources = [str(rounds / "v5.1"), str(rounds / "v6.0"), str(big_round)]
    serial = tracker(database_url, tmp_path / "serial", "ingest", "--jobs", "1", *sources)
    assert serial.exit_code == 0, serial.output
    in_parts = tracker(other_url, tmp_path / "parts", "ingest", "--jobs", "2", *sources)
    assert in_parts.exit_code == 0, in_parts.output
    assert in_parts.stdout == serial.stdout
    assert f"{big_round}: 820 runs (mlperf-inference), 738 results stored, 82 already" in (
        in_parts.stdout
    )
    for output_format in ("csv", "json"):
        exported = [
            tracker(url, tmp_path / "serial", "export", "--format", output_format).stdout_bytes
            for url in (database_url, other_url)
        ]
        assert exported[1] == exported[0]
    rows = json.loads(exported[0])  # the JSON export, last
    assert len(rows) == 82 + 85 + 738
    assert sum(row["system"].endswith(f"_r{COPIES - 1}") for row in rows) == 82


def test_progress_counts_the_systems_the_workers_read_in_walk_order(
    big_round: Path, tmp_path: Path
) -> None:
    seen: list[tuple[int, int, str]] = []
    with Store.open(f"sqlite:///{tmp_path / 'tracker.db'}") as store:
        outcome = ingest_source(
            store,
            SourceSpec(location=str(big_round)),
            jobs=2,
            progress=lambda done, total, what: seen.append((done, total, what)),
        )
    assert outcome.saved is not None and outcome.saved.results_stored == 820
    systems = 16 * COPIES
    assert [(done, total) for done, total, _what in seen] == [
        (done, systems) for done in range(1, systems + 1)
    ]
    assert seen[0][2] == "closed/Dell/results/XE9680_H200_SXM_141GBx8_TRT"
    assert seen[-1][2] == "open/NVIDIA/results/Jetson-Thor_TRT_r9"


def test_a_round_too_small_to_pay_for_the_pool_is_read_in_one_process(
    shared_data: Path, tmp_path: Path
) -> None:
    seen: list[str] = []
    with Store.open(f"sqlite:///{tmp_path / 'tracker.db'}") as store:
        spec = SourceSpec(location=str(shared_data / "mlperf-inference" / "v5.1"))
        ingest_source(store, spec, jobs=2, progress=lambda _done, _total, what: seen.append(what))
    assert len(seen) > 100
    assert all(what.endswith((".txt", ".json")) for what in seen)  # files, not systems


@pytest.fixture
def broken_round(tmp_path: Path, shared_data: Path) -> Path:
    """Two copies of v5.1 with a garbled detail log and a system JSON that is not JSON."""
    out = tmp_path / "broken" / "v5.1"
    replicate_round(shared_data / "mlperf-inference" / "v5.1", out, 2)
    replace_file(out / BAD_LOG, b":::MLLOG {not json\n")
    replace_file(out / BAD_SYSTEM, b"{")
    return out


@pytest.mark.usefixtures("every_round_in_parts")
@pytest.mark.parametrize("strict", [False, True])
def test_a_bad_file_read_by_a_worker_is_reported_as_the_serial_ingest_reports_it(
    broken_round: Path, tmp_path: Path, strict: bool
) -> None:
    flags = ["--strict"] if strict else []
    outputs = []
    for jobs in ("1", "2"):
        url = f"sqlite:///{tmp_path / f'jobs{jobs}.db'}"
        result = tracker(url, tmp_path / jobs, "ingest", "--jobs", jobs, *flags, str(broken_round))
        assert result.exit_code == 2, result.output
        outputs.append((result.stdout, result.stderr))
    assert outputs[1] == outputs[0]
    stdout, stderr = outputs[1]
    log_error = (
        f"Error: {broken_round}/{BAD_LOG}: line 1: event is not valid JSON (Expecting property "
        "name enclosed in double quotes: line 1 column 3 (char 2))\n"
    )
    system_error = (
        f"Error: {broken_round}/{BAD_SYSTEM}: not a valid system description JSON (Expecting "
        "property name enclosed in double quotes: line 1 column 2 (char 1))\n"
    )
    if strict:  # the first bad file in the order of the serial reading, not of the workers
        assert (stdout, stderr) == ("", log_error)
    else:
        assert stdout.startswith(
            f"{broken_round}: 164 runs (mlperf-inference), 145 results stored, 19 failed"
        )
        assert stderr == log_error + system_error


def test_ctrl_c_while_the_workers_read_stores_nothing_and_leaves_no_process(
    big_round: Path, tmp_path: Path
) -> None:
    database = tmp_path / "tracker.db"
    ingest = _stopped_while_the_workers_read(database, big_round)
    os.killpg(ingest.pid, signal.SIGINT)  # Ctrl-C: the whole process group gets it
    os.kill(ingest.pid, signal.SIGCONT)
    try:
        stdout, stderr = ingest.communicate(timeout=60)
    finally:
        ingest.kill()  # only if it hangs (the test then fails)
    assert ingest.returncode == 130, stderr  # 128 + SIGINT: never 1, a gate's verdict
    assert b"Aborted!" in stderr and b"Traceback" not in stderr
    assert b"stored" not in stdout
    # the new database is created while the workers read: Ctrl-C may come before or after
    if database.exists():
        with sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True) as connection:
            assert connection.execute("SELECT count(*) FROM result").fetchone() == (0,)
            assert connection.execute("SELECT count(*) FROM source").fetchone() == (0,)
    _wait_until_gone(ingest.pid)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _stopped_while_the_workers_read(database: Path, round_folder: Path) -> subprocess.Popen[bytes]:
    """An ``ingest --jobs 2`` of ``round_folder`` stopped (SIGSTOP) once its workers are
    seen. On a busy machine this test may be scheduled again only after the whole ingest
    has ended: then the database is removed and the ingest run again (three tries)."""
    command = [sys.executable, "-m", "tracker", "--database-url", f"sqlite:///{database}"]
    for _attempt in range(3):
        database.unlink(missing_ok=True)
        ingest = subprocess.Popen(
            [*command, "ingest", "--jobs", "2", str(round_folder)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
            start_new_session=True,  # its own process group, as a shell gives a command
        )
        _wait_for_workers(ingest, count=2)
        os.kill(ingest.pid, signal.SIGSTOP)  # it stays in the reading (its workers are there)
        if ingest.poll() is None:
            return ingest
        assert ingest.returncode == 0, ingest.communicate()  # it ended first: run it again
        ingest.communicate()
    raise AssertionError("the ingest ended before it could be stopped, three times")


def _wait_for_workers(ingest: subprocess.Popen[bytes], *, count: int) -> None:
    deadline = time.monotonic() + 60
    while len(_children(ingest.pid)) < count:
        if ingest.poll() is not None or time.monotonic() > deadline:
            ingest.kill()
            raise AssertionError(f"no workers seen: {ingest.communicate()}")
        time.sleep(0.005)


def _wait_until_gone(group: int) -> None:
    deadline = time.monotonic() + 10
    while True:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        assert time.monotonic() < deadline, "a worker outlived the ingest"
        time.sleep(0.02)


def _doubled(number: int) -> int:
    return 2 * number


def test_the_hook_runs_once_while_the_workers_hold_their_first_tasks() -> None:
    seen: list[int] = []

    def hook() -> None:
        seen.append(len([p for p in multiprocessing.active_children() if p.is_alive()]))

    with parallel.worker_pool(2, hook) as pool:
        doubled = list(pool(_doubled, list(range(200))))
    assert doubled == [2 * n for n in range(200)]
    assert seen == [2]


def test_an_error_of_the_hook_ends_the_workers_and_is_raised() -> None:
    def hook() -> None:
        raise StoreError("cannot open the database: the disk is full")

    with pytest.raises(StoreError, match="disk is full"):
        with parallel.worker_pool(2, hook) as pool:
            list(pool(_doubled, list(range(200))))
    assert multiprocessing.active_children() == []


@pytest.mark.usefixtures("every_round_in_parts")
def test_a_new_database_is_created_while_the_workers_read(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "new.db"
    workers_when_opened: list[int] = []
    open_now = Store.open_now

    def open_and_count(self: Store) -> None:
        workers_when_opened.append(len(multiprocessing.active_children()))
        open_now(self)

    monkeypatch.setattr(Store, "open_now", open_and_count)
    with Store.open(f"sqlite:///{database}", defer=True) as store:
        assert not database.exists()  # not created before the reading
        spec = SourceSpec(location=str(shared_data / "mlperf-inference" / "v5.1"))
        outcome = ingest_source(store, spec, jobs=2)
    assert outcome.saved is not None and outcome.saved.results_stored == outcome.runs_found
    assert workers_when_opened == [2]
    with sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True) as connection:
        assert connection.execute("SELECT count(*) FROM result").fetchone() == (outcome.runs_found,)
