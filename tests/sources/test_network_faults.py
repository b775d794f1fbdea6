"""Network faults against a real HTTP server on 127.0.0.1 (tests/ingest/test_pull.py's, scripted).

Every fault ends in a whole, verified download or a clear :class:`FetchError`;
never in partial data in the cache or the database. Waits are recorded, not
slept (``FetchOptions.sleep``), and only the stall tests wait for a (0.5 s) read timeout, so the
module runs in a few seconds.
"""

# ruff: noqa: F811

from __future__ import annotations

import email.utils
import hashlib
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pytest

# round_archive and server are test_pull's fixtures (the v5.1 round, served on 127.0.0.1);
# the tests below take them as arguments, which ruff reads as redefinitions (F811).
from tests.ingest.test_pull import (  # noqa: F401
    REF,
    ROUND_PATH,
    Fault,
    Served,
    round_archive,
    serve,
    server,
    tracker,
)
from tracker.errors import FetchError
from tracker.sources.fetch import FetchOptions, fetch
from tracker.store.facade import Store

STALL_TIMEOUT_S = 0.5
"""The read timeout of the tests about a server that stops sending: what ends the stall."""
READ_TIMEOUT_S = 20.0
"""Every other test's: long, so a loaded machine cannot turn a slow answer into a retry
(and an extra request) that the test does not expect."""
BODY = bytes(range(256)) * 1200
"""300 KiB: long enough to be cut in the middle."""
PATH = "/files/body.bin"


@pytest.fixture
def http() -> Iterator[tuple[str, Served]]:
    served = Served(files={PATH: BODY})
    with serve(served) as base_url:
        yield base_url, served


def _options(cache: Path, waits: list[float], **changes: object) -> FetchOptions:
    settings: dict[str, object] = {
        "cache_dir": cache,
        "sleep": waits.append,
        "read_timeout_s": READ_TIMEOUT_S,
        "connect_timeout_s": 2.0,
        "backoff_s": 0.25,
        "max_wait_s": 5.0,
    }
    return FetchOptions(**{**settings, **changes})  # type: ignore[arg-type]


def _etag(body: bytes) -> str:
    return f'"{hashlib.sha256(body).hexdigest()[:16]}"'


