"""The seed check of MLCommons' package checker, over the seeds a folder's runs log.

``mlperf_logging.package_checker.seed_checker`` (4.1.68; closed division)
fails a result folder when a run logs no ``seed`` line, when a seed is not an
integer, or when two runs log the same seed on the same source line
(``metadata.file`` and ``lineno``). It reads nothing but the logs (older
versions also scanned the submitters' code for the word "seed", which a
results reader never has; that part is skipped). A failure does not change
the score, which the result summarizer computes without this check: it is a
note and the score's ``seed_check``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from tracker.parsers.mllog import LogLine

__all__ = ["Seed", "check_seeds", "seed_of"]

_MAX_LISTED = 3


class Seed(NamedTuple):
    """One ``seed`` line of a run: where the code logged it, and the value."""

    source: str
    """``metadata.file:lineno`` of the line (the code that logged the seed)."""
    value: int | None
    """``None`` when the value is not an integer."""
    line: int
    shown: str


def seed_of(entry: LogLine) -> Seed:
    """The seed of a ``seed`` line."""
    metadata = entry.metadata
    source = f"{metadata.get('file', '?')}:{metadata.get('lineno', '?')}"
    number: int | None
    try:
        number = int(entry.value)  # as the package converts it: "7" and 7.9 are 7
    except (TypeError, ValueError, OverflowError):
        number = None
    return Seed(source, number, entry.line, repr(entry.value))


def check_seeds(runs: Sequence[tuple[str, Sequence[Seed]]]) -> list[str]:
    """Why a folder's runs ``(file, seeds)`` fail the seed check (empty: they pass)."""
    problems: list[str] = []
    first: dict[tuple[str, int], str] = {}
    for file, seeds in runs:
        if not seeds:
            problems.append(f"{file} logs no seed")
        for seed in seeds:
            if seed.value is None:
                problems.append(f"{file}: line {seed.line}: seed {seed.shown} is not an integer")
                continue
            other = first.setdefault((seed.source, seed.value), file)
            if other != file:
                problems.append(f"{file} logs seed {seed.value} at {seed.source} as {other} does")
    if len(problems) > _MAX_LISTED:
        problems = [*problems[:_MAX_LISTED], f"{len(problems) - _MAX_LISTED} more"]
    return problems
