"""The hand-read tar headers (tracker.sources.tar) give what tarfile gives, byte for byte.

Each archive is built here with :mod:`tarfile` (ustar, GNU and pax formats) or
crafted from its blocks, then walked twice: by :class:`TarWalk` and by tarfile's
own ``TarFile`` iteration (the index's reference before the fast path). Both
must list the same members (name, size, type, link, data offset, sparse), read
the same data and end the same way (the same error, or the same header error
left behind), on honest archives and on mutated ones.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracker.errors import ParseError
from tracker.sources.archive import open_archive
from tracker.sources.tar import EXTENDED_HEADER_LIMIT, Malformed, Refused, TarWalk, pax_fields

FORMATS = {"ustar": tarfile.USTAR_FORMAT, "gnu": tarfile.GNU_FORMAT, "pax": tarfile.PAX_FORMAT}
LONG = "top/" + "/".join(f"folder_{n}_with_a_rather_long_name" for n in range(5)) + "/log.txt"
LONG_LINK = "../" * 40 + "target.txt"
UNICODE = "top/résultats/日本語/ログ.txt"
EXTENDED = {tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE}
EXTENDED |= {tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK}
LIMIT = 64
"""Members listed at most (a mutated size can send both walks back to the same header)."""


def _info(name: str, kind: bytes = tarfile.REGTYPE, **fields: object) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mtime, info.mode = kind, 1_700_000_000, 0o644
    for key, value in fields.items():
        setattr(info, key, value)
    return info


def _members(form: str) -> list[tuple[tarfile.TarInfo, bytes]]:
    """Every kind of member an archive may hold, with names tarfile can write in ``form``."""
    files = [("top/a.txt", b"a" * 10), (LONG, b"long" * 300), (UNICODE, b"u"), ("top/e", b"")]
    files += [("top/block.bin", bytes(512)), ("top/over.bin", bytes(513))]
    members = [(_info(name, size=len(data), uname="ünï"), data) for name, data in files]
    members += [
        (_info("top/dir", tarfile.DIRTYPE), b""),
        (_info("top/link", tarfile.SYMTYPE, linkname="a.txt"), b""),
        (_info("top/hard", tarfile.LNKTYPE, linkname="top/a.txt"), b""),
        (_info("top/chr", tarfile.CHRTYPE, devmajor=1, devminor=3), b""),
        (_info("top/blk", tarfile.BLKTYPE), b""),
        (_info("top/fifo", tarfile.FIFOTYPE), b""),
    ]
    if form != "ustar":
        members.append((_info("top/late", mtime=1 << 34, size=3), b"new"))  # GNU: base-256
        members.append((_info("top/far", tarfile.SYMTYPE, linkname=LONG_LINK), b""))
        members.append((_info("top/" + "x" * 120, size=2), b"xx"))
    return members


def _tar(form: str, *, global_headers: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(
        fileobj=buffer, mode="w", format=FORMATS[form], pax_headers=global_headers
    ) as tar:
        for info, data in _members(form):
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


# --- the two walks, as the archive index uses them --------------------------------------


class _Reference(tarfile.TarFile):
    ended_on: Exception | None = None


class _ReferenceHeader(tarfile.TarInfo):
    """tarfile's own header code, as the index used it: an extended header over the limit or
    below zero refused, the header error that ended the member list recorded."""

    @classmethod
    def frombuf(cls, buf: bytes | bytearray, encoding: str, errors: str) -> _ReferenceHeader:
        info = super().frombuf(buf, encoding, errors)
        if info.type in EXTENDED and info.size > EXTENDED_HEADER_LIMIT:
            raise Refused(
                f"refused: an extended header ({info.name!r}) of {info.size} bytes, over the "
                f"{EXTENDED_HEADER_LIMIT}-byte limit (a decompression bomb?)"
            )
        if info.type in EXTENDED and info.size < 0:
            raise Refused(
                f"refused: an extended header ({info.name!r}) of {info.size} bytes, which no "
                "tar writes: the archive is damaged or hostile; fetch or make it again"
            )
        return info

    @classmethod
    def fromtarfile(cls, tarfile: tarfile.TarFile) -> _ReferenceHeader:
        try:
            info = super().fromtarfile(tarfile)
        except Exception as error:
            if isinstance(tarfile, _Reference):
                tarfile.ended_on = error
            raise
        if isinstance(tarfile, _Reference):
            tarfile.ended_on = None
        return info


def by_tarfile(data: bytes) -> list[object]:
    seen: list[object] = []
    try:
        tar = _Reference.open(fileobj=io.BytesIO(data), mode="r:", tarinfo=_ReferenceHeader)
        for info in tar:
            seen.append((info.name, info.size, info.type, info.linkname, info.offset_data))
            seen.append(info.sparse is not None)
            if info.isreg() and info.sparse is None:
                member = tar.extractfile(info)
                seen.append(member.read() if member is not None else None)
            if len(seen) > LIMIT:
                return seen
    except Exception as error:
        return [*seen, ("raised", type(error).__name__, str(error))]
    return [*seen, ("ended", repr(tar.ended_on))]


def by_walk(data: bytes) -> list[object]:
    seen: list[object] = []
    walk = TarWalk(io.BytesIO(data))
    try:
        while (entry := walk.next()) is not None:
            seen.append((entry.name, entry.size, entry.kind, entry.linkname, entry.data_at))
            seen.append(entry.sparse)
            if entry.kind in tarfile.REGULAR_TYPES and not entry.sparse:
                seen.append(walk.read(entry))
            if len(seen) > LIMIT:
                return seen
    except Malformed as error:  # what tarfile's code raised, naming the header
        return [*seen, ("raised", type(error.error).__name__, str(error.error))]
    except Exception as error:
        return [*seen, ("raised", type(error).__name__, str(error))]
    return [*seen, ("ended", repr(walk.ended_on))]


def _walked_by_hand(data: bytes) -> int:
    """How many members (and ends) tarfile's code read for the walk."""
    walk = TarWalk(io.BytesIO(data))
    while walk.next() is not None:
        pass
    return walk.by_tarfile