def _files(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*") if path.is_file())


def _only_whole_downloads(cache: Path) -> list[Path]:
    """The cache's files, after checking that none is partial or temporary."""
    files = _files(cache)
    assert not [p for p in files if p.name.endswith((".partial", ".tmp"))], files
    return files


@pytest.mark.parametrize(
    ("status", "retry_after", "waits_expected"),
    [
        (500, None, [0.25, 0.5]),  # exponential backoff
        (502, None, [0.25, 0.5]),
        (503, "2", [2.0, 2.0]),  # the server's Retry-After
        (429, "2", [2.0, 2.0]),
        (429, "3600", [5.0, 5.0]),  # capped at max_wait_s
    ],
)
def test_server_errors_are_retried_then_succeed(
    http: tuple[str, Served],
    tmp_path: Path,
    status: int,
    retry_after: str | None,
    waits_expected: list[float],
) -> None:
    base_url, served = http
    served.faults[PATH] = [Fault(status=status, retry_after=retry_after)] * 2
    waits: list[float] = []
    download = fetch(base_url + PATH, _options(tmp_path, waits))
    assert download.path.read_bytes() == BODY
    assert waits == waits_expected
    assert len(_only_whole_downloads(tmp_path)) == 2  # the body and its meta.json


def test_a_retry_after_date_is_honoured(http: tuple[str, Served], tmp_path: Path) -> None:
    base_url, served = http
    when = email.utils.formatdate(time.time() + 4, usegmt=True)
    served.faults[PATH] = [Fault(status=429, retry_after=when)]
    waits: list[float] = []
    assert fetch(base_url + PATH, _options(tmp_path, waits)).size == len(BODY)
    assert len(waits) == 1 and 2.0 <= waits[0] <= 4.0


def test_a_connection_dropped_mid_stream_is_resumed_with_a_range_request(
    http: tuple[str, Served], tmp_path: Path
) -> None:
    base_url, served = http
    served.faults[PATH] = [Fault(drop_after=1000), Fault(drop_after=50_000)]
    waits: list[float] = []
    download = fetch(base_url + PATH, _options(tmp_path, waits))
    assert download.path.read_bytes() == BODY
    assert download.sha256 == hashlib.sha256(BODY).hexdigest()
    assert download.bytes_transferred == len(BODY)  # each byte once
    assert served.ranges_asked == [
        (PATH, None, None),
        (PATH, "bytes=1000-", _etag(BODY)),
        (PATH, "bytes=51000-", _etag(BODY)),
    ]
    assert waits == [0.25, 0.5]
    assert len(_only_whole_downloads(tmp_path)) == 2


def test_a_resume_the_server_refuses_with_416_starts_over(
    http: tuple[str, Served], tmp_path: Path
) -> None:
    base_url, served = http
    served.faults[PATH] = [Fault(drop_after=1000), Fault(status=416)]
    download = fetch(base_url + PATH, _options(tmp_path, []))
    assert download.path.read_bytes() == BODY
    assert [asked[1] for asked in served.ranges_asked] == [None, "bytes=1000-", None]
    assert len(_only_whole_downloads(tmp_path)) == 2


def test_a_resume_at_the_wrong_byte_is_thrown_away_and_the_body_fetched_whole(
    http: tuple[str, Served], tmp_path: Path
) -> None:
    base_url, served = http
    served.faults[PATH] = [Fault(drop_after=1000), Fault(resume_at=500)]
    download = fetch(base_url + PATH, _options(tmp_path, []))
    assert download.path.read_bytes() == BODY
    assert download.sha256 == hashlib.sha256(BODY).hexdigest()
    assert [asked[1] for asked in served.ranges_asked] == [None, "bytes=1000-", None]
    assert len(_only_whole_downloads(tmp_path)) == 2


def test_without_ranges_a_dropped_download_starts_over(
    http: tuple[str, Served], tmp_path: Path
) -> None:
    base_url, served = http
    served.ranges = False
    served.faults[PATH] = [Fault(drop_after=1000)]
    download = fetch(base_url + PATH, _options(tmp_path, []))
    assert download.path.read_bytes() == BODY
    assert download.bytes_transferred == 1000 + len(BODY)
    assert [asked[1] for asked in served.ranges_asked] == [None, None]
    assert len(_only_whole_downloads(tmp_path)) == 2


def test_a_body_that_changed_before_the_resume_is_fetched_whole(
    http: tuple[str, Served], tmp_path: Path
) -> None:
    """``If-Range`` names the old ETag: the server sends the new body whole, never a splice."""
    base_url, served = http
    new = b"a new version of the file " * 5000
    served.faults[PATH] = [Fault(drop_after=1000, then_serve=new)]
    download = fetch(base_url + PATH, _options(tmp_path, []))
    assert download.path.read_bytes() == new
    assert served.ranges_asked[1] == (PATH, "bytes=1000-", _etag(BODY))
    assert download.bytes_transferred == 1000 + len(new)


def test_a_stalled_transfer_times_out_and_is_resumed(
    http: tuple[str, Served], tmp_path: Path
) -> None:
    base_url, served = http
    served.faults[PATH] = [Fault(stall_after=1000)]
    waits: list[float] = []
    download = fetch(base_url + PATH, _options(tmp_path, waits, read_timeout_s=STALL_TIMEOUT_S))
    assert download.path.read_bytes() == BODY
    assert served.ranges_asked[1][1] == "bytes=1000-"
    assert waits == [0.25]


def test_a_server_that_stops_sending_ends_in_a_clear_error(
    http: tuple[str, Served], tmp_path: Path
) -> None:
    base_url, served = http
    served.faults[PATH] = [Fault(stall_after=1000)] * 3
    with pytest.raises(FetchError) as raised:
        fetch(base_url + PATH, _options(tmp_path, [], attempts=3, read_timeout_s=STALL_TIMEOUT_S))
    assert str(raised.value) == (
        f"{base_url}{PATH}: gave up after 3 attempts (the server sent nothing for "
        f"{STALL_TIMEOUT_S:g} s (read timeout)); nothing was kept; check the network and the "
        "URL, or try again later"
    )
    assert [asked[1] for asked in served.ranges_asked] == [None, "bytes=1000-", "bytes=2000-"]
    assert not _files(tmp_path)


def test_persistent_failures_end_in_a_clear_error(http: tuple[str, Served], tmp_path: Path) -> None:
    base_url, served = http
    served.faults[PATH] = [Fault(status=503)] * 3
    with pytest.raises(FetchError, match=r"gave up after 3 attempts \(HTTP 503\)"):
        fetch(base_url + PATH, _options(tmp_path, [], attempts=3))
    served.faults[PATH] = [Fault(drop_after=10)] * 2
    with pytest.raises(FetchError, match=r"gave up after 2 attempts \(RemoteProtocolError: "):
        fetch(base_url + PATH, _options(tmp_path, [], attempts=2))
    with pytest.raises(FetchError, match="HTTP 404 Not Found"):
        fetch(base_url + "/missing.tar.gz", _options(tmp_path, []))
    with pytest.raises(FetchError, match="over the 100 cap|over the 100-byte cap"):
        fetch(base_url + PATH, _options(tmp_path, [], max_bytes=100))
    assert not _files(tmp_path)


def test_a_checksum_mismatch_keeps_nothing(http: tuple[str, Served], tmp_path: Path) -> None:
    base_url, served = http
    with pytest.raises(FetchError, match=r"sha256 is .* expected 0{64}.*nothing was kept"):
        fetch(base_url + PATH, _options(tmp_path, []), expected_sha256="0" * 64)
    assert not _files(tmp_path)
    good = hashlib.sha256(BODY).hexdigest()
    served.faults[PATH] = [Fault(drop_after=1000)]  # a resumed body is checked whole
    assert fetch(base_url + PATH, _options(tmp_path, []), expected_sha256=good).size == len(BODY)
    with pytest.raises(FetchError, match="expected 0{64}"):  # the cached body is not the pin
        fetch(base_url + PATH, _options(tmp_path, []), expected_sha256="0" * 64)
    assert not _files(tmp_path)


# --- the same faults under `tracker pull`: a whole round stored, or nothing -----------------


def _quick_fetches(monkeypatch: pytest.MonkeyPatch, read_timeout_s: float) -> list[float]:
    """Quick fetch settings for the CLI (what it would wait is recorded, not slept)."""
    recorded: list[float] = []
    quick = partial(
        FetchOptions,
        read_timeout_s=read_timeout_s,
        connect_timeout_s=2.0,
        attempts=3,
        sleep=recorded.append,
    )
    monkeypatch.setattr("tracker.ingest.run.FetchOptions", quick)
    return recorded


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    return _quick_fetches(monkeypatch, READ_TIMEOUT_S)


@pytest.fixture
def stall_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    return _quick_fetches(monkeypatch, STALL_TIMEOUT_S)


def _pull(database_url: str, cache: Path, base_url: str) -> tuple[int, str, str]:
    pull = ["pull", "mlperf-inference", "--round", "v5.1", "--ref", REF, "--base-url", base_url]
    result = tracker(database_url, cache, *pull)
    return result.exit_code, result.stdout, result.stderr


Faults = Callable[[int], list[Fault]]
FAULTS: dict[str, tuple[Faults, bool, Callable[[int], int]]] = {
    # name: (the faults, for an archive of this size; ranges answered; bytes the server sends)
    "dropped-then-resumed": (lambda size: [Fault(drop_after=size // 3)], True, lambda s: s),
    "dropped-without-ranges": (
        lambda size: [Fault(drop_after=size // 3)],
        False,
        lambda size: size // 3 + size,
    ),
    "stalled-then-resumed": (lambda size: [Fault(stall_after=size // 2)], True, lambda s: s),
    "500-500-then-200": (lambda _: [Fault(status=500), Fault(status=500)], True, lambda s: s),
    "429-retry-after": (lambda _: [Fault(status=429, retry_after="1")], True, lambda s: s),
}


def _round_stored(database_url: str) -> None:
    with Store.open(database_url) as store:
        assert store.count_rows()["result"] == 82


def _nothing_stored(database_url: str) -> None:
    with Store.open(database_url) as store:
        assert set(store.count_rows().values()) == {0}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_pull_through_a_fault_stores_the_whole_round(
    server: tuple[str, Served],
    round_archive: bytes,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    fault: str,
) -> None:
    monkeypatch.setenv("TRACKER_PROGRESS", "lines")  # the retries as lines on stderr
    stalls = fault.startswith("stalled")
    waits = _quick_fetches(monkeypatch, STALL_TIMEOUT_S if stalls else READ_TIMEOUT_S)
    base_url, served = server
    faults, served.ranges, sent = FAULTS[fault]
    served.faults[ROUND_PATH] = faults(len(round_archive))
    database_url = f"sqlite:///{tmp_path / 'tracker.db'}"
    code, stdout, stderr = _pull(database_url, tmp_path / "cache", base_url)
    assert code == 0, stdout + stderr
    assert "82 runs (mlperf-inference), 82 results stored" in stdout
    _round_stored(database_url)
    cached = _only_whole_downloads(tmp_path / "cache" / "downloads")
    assert [p.name for p in cached] == [f"{REF}.tar.gz", "meta.json"]
    assert cached[0].read_bytes() == round_archive
    assert served.archive_bytes_sent == sent(len(round_archive))
    assert f"downloaded {sent(len(round_archive))} bytes" in stdout
    assert len(waits) == len(faults(0))
    retried = [line for line in stderr.splitlines() if line.startswith("download: http")]
    assert [line.rpartition(" failed (")[0][-14:] for line in retried] == [
        f"attempt {n} of 3" for n in range(1, len(waits) + 1)
    ]


def test_a_pull_from_a_server_that_stops_sending_stores_nothing(
    database_url: str, server: tuple[str, Served], stall_waits: list[float], tmp_path: Path
) -> None:
    base_url, served = server
    served.faults[ROUND_PATH] = [Fault(stall_after=4096)] * 3
    code, stdout, stderr = _pull(database_url, tmp_path / "cache", base_url)
    assert code == 2, stdout + stderr
    assert stderr == (
        f"Error: {base_url}{ROUND_PATH}: gave up after 3 attempts (the server sent nothing for "
        f"{STALL_TIMEOUT_S:g} s (read timeout)); nothing was kept; check the network and the "
        "URL, or try again later\n"
    )
    _nothing_stored(database_url)
    assert not _files(tmp_path / "cache")


def test_a_pull_resumed_after_a_drop_stores_the_round_on_either_database(
    database_url: str,
    server: tuple[str, Served],
    round_archive: bytes,
    waits: list[float],
    tmp_path: Path,
) -> None:
    base_url, served = server
    served.faults[ROUND_PATH] = [Fault(drop_after=len(round_archive) // 2)]
    code, stdout, stderr = _pull(database_url, tmp_path / "cache", base_url)
    assert code == 0, stdout + stderr
    assert f"downloaded {len(round_archive)} bytes" in stdout
    assert served.ranges_asked[-1][1] == f"bytes={len(round_archive) // 2}-"
    _round_stored(database_url)


def test_a_pull_that_keeps_failing_stores_nothing(
    server: tuple[str, Served], waits: list[float], tmp_path: Path
) -> None:
    base_url, served = server
    served.faults[ROUND_PATH] = [Fault(status=500)] * 3
    database_url = f"sqlite:///{tmp_path / 'tracker.db'}"
    code, stdout, stderr = _pull(database_url, tmp_path / "cache", base_url)
    assert code == 2, stdout + stderr
    assert "gave up after 3 attempts (HTTP 500); nothing was kept" in stderr
    _nothing_stored(database_url)
    assert not _files(tmp_path / "cache")
