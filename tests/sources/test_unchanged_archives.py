"""Unchanged archives and pulls recognised before the archive is opened (nothing decompressed).

See :mod:`tracker.sources.archive`: the second ingest of an unchanged
archive, and a pull answered ``304``, never build the archive's index.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tracker.ingest.run import ingest_source, pull_round
from tracker.records.results import SourceSpec
from tracker.sources import archive as archive_identity
from tracker.sources import archive as archive_module
from tracker.sources.archive import ARCHIVE_KEY, IDENTITY_KEY, file_identity, unchanged_archive
from tracker.sources.archive_index import TarIndex, ZipIndex
from tracker.store.facade import Store

from ..ingest.test_pull import REF, Served, serve

real_sha256 = archive_identity.file_sha256
TOP = "inference_results_v5.1-0123456789abcdef"


@pytest.fixture(scope="module")
def small_round(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Lenovo's part of the v5.1 round."""
    source = shared_data / "mlperf-inference" / "v5.1"
    target = tmp_path_factory.mktemp("round") / "v5.1"
    for part in ("systems", "results", "compliance"):
        shutil.copytree(source / "closed/Lenovo" / part, target / "closed/Lenovo" / part)
    return target


def _tar(folder: Path, archive: Path) -> Path:
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=TOP)
    return archive


def _zip(folder: Path, archive: Path) -> Path:
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zipped.write(path, f"{TOP}/{path.relative_to(folder).as_posix()}")
    return archive


def _never_opened(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on, building an archive's index (decompressing it) fails the test."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the unchanged archive was opened")

    monkeypatch.setattr(archive_module, "ArchiveTree", refuse)
    monkeypatch.setattr(TarIndex, "__init__", refuse)
    monkeypatch.setattr(ZipIndex, "__init__", refuse)


@pytest.mark.parametrize("maker", [_tar, _zip], ids=["tar.gz", "zip"])
def test_an_unchanged_archive_is_not_opened_again(
    maker: object, store: Store, small_round: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = maker(small_round, tmp_path / "round.archive")  # type: ignore[operator]
    spec = SourceSpec(location=str(archive), kind="auto")
    cache = tmp_path / "cache"
    first = ingest_source(store, spec, cache_dir=cache)
    assert first.saved is not None and first.saved.results_stored > 0
    with monkeypatch.context() as patched:
        _never_opened(patched)
        again = ingest_source(store, spec, cache_dir=cache)
    assert again.saved is not None and again.saved.results_stored == 0
    assert again.saved.results_already_stored == first.saved.results_stored
    assert (again.kind, again.runs_found) == (first.kind, first.runs_found)


def test_a_touched_but_identical_archive_is_unchanged_and_remembered_as_touched(
    store: Store, small_round: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = _tar(small_round, tmp_path / "round.tar.gz")
    spec = SourceSpec(location=str(archive), kind="auto")
    cache = tmp_path / "cache"
    first = ingest_source(store, spec, cache_dir=cache)
    assert first.saved is not None
    before = file_identity(archive)
    stat = archive.stat()
    os.utime(archive, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    assert file_identity(archive) != before
    hashed: list[Path] = []

    def counting(path: Path) -> str | None:
        hashed.append(path)
        return real_sha256(path)

    with monkeypatch.context() as patched:
        _never_opened(patched)  # the bytes are hashed, not decompressed
        patched.setattr(archive_identity, "file_sha256", counting)
        again = ingest_source(store, spec, cache_dir=cache)
        assert again.saved is not None and again.saved.results_already_stored > 0
        assert hashed == [archive]
        third = ingest_source(store, spec, cache_dir=cache)
    assert third.saved is not None and third.saved.results_already_stored > 0
    assert hashed == [archive]  # the snapshot now holds the touched file's identity


def test_a_touched_archive_is_read_correctly_when_the_database_lacks_it(
    database_url: str, small_round: Path, tmp_path: Path
) -> None:
    archive = _tar(small_round, tmp_path / "round.tar.gz")
    spec = SourceSpec(location=str(archive), kind="auto")
    cache = tmp_path / "cache"
    with Store.open(database_url) as store:
        first = ingest_source(store, spec, cache_dir=cache)
    assert first.saved is not None
    stat = archive.stat()
    os.utime(archive, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    other = tmp_path / "other.db"
    with Store.open(f"sqlite:///{other}") as fresh:
        again = ingest_source(fresh, spec, cache_dir=cache)
    assert again.saved is not None and again.saved.results_stored == first.saved.results_stored


def test_a_changed_archive_is_read_again(
    store: Store, small_round: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "round"
    shutil.copytree(small_round, folder)
    archive = _tar(folder, tmp_path / "round.tar.gz")
    spec = SourceSpec(location=str(archive), kind="auto")
    cache = tmp_path / "cache"
    first = ingest_source(store, spec, cache_dir=cache)
    assert first.saved is not None
    (folder / "closed/Lenovo/README.md").write_text("changed\n")
    _tar(folder, archive)
    opened: list[Path] = []
    real_init = TarIndex.__init__

    def spying(self: TarIndex, path: Path, shown: str, **options: Any) -> None:
        opened.append(path)
        real_init(self, path, shown, **options)

    monkeypatch.setattr(TarIndex, "__init__", spying)
    again = ingest_source(store, spec, cache_dir=cache)
    assert opened == [archive]
    assert (again.runs_found, again.errors) == (first.runs_found, ())
    assert again.saved is not None
    assert again.saved.results_already_stored == first.saved.results_stored


def test_same_size_other_bytes_is_changed(tmp_path: Path) -> None:
    archive = tmp_path / "a.tar"
    archive.write_bytes(b"a" * 300_000)
    trail = (
        (ARCHIVE_KEY, "sha256:" + "0" * 64),
        (IDENTITY_KEY, "300000:1:1:1:" + "0" * 32),
    )
    assert unchanged_archive(archive, trail) is None
    assert unchanged_archive(archive, ((ARCHIVE_KEY, "x"),)) is None
    assert unchanged_archive(tmp_path / "missing", trail) is None


def test_a_pull_answered_304_does_not_open_the_archive(
    store: Store,
    shared_data: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built = tmp_path / "round.tar.gz"
    with tarfile.open(built, "w:gz") as tar:
        lenovo = shared_data / "mlperf-inference" / "v5.1" / "closed" / "Lenovo"
        tar.add(lenovo, arcname=f"inference_results_v5.1-{REF}/closed/Lenovo")
    served = Served(archive=built.read_bytes())
    cache = tmp_path / "cache"
    with serve(served) as base_url:
        first = pull_round(store, "v5.1", ref=REF, base_url=base_url, cache_dir=cache)
        assert first.saved is not None and first.saved.results_stored > 0
        with monkeypatch.context() as patched:
            _never_opened(patched)
            again = pull_round(store, "v5.1", ref=REF, base_url=base_url, cache_dir=cache)
    assert again.download is not None and again.download.not_modified
    assert (
        again.saved is not None and again.saved.results_already_stored == first.saved.results_stored
    )
    assert served.archive_bytes_sent == len(served.archive)
