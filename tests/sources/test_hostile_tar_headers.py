"""Hostile tar headers are refused before they are read, and only ever as a ParseError.

The walk (tracker.sources.tar) refuses an extended header of a size
below zero before ``read(-1024)`` reads the rest of the stream, a chain of
extended headers before tarfile's code recurses past Python's limit, a sparse
map longer than the headers limit; the errors tarfile's code lets out on
hostile bytes come out as ``Malformed``, naming the header.

Then a fuzz of the index (TarIndex), plain and gzipped: the honest archives of
tests/sources/test_tar_headers.py, mutated where tar readers go wrong (number
fields as octal text, negative too, or base-256 of any sign and size, type
flags, sparse flags, bytes, cuts, and pax or GNU extended headers inserted
with hostile sizes and records: lengths of thousands of digits, negative
sizes, sparse maps, ``hdrcharset``), must list its members or refuse the
archive with a :class:`~tracker.errors.ParseError`, nothing else.
``HYPOTHESIS_PROFILE=fuzz`` runs 2,000 fresh examples (tests/conftest.py).
"""

from __future__ import annotations

import gzip
import io
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.sources.test_tar_headers import HEADERS, SEEDS, by_tarfile, by_walk
from tracker.errors import ParseError
from tracker.sources.archive_index import TarIndex
from tracker.sources.tar import CHAIN_LIMIT, HEADERS_LIMIT, Malformed, Refused, TarWalk


def _header(name: str, kind: bytes = tarfile.REGTYPE, size: int = 0) -> bytes:
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, size
    return info.tobuf(tarfile.GNU_FORMAT)


def _checksummed(block: bytes | bytearray) -> bytes:
    """The header ``block`` with its checksum made right."""
    fixed = bytearray(block)
    fixed[148:156] = b" " * 8
    fixed[148:156] = b"%06o\0 " % sum(fixed)
    return bytes(fixed)


def _field(block: bytes, at: int, value: bytes) -> bytes:
    """The header ``block`` with ``value`` written at ``at`` (its checksum made right)."""
    return _checksummed(block[:at] + value + block[at + len(value) :])


def _base256(value: int, width: int = 12) -> bytes:
    marker = b"\xff" if value < 0 else b"\x80"
    return marker + (value % (1 << 8 * (width - 1))).to_bytes(width - 1, "big")


def _record(keyword: bytes, value: bytes) -> bytes:
    """One pax record, its length told right."""
    body = b" " + keyword + b"=" + value + b"\n"
    length = len(body) + 1
    while length != len(body) + len(str(length)):
        length += 1
    return b"%d" % length + body


FIRST = _header("top/a.txt", size=3) + b"abc".ljust(512, b"\0")
"""An honest first member (a damaged first header is a ReadError, not a refusal)."""


def _walk_all(data: bytes) -> None:
    walk = TarWalk(io.BytesIO(data))
    while walk.next() is not None:
        pass


# --- refused by the walk before they are read ------------------------------------------


@pytest.mark.parametrize(
    "kind",
    [tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, b"L", b"K"],
    ids=["pax", "pax-global", "solaris", "gnu-long-name", "gnu-long-link"],
)
@pytest.mark.parametrize(
    "size",
    [b"-2000      \0", b"-1        \0", _base256(-1024), _base256(-(1 << 80))],
    ids=["octal-text", "minus-one", "base-256", "base-256-huge"],
)
def test_an_extended_header_of_a_size_below_zero_is_refused_before_anything_more_is_read(
    kind: bytes, size: bytes
) -> None:
    header = _field(_header("top/PaxHeader", kind, 512), 124, size)
    stream = io.BytesIO(FIRST + header + bytes(1 << 20))
    walk = TarWalk(stream)
    assert walk.next() is not None
    with pytest.raises(Refused, match=r"extended header \('top/PaxHeader'\) of -\d+ bytes, which"):
        walk.next()
    assert stream.tell() == len(FIRST) + 512  # the header, and nothing after it


def _long_names(count: int) -> bytes:
    return (_header("././@LongLink", b"L", 4) + b"evil".ljust(512, b"\0")) * count