# --- honest archives --------------------------------------------------------------------


@pytest.mark.parametrize("form", sorted(FORMATS))
def test_every_member_reads_as_tarfile_reads_it_and_only_the_end_goes_to_tarfile(
    form: str,
) -> None:
    data = _tar(form)
    assert by_walk(data) == by_tarfile(data)
    names = [entry[0] for entry in by_walk(data)[::3] if isinstance(entry, tuple)]
    assert LONG in names and UNICODE in names
    assert _walked_by_hand(data) == (2 if form == "gnu" else 1)  # GNU: the base-256 time


def test_a_global_pax_header_like_git_archives_goes_to_tarfile_and_no_other_header() -> None:
    data = _tar("pax", global_headers={"comment": "0123456789abcdef0123456789abcdef01234567"})
    assert by_walk(data) == by_tarfile(data)
    assert _walked_by_hand(data) == 2  # the global header (with the first member), the end


@pytest.mark.parametrize(
    "records", [{"path": "top/elsewhere"}, {"size": "3"}, {"hdrcharset": "BINARY"}]
)
def test_a_global_header_that_changes_members_sends_every_header_to_tarfile(
    records: dict[str, str],
) -> None:
    data = _tar("pax", global_headers=records)
    assert by_walk(data) == by_tarfile(data)


@pytest.mark.parametrize("form", ["gnu", "pax"])
def test_a_size_over_8_gib_in_a_header_alone_reads_as_tarfile_reads_it(form: str) -> None:
    header = _info("top/huge.bin", size=10 << 30).tobuf(FORMATS[form])
    data = header + bytes(1024)
    walk = TarWalk(io.BytesIO(data))
    entry = walk.next()
    first = tarfile.open(fileobj=io.BytesIO(data), mode="r:").next()
    assert entry is not None and first is not None
    assert (entry.name, entry.size, entry.data_at) == (first.name, first.size, first.offset_data)
    assert entry.size == 10 << 30
    assert walk.by_tarfile == (1 if form == "gnu" else 0)  # base-256 goes to tarfile
    assert by_walk(data) == by_tarfile(data)  # then the data is missing, for both


