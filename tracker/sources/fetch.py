"""Downloads over HTTP(S), cached on disk: the only module that imports httpx.

A download is streamed to a temporary file beside its cache entry and only
then moved into place, so a dropped connection, an HTTP error, an oversized
body or a checksum mismatch never leaves partial data behind. Connection
errors, timeouts, 5xx and 429 answers are retried with exponential backoff
(``Retry-After`` is honoured, within a cap). A transfer cut off mid-body is
resumed where it stopped (``Range`` with ``If-Range`` naming the body's strong
``ETag``) when the server said it accepts byte ranges; otherwise, or when the
body changed meanwhile, it starts over. The cache keeps the body with its
``ETag``/``Last-Modified``; the next fetch of the same URL is a conditional
request, and a ``304 Not Modified`` reuses the cached body without
transferring it again.

A server that accepts the connection and never answers is given up on after two
attempts that each waited :attr:`FetchOptions.read_timeout_s` for a first byte (about a
minute in all), not after every attempt. Credentials in a URL (``user:secret@``, or a
query value such as ``token=...``) are used, never shown: every message and
:attr:`Download.url` name the URL as :func:`shown_url` writes it.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from tracker.errors import FetchError
from tracker.paths import DEFAULT_CACHE_DIR

# httpx is imported by the functions that talk HTTP: a source that is not a URL never loads it.
if TYPE_CHECKING:
    import httpx

__all__ = ["DEFAULT_CACHE_DIR", "Download", "FetchOptions", "fetch", "shown_url"]

_CHUNK = 1 << 20
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


@dataclass(frozen=True, slots=True)
class FetchOptions:
    """Where downloads are cached and how patient a download is."""

    cache_dir: Path = DEFAULT_CACHE_DIR
    max_bytes: int = 8 << 30
    connect_timeout_s: float = 15.0
    read_timeout_s: float = 30.0
    """How long the server may send nothing (before the answer, or in the middle of the body)."""
    silent_attempts: int = 2
    """Attempts whose server accepted and never sent a byte, after which the fetch gives up
    (a server that stays silent twice is not answering)."""
    attempts: int = 4
    backoff_s: float = 1.0
    max_wait_s: float = 60.0
    progress: Callable[[int, int | None], None] | None = None
    """Called with (bytes received, bytes expected or None) while a body streams in."""
    sleep: Callable[[float], None] = field(default=time.sleep)
    on_retry: Callable[[str], None] | None = None
    """Called with a sentence (URL, attempt, reason, wait) before waiting for the next attempt."""


_SECRET_QUERY_KEYS = re.compile(
    r"token|secret|pass|sig|auth|credential|key|session|code", re.IGNORECASE
)
"""Query keys whose values :func:`shown_url` hides (``token``, ``X-Amz-Signature``...)."""


def shown_url(url: str) -> str:
    """``url`` as messages show it: a password in it as ``***``, and the values of query
    keys that hold credentials too.

    >>> shown_url("https://user:secret@host.test/a.tar.gz?token=abc&round=v5.1")
    'https://user:***@host.test/a.tar.gz?token=***&round=v5.1'
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.partition("://")[0] + "://***"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _at, host = netloc.rpartition("@")
        user, colon, _password = userinfo.partition(":")
        netloc = f"{user}{':***' if colon else ''}@{host}"
    query = "&".join(
        f"{key}=***" if sep and _SECRET_QUERY_KEYS.search(key) else f"{key}{sep}{value}"
        for key, sep, value in (field.partition("=") for field in parts.query.split("&"))
    )
    return urlunsplit(parts._replace(netloc=netloc, query=query))


@dataclass(frozen=True, slots=True)
class Download:
    """A fetched URL: its cached body and what the fetch cost."""

    url: str
    """The URL as :func:`shown_url` writes it (no credentials)."""
    path: Path
    sha256: str
    size: int
    bytes_transferred: int
    """Body bytes received over every attempt (a resumed transfer counts each byte once)."""
    not_modified: bool


class _Retry(Exception):
    """A failed attempt worth repeating (after ``wait_s``)."""

    def __init__(self, reason: str, wait_s: float | None = None) -> None:
        super().__init__(reason)
        self.wait_s = wait_s


@dataclass(slots=True)
class _Transfer:
    """One fetch's state across its attempts: bytes received, and how to resume."""

    transferred: int = 0
    kept: int = 0
    """Bytes of the body in the partial file that a ranged request can continue (0: none)."""
    etag: str = ""
    """The strong ETag the kept bytes belong to (sent as ``If-Range``)."""
    total: int | None = None
    resumed: bool = False

    def restart(self) -> None:
        self.kept, self.etag, self.total, self.resumed = 0, "", None, False

    def cut_off(self, received: int, etag: str, total: int | None) -> None:
        """Remember a body cut off after ``received`` bytes (resumable when ``etag`` is set)."""
        if etag and received:
            self.kept, self.etag, self.total = received, etag, total
        else:
            self.restart()


