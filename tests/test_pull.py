"""`tracker pull` and URL sources against a real HTTP server on 127.0.0.1 (no other network).

The server serves a GitHub-style archive of the v5.1 round at
``/mlcommons/inference_results_v5.1/archive/<ref>.tar.gz`` with an ETag, and
answers ``If-None-Match`` with ``304``; other paths inject faults.
"""

from __future__ import annotations

import hashlib
import json
import tarfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tracker.cli import cli
from tracker.errors import FetchError
from tracker.fetch import FetchOptions, fetch
from tracker.ingest import read_job
from tracker.paths import ingest_jobs_dir

REF = "965182b03376a00fcae415c54e560e1c83937932"
ROUND_PATH = f"/mlcommons/inference_results_v5.1/archive/{REF}.tar.gz"


@dataclass
class Served:
    """What the test server serves and what it was asked."""

    archive: bytes = b""
    etag: str = '"v5.1-archive"'
    archive_bytes_sent: int = 0
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    failures_left: dict[str, int] = field(default_factory=dict)


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
        if self.path == ROUND_PATH:
            if self.headers.get("If-None-Match") == served.etag:
                self._send(304, headers={"ETag": served.etag})
                return
            served.archive_bytes_sent += len(served.archive)
            self._send(200, served.archive, {"ETag": served.etag})
        elif self.path.startswith("/flaky/"):
            left = served.failures_left.get(self.path, 0)
            if left:
                served.failures_left[self.path] = left - 1
                self._send(int(self.path.split("/")[2]), b"busy", {"Retry-After": "2"})
            else:
                self._send(200, b"payload")
        elif self.path == "/drop":
            left = served.failures_left.get(self.path, 0)
            if left:
                served.failures_left[self.path] = left - 1
                self.send_response(200)
                self.send_header("Content-Length", "1000")
                self.end_headers()
                self.wfile.write(b"x" * 10)
                self.wfile.flush()
                self.close_connection = True
                return
            self._send(200, b"y" * 1000)
        elif self.path == "/big":
            self._send(200, b"z" * 5000)
        else:
            self._send(404, b"not found")


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
    handler = type("Handler", (_Handler,), {"served": served})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", served
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def tracker(database_url: str, cache: Path, *args: str) -> Result:
    env = {"TRACKER_CACHE_DIR": str(cache)}
    return CliRunner().invoke(cli, ["--database-url", database_url, *args], env=env)


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
    assert "79 runs (mlperf-inference), 79 results stored" in first.stdout
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
    assert f"{base_url}{ROUND_PATH}: 79 runs (mlperf-inference), 79 results stored" in result.stdout
    job.write_text(job.read_text().replace(sha256, "0" * 64), encoding="utf-8")
    wrong = tracker(database_url, tmp_path / "other-cache", "ingest", str(job))
    assert wrong.exit_code == 2
    assert f"expected {'0' * 64}" in wrong.stderr


def test_the_shipped_job_lists_the_public_rounds_with_the_known_pins() -> None:
    _job, specs = read_job(ingest_jobs_dir() / "mlperf-inference.toml")
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


def _options(
    tmp_path: Path, waits: list[float], *, attempts: int = 4, max_bytes: int = 1 << 30
) -> FetchOptions:
    return FetchOptions(
        cache_dir=tmp_path, sleep=waits.append, attempts=attempts, max_bytes=max_bytes
    )


@pytest.mark.parametrize("status", [503, 429, 500])
def test_server_errors_are_retried_with_backoff(
    server: tuple[str, Served], tmp_path: Path, status: int
) -> None:
    base_url, served = server
    path = f"/flaky/{status}/x.json"
    served.failures_left[path] = 2
    waits: list[float] = []
    download = fetch(base_url + path, _options(tmp_path, waits))
    assert download.path.read_bytes() == b"payload"
    assert waits == [2.0, 2.0]  # the server's Retry-After


def test_a_connection_dropped_mid_stream_is_retried_and_leaves_no_partial_file(
    server: tuple[str, Served], tmp_path: Path
) -> None:
    base_url, served = server
    served.failures_left["/drop"] = 1
    waits: list[float] = []
    download = fetch(base_url + "/drop", _options(tmp_path, waits))
    assert download.path.read_bytes() == b"y" * 1000
    assert len(waits) == 1
    assert not list(tmp_path.rglob("*.partial"))


def test_persistent_failures_end_in_a_clear_error(
    server: tuple[str, Served], tmp_path: Path
) -> None:
    base_url, served = server
    served.failures_left["/flaky/503/y"] = 99
    with pytest.raises(FetchError, match=r"gave up after 3 attempts \(HTTP 503\)"):
        fetch(base_url + "/flaky/503/y", _options(tmp_path, [], attempts=3))
    with pytest.raises(FetchError, match="HTTP 404 Not Found"):
        fetch(base_url + "/missing.tar.gz", _options(tmp_path, []))
    with pytest.raises(FetchError, match="over the 100 cap|over the 100-byte cap"):
        fetch(base_url + "/big", _options(tmp_path, [], max_bytes=100))
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


def test_a_checksum_mismatch_keeps_nothing(server: tuple[str, Served], tmp_path: Path) -> None:
    base_url, _served = server
    with pytest.raises(FetchError, match="sha256 is .* expected 0{64}"):
        fetch(base_url + "/big", _options(tmp_path, []), expected_sha256="0" * 64)
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]
    good = hashlib.sha256(b"z" * 5000).hexdigest()
    assert fetch(base_url + "/big", _options(tmp_path, []), expected_sha256=good).size == 5000


def test_pull_knows_where_rounds_live_and_refuses_a_bad_round(tmp_path: Path) -> None:
    result = tracker(
        f"sqlite:///{tmp_path / 'x.db'}", tmp_path, "pull", "mlperf-inference", "--round", "five"
    )
    assert result.exit_code == 2
    assert "--round 'five' is not a round; write it as vX.Y" in result.stderr
