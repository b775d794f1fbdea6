"""A large MLPerf Inference round made of copies of a real one (for the parallel ingest tests).

The files are hard links to the shared fixtures where the file system allows
(copies otherwise): never write to a file of a replicated tree, replace it
(:func:`replace_file`), or the shared fixture changes with it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

_RENAMED = frozenset({"results", "measurements", "compliance"})


def replicate_round(base: Path, out: Path, copies: int) -> None:
    """``copies`` copies of every system of the round ``base`` under ``out``: the first
    under the systems' own names (the results table's rows match it), the others renamed
    ``<system>_r<n>`` with their system JSON; the table and the submitters' own files once."""
    for top, _folders, names in os.walk(base):
        parts = Path(top).relative_to(base).parts
        for copy in range(copies):
            if copy and len(parts) < 3:
                break
            renamed = list(parts)
            if copy and len(parts) > 3 and parts[2] in _RENAMED:
                renamed[3] = f"{parts[3]}_r{copy}"
            folder = out.joinpath(*renamed)
            folder.mkdir(parents=True, exist_ok=True)
            for name in names:
                target = name
                if copy and len(parts) == 3 and parts[2] == "systems":
                    target = f"{Path(name).stem}_r{copy}.json"
                _link(Path(top) / name, folder / target)


def replace_file(path: Path, data: bytes) -> None:
    """Give ``path`` new content without touching the file it may be a hard link of."""
    path.unlink()
    path.write_bytes(data)


def _link(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system
        shutil.copyfile(source, target)
