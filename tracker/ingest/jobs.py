"""Ingest jobs (declarative TOML files listing sources and their labels) and where a remote
source lives.

Ingest jobs: declarative TOML files listing sources and their labels.

The format is documented in ``jobs/README.md``. Parsing is pure (bytes in,
:class:`Job` out); locations are resolved against the job's ``root`` by the caller.

Where a remote source lives: URLs, and GitHub-style repositories pinned to a commit.

A repository URL (``https://github.com/OWNER/REPO``, or the same path on any
host, so that tests can serve one from 127.0.0.1) stands for the archive of
one of its commits: ``.../archive/<commit>.tar.gz``, or the default branch
(``.../archive/refs/heads/main.tar.gz``) when no commit is pinned.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from urllib.parse import urlsplit

from tracker.errors import ConfigError
from tracker.records.results import LABEL_MAX, LabelError, Labels, SourceSpec, checked_label
from tracker.sources.fetch import shown_url
from tracker.sources.tree import shown_name

__all__ = [
    "GITHUB",
    "Job",
    "archive_url",
    "is_ref",
    "is_repository_url",
    "is_url",
    "parse_job",
    "resolve_url",
    "shown_location",
]


GITHUB = "https://github.com"
DEFAULT_REF = "refs/heads/main"
_FILE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz", ".zip", ".json", ".gz")


_REF = re.compile(r"[A-Za-z0-9_][\w./-]*")


def is_ref(ref: str) -> bool:
    """Whether ``ref`` can be a commit or ref name in an archive URL (no ``..``, no spaces)."""
    return bool(_REF.fullmatch(ref)) and ".." not in ref and not ref.endswith("/")


def is_url(location: str) -> bool:
    """Whether a source location is an http(s) URL."""
    return location.startswith(("http://", "https://"))


def shown_location(location: str) -> str:
    """A source location as messages and the database show it: a URL without its
    credentials (:func:`~tracker.sources.fetch.shown_url`), a path whose bytes are not
    UTF-8 with those bytes escaped (:func:`~tracker.sources.tree.shown_name`)."""
    return shown_url(location) if is_url(location) else shown_name(location)


def is_repository_url(url: str) -> bool:
    """Whether ``url`` names a repository (``/OWNER/REPO``), not a file."""
    parts = [p for p in urlsplit(url).path.split("/") if p]
    return len(parts) == 2 and not parts[1].lower().endswith(_FILE_SUFFIXES)


def archive_url(repository: str, ref: str | None = None) -> str:
    """The ``.tar.gz`` archive of ``repository`` at ``ref`` (default branch if none)."""
    return f"{repository.rstrip('/')}/archive/{ref or DEFAULT_REF}.tar.gz"


def resolve_url(location: str, commit: str | None) -> str:
    """The URL to download for a source location and its optional commit pin."""
    if commit is not None and not is_ref(commit):
        raise ConfigError(f"{commit!r} is not a commit or ref name")
    if is_repository_url(location):
        return archive_url(location, commit)
    if commit:
        raise ConfigError(
            f"{location}: a commit pin needs a repository URL such as "
            "https://github.com/mlcommons/inference_results_v5.1"
        )
    return location


_JOB_KEYS = {"name", "description", "example", "root"}
_LABEL_KEYS = {"kind", "software", "software_version", "system", "accelerators", "benchmark"}
_LABEL_KEYS_WITH_DATE = _LABEL_KEYS | {"release_date"}
_PIN_KEYS = {"commit", "sha256"}
_SOURCE_KEYS = _LABEL_KEYS_WITH_DATE | _PIN_KEYS | {"location"}
_SHA256 = re.compile(r"[0-9a-fA-F]{64}")


@dataclass(frozen=True, slots=True)
class Job:
    """A parsed ingest job. Source locations are as written in the file."""

    name: str
    description: str
    is_example: bool
    root: str | None
    sources: tuple[SourceSpec, ...]


def parse_job(data: bytes, *, path: str) -> Job:
    """Parse an ingest job file; every mistake names the file and the entry."""
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: not a valid TOML ingest job ({error})") from None
    _check_keys(document, {"job", "defaults", "source"}, path=path, where="the top level")
    header = _table(document.get("job", {}), path=path, where="[job]")
    _check_keys(header, _JOB_KEYS, path=path, where="[job]")
    defaults = _table(document.get("defaults", {}), path=path, where="[defaults]")
    _check_keys(defaults, _LABEL_KEYS_WITH_DATE, path=path, where="[defaults]")
    _check_texts(defaults, path=path, where="[defaults]")
    entries = document.get("source", [])
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{path}: no [[source]] entries; a job lists at least one source")
    is_example = _typed(header, "example", bool, path=path, where="[job]", default=False)
    sources = tuple(
        _source(_table(entry, path=path, where=f"source {n}"), defaults, is_example, path, n)
        for n, entry in enumerate(entries, start=1)
    )
    return Job(
        name=_typed(header, "name", str, path=path, where="[job]", default=path),
        description=_typed(header, "description", str, path=path, where="[job]", default=""),
        is_example=is_example,
        root=_typed(header, "root", str, path=path, where="[job]", default=None),
        sources=sources,
    )


def _source(
    entry: Mapping[str, Any], defaults: Mapping[str, Any], is_example: bool, path: str, n: int
) -> SourceSpec:
    where = f"source {n}"
    _check_keys(entry, _SOURCE_KEYS, path=path, where=where)
    _check_texts(entry, path=path, where=where)
    merged = {**defaults, **entry}
    location = _typed(merged, "location", str, path=path, where=where, default=None)
    if not location:
        raise ConfigError(f"{path}: {where} has no 'location'")
    labels = Labels(
        software=_typed(merged, "software", str, path=path, where=where, default=None),
        software_version=_version(merged, path=path, where=where),
        system=_typed(merged, "system", str, path=path, where=where, default=None),
        accelerators=_typed(merged, "accelerators", int, path=path, where=where, default=None),
        benchmark=_typed(merged, "benchmark", str, path=path, where=where, default=None),
        release_date=_typed(merged, "release_date", date, path=path, where=where, default=None),
        is_example=is_example,
    ).checked()  # the text labels were checked above: this strips their whitespace
    kind = _typed(merged, "kind", str, path=path, where=where, default="auto")
    commit = _typed(entry, "commit", str, path=path, where=where, default=None)
    sha256 = _typed(entry, "sha256", str, path=path, where=where, default=None)
    if sha256 is not None and not _SHA256.fullmatch(sha256):
        raise ConfigError(f"{path}: {where}: 'sha256' must be 64 hex digits, not {sha256!r}")
    if commit is not None and not is_ref(commit):
        raise ConfigError(f"{path}: {where}: 'commit' {commit!r} is not a commit or ref")
    given = (
        (key, "source" if key in entry else "defaults")
        for key in sorted(_LABEL_KEYS_WITH_DATE - {"kind"})
        if merged.get(key) is not None
    )
    return SourceSpec(
        location=location,
        kind=kind,
        labels=labels,
        commit=commit,
        sha256=sha256,
        job_labels=tuple(given),
    )


def _version(fields: Mapping[str, Any], *, path: str, where: str) -> str | None:
    value = fields.get("software_version")
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ConfigError(
            f"{path}: {where}: software_version must be a string: write "
            f'software_version = "{value}" (TOML would read {value} as a number)'
        )
    version: str | None = _typed(
        fields, "software_version", str, path=path, where=where, default=None
    )
    return version


def _check_texts(table: Mapping[str, Any], *, path: str, where: str) -> None:
    """Each text label of ``table`` follows the label rules (:func:`checked_label`),
    the same on every database; the error names the file, the entry and the key."""
    for key in LABEL_MAX:
        value = table.get(key)
        if isinstance(value, str):
            try:
                checked_label(key, value)
            except LabelError as error:
                raise ConfigError(f"{path}: {where}: {key}: {error}") from None


def _table(value: object, *, path: str, where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: {where} must be a table")
    return value


def _check_keys(table: Mapping[str, Any], allowed: set[str], *, path: str, where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key {unknown[0]!r} in {where}; allowed: {', '.join(sorted(allowed))}"
        )


def _typed(
    table: Mapping[str, Any], key: str, kind: type, *, path: str, where: str, default: Any
) -> Any:
    if key not in table:
        return default
    value = table[key]
    if isinstance(value, kind):
        # bool is an int and datetime is a date to Python, but not to a job file.
        if not (
            kind is int and isinstance(value, bool) or kind is date and isinstance(value, datetime)
        ):
            return value
    raise ConfigError(f"{path}: {where}: {key!r} must be a {kind.__name__}, not {value!r}")
