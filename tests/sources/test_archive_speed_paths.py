"""The one-pass archive read: the forward-only inflater, members kept from the index pass,
and the second pass for a member that was not kept (same bytes either way)."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import random
import sys
import tarfile
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tracker.errors import ParseError
from tracker.sources import tar as inflate
from tracker.sources.archive import open_archive, worth_keeping
from tracker.sources.tar import PIECE, SWITCH_INTERVAL_S, Inflated, compression

COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "gz": gzip.compress,
    "bz2": bz2.compress,
    "xz": lzma.compress,
}


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_the_inflater_reads_and_skips_forward_over_several_streams(
    kind: str, tmp_path: Path
) -> None:
    data = os.urandom(1 << 20) + b"a" * (9 << 20) + os.urandom(1000)
    compress = COMPRESSORS[kind]
    path = tmp_path / f"data.{kind}"
    path.write_bytes(compress(data[: 3 << 20]) + compress(data[3 << 20 :]))
    assert compression(path) == kind
    stream, position, seen = Inflated(path, kind), 0, bytearray()
    rng = random.Random(7)
    while chunk := stream.read(rng.randint(1, 1 << 20)):
        seen += chunk
        position += len(chunk)
        skip = rng.randint(0, 2 << 20) if rng.random() < 0.4 else 0
        stream.seek(position + skip)
        seen += data[position : position + skip]
        position = stream.tell()
    assert bytes(seen[: len(data)]) == data
    with pytest.raises(io.UnsupportedOperation):
        stream.seek(0)
    stream.close()


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_the_inflater_says_a_stream_was_cut_short(kind: str, tmp_path: Path) -> None:
    path = tmp_path / f"data.{kind}"
    path.write_bytes(COMPRESSORS[kind](os.urandom(200_000))[:-40])
    stream = Inflated(path, kind)
    with pytest.raises(EOFError):
        stream.read()
    stream.close()


def _ahead_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "inflate-ahead"]


def test_decompression_runs_ahead_and_stops_when_the_reader_closes_early(tmp_path: Path) -> None:
    data = random.Random(7).randbytes(3 * PIECE)
    path = tmp_path / "big.gz"
    path.write_bytes(gzip.compress(data, compresslevel=1))
    stream = Inflated(path, "gz")
    assert not _ahead_threads()  # no thread before the first read
    assert stream.read(1000) == data[:1000]
    assert len(_ahead_threads()) == 1
    stream.close()  # the thread may be waiting to hand a piece over: it stops all the same
    assert not _ahead_threads()


def test_the_switch_interval_is_short_while_decompression_runs_and_restored_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inflate, "PIECE", 1 << 16)  # 32 pieces: the threads wait on the reader
    data = random.Random(8).randbytes(32 << 16)
    path = tmp_path / "big.gz"
    path.write_bytes(gzip.compress(data, compresslevel=1))
    before = sys.getswitchinterval()
    first, second = Inflated(path, "gz"), Inflated(path, "gz")
    assert first.read(10) == second.read(10) == data[:10]
    assert sys.getswitchinterval() == pytest.approx(min(before, SWITCH_INTERVAL_S))
    first.close()  # the other thread still runs: still short
    assert sys.getswitchinterval() == pytest.approx(min(before, SWITCH_INTERVAL_S))
    second.close()
    assert sys.getswitchinterval() == before


def test_gzip_padding_after_the_stream_is_no_data(tmp_path: Path) -> None:
    path = tmp_path / "data.gz"
    path.write_bytes(gzip.compress(b"hello") + b"\0" * 1000)
    stream = Inflated(path, "gz")
    assert stream.read() == b"hello"
    stream.close()


def _archive(path: Path, members: dict[str, bytes], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tar:  # type: ignore[call-overload]
        for name, data in members.items():
            info = tarfile.TarInfo(f"top/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


MEMBERS = {
    "code/main.py": b"print('x')\n" * 100,
    "closed/A/results/s/b/Offline/performance/run_1/mlperf_log_summary.txt": b"summary\n",
    "closed/A/results/s/b/Offline/accuracy/mlperf_log_accuracy.json": b"[]" * 1000,
    "closed/A/systems/s.json": b'{"a": 1}',
    "images/plot.png": os.urandom(5000),
}


@pytest.mark.parametrize("mode", ["w:gz", "w:bz2", "w:xz", "w:"])
def test_kept_and_unkept_members_read_the_same(mode: str, tmp_path: Path) -> None:
    path = _archive(tmp_path / "round.tar", MEMBERS, mode)
    tree = open_archive(path)
    try:
        for name, data in MEMBERS.items():
            assert tree.read_bytes(name) == data
            assert tree.read_bytes(name) == data  # read again: from the second pass
        artifact = tree.artifact("images/plot.png")
        assert artifact is not None and artifact.size_bytes == 5000
    finally:
        tree.close()


def test_only_members_a_reader_may_read_are_kept() -> None:
    assert worth_keeping("top/closed/A/results/s/b/Offline/performance/run_1/x.txt", 10)
    assert worth_keeping("top/closed/A/systems/s.json", 10)
    assert not worth_keeping("top/closed/A/code/bert/main.py", 10)
    assert not worth_keeping("top/closed/A/code/README.md", 10)
    assert not worth_keeping("top/x/accuracy/mlperf_log_accuracy.json", 10)
    assert not worth_keeping("top/x/images/plot.PNG", 10)
    assert not worth_keeping("top/x/performance/run_1/mlperf_log_detail.txt", 1 << 30)


def test_a_member_cut_short_refuses_the_archive_in_the_one_pass(tmp_path: Path) -> None:
    whole = _archive(tmp_path / "whole.tar", {"a/summary.txt": os.urandom(50_000)}, "w:")
    raw = whole.read_bytes()
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(gzip.compress(raw[: 512 + 20_000]))
    with pytest.raises(ParseError):
        open_archive(cut).close()
