"""`tracker pull` and URL sources against a real HTTP server on 127.0.0.1 (no other network).

The server serves a GitHub-style archive of the v5.1 round at
``/mlcommons/inference_results_v5.1/archive/<ref>.tar.gz`` and any other body
put in :attr:`Served.files`, each with a strong ETag; it answers
``If-None-Match`` with ``304`` and byte ranges (``Range``, honouring
``If-Range``) with ``206`` unless told not to. Faults are scripted per path
(:class:`Fault`: an HTTP status, a connection dropped or stalled mid-body);
tests/sources/test_network_faults.py uses them.
"""

from __future__ import annotations

import hashlib
import json
import re
import tarfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support.cli_rows import tracker
from tracker.ingest.run import read_job
from tracker.paths import jobs_dir
from tracker.store.facade import Store

REF = "965182b03376a00fcae415c54e560e1c83937932"
ROUND_PATH = f"/mlcommons/inference_results_v5.1/archive/{REF}.tar.gz"


@dataclass(frozen=True)
class Fault:
    """How the server misbehaves on one request (the next one for its path)."""

    status: int | None = None
    """Answer this status (with a short body) instead of the file."""
    retry_after: str | None = None
    drop_after: int | None = None
    """Send this many bytes of the body, then close the connection."""
    stall_after: int | None = None
    """Send this many bytes of the body, then nothing more (until the test ends)."""
    then_serve: bytes | None = None
    """After this request, serve this body instead (a new ETag: the file changed)."""
    resume_at: int | None = None
    """Answer a range request from this byte instead of the one asked (a wrong resume)."""


@dataclass
class Served:
    """What the test server serves and what it was asked."""

    archive: bytes = b""
    etag: str = '"v5.1-archive"'
    files: dict[str, bytes] = field(default_factory=dict)
    ranges: bool = True
    """Whether byte ranges are announced (``Accept-Ranges``) and answered (``206``)."""
    faults: dict[str, list[Fault]] = field(default_factory=dict)
    archive_bytes_sent: int = 0
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    ranges_asked: list[tuple[str, str | None, str | None]] = field(default_factory=list)
    """(path, Range, If-Range) of every request."""
    stop: threading.Event = field(default_factory=threading.Event)

    def body(self, path: str) -> tuple[bytes, str] | None:
        if path == ROUND_PATH:
            return self.archive, self.etag
        if path in self.files:
            body = self.files[path]
            return body, f'"{hashlib.sha256(body).hexdigest()[:16]}"'
        return None


class _Handler(BaseHTTPRequestHandler):
    served: Served

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
        return

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        served = self.served
        served.requests.append((self.path, self.headers.get("If-None-Match")))
        served.ranges_asked.append(
            (self.path, self.headers.get("Range"), self.headers.get("If-Range"))
        )
        queue = served.faults.get(self.path)
        fault = queue.pop(0) if queue else Fault()
        if fault.status is not None:
            retry = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            self._send(fault.status, b"busy", retry)
            return
        found = served.body(self.path)
        if found is None:
            self._send(404, b"not found")
            return
        body, etag = found
        if self.headers.get("If-None-Match") == etag:
            self._send(304, headers={"ETag": etag})
            return
        start = self._range_start(etag, len(body))
        if start and fault.resume_at is not None:
            start = fault.resume_at
        if start is None:
            self._send(416, headers={"Content-Range": f"bytes */{len(body)}"})
            return
        self._send_body(body, etag, start, fault)

    def _range_start(self, etag: str, size: int) -> int | None:
        """Where the answer starts: 0 for the whole body, None when the range is unsatisfiable."""
        asked = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
        if_range = self.headers.get("If-Range")
        if not self.served.ranges or asked is None or (if_range and if_range != etag):
            return 0
        start = int(asked[1])
        return start if start < size else None

    def _send_body(self, body: bytes, etag: str, start: int, fault: Fault) -> None:
        served = self.served
        self.send_response(206 if start else 200)
        self.send_header("ETag", etag)
        if served.ranges:
            self.send_header("Accept-Ranges", "bytes")
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        cut = fault.drop_after if fault.drop_after is not None else fault.stall_after
        payload = body[start:] if cut is None else body[start : start + cut]
        self.wfile.write(payload)
        self.wfile.flush()
        if self.path == ROUND_PATH:
            served.archive_bytes_sent += len(payload)
        if fault.then_serve is not None:
            served.files[self.path] = fault.then_serve
        if fault.stall_after is not None:
            served.stop.wait(30)
        if cut is not None:
            self.close_connection = True


@contextmanager
def serve(served: Served) -> Iterator[str]:
    """Serve ``served`` on 127.0.0.1 for the duration; yields the base URL."""
    handler = type("Handler", (_Handler,), {"served": served})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        served.stop.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture(scope="module")
