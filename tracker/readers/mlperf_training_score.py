"""From one scored MLPerf Training folder to stored results (for the Training reader).

The folder's score is one result (``time_to_train_minutes``, one sample per
round and folder); each run with a time is one sample of
``run_time_to_train_minutes``, valid when it converged. Runs and score carry
what the olympic selection did with them in ``extra``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tracker.parsers.mlperf_system import SystemDescription
from tracker.parsers.mlperf_training import (
    TIME_TO_TRAIN,
    FolderScore,
    RunCheck,
    run_energy,
    score_folder,
)
from tracker.parsers.mlperf_training_checks import NOT_CHECKED
from tracker.parsers.mlperf_training_seeds import check_seeds
from tracker.readers.mlperf_training_layout import TrainingFolder
from tracker.records import ExtraValue, MetricRecord, ResultRecord, SoftwareRecord
from tracker.sources.tree import SourceTree

__all__ = ["RUN_TIME_TO_TRAIN", "SCORE", "SOFTWARE", "folder_results"]

SOFTWARE = "mlperf-training"
SCORE = MetricRecord(TIME_TO_TRAIN, "minutes", False)
RUN_TIME_TO_TRAIN = MetricRecord("run_time_to_train_minutes", "minutes", False)
_MAX_REASONS = 3


def folder_results(
    tree: SourceTree,
    folder: TrainingFolder,
    system: SystemDescription,
    *,
    runs: Sequence[RunCheck],
    unreadable: Sequence[str],
    scaling: float | None,
    power: Mapping[str, float],
    round_label: str,
    ruleset: str,
    expected_files: int | None,
) -> tuple[list[ResultRecord], list[str], bool]:
    """The score and run samples of a folder, the notes about it, and whether it has a score."""
    energies, notes = _energies(folder, runs, power)
    names = [path.rsplit("/", 1)[-1] for path in unreadable]
    score = score_folder(
        runs,
        benchmark=folder.benchmark,
        scaling_factor=1.0 if scaling is None else scaling,
        energies=energies,
        unreadable=names,
    )
    roles = {role.file: role.role for role in score.roles}
    base = _Base(tree, folder, system, round_label)
    results = [base.run(run, roles[run.file]) for run in runs if run.minutes is not None]
    count = len(folder.results)
    if expected_files is not None and count != expected_files:
        notes.append(
            f"{folder.path}: {count} result files; the package checker requires "
            f"{expected_files} for {folder.benchmark}"
        )
    seeds = _seed_check(runs, names, system)
    if seeds.startswith("failed"):
        notes.append(f"{folder.path}: seed check {seeds} (the score does not depend on it)")
    if score.score_minutes is None:
        notes.append(f"{folder.path}: no score: {score.no_score_reason}; {_non_converged(runs)}")
        return results, notes, False
    extra = _score_extra(score, runs, names, system, ruleset, scaling is not None)
    if seeds:
        extra["seed_check"] = seeds
    extra["result_files"] = count
    if expected_files is not None:
        extra["expected_result_files"] = expected_files
    results.insert(0, base.score(score, runs, extra))
    return results, notes, True


class _Base:
    """What a folder's results share."""

    def __init__(
        self, tree: SourceTree, folder: TrainingFolder, system: SystemDescription, round_label: str
    ) -> None:
        self.tree = tree
        self.folder = folder
        self.system = system
        self.round = round_label

    def run(self, run: RunCheck, role: str) -> ResultRecord:
        path = f"{self.folder.path}/{run.file}"
        extra: dict[str, ExtraValue] = {"role": role, "compliant": run.converged}
        if run.run_stop_status is not None:
            extra["run_stop_status"] = run.run_stop_status
        if run.reasons:
            extra["invalid_reason"] = "; ".join(run.reasons)
        value = run.minutes or 0.0
        return self._record(RUN_TIME_TO_TRAIN, value, path, run.line, extra, run.converged, run)

    def score(
        self, score: FolderScore, runs: Sequence[RunCheck], extra: dict[str, ExtraValue]
    ) -> ResultRecord:
        # the artifact is the first run used (a score comes from several files)
        used = next(r for r in runs if r.file in _used(score))
        path = f"{self.folder.path}/{used.file}"
        return self._record(SCORE, score.score_minutes or 0.0, path, None, extra, True, None)

    def _record(
        self,
        metric: MetricRecord,
        value: float,
        path: str,
        line: int | None,
        extra: dict[str, ExtraValue],
        valid: bool,
        run: RunCheck | None,
    ) -> ResultRecord:
        artifact = self.tree.artifact(path)
        extra["system_name"] = self.system.system_name
        return ResultRecord(
            system=self.system.record,
            software=SoftwareRecord(software=SOFTWARE, version=self.round),
            benchmark=self.folder.benchmark,
            scenario="",
            metric=metric,
            value=value,
            is_valid=valid,
            artifact_path=path,
            artifact_sha256=artifact.sha256 if artifact is not None else "",
            line=line,
            location=self.folder.path,
            round=self.round,
            run_label=run.file.removesuffix(".txt") if run is not None else "",
            software_stack=self.system.software_stack,
            extra=dict(sorted(extra.items())),
            sample_id=f"{SOFTWARE}:{self.folder.path}"
            + (f"/{run.file}" if run is not None else ""),
        )