def test_a_chain_of_extended_headers_is_refused_before_tarfile_recurses_past_its_limit() -> None:
    data = FIRST + _long_names(CHAIN_LIMIT) + FIRST + bytes(1024)
    assert by_walk(data) == by_tarfile(data)  # as long a chain as is read
    for count in (CHAIN_LIMIT + 1, 2000):  # 2000: a RecursionError in tarfile's code
        with pytest.raises(Refused, match=r"'././@LongLink' has more than 16 extended headers"):
            _walk_all(FIRST + _long_names(count) + FIRST + bytes(1024))


def _sparse(extensions: int) -> bytes:
    """An old GNU sparse header followed by ``extensions`` blocks of its map."""
    header = _field(_header("top/holes.bin", tarfile.GNUTYPE_SPARSE), 482, b"\1")
    block = b"%011o\0" % 512 * 42 + b"\1" + bytes(7)
    return header + block * (extensions - 1) + block[:504] + bytes(8)


def test_a_sparse_map_over_the_headers_limit_is_refused_as_it_is_read() -> None:
    data = FIRST + _sparse(3) + bytes(1024)
    assert by_walk(data) == by_tarfile(data)
    with pytest.raises(Refused, match=r"headers of member 'top/holes.bin' hold more than 2097152"):
        _walk_all(FIRST + _sparse(HEADERS_LIMIT // 512) + bytes(1024))


def _pax_before(records: bytes) -> bytes:
    header = _header("top/PaxHeader", tarfile.XHDTYPE, len(records))
    padded = records.ljust(-(-len(records) // 512) * 512, b"\0")
    return FIRST + header + padded + FIRST + bytes(1024)


MALFORMED = {
    "pax-length-of-5000-digits": (_pax_before(b"1" * 5000 + b" path=a\n"), "ValueError"),
    "hdrcharset": (_pax_before(_record(b"hdrcharset", b"\xff")), "UnicodeDecodeError"),
    "sparse-map": (_pax_before(_record(b"GNU.sparse.map", b"1,x")), "ValueError"),
    "sparse-map-cut-short": (FIRST + _sparse(2)[:1024], "IndexError"),
    "past-every-offset": (
        _field(FIRST[:512], 124, _base256(1 << 80)) + bytes(1024),
        "OverflowError",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_header_tarfile_fails_on_comes_out_as_malformed_naming_it(case: str) -> None:
    data, error = MALFORMED[case]
    with pytest.raises(Malformed) as raised:
        _walk_all(data)
    header = "top/a.txt" if case == "past-every-offset" else "top/PaxHeader"
    assert raised.value.header == ("top/holes.bin" if "cut" in case else header)
    assert type(raised.value.error).__name__ == error
    assert by_walk(data) == by_tarfile(data)  # the error tarfile's own code raises


# --- the index, fuzzed: a ParseError or nothing ------------------------------------------

NUMBER_FIELDS = [(100, 8), (108, 8), (116, 8), (124, 12), (136, 12), (148, 8), (329, 8), (337, 8)]
"""(offset, width) of each number field of a header: mode, uid, gid, size, mtime, chksum, dev."""
KINDS = b"0123456789xgLKSAVMNDI\0"
KEYWORDS = [
    b"path", b"linkpath", b"size", b"mtime", b"uid", b"uname", b"hdrcharset", b"comment",
    b"GNU.sparse.map", b"GNU.sparse.size", b"GNU.sparse.major", b"GNU.sparse.minor",
    b"GNU.sparse.offset", b"GNU.sparse.numbytes", b"GNU.sparse.name", b"GNU.sparse.realsize",
]  # fmt: skip
NUMBERS = st.integers(-(1 << 20), 1 << 20) | st.integers(-(1 << 90), 1 << 90)
MEMBERS_AT_MOST = 200
"""Members listed at most (a safeguard: sizes below zero, which could loop, are refused)."""
Edit = tuple[str, int, int, bytes]
"""(what, header number, offset in the header, bytes): small enough to print when a test fails."""


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


def _octal(value: int, width: int) -> bytes:
    text = b"%o" % value if value >= 0 else b"-%o" % -value
    return text[: width - 1].rjust(width - 1, b"0") + b"\0"


@st.composite
def field_values(draw: st.DrawFn, width: int) -> bytes:
    """A number field as tar writers (and attackers) write it."""
    value = draw(NUMBERS)
    how = draw(st.sampled_from(["octal", "base-256", "raw"]))
    if how == "octal":
        return _octal(value, width)
    if how == "base-256":
        return _base256(value, width)
    return draw(st.binary(min_size=width, max_size=width))


@st.composite
def pax_records(draw: st.DrawFn) -> bytes:
    """Pax records, some of them with a length of thousands of digits or told wrong."""
    records = b""
    for _ in range(draw(st.integers(1, 3))):
        keyword = draw(st.sampled_from(KEYWORDS) | st.binary(max_size=8))
        value = draw(
            st.builds(lambda n: b"%d" % n, NUMBERS)
            | st.binary(max_size=40)
            | st.just(b"0," * 50 + b"0")
        )
        record = _record(keyword, value)
        how = draw(st.sampled_from(["right", "wrong", "thousands of digits"]))
        if how == "wrong":
            length = int(record.split(b" ", 1)[0]) + draw(st.integers(-8, 8))
            record = b"%d" % length + record[record.index(b" ") :]
        elif how == "thousands of digits":
            digits = b"1" * draw(st.sampled_from([21, 4301, 5000]))
            record = digits + record[record.index(b" ") :]
        records += record
    return records


@st.composite
def extended_headers(draw: st.DrawFn) -> bytes:
    """A pax or GNU extended header, its size told right or hostile, and its data."""
    kind = draw(st.sampled_from([tarfile.XHDTYPE, tarfile.XGLTYPE, b"L", b"K"]))
    data = draw(pax_records()) if kind in b"xg" else draw(st.binary(min_size=1, max_size=700))
    name = "top/PaxHeaders/evil" if kind in b"xg" else "././@LongLink"
    header = _header(name, kind, len(data))
    if draw(st.booleans()):
        header = _field(header, 124, draw(field_values(12)))
    return header + data + bytes(-len(data) % 512)


@st.composite
def edits(draw: st.DrawFn) -> Edit:
    """One hostile edit of a header: a number field, the type flag, a byte, an inserted header."""
    at = draw(st.integers(0, 63))
    what = draw(st.sampled_from(["field", "kind", "sparse", "byte", "insert", "cut"]))
    if what == "insert":
        return what, at, 0, draw(extended_headers())
    if what == "cut":
        return what, at, draw(st.integers(0, 1023)), b""
    if what == "field":
        offset, width = draw(st.sampled_from(NUMBER_FIELDS))
        return what, at, offset, draw(field_values(width))
    if what == "kind":
        return what, at, 156, bytes([draw(st.sampled_from(KINDS))])
    if what == "sparse":  # an old GNU sparse header, a map extension block said to follow
        return what, at, 482, b"\x01"
    return what, at, draw(st.integers(0, 511)), bytes([draw(st.integers(0, 255))])


def _edited(form: str, changes: list[tuple[Edit, bool]]) -> bytes:
    """The honest archive ``form`` with ``changes`` made (and the header checksum made right
    where the flag says)."""
    archive, headers = bytearray(SEEDS[form]), HEADERS[form]
    for (what, header, offset, data), fixed in changes:
        at = headers[header % len(headers)]
        if at + 512 > len(archive):  # cut off by an edit before
            continue
        if what == "insert":
            archive[at:at] = data
            continue
        if what == "cut":
            del archive[at + offset :]
            continue
        if what == "sparse":
            archive[at + 156] = ord(tarfile.GNUTYPE_SPARSE)
        archive[at + offset : at + offset + len(data)] = data
        if fixed:
            archive[at : at + 512] = _checksummed(archive[at : at + 512])
    return bytes(archive)


def _index(path: Path) -> None:
    """Open the index of ``path`` and list its members, keeping every one's data."""
    index = TarIndex(path, path.name, wanted=lambda _name, _size: True)
    try:
        for count, _member in enumerate(index.members()):
            if count > MEMBERS_AT_MOST:
                break
    finally:
        index.close()


@pytest.mark.parametrize("suffix", [".tar", ".tar.gz"])
@given(
    form=st.sampled_from(sorted(SEEDS)),
    changes=st.lists(st.tuples(edits(), st.booleans()), min_size=1, max_size=4),
)
def test_a_hostile_tar_header_refuses_the_archive_with_a_parse_error_and_nothing_else(
    folder: Path, suffix: str, form: str, changes: list[tuple[Edit, bool]]
) -> None:
    archive = _edited(form, changes)
    path = folder / f"hostile{suffix}"
    path.write_bytes(gzip.compress(archive, 1) if suffix == ".tar.gz" else archive)
    try:
        _index(path)
    except ParseError as error:
        assert str(error).startswith(f"{path.name}: "), error