def round_archive(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The v5.1 fixtures as GitHub would archive them (one top folder)."""
    archive = tmp_path_factory.mktemp("archive") / "round.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(shared_data / "mlperf-inference" / "v5.1", arcname=f"inference_results_v5.1-{REF}")
    return archive.read_bytes()


@pytest.fixture
def server(round_archive: bytes) -> Iterator[tuple[str, Served]]:
    served = Served(archive=round_archive)
    with serve(served) as base_url:
        yield base_url, served


def export(database_url: str, cache: Path) -> list[dict[str, object]]:
    result = tracker(database_url, cache, "export", "--format", "json")
    assert result.exit_code == 0, result.output
    rows: list[dict[str, object]] = json.loads(result.stdout)
    return [{k: v for k, v in row.items() if k != "source_location"} for row in rows]


def test_folder_archive_and_pull_give_identical_exports_and_a_second_pull_is_free(
    database_url: str,
    server: tuple[str, Served],
    shared_data: Path,
    round_archive: bytes,
    tmp_path: Path,
) -> None:
    base_url, served = server
    cache = tmp_path / "cache"
    folder_db, archive_db = (f"sqlite:///{tmp_path / name}" for name in ("folder.db", "tar.db"))
    folder = shared_data / "mlperf-inference" / "v5.1"
    assert tracker(folder_db, cache, "ingest", str(folder)).exit_code == 0
    archive = tmp_path / f"inference_results_v5.1-{REF}.tar.gz"
    archive.write_bytes(round_archive)
    assert tracker(archive_db, cache, "ingest", str(archive)).exit_code == 0

    pull = ["pull", "mlperf-inference", "--round", "v5.1", "--ref", REF, "--base-url", base_url]
    first = tracker(database_url, cache, *pull)
    assert first.exit_code == 0, first.output
    assert f"downloaded {len(round_archive)} bytes" in first.stdout
    assert "82 runs (mlperf-inference), 82 results stored" in first.stdout
    assert export(database_url, cache) == export(folder_db, cache) == export(archive_db, cache)

    sent = served.archive_bytes_sent
    second = tracker(database_url, cache, *pull)
    assert second.exit_code == 0, second.output
    assert "not modified, nothing downloaded" in second.stdout
    assert "unchanged, already stored" in second.stdout
    assert served.archive_bytes_sent == sent
    assert served.requests[-1] == (ROUND_PATH, served.etag)
    assert export(database_url, cache) == export(folder_db, cache)


def test_a_job_with_pins_pulls_the_pinned_archive(
    database_url: str, server: tuple[str, Served], round_archive: bytes, tmp_path: Path
) -> None:
    base_url, _served = server
    sha256 = hashlib.sha256(round_archive).hexdigest()
    job = tmp_path / "rounds.toml"
    job.write_text(
        "[[source]]\n"
        f'location = "{base_url}/mlcommons/inference_results_v5.1"\n'
        f'commit = "{REF}"\n'
        f'sha256 = "{sha256}"\n',
        encoding="utf-8",
    )
    result = tracker(database_url, tmp_path / "cache", "ingest", str(job))
    assert result.exit_code == 0, result.output
    assert f"{base_url}{ROUND_PATH}: 82 runs (mlperf-inference), 82 results stored" in result.stdout
    with Store.open(database_url) as store:
        stored = store.count_rows()
    job.write_text(job.read_text().replace(sha256, "0" * 64), encoding="utf-8")
    wrong = tracker(database_url, tmp_path / "other-cache", "ingest", str(job))
    assert wrong.exit_code == 2
    assert f"{ROUND_PATH}: sha256 is {sha256}, expected {'0' * 64}" in wrong.stderr
    assert "nothing was kept" in wrong.stderr
    with Store.open(database_url) as store:
        assert store.count_rows() == stored
    assert not [p for p in (tmp_path / "other-cache").rglob("*") if p.is_file()]


def test_the_shipped_job_lists_the_public_rounds_with_the_known_pins() -> None:
    _job, specs = read_job(jobs_dir() / "mlperf-inference.toml")
    assert [s.labels.software_version for s in specs] == [
        "v4.0",
        "v4.1",
        "v5.0",
        "v5.1",
        "v6.0",
        "v6.1",
    ]
    pinned = {s.labels.software_version: s.location for s in specs}
    assert pinned["v4.1"].endswith("/198fc46799b3328b36ee4bcbdebfa2db5a8e6183.tar.gz")
    assert pinned["v5.1"].endswith(f"/{REF}.tar.gz")
    assert pinned["v6.0"].endswith("/4d3916ac9cf474b679cdfcf492d43a0559418ad1.tar.gz")
    assert all(s.kind == "mlperf-inference" for s in specs)


def test_pull_knows_where_rounds_live_and_refuses_a_bad_round(tmp_path: Path) -> None:
    result = tracker(
        f"sqlite:///{tmp_path / 'x.db'}", tmp_path, "pull", "mlperf-inference", "--round", "five"
    )
    assert result.exit_code == 2
    assert "--round 'five' is not a round; write it as vX.Y" in result.stderr
