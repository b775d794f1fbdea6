"""A folder tree read in parts by other processes, and what each part brings back.

Reading a large folder source on all cores (:mod:`tracker.ingest.parallel`)
gives each worker process its own :class:`PartedFolderTree` of the same folder
under the same location, so that it names files exactly as the whole tree
would. What a worker's tree read, listed and could not take comes back as a
:class:`TreePart` (plain, picklable data) and is absorbed by the tree of the
source (:meth:`PartedFolderTree.absorb`): its artifacts, trail, problems and
left-out entries are then those of one tree that read every part itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from tracker.errors import ParseError
from tracker.records import ArtifactRecord
from tracker.sources.tree import FolderTree, SourceTree

__all__ = ["PartedFolderTree", "TreePart", "holds_no_file"]


@dataclass(frozen=True, slots=True)
class TreePart:
    """What one tree read (``read``: path, sha256, size of each file), listed or probed
    (trail), could not take (``problems``: relative path, path as shown, message) and left
    out (``not_regular``); plain tuples, which cost far less to send than records."""

    read: tuple[tuple[str, str, int], ...]
    trail: tuple[tuple[str, str], ...]
    problems: tuple[tuple[str, str, str], ...]
    not_regular: tuple[str, ...]


class PartedFolderTree(FolderTree):
    """A local folder whose parts may be read by other trees of it, then merged back."""

    def part(self) -> TreePart:
        """Everything this tree read, listed, could not take or left out so far."""
        problems = tuple((path, e.path, e.message) for path, e in self._problems.items())
        return TreePart(
            read=tuple((a.path, a.sha256, a.size_bytes) for a in self._read.values()),
            trail=tuple(self._trail.items()),
            problems=problems,
            not_regular=tuple(self._not_regular),
        )

    def absorb(self, part: TreePart) -> None:
        """Take in what another tree of this folder read (the earliest record of a path counts)."""
        for path, sha256, size_bytes in part.read:
            if path not in self._read:
                self._read[path] = ArtifactRecord(path, sha256, size_bytes)
        trail = dict(part.trail)
        for path in trail.keys() & self._trail.keys():
            del trail[path]
        self._trail.update(trail)
        for path, shown, message in part.problems:
            self._problems.setdefault(path, ParseError(shown, message))
        self._not_regular.update(part.not_regular)


def holds_no_file(tree: SourceTree) -> bool:
    """Whether ``tree`` holds no file at all; a folder is listed only down to its first file.

    Listing a whole folder tree (:meth:`FolderTree.files`) would cost a large
    round a full walk, and make every later listing of it scan that list.
    """
    if not isinstance(tree, FolderTree):
        return not tree.files()
    pending = [""]
    while pending:
        folder = pending.pop()
        dirs, files = tree.list_dir(folder)
        if files:
            return False
        pending += [f"{folder}/{name}" if folder else name for name in reversed(dirs)]
    return True
