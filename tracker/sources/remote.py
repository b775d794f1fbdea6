"""Where a remote source lives: URLs, and GitHub-style repositories pinned to a commit.

A repository URL (``https://github.com/OWNER/REPO``, or the same path on any
host, so that tests can serve one from 127.0.0.1) stands for the archive of
one of its commits: ``.../archive/<commit>.tar.gz``, or the default branch
(``.../archive/refs/heads/main.tar.gz``) when no commit is pinned.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from tracker.errors import ConfigError

__all__ = ["GITHUB", "archive_url", "is_ref", "is_repository_url", "is_url", "resolve_url"]

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