def _used(score: FolderScore) -> set[str]:
    return {role.file for role in score.roles if role.role == "used"}


def _score_extra(
    score: FolderScore,
    runs: Sequence[RunCheck],
    unreadable: Sequence[str],
    system: SystemDescription,
    ruleset: str,
    has_scaling: bool,
) -> dict[str, ExtraValue]:
    extra: dict[str, ExtraValue] = {
        "ruleset": ruleset,
        "runs_used": score.runs_used,
        "runs_dropped": score.runs_dropped,
        "dropped_fastest": score.dropped_fastest,
        "dropped_slowest": score.dropped_slowest,
        "dropped_non_converged": score.non_converged,
        "converged_runs": score.converged,
        "non_converged_runs": score.non_converged,
        "scaling_factor": score.scaling_factor,
        "scaling_json": has_scaling,
        "olympic_mean_unscaled_minutes": score.olympic_mean_minutes or 0.0,
        "runs": "; ".join(_run_line(run, score) for run in runs),
        "checks_not_done": NOT_CHECKED,
    }
    if score.non_converged:
        extra["non_converged"] = _non_converged(runs, unreadable)
    sizes = {run.global_batch_size for run in runs if run.global_batch_size is not None}
    if len(sizes) == 1:
        extra["global_batch_size"] = sizes.pop()
    if score.samples_to_converge is not None:
        extra["samples_to_converge"] = score.samples_to_converge
    if score.energy_j is not None:
        extra["energy_j"] = score.energy_j
    if system.record.accelerators_total is not None:
        extra["accelerators"] = system.record.accelerators_total
    return extra


def _seed_check(
    runs: Sequence[RunCheck], unreadable: Sequence[str], system: SystemDescription
) -> str:
    """``passed``, ``failed: <why>``, or "" where the package skips it (open division)."""
    if system.record.division != "closed":
        return ""
    problems = [f"{name}: the log does not parse" for name in unreadable]
    problems += check_seeds([(run.file, run.seeds) for run in runs])
    return f"failed: {'; '.join(problems)}" if problems else "passed"


def _run_line(run: RunCheck, score: FolderScore) -> str:
    role = next(r.role for r in score.roles if r.file == run.file)
    minutes = "no time" if run.minutes is None else f"{run.minutes:.4f} min"
    return f"{run.file} {minutes} {role}"


def _non_converged(runs: Sequence[RunCheck], unreadable: Sequence[str] = ()) -> str:
    parts = [
        f"{run.file}: {'; '.join(run.reasons[:_MAX_REASONS])}" for run in runs if not run.converged
    ]
    parts += [f"{name}: the log does not parse" for name in unreadable]
    return " | ".join(parts) or "no run converged"


def _energies(
    folder: TrainingFolder, runs: Sequence[RunCheck], power: Mapping[str, float]
) -> tuple[dict[str, float] | None, list[str]]:
    """Joules per converged run from the folder's power logs (``None`` without power logs)."""
    if not folder.power:
        return None, []
    energies: dict[str, float] = {}
    for run in runs:
        logs = folder.power.get(run.file.removesuffix(".txt"), ())
        powers = [power[p] for p in logs if p in power]
        if run.converged and run.time_to_train_ms is not None:
            if not powers or len(powers) != len(logs):
                return None, [f"{folder.path}: no readable power log for {run.file}; no energy"]
            energies[run.file] = run_energy(powers, run.time_to_train_ms)
    return energies, []
