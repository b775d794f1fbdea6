"""Helpers of :class:`~tracker.sources.tree.FolderTree`: lines of a file read whole, listings."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["BufferedLines", "is_utf8", "listing"]


class BufferedLines:
    """The lines of a file read whole, ends kept; ``buffer`` is the file itself.

    Iterating gives the same lines as iterating the open file would (split
    after each ``\\n``); a parser may scan ``buffer`` in place instead, which
    spares copying lines it skips (see :func:`tracker.parsers.loadgen.parse_detail_log`).
    """

    __slots__ = ("_position", "buffer")

    def __init__(self, buffer: bytes) -> None:
        self.buffer = buffer
        self._position = 0

    def __iter__(self) -> BufferedLines:
        return self

    def __next__(self) -> bytes:
        start = self._position
        if start >= len(self.buffer):
            raise StopIteration
        end = self.buffer.find(b"\n", start)
        self._position = len(self.buffer) if end < 0 else end + 1
        return self.buffer[start : self._position]


def listing(files: Iterable[str], folder: str) -> tuple[list[str], list[str]]:
    """The sub-folders and files directly inside ``folder`` of a flat file list."""
    dirs: set[str] = set()
    names: list[str] = []
    for path in files:
        if not path.startswith(folder):
            continue
        head, sep, _tail = path[len(folder) :].partition("/")
        if sep:
            dirs.add(head)
        else:
            names.append(head)
    return sorted(dirs), sorted(names)


def is_utf8(name: str) -> bool:
    """Whether a listed name is valid UTF-8 (undecodable bytes come as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
