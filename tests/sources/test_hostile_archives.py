"""Hostile archives, built here, are refused whole: a clear error, nothing written, nothing stored.

Each archive is the Lenovo part of the v5.1 round (17 good runs, so a reader that
let the hostile entry through would store results) plus one hostile entry: a
path out of the archive, a link, a device, a member whose data disagrees with
its header, a decompression bomb, zip entries sharing their data, tar headers
of hostile sizes or records (plain ``.tar`` too). ``tracker ingest`` must exit 2
with ``Error: <archive>...: refused ...`` naming the member, leave the database
empty and write no file outside the cache folder.
"""

from __future__ import annotations

import gzip
import io
import re
import shutil
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.sources.test_archive import TOP, make_zip, tracker
from tracker.errors import ParseError
from tracker.sources.archive import open_archive
from tracker.store.facade import Store

LOG = (
    "closed/Lenovo/results/SE100_RTX2000E_Ada_16GBx1_TRT/resnet50/Offline/performance/run_1/"
    "mlperf_log_detail.txt"
)
"""A file the MLPerf reader reads for one run only."""
Builder = Callable[[Path, Path], Path]
"""(round folder, tmp_path) -> the hostile archive."""


@pytest.fixture(scope="module")
def round_folder(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = shared_data / "mlperf-inference" / "v5.1"
    target = tmp_path_factory.mktemp("round") / "v5.1"
    for part in ("systems", "results", "compliance"):
        shutil.copytree(source / "closed/Lenovo" / part, target / "closed/Lenovo" / part)
    return target


# --- tar archives, written block by block -------------------------------------------------


def _round_blocks(folder: Path) -> bytes:
    """The round as tar blocks, without the end-of-archive marker (more blocks can follow)."""
    buffer = io.BytesIO()
    tar = tarfile.open(fileobj=buffer, mode="w")
    tar.add(folder, arcname=TOP)
    blocks = buffer.getvalue()[: tar.offset]
    tar.close()
    return blocks


def _entry(name: str, kind: bytes = tarfile.REGTYPE, *, link: str = "", size: int = 0) -> bytes:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, link, size
    return info.tobuf(tarfile.GNU_FORMAT)


def _data(data: bytes) -> bytes:
    return data + bytes(-len(data) % tarfile.BLOCKSIZE)


def _file(name: str, data: bytes) -> bytes:
    return _entry(name, size=len(data)) + _data(data)


def _tar_gz(folder: Path, tmp_path: Path, *blocks: bytes, end: bool = True) -> Path:
    archive = tmp_path / "hostile.tar.gz"
    body = _round_blocks(folder) + b"".join(blocks) + (bytes(2 * tarfile.BLOCKSIZE) if end else b"")
    archive.write_bytes(gzip.compress(body, 6))
    return archive


def _outside(tmp_path: Path) -> Path:
    """Where an extracting reader would have written the hostile member."""
    return tmp_path / "outside" / "evil.txt"


def absolute_name(folder: Path, tmp_path: Path) -> Path:
    return _tar_gz(folder, tmp_path, _file(str(_outside(tmp_path)), b"evil"))


def dotdot_name(folder: Path, tmp_path: Path) -> Path:
    return _tar_gz(folder, tmp_path, _file(f"{TOP}/../outside/evil.txt", b"evil"))


def symlink_out(folder: Path, tmp_path: Path) -> Path:
    link = _entry(f"{TOP}/closed/Lenovo/systems/evil.json", tarfile.SYMTYPE, link="/etc/passwd")
    return _tar_gz(folder, tmp_path, link)


def symlink_up(folder: Path, tmp_path: Path) -> Path:
    link = _entry(f"{TOP}/closed/evil", tarfile.SYMTYPE, link="../../../outside")
    return _tar_gz(folder, tmp_path, link)


def through_symlink(folder: Path, tmp_path: Path) -> Path:
    """The two-step escape: a link inside the archive, then a file written "through" it."""
    link = _entry(f"{TOP}/closed/evil", tarfile.SYMTYPE, link="Lenovo")
    return _tar_gz(folder, tmp_path, link, _file(f"{TOP}/closed/evil/evil.txt", b"evil"))


def hard_link(folder: Path, tmp_path: Path) -> Path:
    hard = _entry(f"{TOP}/closed/Lenovo/evil.txt", tarfile.LNKTYPE, link=f"{TOP}/{LOG}")
    return _tar_gz(folder, tmp_path, hard)


def char_device(folder: Path, tmp_path: Path) -> Path:
    return _tar_gz(folder, tmp_path, _entry(f"{TOP}/closed/Lenovo/evil", tarfile.CHRTYPE))


def block_device(folder: Path, tmp_path: Path) -> Path:
    return _tar_gz(folder, tmp_path, _entry(f"{TOP}/closed/Lenovo/evil", tarfile.BLKTYPE))


def fifo(folder: Path, tmp_path: Path) -> Path:
    return _tar_gz(folder, tmp_path, _entry(f"{TOP}/closed/Lenovo/evil", tarfile.FIFOTYPE))


def longer_than_its_header(folder: Path, tmp_path: Path) -> Path:
    """The header says 10 bytes; 3000 follow (what an extractor would read as the next header)."""
    entry = _entry(f"{TOP}/closed/Lenovo/evil.txt", size=10)
    return _tar_gz(folder, tmp_path, entry + _data(b"A" * 3000))


def truncated_member(folder: Path, tmp_path: Path) -> Path:
    """The header says 50,000 bytes; the archive ends after 100."""
    entry = _entry(f"{TOP}/closed/Lenovo/evil.txt", size=50_000)
    return _tar_gz(folder, tmp_path, entry + _data(b"A" * 100), end=False)


def _zeros_gz(mib: int) -> bytes:
    """``mib`` MiB of zeros as concatenated gzip members (about 1 KiB per MiB)."""
    return gzip.compress(bytes(16 << 20), 9) * (mib // 16)


def gzip_bomb(folder: Path, tmp_path: Path) -> Path:
    """A member of 1 GiB of zeros in a 1 MiB archive; its header tells the truth."""
    archive = tmp_path / "bomb.tar.gz"
    head = _round_blocks(folder) + _entry(f"{TOP}/closed/Lenovo/zeros.bin", size=1 << 30)
    archive.write_bytes(gzip.compress(head) + _zeros_gz(1024) + gzip.compress(bytes(1024)))
    return archive


def extended_header_bomb(folder: Path, tmp_path: Path) -> Path:
    """A pax header of 1 GiB (tarfile would read it into memory at once)."""
    archive = tmp_path / "pax-bomb.tar.gz"
    head = _round_blocks(folder) + _entry(f"{TOP}/PaxHeader/evil", tarfile.XHDTYPE, size=1 << 30)
    archive.write_bytes(gzip.compress(head) + _zeros_gz(1024))
    return archive


def duplicate_member(folder: Path, tmp_path: Path) -> Path:
    return _tar_gz(folder, tmp_path, _file(f"{TOP}/{LOG}", b"a second, different copy"))


# --- tar headers of hostile sizes and records ---------------------------------------------

EVIL = f"{TOP}/closed/Lenovo/evil.txt"
PAX_NAME = f"{TOP}/PaxHeaders/evil.txt"


def _tar(folder: Path, tmp_path: Path, *blocks: bytes) -> Path:
    """An uncompressed ``.tar`` (read with seeks, where tarfile's code fails otherwise)."""
    archive = tmp_path / "hostile.tar"
    archive.write_bytes(_round_blocks(folder) + b"".join(blocks) + bytes(2 * tarfile.BLOCKSIZE))
    return archive


def _sized(header: bytes, field: bytes) -> bytes:
    """``header`` with its 12-byte size field replaced by ``field`` (its checksum made right)."""
    block = bytearray(header)
    block[124:136], block[148:156] = field, b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


def _base256(size: int) -> bytes:
    return (b"\xff" if size < 0 else b"\x80") + (size % (1 << 88)).to_bytes(11, "big")


def _pax(records: bytes) -> bytes:
    return _entry(PAX_NAME, tarfile.XHDTYPE, size=len(records)) + _data(records)


def _negative_extended(kind: bytes, field: bytes, gz: bool) -> Builder:
    """An extended header of -1024 bytes before 256 MiB of zeros (``read(-1024)`` reads all)."""

    def build(folder: Path, tmp_path: Path) -> Path:
        header = _sized(_entry(PAX_NAME, kind, size=512), field)
        if not gz:
            return _tar(folder, tmp_path, header)
        archive = tmp_path / "hostile.tar.gz"
        archive.write_bytes(gzip.compress(_round_blocks(folder) + header) + _zeros_gz(256))
        return archive

    return build


def pax_size_below_zero(folder: Path, tmp_path: Path) -> Path:
    return _tar(folder, tmp_path, _pax(b"17 size=-1048576\n"), _entry(EVIL, size=0))


def size_past_any_offset(folder: Path, tmp_path: Path) -> Path:
    return _tar(folder, tmp_path, _sized(_entry(EVIL, size=0), _base256(1 << 80)))


def pax_length_of_5000_digits(folder: Path, tmp_path: Path) -> Path:
    return _tar(folder, tmp_path, _pax(b"1" * 5000 + b" path=evil\n"), _file(EVIL, b"x"))


def pax_length_of_5000_digits_gz(folder: Path, tmp_path: Path) -> Path:
    return _tar_gz(folder, tmp_path, _pax(b"1" * 5000 + b" path=evil\n"), _file(EVIL, b"x"))


def extended_header_chain(folder: Path, tmp_path: Path) -> Path:
    """400 GNU long names in a row (tarfile's code recurses on each: a RecursionError)."""
    long_name = _entry("././@LongLink", tarfile.GNUTYPE_LONGNAME, size=4) + _data(b"evil")
    return _tar(folder, tmp_path, long_name * 400, _file(EVIL, b"x"))


def sparse_map_bomb(folder: Path, tmp_path: Path) -> Path:
    """A sparse member whose map goes on for 64 MiB of extension blocks (all read as headers)."""
    header = bytearray(_entry(f"{TOP}/closed/Lenovo/holes.bin", tarfile.GNUTYPE_SPARSE))
    header[482] = 1  # a sparse map extension block follows
    extension = bytes(504) + b"\x01" + bytes(7)
    archive = tmp_path / "hostile.tar.gz"
    head = _round_blocks(folder) + _sized(bytes(header), bytes(header[124:136]))
    archive.write_bytes(gzip.compress(head) + gzip.compress(extension * (128 << 10), 9))
    return archive


# --- zip archives, patched byte by byte ---------------------------------------------------

_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")
_END = struct.Struct("<4s4H2LH")


def _round_zip(folder: Path, tmp_path: Path, name: str = "hostile.zip") -> Path:
    return make_zip(folder, tmp_path / name)


def _info(archive: Path, name: str) -> zipfile.ZipInfo:
    with zipfile.ZipFile(archive) as zipped:
        return zipped.getinfo(name)


def _central_record(data: bytes, name: str) -> int:
    """Where the central-directory record of ``name`` starts (the directory is last)."""
    at = data.rindex(name.encode()) - _CENTRAL.size
    assert data[at : at + 4] == b"PK\x01\x02"
    return at


def _patch_sizes(archive: Path, member: str, size: int, *, central: bool) -> None:
    """Make the local header (and the central directory, when ``central``) say ``size``."""
    data = bytearray(archive.read_bytes())
    struct.pack_into("<L", data, _info(archive, member).header_offset + 22, size)
    if central:
        struct.pack_into("<L", data, _central_record(bytes(data), member) + 24, size)
    archive.write_bytes(bytes(data))


def zip_local_header_lies(folder: Path, tmp_path: Path) -> Path:
    archive = _round_zip(folder, tmp_path)
    _patch_sizes(archive, f"{TOP}/{LOG}", 1 << 30, central=False)
    return archive


def zip_member_longer_than_both_headers(folder: Path, tmp_path: Path) -> Path:
    """Both headers say 100 bytes; the data inflates to the whole log (found when it is read)."""
    archive = _round_zip(folder, tmp_path)
    _patch_sizes(archive, f"{TOP}/{LOG}", 100, central=True)
    return archive


def _add_central_record(archive: Path, name: str, offset: int, like: zipfile.ZipInfo) -> None:
    """One more central-directory entry ``name`` whose local header is at ``offset``."""
    data = archive.read_bytes()
    end_at = len(data) - _END.size
    sig, disk, cd_disk, on_disk, total, cd_size, cd_offset, comment = _END.unpack(data[end_at:])
    raw_name = name.encode()
    record = _CENTRAL.pack(
        b"PK\x01\x02", 20, 3, 20, 0, 0, like.compress_type, 0, 0, like.CRC,
        like.compress_size, like.file_size, len(raw_name), 0, 0, 0, 0, 0o100644 << 16, offset,
    ) + raw_name  # fmt: skip
    end = _END.pack(
        sig, disk, cd_disk, on_disk + 1, total + 1, cd_size + len(record), cd_offset, comment
    )
    archive.write_bytes(data[:end_at] + record + end)


def zip_overlapping_entries(folder: Path, tmp_path: Path) -> Path:
    """The overlap bomb: one stored member's data holds another member, listed on its own."""
    inner = zipfile.ZipInfo(f"{TOP}/closed/Lenovo/inner.txt")
    data = b"shared data " * 100
    inner.CRC, inner.compress_size, inner.file_size = zlib.crc32(data), len(data), len(data)
    inner_local = struct.pack(
        "<4s2B4HL2L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, 0,
        inner.CRC, len(data), len(data), len(inner.filename), 0,
    ) + inner.filename.encode() + data  # fmt: skip
    archive = _round_zip(folder, tmp_path)
    with zipfile.ZipFile(archive, "a", zipfile.ZIP_STORED) as zipped:
        zipped.writestr(f"{TOP}/closed/Lenovo/outer.bin", inner_local)
    outer = _info(archive, f"{TOP}/closed/Lenovo/outer.bin")
    inner_at = outer.header_offset + 30 + len(outer.filename) + len(outer.extra)
    _add_central_record(archive, inner.filename, inner_at, like=inner)
    return archive


def zip_two_names_one_header(folder: Path, tmp_path: Path) -> Path:
    """A second central-directory entry pointing at another member's local header."""
    archive = _round_zip(folder, tmp_path)
    log = _info(archive, f"{TOP}/{LOG}")
    _add_central_record(archive, f"{TOP}/closed/Lenovo/copy.txt", log.header_offset, like=log)
    return archive


def zip_bomb(folder: Path, tmp_path: Path) -> Path:
    archive = _round_zip(folder, tmp_path)
    with zipfile.ZipFile(archive, "a", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr(f"{TOP}/closed/Lenovo/zeros.bin", bytes(32 << 20))
    return archive


def zip_device(folder: Path, tmp_path: Path) -> Path:
    archive = _round_zip(folder, tmp_path)
    with zipfile.ZipFile(archive, "a") as zipped:
        info = zipfile.ZipInfo(f"{TOP}/closed/Lenovo/evil")
        info.external_attr = 0o020644 << 16  # S_IFCHR
        zipped.writestr(info, b"")
    return archive


def zip_symlink_out(folder: Path, tmp_path: Path) -> Path:
    archive = _round_zip(folder, tmp_path)
    with zipfile.ZipFile(archive, "a") as zipped:
        info = zipfile.ZipInfo(f"{TOP}/closed/Lenovo/systems/evil.json")
        info.external_attr = 0o120777 << 16  # S_IFLNK
        zipped.writestr(info, b"/etc/passwd")
    return archive


MEMBER = rf"member '{TOP}/closed/Lenovo"
CASES: dict[str, tuple[Builder, str]] = {
    "absolute-name": (absolute_name, r"refused: member '/.*/outside/evil.txt' would land outside"),
    "dotdot-name": (dotdot_name, rf"refused: member '{TOP}/\.\./outside/evil.txt' would land"),
    "symlink-absolute": (symlink_out, "is a symbolic link to '/etc/passwd', outside the archive"),
    "symlink-up": (symlink_up, "is a symbolic link to '../../../outside', outside the archive"),
    "through-symlink": (through_symlink, rf"'{TOP}/closed/evil', which is a file or a link"),
    "hard-link": (hard_link, rf"{MEMBER}/evil.txt' is a hard link to '{TOP}/closed/Lenovo/"),
    "char-device": (char_device, rf"{MEMBER}/evil' is a character device"),
    "block-device": (block_device, rf"{MEMBER}/evil' is a block device"),
    "fifo": (fifo, rf"{MEMBER}/evil' is a FIFO"),
    "tar-longer-than-header": (
        longer_than_its_header,
        rf"the data after {MEMBER}/evil.txt' is not a tar header .* holds more than its header",
    ),
    "tar-truncated": (truncated_member, rf"truncated after {MEMBER}/evil.txt'"),
    "gzip-bomb": (gzip_bomb, rf"at {MEMBER}/zeros.bin' \(a decompression bomb\?\)"),
    "pax-header-bomb": (extended_header_bomb, r"an extended header .* of 1073741824 bytes"),
    "duplicate": (duplicate_member, rf"member '{TOP}/{LOG}' appears twice"),
    **{
        f"{name}-size-below-zero{'' if gz else '-tar'}": (
            _negative_extended(kind, field, gz),
            r"an extended header \('.*'\) of -1024 bytes, which no tar writes: .*make it again",
        )
        for name, kind, field in [
            ("pax-header", tarfile.XHDTYPE, _base256(-1024)),
            ("pax-global-header", tarfile.XGLTYPE, _base256(-1024)),
            ("gnu-long-name", tarfile.GNUTYPE_LONGNAME, b"-2000      \0"),
            ("gnu-long-link", tarfile.GNUTYPE_LONGLINK, b"-2000      \0"),
        ]
        for gz in (True, False)
    },
    "tar-pax-size-below-zero": (
        pax_size_below_zero,
        rf"{MEMBER}/evil.txt' is said to hold -1048576 bytes, which no tar writes: the archive",
    ),
    "tar-size-past-any-offset": (
        size_past_any_offset,
        rf"{MEMBER}/evil.txt' is said to hold {1 << 80} bytes, which no tar writes",
    ),
    **{
        name: (builder, rf"'{PAX_NAME}' has a header tarfile cannot read \(Exceeds the limit .*")
        for name, builder in [
            ("tar-pax-length-of-5000-digits", pax_length_of_5000_digits),
            ("pax-length-of-5000-digits", pax_length_of_5000_digits_gz),
        ]
    },
    "tar-extended-header-chain": (extended_header_chain, "more than 16 extended headers in a row"),
    "sparse-map-bomb": (sparse_map_bomb, r"'.*holes.bin' hold more than 2097152 bytes \(a decomp"),
    "zip-local-header-lies": (zip_local_header_lies, "the archive lies about its sizes"),
    "zip-longer-than-headers": (
        zip_member_longer_than_both_headers,
        rf"{LOG}: cannot read from the archive \(Bad CRC-32.*nothing of it is stored",
    ),
    "zip-overlapping-entries": (
        zip_overlapping_entries,
        rf"{MEMBER}/inner.txt' is stored inside the data of '{TOP}/closed/Lenovo/outer.bin' "
        r"\(overlapping entries",
    ),
    "zip-two-names-one-header": (zip_two_names_one_header, "copy.txt' is named '.*' in its local"),
    "zip-bomb": (zip_bomb, rf"{MEMBER}/zeros.bin' is compressed suspiciously well \(33554432"),
    "zip-device": (zip_device, rf"{MEMBER}/evil' is a character device"),
    "zip-symlink-absolute": (zip_symlink_out, "symbolic link to '/etc/passwd', outside"),
}


def _files(folder: Path) -> set[Path]:
    return {path for path in folder.rglob("*") if path.is_file()}


def _refused_and_nothing_kept(
    database_url: str, round_folder: Path, tmp_path: Path, case: str
) -> None:
    builder, message = CASES[case]
    archive = builder(round_folder, tmp_path)
    before = _files(tmp_path)
    result = tracker(database_url, tmp_path, "ingest", str(archive))
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error: {archive}"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert re.search(message, result.stderr), result.stderr
    with Store.open(database_url) as store:
        assert set(store.count_rows().values()) == {0}
    written = _files(tmp_path) - before
    assert {path.name for path in written} <= {"tracker.db", "tracker.db-journal"}
    assert not _outside(tmp_path).exists()
    assert not (tmp_path / "cache").exists() or not _files(tmp_path / "cache")


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_archive_is_refused_and_nothing_is_stored(
    round_folder: Path, tmp_path: Path, case: str
) -> None:
    _refused_and_nothing_kept(f"sqlite:///{tmp_path / 'tracker.db'}", round_folder, tmp_path, case)


HOSTILE_TAR_HEADERS = [
    "pax-header-size-below-zero",
    "pax-header-size-below-zero-tar",
    "tar-pax-size-below-zero",
    "tar-size-past-any-offset",
    "tar-pax-length-of-5000-digits",
    "pax-length-of-5000-digits",
    "tar-extended-header-chain",
    "sparse-map-bomb",
]
"""Hostile tar headers that ended in another error than a ParseError (or read all the data)."""


@pytest.mark.parametrize("case", ["hard-link", "zip-longer-than-headers", *HOSTILE_TAR_HEADERS])
def test_a_hostile_archive_stores_nothing_on_either_database(
    database_url: str, round_folder: Path, tmp_path: Path, case: str
) -> None:
    _refused_and_nothing_kept(database_url, round_folder, tmp_path, case)


def test_the_untouched_round_is_stored(round_folder: Path, tmp_path: Path) -> None:
    """The control: the same round without the hostile entry stores its 17 results."""
    archive = _tar_gz(round_folder, tmp_path)
    result = tracker(f"sqlite:///{tmp_path / 'tracker.db'}", tmp_path, "ingest", str(archive))
    assert result.exit_code == 0, result.output
    assert "17 runs (mlperf-inference), 17 results stored" in result.stdout
    zipped = _round_zip(round_folder, tmp_path, "round.zip")
    again = tracker(f"sqlite:///{tmp_path / 'zip.db'}", tmp_path, "ingest", str(zipped))
    assert "17 runs (mlperf-inference), 17 results stored" in again.stdout


def test_a_symlink_inside_the_archive_is_left_out_and_never_followed(
    round_folder: Path, tmp_path: Path
) -> None:
    """Git keeps symbolic links and GitHub's archives carry them: they are skipped, not read."""
    link = _entry(f"{TOP}/closed/Lenovo/systems/alias.json", tarfile.SYMTYPE, link="../x.json")
    tree = open_archive(_tar_gz(round_folder, tmp_path, link))
    try:
        assert tree.skipped == [f"{TOP}/closed/Lenovo/systems/alias.json"]
        assert "closed/Lenovo/systems/alias.json" not in tree.files()
        with pytest.raises(ParseError, match="no such file in the archive"):
            tree.read_bytes("closed/Lenovo/systems/alias.json")
    finally:
        tree.close()


def test_a_bomb_is_refused_on_its_header_before_its_data_is_inflated(
    round_folder: Path, tmp_path: Path
) -> None:
    """A member behind the bomb is never reached: the bomb's own header refuses the archive."""
    archive = tmp_path / "bomb-then-evil.tar.gz"
    head = _round_blocks(round_folder) + _entry(f"{TOP}/zeros.bin", size=64 << 30)
    archive.write_bytes(gzip.compress(head) + _zeros_gz(64) + gzip.compress(bytes(1024)))
    with pytest.raises(ParseError, match=rf"at member '{TOP}/zeros.bin' \(a decompression bomb"):
        open_archive(archive)


@pytest.mark.parametrize(
    "name", ["/etc/passwd", "a/../../outside.txt", "../x.json", "C:/x.json", "a\\..\\..\\x"]
)
def test_every_spelling_of_a_path_outside_refuses_the_archive(tmp_path: Path, name: str) -> None:
    archive = tmp_path / "names.tar"
    archive.write_bytes(_file("top/ok.txt", b"ok") + _file(name, b"evil") + bytes(1024))
    with pytest.raises(ParseError, match="refused: member .* would land outside the archive"):
        open_archive(archive)
