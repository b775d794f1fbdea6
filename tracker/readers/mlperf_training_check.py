"""Optional cross-check of every Training score against MLCommons' ``mlperf-logging``.

When the package is importable (``pip install 'mlperf-results-tracker[training-check]'``),
each scored folder is copied into a temporary folder (its ``result_*.txt``,
``scaling.json`` and power logs: the package reads files, and never the
user's copy) and scored again by the package's own result summarizer
(``result_summarizer._compute_strong_score_standalone``, the function behind
its results tables). Scores that differ by more than 1e-9 relative, and runs
that one side counts as converged and the other does not, are listed as notes,
like the Inference results-table cross-check. Without the package nothing is done.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import logging
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from tracker.readers.mlperf_training_layout import TrainingFolder
from tracker.sources.tree import SourceTree

__all__ = ["MAX_LISTED", "FolderScore", "cross_check", "disagreements_of", "summarizer"]

MAX_LISTED = 20
TOLERANCE = 1e-9
_MODULE = "mlperf_logging.result_summarizer.result_summarizer"


@dataclass(frozen=True, slots=True)
class FolderScore:
    """What the tracker made of one folder: its score and its converged runs' minutes."""

    folder: TrainingFolder
    score_minutes: float | None
    converged: Mapping[str, float]
    """``result_<i>.txt`` → minutes, the runs that converged."""


def summarizer() -> tuple[Any, str] | None:
    """The package's result summarizer module and the package version, or ``None``."""
    try:
        module = importlib.import_module(_MODULE)
    except ImportError:
        return None
    try:
        version = metadata.version("mlperf-logging")
    except metadata.PackageNotFoundError:
        version = "(version unknown)"
    return module, version


def _close(mine: float, theirs: float) -> bool:
    return abs(mine - theirs) <= TOLERANCE * max(abs(theirs), 1e-12)


def _copy(tree: SourceTree, folder: TrainingFolder, into: Path) -> Path:
    """The folder's files under ``into/<benchmark>`` (the layout the package reads)."""
    target = into / folder.benchmark
    for path in folder.paths():
        relative = path.removeprefix(folder.path + "/")
        file = target / relative
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(tree.read_bytes(path))
    return target


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The package prints and logs as it checks: kept off the terminal."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        logging.disable(previous)


def _package_score(
    module: Any, tree: SourceTree, folder: TrainingFolder, ruleset: str
) -> tuple[float | None, dict[str, float]]:
    with tempfile.TemporaryDirectory(prefix="tracker-mlperf-logging-") as work:
        target = _copy(tree, folder, Path(work))
        with _quiet():
            runs, _power, score, _energy, _factor = module._compute_strong_score_standalone(
                folder.benchmark,
                folder.system,
                bool(folder.power),
                str(target),
                "training",
                ruleset,
                desc={"submitter": folder.submitter},
                return_full_scores=True,
            )
    return score, {Path(name).name: float(minutes) for name, minutes in runs.items()}


def disagreements_of(
    mine: FolderScore, score: float | None, runs: Mapping[str, float]
) -> list[str]:
    path = mine.folder.path
    out = []
    if (score is None) != (mine.score_minutes is None) or (
        score is not None
        and mine.score_minutes is not None
        and not _close(mine.score_minutes, score)
    ):
        ours = "no score" if mine.score_minutes is None else f"{mine.score_minutes:.6f} minutes"
        theirs = "no score" if score is None else f"{score:.6f} minutes"
        out.append(f"{path}: the tracker gives {ours}, mlperf-logging {theirs}")
    for name in sorted(set(runs) ^ set(mine.converged)):
        side = "mlperf-logging" if name in runs else "the tracker"
        out.append(f"{path}/{name}: only {side} counts this run as converged")
    return out


def cross_check(tree: SourceTree, scores: Sequence[FolderScore], ruleset: str) -> tuple[str, ...]:
    """Notes: the folders whose score or converged runs differ from the package's.

    Nothing when the package is not installed.
    """
    found = summarizer()
    if found is None or not scores:
        return ()
    module, version = found
    if not hasattr(module, "_compute_strong_score_standalone"):
        return (
            f"mlperf-logging {version} has no result summarizer this tracker knows; no cross-check",
        )
    disagreements: list[str] = []
    for mine in scores:
        try:
            score, runs = _package_score(module, tree, mine.folder, ruleset)
        except Exception as error:  # noqa: BLE001 - the package's failure is a note, not ours
            disagreements.append(f"{mine.folder.path}: mlperf-logging failed: {error}")
            continue
        disagreements.extend(disagreements_of(mine, score, runs))
    notes = [f"mlperf-logging {version} disagrees: {d}" for d in disagreements[:MAX_LISTED]]
    if len(disagreements) > MAX_LISTED:
        notes.append(
            f"mlperf-logging {version} disagrees on {len(disagreements) - MAX_LISTED} more"
        )
    outcome = (
        _counted(len(disagreements), "disagreement") if disagreements else "every score agrees"
    )
    notes.append(
        f"cross-checked {_counted(len(scores), 'folder')} "
        f"against mlperf-logging {version}: {outcome}"
    )
    return tuple(notes)


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