def fetch(url: str, options: FetchOptions, *, expected_sha256: str | None = None) -> Download:
    """Fetch ``url`` into the cache (or find it unchanged there) and return it.

    ``expected_sha256`` pins the body: a mismatch is a :class:`FetchError` and
    the body is not kept.
    """
    entry = _Entry(options.cache_dir, url)
    meta = entry.meta()
    pin = expected_sha256.lower() if expected_sha256 else None
    if meta is not None and pin and meta.get("sha256") != pin:
        meta = None  # the cached body is not the pinned one: ask for it afresh
    import httpx

    timeout = httpx.Timeout(
        options.read_timeout_s, connect=options.connect_timeout_s, pool=options.connect_timeout_s
    )
    with httpx.Client(timeout=timeout, follow_redirects=True) as client:
        download = _with_retries(client, entry, meta, options, pin)
    if pin and download.sha256 != pin:  # the cached body, answered by a 304
        entry.discard()
        raise _mismatch(entry.shown, download.sha256, pin)
    return download


def _with_retries(
    client: httpx.Client,
    entry: _Entry,
    meta: dict[str, object] | None,
    options: FetchOptions,
    pin: str | None,
) -> Download:
    import httpx

    transfer = _Transfer()
    reason = ""
    silent = 0
    entry.drop_partial()  # left by a process that was killed: its validator is unknown
    try:
        for attempt in range(options.attempts):
            if transfer.kept and entry.partial_size() != transfer.kept:
                transfer.restart()
            try:
                return _attempt(client, entry, meta, options, transfer, pin)
            except _Retry as retry:
                reason, wait = entry.scrub(str(retry)), retry.wait_s
            except httpx.TransportError as error:
                reason, wait = entry.scrub(_describe(error, options)), None
                if isinstance(error, httpx.ReadTimeout) and not transfer.transferred:
                    silent += 1
            if not transfer.kept:
                entry.drop_partial()
            if silent >= options.silent_attempts:
                raise FetchError(
                    entry.shown,
                    f"the server accepted {silent} connections and sent nothing back, each "
                    f"for {options.read_timeout_s:g} s; nothing was kept; check the URL, or "
                    "try again later",
                )
            if attempt + 1 < options.attempts:
                delay = min(
                    wait if wait is not None else options.backoff_s * 2**attempt, options.max_wait_s
                )
                if options.on_retry is not None:
                    options.on_retry(
                        f"{entry.shown}: attempt {attempt + 1} of {options.attempts} failed "
                        f"({reason}); trying again in {delay:.3g} s"
                    )
                options.sleep(delay)
    finally:
        entry.drop_partial()
    raise FetchError(
        entry.shown,
        f"gave up after {options.attempts} attempts ({reason}); nothing was kept; "
        "check the network and the URL, or try again later",
    )


def _attempt(
    client: httpx.Client,
    entry: _Entry,
    meta: dict[str, object] | None,
    options: FetchOptions,
    transfer: _Transfer,
    pin: str | None,
) -> Download:
    headers = {}
    if transfer.kept:
        headers["Range"] = f"bytes={transfer.kept}-"
        headers["If-Range"] = transfer.etag
    elif meta is not None:
        if meta.get("etag"):
            headers["If-None-Match"] = str(meta["etag"])
        if meta.get("last_modified"):
            headers["If-Modified-Since"] = str(meta["last_modified"])
    with client.stream("GET", entry.url, headers=headers) as response:
        status = response.status_code
        if status == 304 and meta is not None and not transfer.kept:
            return entry.cached(meta)
        if status in _RETRY_STATUSES:
            raise _Retry(f"HTTP {status}", _retry_after(response))
        if status == 416 and transfer.kept:
            transfer.restart()
            raise _Retry("the server would not resume (HTTP 416)", 0.0)
        if status >= 400:
            raise FetchError(
                entry.shown,
                f"HTTP {status} {response.reason_phrase}; check the URL (round, repository, ref)",
            )
        if status == 206 and transfer.kept:
            if not _continues(response, transfer):
                transfer.restart()
                raise _Retry("the server resumed at the wrong place", 0.0)
            transfer.resumed = True
            return entry.store(response, options, transfer, pin)
        if status != 200:
            raise FetchError(entry.shown, f"unexpected HTTP {status} {response.reason_phrase}")
        transfer.restart()  # a whole body (the server ignored the range, or the body changed)
        return entry.store(response, options, transfer, pin)


def _continues(response: httpx.Response, transfer: _Transfer) -> bool:
    """Whether a ``206`` answer is the rest of the body whose start is kept."""
    match = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", "").strip())
    if response.headers.get("Content-Encoding", "identity") != "identity":
        return False
    if match is None or int(match[1]) != transfer.kept:
        return False
    total = None if match[3] == "*" else int(match[3])
    if transfer.total is not None and total != transfer.total:
        return False
    if total is not None and int(match[2]) != total - 1:
        return False
    transfer.total = total
    return True


