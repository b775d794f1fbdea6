"""NVIDIA AIPerf artifact folders: single runs, multi-turn runs and native sweeps.

Every folder holding ``profile_export_aiperf.json`` is one run (one point),
except the per-phase copies under ``phases/`` (the warm-up phase is never
read). A native sweep is a folder of ``concurrency_N/`` runs (or
``concurrency_N__requests_M/``); its points share a sweep key. Trials
(``profile_runs/run_NNNN/``) are repeats of their point within the sweep.
AIPerf's ``aggregate/`` and ``sweep_aggregate/`` files are derived from the runs
and are not read; a folder holding only those is refused with a hint.
"""

from __future__ import annotations

import re
from posixpath import basename, dirname

from tracker.errors import ConfigError
from tracker.parsers.aiperf import (
    AGGREGATE_NAME,
    SUMMARY_NAME,
    SWEEP_NAME,
    parse_aiperf_summary,
)
from tracker.readers.base import ProgressCallback, Reading
from tracker.readers.serving import Unit, label_points, read_units
from tracker.records import ParsedResult, SourceSpec
from tracker.sources.tree import SourceTree

__all__ = ["AIPerfReader"]

_TRIAL = re.compile(r"(?:^|/)profile_runs/run_\d+$")


def find_aiperf_runs(tree: SourceTree) -> list[Unit]:
    """One unit per AIPerf run folder ("" for the source root itself)."""
    units = []
    for path in tree.files():
        if basename(path) != SUMMARY_NAME or "phases" in path.split("/")[:-1]:
            continue
        run_dir = dirname(path)
        trial_of = _TRIAL.sub("", run_dir) if _TRIAL.search(run_dir) else run_dir
        units.append(Unit(run_label=run_dir, group=dirname(trial_of), paths=(path,)))
    return units


class AIPerfReader:
    """Reader of AIPerf runs and sweeps (``--kind aiperf``)."""

    kind = "aiperf"
    looks_for = f"{SUMMARY_NAME} (AIPerf run folders, concurrency_N/ sweeps)"

    def detect(self, tree: SourceTree) -> bool:
        names = {AGGREGATE_NAME, SWEEP_NAME}
        return bool(find_aiperf_runs(tree)) or any(basename(p) in names for p in tree.files())

    def read(
        self,
        tree: SourceTree,
        spec: SourceSpec,
        *,
        strict: bool,
        progress: ProgressCallback | None,
    ) -> Reading:
        units = find_aiperf_runs(tree)
        derived = {AGGREGATE_NAME, SWEEP_NAME}
        if not units and any(basename(p) in derived for p in tree.files()):
            raise ConfigError(
                f"{spec.location}: only AIPerf aggregate files ({AGGREGATE_NAME}, {SWEEP_NAME}) "
                f"here; they are derived from the runs: ingest the folder holding the run "
                f"folders with {SUMMARY_NAME} (e.g. concurrency_N/)"
            )
        reading, parsed = read_units(tree, units, _parse_aiperf, strict=strict, progress=progress)
        label_points(tree, spec, self.kind, parsed, reading)
        return reading


def _parse_aiperf(tree: SourceTree, unit: Unit) -> list[ParsedResult]:
    (path,) = unit.paths
    return parse_aiperf_summary(tree.read_bytes(path), path=path)