def _signed_checksum(block: bytes) -> bytes:
    """``block`` with the checksum some old tars wrote: bytes summed as signed chars."""
    total = 256 + sum(b - 256 if b > 127 else b for b in block[:148] + block[156:])
    return block[:148] + b"%06o\0 " % total + block[156:]


def test_a_signed_checksum_is_accepted_as_tarfile_accepts_it() -> None:
    block = _signed_checksum(_info(UNICODE, size=1).tobuf(tarfile.USTAR_FORMAT))
    assert block != _info(UNICODE, size=1).tobuf(tarfile.USTAR_FORMAT)
    data = block + b"u".ljust(512, b"\0") + bytes(1024)
    assert by_walk(data) == by_tarfile(data)
    assert _walked_by_hand(data) == 1


def _with_bad_checksum(data: bytes, at: int) -> bytes:
    """The archive with one byte of the header at ``at`` changed, its checksum left alone."""
    return data[: at + 5] + b"X" + data[at + 6 :]


def test_a_header_with_a_wrong_checksum_refuses_the_archive_naming_the_member_before(
    tmp_path: Path,
) -> None:
    good = _tar("gnu")
    second = 1024  # "top/a.txt": a header and one block of data
    archive = tmp_path / "bad.tar"
    archive.write_bytes(_with_bad_checksum(good, second))
    assert by_walk(archive.read_bytes()) == by_tarfile(archive.read_bytes())
    with pytest.raises(
        ParseError,
        match=r"refused: the data after member 'top/a.txt' is not a tar header \(bad checksum\)",
    ):
        open_archive(archive)
    archive.write_bytes(_with_bad_checksum(good, 0))
    with pytest.raises(ParseError, match=r"not a readable tar archive \(bad checksum\)"):
        open_archive(archive)


def test_a_sparse_member_is_listed_as_sparse_and_refuses_the_archive(tmp_path: Path) -> None:
    first = _info("top/a.txt", size=3).tobuf(tarfile.GNU_FORMAT) + b"abc".ljust(512, b"\0")
    header = _info("top/holes.bin", tarfile.GNUTYPE_SPARSE, size=0).tobuf(tarfile.GNU_FORMAT)
    data = first + header + bytes(1024)
    assert by_walk(data) == by_tarfile(data)
    assert by_walk(data)[-3:-1] == [("top/holes.bin", 0, tarfile.GNUTYPE_SPARSE, "", 1536), True]
    archive = tmp_path / "sparse.tar"
    archive.write_bytes(data)
    with pytest.raises(ParseError, match=r"member 'top/holes.bin' is a sparse file"):
        open_archive(archive)


# --- pax records ------------------------------------------------------------------------


def _record(keyword: bytes, value: bytes, *, wrong_by: int = 0) -> bytes:
    """One pax record, its length told right (or ``wrong_by`` bytes off)."""
    body = b" " + keyword + b"=" + value + b"\n"
    length = len(body) + 1
    while length != len(body) + len(str(length)):
        length += 1
    return b"%d" % (length + wrong_by) + body


@pytest.mark.parametrize(
    ("records", "fields"),
    [
        (b"", {}),
        (_record(b"path", b"a/b") + bytes(499), {b"path": b"a/b"}),
        (_record(b"size", b"") + _record(b"size", b"100"), {b"size": b"100"}),
        (_record(b"path", b"a=b\nc d"), {b"path": b"a=b\nc d"}),
        (_record(b"mtime", b"1700000000.123456789"), {b"mtime": b"1700000000.123456789"}),
    ],
)
def test_well_formed_pax_records_read_as_tarfile_reads_them(
    records: bytes, fields: dict[bytes, bytes]
) -> None:
    assert pax_fields(records) == fields


