"""Training folders made at test time from the real logs in ``../shared/data/mlperf-training``.

:func:`too_many_not_converged`: tinycorp's v5.0 retinanet folder (its system
description and the five published ``result_*.txt``) with ``result_0.txt`` cut
before its ``run_stop`` line. ``result_4.txt`` is published without one (best
``eval_accuracy`` 0.339716 < 0.340), so two of the five runs did not converge,
one more than MLCommons' result summarizer allows for retinanet: the folder gets
no score (``CRITICAL ERROR: Too many non-converging runs``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["too_many_not_converged"]

RETINANET = Path("tinycorp/results/tinybox_green/retinanet")
SYSTEM = Path("tinycorp/systems/tinybox_green.json")


def cut_before(log: bytes, key: str) -> bytes:
    """``log``'s lines up to (not including) the first that logs ``key``."""
    lines = log.splitlines(keepends=True)
    marker = f'"key": "{key}"'.encode()
    end = next((i for i, line in enumerate(lines) if marker in line), len(lines))
    return b"".join(lines[:end])


def too_many_not_converged(shared_data: Path, into: Path) -> Path:
    """The round folder ``into / "v5.0"`` holding that one result folder; returns it."""
    source = shared_data / "mlperf-training" / "v5.0"
    root = into / "v5.0"
    (root / SYSTEM).parent.mkdir(parents=True)
    shutil.copy(source / SYSTEM, root / SYSTEM)
    (root / RETINANET).mkdir(parents=True)
    for log in sorted((source / RETINANET).glob("result_*.txt")):
        shutil.copy(log, root / RETINANET / log.name)
    first = root / RETINANET / "result_0.txt"
    first.write_bytes(cut_before(first.read_bytes(), "run_stop"))
    return root