def _describe(error: httpx.TransportError, options: FetchOptions) -> str:
    import httpx

    if isinstance(error, httpx.ReadTimeout):
        return f"the server sent nothing for {options.read_timeout_s:g} s (read timeout)"
    if isinstance(error, httpx.ConnectTimeout):
        return f"no connection within {options.connect_timeout_s:g} s (connect timeout)"
    return f"{type(error).__name__}: {error}"


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


def _mismatch(url: str, sha256: str, pin: str) -> FetchError:
    return FetchError(
        url,
        f"sha256 is {sha256}, expected {pin}; the file changed or the pin is wrong "
        "(nothing was kept)",
    )


def _resumable_etag(response: httpx.Response) -> str:
    """The ``ETag`` to resume this body with, or "" when it cannot be resumed."""
    etag = response.headers.get("ETag", "")
    ranges = response.status_code == 206 or "bytes" in response.headers.get("Accept-Ranges", "")
    encoded = response.headers.get("Content-Encoding", "identity") != "identity"
    return etag if ranges and not encoded and etag and not etag.startswith("W/") else ""


class _Entry:
    """One URL's place in the cache: ``downloads/<hash>/<file name>`` and ``meta.json``."""

    def __init__(self, cache_dir: Path, url: str) -> None:
        self.url = url
        self.shown = shown_url(url)
        secret = urlsplit(url).password
        self._secrets = [url] + ([secret] if secret else [])
        self.folder = cache_dir / "downloads" / hashlib.sha256(url.encode()).hexdigest()[:32]
        name = PurePosixPath(urlsplit(url).path).name or "download"
        self.body = self.folder / name
        self.partial = self.folder / f".{name}.partial"
        self.meta_path = self.folder / "meta.json"

    def scrub(self, text: str) -> str:
        """``text`` (an error of the network library) without the URL's credentials."""
        for secret in self._secrets:
            text = text.replace(secret, self.shown if secret == self.url else "***")
        return text

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
            url=self.shown,
            path=self.body,
            sha256=str(meta["sha256"]),
            size=self.body.stat().st_size,
            bytes_transferred=0,
            not_modified=True,
        )

    def store(
        self, response: httpx.Response, options: FetchOptions, transfer: _Transfer, pin: str | None
    ) -> Download:
        """Stream the body (or its rest, after ``transfer.kept`` bytes) and move it into place."""
        import httpx

        expected = transfer.total if transfer.kept else _content_length(response)
        if expected is not None and expected > options.max_bytes:
            raise FetchError(self.shown, f"{expected} bytes is over the {options.max_bytes} cap")
        etag = _resumable_etag(response) or (transfer.etag if transfer.kept else "")
        self.folder.mkdir(parents=True, exist_ok=True)
        digest, received = self._kept_digest(transfer.kept), transfer.kept
        with self.partial.open("ab" if transfer.kept else "wb") as stream:
            try:
                for chunk in response.iter_bytes():  # as it arrives: a cut keeps every byte
                    received += len(chunk)
                    transfer.transferred += len(chunk)
                    if received > options.max_bytes:
                        raise FetchError(
                            self.shown, f"over the {options.max_bytes}-byte cap; stopped"
                        )
                    digest.update(chunk)
                    stream.write(chunk)
                    if options.progress is not None:
                        options.progress(received, expected)
            except httpx.TransportError:
                stream.flush()
                transfer.cut_off(received, etag, expected)
                raise
        if expected is not None and received != expected:
            transfer.cut_off(received, etag, expected)
            raise _Retry(f"got {received} of {expected} bytes")
        sha256 = digest.hexdigest()
        if pin and sha256 != pin:
            if transfer.resumed:  # pieces of two bodies? fetch it whole once more
                transfer.restart()
                raise _Retry(f"sha256 {sha256} of a resumed transfer is not the pinned one", 0.0)
            self.discard()
            raise _mismatch(self.shown, sha256, pin)
        self.meta_path.unlink(missing_ok=True)  # never a new body beside the old one's meta
        os.replace(self.partial, self.body)
        self._write_meta(response, etag or response.headers.get("ETag"), sha256, received)
        return Download(
            self.shown, self.body, sha256, received, transfer.transferred, not_modified=False
        )

    def _kept_digest(self, kept: int) -> hashlib._Hash:
        digest = hashlib.sha256()
        if kept:
            with self.partial.open("rb") as stream:
                while chunk := stream.read(_CHUNK):
                    digest.update(chunk)
        return digest

    def _write_meta(
        self, response: httpx.Response, etag: str | None, sha256: str, size: int
    ) -> None:
        meta = {
            "url": self.shown,
            "etag": etag,
            "last_modified": response.headers.get("Last-Modified"),
            "sha256": sha256,
            "size": size,
            "fetched_at": time.time(),
        }
        temporary = self.meta_path.with_suffix(".tmp")
        temporary.write_text(json.dumps(meta, sort_keys=True), encoding="utf-8")
        os.replace(temporary, self.meta_path)

    def partial_size(self) -> int | None:
        try:
            return self.partial.stat().st_size
        except OSError:
            return None

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
