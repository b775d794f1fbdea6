"""What a folder holds, to check that a command left it byte for byte as it was."""

from __future__ import annotations

import os
from pathlib import Path


def snapshot_tree(folder: Path) -> dict[str, bytes | str]:
    """Every file's bytes and every link's target below ``folder`` (links not followed)."""
    found: dict[str, bytes | str] = {}
    for top, folders, names in os.walk(folder):
        for name in folders + names:
            path = Path(top) / name
            key = str(path.relative_to(folder))
            if path.is_symlink():
                found[key] = f"-> {os.readlink(path)}"
            elif path.is_file():
                found[key] = path.read_bytes()
    return found