@pytest.mark.parametrize(
    "records",
    [
        _record(b"path", b"a/b", wrong_by=-1),
        _record(b"path", b"a/b", wrong_by=1),
        b"0 path=a\n",
        b"4 a=\n",
        _record(b"path", b"a/b")[:-1] + b"!",  # no newline where the length says
        _record(b"", b"value"),  # no keyword
        _record(b"path", b"a/b") + b"x",  # not a record after one
        _record(b"hdrcharset", b"BINARY"),
        _record(b"GNU.sparse.major", b"1"),
        b"0" * 30 + _record(b"a", b"b"),  # more digits than tarfile reads
    ],
)
def test_a_pax_record_that_is_not_well_formed_is_left_to_tarfile(records: bytes) -> None:
    assert pax_fields(records) is None


def _pax_archive(records: bytes) -> bytes:
    header = _info("top/PaxHeader", tarfile.XHDTYPE, size=len(records))
    padded = records.ljust(-(-len(records) // 512) * 512, b"\0")
    blocks = header.tobuf(tarfile.USTAR_FORMAT) + padded
    member = _info("top/a.txt", size=3).tobuf(tarfile.USTAR_FORMAT) + b"abc".ljust(512, b"\0")
    return blocks + member + bytes(1024)


@pytest.mark.parametrize(
    "records",
    [
        _record(b"path", b"top/renamed.txt"),
        _record(b"path", b"top/renamed.txt", wrong_by=-1),
        _record(b"path", b"\xff\xfe.txt"),
        _record(b"linkpath", b"somewhere.txt"),
        _record(b"size", b"10"),
        _record(b"size", b"abc"),
        _record(b"size", b"-1024"),
        _record(b"comment", b"x") + _record(b"size", " \u0661\u0662 ".encode()),
        b"0 path=a\n",
        _record(b"hdrcharset", b"BINARY") + _record(b"path", b"\xff.txt"),
    ],
)
def test_a_pax_header_patches_the_member_as_tarfile_patches_it(records: bytes) -> None:
    data = _pax_archive(records)
    assert by_walk(data) == by_tarfile(data)


def test_a_long_chain_of_extended_headers_goes_to_tarfile() -> None:
    names = [_info("././@LongLink", tarfile.GNUTYPE_LONGNAME, size=512) for _ in range(12)]
    chain = b"".join(info.tobuf(tarfile.USTAR_FORMAT) + b"x" * 511 + b"\0" for info in names)
    data = chain + _tar("ustar")
    assert by_walk(data) == by_tarfile(data)
    assert _walked_by_hand(data) == 2


# --- mutated archives -------------------------------------------------------------------


def _headers(data: bytes) -> list[int]:
    """Where each header block of ``data`` (an honest archive) starts."""
    offsets, tar = [], tarfile.open(fileobj=io.BytesIO(data), mode="r:")
    for info in tar:
        offsets.append(info.offset)
        offsets.extend(range(info.offset + 512, info.offset_data, 512))
    return offsets


SEEDS = {form: _tar(form) for form in FORMATS}
HEADERS = {form: _headers(data) for form, data in SEEDS.items()}
_NUMBERS = [100, 108, 116, 124, 136, 148, 156, 329, 337, 345]
"""Where the fields tarfile reads numbers and types from start (mutations aim there too)."""


def _fixed_checksum(data: bytearray, at: int) -> None:
    block = bytes(data[at : at + 512])
    total = 256 + sum(block[:148]) + sum(block[156:])
    data[at + 148 : at + 156] = b"%06o\0 " % total


@given(data=st.data())
def test_a_mutated_archive_reads_as_tarfile_reads_it(data: st.DataObject) -> None:
    form = data.draw(st.sampled_from(sorted(FORMATS)), label="form")
    archive = bytearray(SEEDS[form])
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        header = data.draw(st.sampled_from(HEADERS[form]), label="header")
        field = data.draw(st.sampled_from(_NUMBERS) | st.integers(0, 1023), label="field")
        where = header + data.draw(st.integers(0, 11), label="offset") + field
        byte = data.draw(st.sampled_from(b"0179 \0\x80\xff/=\nx") | st.integers(0, 255))
        archive[min(where, len(archive) - 1)] = byte
        if data.draw(st.booleans(), label="checksum fixed"):
            _fixed_checksum(archive, header)
    assert by_walk(bytes(archive)) == by_tarfile(bytes(archive))
