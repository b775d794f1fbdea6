"""Downloads over HTTP(S), cached on disk: the only module that imports httpx.

A download is streamed to a temporary file beside its cache entry and only
then moved into place, so a dropped connection, an HTTP error, an oversized
body or a checksum mismatch never leaves partial data behind. Connection
errors, timeouts, 5xx and 429 answers are retried with exponential backoff
(``Retry-After`` is honoured, within a cap). The cache keeps the body with its
``ETag``/``Last-Modified``; the next fetch of the same URL is a conditional
request, and a ``304 Not Modified`` reuses the cached body without
transferring it again.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

import httpx

from tracker.errors import FetchError

__all__ = ["DEFAULT_CACHE_DIR", "Download", "FetchOptions", "fetch"]

DEFAULT_CACHE_DIR = Path.home() / ".cache" / "tracker"
_CHUNK = 1 << 20
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class FetchOptions:
    """Where downloads are cached and how patient a download is."""

    cache_dir: Path = DEFAULT_CACHE_DIR
    max_bytes: int = 8 << 30
    connect_timeout_s: float = 15.0
    read_timeout_s: float = 60.0
    attempts: int = 4
    backoff_s: float = 1.0
    max_wait_s: float = 60.0
    progress: Callable[[int, int | None], None] | None = None
    """Called with (bytes received, bytes expected or None) while a body streams in."""
    sleep: Callable[[float], None] = field(default=time.sleep)


@dataclass(frozen=True, slots=True)
class Download:
    """A fetched URL: its cached body and what the fetch cost."""

    url: str
    path: Path
    sha256: str
    size: int
    bytes_transferred: int
    not_modified: bool


class _Retry(Exception):
    """A failed attempt worth repeating (after ``wait_s``)."""

    def __init__(self, reason: str, wait_s: float | None = None) -> None:
        super().__init__(reason)
        self.wait_s = wait_s


def fetch(url: str, options: FetchOptions, *, expected_sha256: str | None = None) -> Download:
    """Fetch ``url`` into the cache (or find it unchanged there) and return it.

    ``expected_sha256`` pins the body: a mismatch is a :class:`FetchError` and
    the body is not kept.
    """
    entry = _Entry(options.cache_dir, url)
    meta = entry.meta()
    if meta is not None and expected_sha256 and meta.get("sha256") != expected_sha256:
        meta = None  # the cached body is not the pinned one: ask for it afresh
    timeout = httpx.Timeout(
        options.read_timeout_s, connect=options.connect_timeout_s, pool=options.connect_timeout_s
    )
    with httpx.Client(timeout=timeout, follow_redirects=True) as client:
        download = _with_retries(client, entry, meta, options)
    if expected_sha256 and download.sha256 != expected_sha256.lower():
        entry.discard()
        raise FetchError(
            url,
            f"sha256 is {download.sha256}, expected {expected_sha256}; the file changed or the "
            "pin is wrong (nothing was kept)",
        )
    return download


def _with_retries(
    client: httpx.Client, entry: _Entry, meta: dict[str, object] | None, options: FetchOptions
) -> Download:
    reason = ""
    for attempt in range(options.attempts):
        try:
            return _attempt(client, entry, meta, options)
        except _Retry as retry:
            reason = str(retry)
            wait = retry.wait_s if retry.wait_s is not None else options.backoff_s * 2**attempt
            if attempt + 1 < options.attempts:
                options.sleep(min(wait, options.max_wait_s))
        except httpx.TransportError as error:
            reason = f"{type(error).__name__}: {error}"
            if attempt + 1 < options.attempts:
                options.sleep(min(options.backoff_s * 2**attempt, options.max_wait_s))
        finally:
            entry.drop_partial()
    raise FetchError(entry.url, f"gave up after {options.attempts} attempts ({reason})")


def _attempt(
    client: httpx.Client, entry: _Entry, meta: dict[str, object] | None, options: FetchOptions
) -> Download:
    headers = {}
    if meta is not None:
        if meta.get("etag"):
            headers["If-None-Match"] = str(meta["etag"])
        if meta.get("last_modified"):
            headers["If-Modified-Since"] = str(meta["last_modified"])
    with client.stream("GET", entry.url, headers=headers) as response:
        if response.status_code == 304 and meta is not None:
            return entry.cached(meta)
        if response.status_code in _RETRY_STATUSES:
            raise _Retry(f"HTTP {response.status_code}", _retry_after(response))
        if response.status_code >= 400:
            raise FetchError(
                entry.url,
                f"HTTP {response.status_code} {response.reason_phrase}; check the URL "
                "(round, repository, ref)",
            )
        return entry.store(response, options)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if not value:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class _Entry:
    """One URL's place in the cache: ``downloads/<hash>/<file name>`` and ``meta.json``."""

    def __init__(self, cache_dir: Path, url: str) -> None:
        self.url = url
        self.folder = cache_dir / "downloads" / hashlib.sha256(url.encode()).hexdigest()[:32]
        name = PurePosixPath(urlsplit(url).path).name or "download"
        self.body = self.folder / name
        self.partial = self.folder / f".{name}.partial"
        self.meta_path = self.folder / "meta.json"

    def meta(self) -> dict[str, object] | None:
        try:
            meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(meta, dict) or not self.body.is_file():
            return None
        return meta if meta.get("size") == self.body.stat().st_size else None

    def cached(self, meta: dict[str, object]) -> Download:
        return Download(
            url=self.url,
            path=self.body,
            sha256=str(meta["sha256"]),
            size=self.body.stat().st_size,
            bytes_transferred=0,
            not_modified=True,
        )

    def store(self, response: httpx.Response, options: FetchOptions) -> Download:
        expected = _content_length(response)
        if expected is not None and expected > options.max_bytes:
            raise FetchError(self.url, f"{expected} bytes is over the {options.max_bytes} cap")
        self.folder.mkdir(parents=True, exist_ok=True)
        digest, received = hashlib.sha256(), 0
        with self.partial.open("wb") as stream:
            for chunk in response.iter_bytes(_CHUNK):
                received += len(chunk)
                if received > options.max_bytes:
                    raise FetchError(self.url, f"over the {options.max_bytes}-byte cap; stopped")
                digest.update(chunk)
                stream.write(chunk)
                if options.progress is not None:
                    options.progress(received, expected)
        if expected is not None and received != expected:
            raise _Retry(f"got {received} of {expected} bytes")
        os.replace(self.partial, self.body)
        sha256 = digest.hexdigest()
        self._write_meta(response, sha256, received)
        return Download(self.url, self.body, sha256, received, received, not_modified=False)

    def _write_meta(self, response: httpx.Response, sha256: str, size: int) -> None:
        meta = {
            "url": self.url,
            "etag": response.headers.get("ETag"),
            "last_modified": response.headers.get("Last-Modified"),
            "sha256": sha256,
            "size": size,
            "fetched_at": time.time(),
        }
        temporary = self.meta_path.with_suffix(".tmp")
        temporary.write_text(json.dumps(meta, sort_keys=True), encoding="utf-8")
        os.replace(temporary, self.meta_path)

    def drop_partial(self) -> None:
        self.partial.unlink(missing_ok=True)

    def discard(self) -> None:
        self.meta_path.unlink(missing_ok=True)
        self.body.unlink(missing_ok=True)


def _content_length(response: httpx.Response) -> int | None:
    value = response.headers.get("Content-Length")
    if value is None or "Content-Encoding" in response.headers:
        return None
    try:
        return int(value)
    except ValueError:
        return None
