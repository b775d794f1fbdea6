"""Archives read in place: the same tree as the folder (hostile ones: test_hostile_archives.py)."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tracker.cli import cli
from tracker.errors import ParseError
from tracker.sources.archive import ArchiveLimits, is_archive, open_archive
from tracker.sources.tree import FolderTree

TOP = "inference_results_v5.1-0123456789abcdef"
Maker = Callable[[Path, Path], Path]


def tracker(database_url: str, tmp_path: Path, *args: str) -> Result:
    env = {"TRACKER_CACHE_DIR": str(tmp_path / "cache")}
    return CliRunner().invoke(cli, ["--database-url", database_url, *args], env=env)


@pytest.fixture(scope="module")
def small_round(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Lenovo's part of the v5.1 round, as a folder named like the repository."""
    source = shared_data / "mlperf-inference" / "v5.1"
    target = tmp_path_factory.mktemp("round") / "v5.1"
    for part in ("systems", "results", "compliance"):
        shutil.copytree(source / "closed/Lenovo" / part, target / "closed/Lenovo" / part)
    return target


def make_tar(folder: Path, archive: Path, *, top: str = TOP) -> Path:
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=top)
    return archive


def make_zip(folder: Path, archive: Path, *, top: str = TOP) -> Path:
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zipped.write(path, f"{top}/{path.relative_to(folder).as_posix()}")
    return archive


@pytest.mark.parametrize("maker", [make_tar, make_zip], ids=["tar.gz", "zip"])
def test_an_archive_is_the_same_tree_as_its_folder(
    maker: Maker, small_round: Path, tmp_path: Path
) -> None:
    archive = maker(small_round, tmp_path / "round.archive")
    assert is_archive(archive)
    folder = FolderTree(small_round)
    tree = open_archive(archive)
    try:
        assert tree.root_name == TOP
        assert tree.files() == folder.files()
        assert tree.list_dir("closed/Lenovo") == folder.list_dir("closed/Lenovo")
        assert tree.list_dir("no/such/folder") == ([], [])
        path = "closed/Lenovo/systems/SE100_RTX2000E_Ada_16GBx1_TRT.json"
        assert tree.read_bytes(path) == folder.read_bytes(path)
        assert tree.artifacts() == folder.artifacts()
        order = tree.read_order(reversed(tree.files()))
        assert sorted(order) == tree.files()
        assert tree.trail_matches(tree.trail())
    finally:
        tree.close()


@pytest.mark.parametrize("maker", [make_tar, make_zip], ids=["tar.gz", "zip"])
def test_a_round_ingested_from_an_archive_exports_as_from_its_folder(
    maker: Maker, database_url: str, small_round: Path, tmp_path: Path
) -> None:
    archive = maker(small_round, tmp_path / f"round.{'zip' if maker is make_zip else 'tar.gz'}")
    folder_db = f"sqlite:///{tmp_path / 'folder.db'}"
    assert tracker(folder_db, tmp_path, "ingest", str(small_round)).exit_code == 0
    result = tracker(database_url, tmp_path, "ingest", str(archive))
    assert result.exit_code == 0, result.output
    assert "17 runs (mlperf-inference), 17 results stored" in result.stdout
    assert _export(database_url, tmp_path) == _export(folder_db, tmp_path)
    again = tracker(database_url, tmp_path, "ingest", str(archive))
    assert "unchanged, already stored" in again.stdout


def _export(database_url: str, tmp_path: Path) -> list[dict[str, object]]:
    result = tracker(database_url, tmp_path, "export", "--format", "json")
    assert result.exit_code == 0, result.output
    rows: list[dict[str, object]] = json.loads(result.stdout)
    return [{k: v for k, v in row.items() if k != "source_location"} for row in rows]


def _tar_with(tmp_path: Path, *members: tuple[tarfile.TarInfo, bytes]) -> Path:
    archive = tmp_path / "hostile.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for info, data in members:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data else None)
    return archive


def _file(name: str) -> tarfile.TarInfo:
    return tarfile.TarInfo(name)


def test_archives_are_bounded_in_size(tmp_path: Path) -> None:
    archive = _tar_with(tmp_path, (_file("top/a.txt"), b"x" * 2000), (_file("top/b.txt"), b"y"))
    with pytest.raises(ParseError, match="unpacks to more than 1000 bytes"):
        open_archive(archive, limits=ArchiveLimits(max_total_bytes=1000))


def test_a_damaged_archive_is_a_parse_error_naming_it(tmp_path: Path, small_round: Path) -> None:
    archive = make_tar(small_round, tmp_path / "round.tar.gz")
    archive.write_bytes(archive.read_bytes()[:5000])
    with pytest.raises(ParseError, match=r"round.tar.gz: the archive is damaged or truncated"):
        open_archive(archive)


def test_an_archive_that_is_not_one_is_refused_by_the_cli(
    database_url: str, tmp_path: Path
) -> None:
    fake = tmp_path / "round.tar.gz"
    fake.write_bytes(b"not an archive at all")
    result = tracker(database_url, tmp_path, "ingest", str(fake))
    assert result.exit_code == 2
    assert "expected a folder of results, an archive" in result.stderr
