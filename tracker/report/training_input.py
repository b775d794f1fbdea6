"""MLPerf Training scores and their runs, as the report shows them (plain records).

The Training reader stores, per round and result folder, the official score
(``time_to_train_minutes``, one result) and one ``run_time_to_train_minutes``
sample per run that has a time, each with its role in the olympic mean in
``extra`` (see :mod:`tracker.readers.mlperf_training_score`).
:func:`training_scores` turns those stored rows (as the export gives them)
back into one :class:`TrainingScore` per folder with its runs, for the Training
pages; a run without a time (no ``run_stop``) is known only from its folder's
score and is listed there with its reason.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tracker.records import ExportRow, ExtraValue, SystemRecord

__all__ = [
    "RUN_METRIC",
    "SCORE_METRIC",
    "TRAINING_SOFTWARE",
    "TrainingRun",
    "TrainingScore",
    "training_scores",
]

TRAINING_SOFTWARE = "mlperf-training"
"""The software name of every stored Training result (the reader's ``SOFTWARE``)."""
SCORE_METRIC = "time_to_train_minutes"
RUN_METRIC = "run_time_to_train_minutes"

_RUN_LINE = re.compile(
    r"(?P<file>\S+?)(?:\.txt)? (?:(?P<minutes>[0-9.]+) min|no time) (?P<role>.+)"
)


@dataclass(frozen=True, slots=True)
class TrainingRun:
    """One run (``result_<i>.txt``) of a Training folder."""

    run: str
    """The run's file name without ``.txt`` (``result_3``)."""
    minutes: float | None
    """Its time to train; ``None`` when it never stopped (no ``run_stop``)."""
    role: str
    """``used``, ``dropped (fastest)``, ``dropped (slowest)``, ``dropped (not converged)``
    or ``not scored`` (its folder has no score)."""
    converged: bool
    reason: str = ""
    """Why it did not converge (empty when it did)."""

    @property
    def index(self) -> str:
        """The run's index as its file names it (``3`` of ``result_3``)."""
        return self.run.removeprefix("result_")


@dataclass(frozen=True, slots=True)
class TrainingScore:
    """One round's result folder: its official score (if any) and its runs."""

    round: str
    submitter: str
    system: str
    system_key: str
    benchmark: str
    location: str
    accelerators: int | None
    score_minutes: float | None
    """The official score (olympic mean x scaling factor); ``None``: the folder has none."""
    olympic_mean_minutes: float | None
    scaling_factor: float
    runs: tuple[TrainingRun, ...]
    is_example: bool = False


def _number(extra: Mapping[str, ExtraValue], name: str) -> float | None:
    value = extra.get(name)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _reasons(extra: Mapping[str, ExtraValue]) -> dict[str, str]:
    """``{run: reason}`` from a score's ``non_converged`` text (``file: reason | ...``)."""
    text = extra.get("non_converged")
    out: dict[str, str] = {}
    for part in str(text).split(" | ") if isinstance(text, str) else ():
        file, _, reason = part.partition(": ")
        out[file.removesuffix(".txt")] = reason
    return out


def _untimed_runs(score: ExportRow, timed: set[str]) -> list[TrainingRun]:
    """The runs named in a score's ``runs`` text that have no stored sample (no time)."""
    text = score.extra.get("runs")
    reasons = _reasons(score.extra)
    out = []
    for part in text.split("; ") if isinstance(text, str) else ():
        match = _RUN_LINE.fullmatch(part)
        if match is None or match["minutes"] is not None or match["file"] in timed:
            continue
        run = match["file"]
        out.append(TrainingRun(run, None, match["role"], False, reasons.get(run, "")))
    return out


def _run(row: ExportRow) -> TrainingRun:
    role = row.extra.get("role")
    reason = row.extra.get("invalid_reason")
    return TrainingRun(
        run=row.run_label or row.artifact_path.rsplit("/", 1)[-1].removesuffix(".txt"),
        minutes=row.value,
        role=role if isinstance(role, str) else "used",
        converged=row.valid,
        reason=reason if isinstance(reason, str) else "",
    )


def _natural(run: TrainingRun) -> tuple[int, str]:
    digits = re.sub(r"\D", "", run.run)
    return (int(digits) if digits else -1, run.run)


def _score(rows: Sequence[ExportRow]) -> TrainingScore:
    head = rows[0]
    score = next((r for r in rows if r.metric == SCORE_METRIC), None)
    runs = [_run(r) for r in rows if r.metric == RUN_METRIC]
    if score is not None:
        runs += _untimed_runs(score, {r.run for r in runs})
    extra = score.extra if score is not None else {}
    system = SystemRecord(name=head.system, submitter=head.submitter, division=head.division)
    return TrainingScore(
        round=head.round or head.software_version,
        submitter=head.submitter or "",
        system=head.system,
        system_key=system.platform_key,
        benchmark=head.benchmark,
        location=head.location or "",
        accelerators=head.accelerators_total,
        score_minutes=score.value if score is not None else None,
        olympic_mean_minutes=_number(extra, "olympic_mean_unscaled_minutes"),
        scaling_factor=_number(extra, "scaling_factor") or 1.0,
        runs=tuple(sorted(runs, key=_natural)),
        is_example=any(r.is_example for r in rows),
    )


def training_scores(rows: Iterable[ExportRow]) -> tuple[TrainingScore, ...]:
    """One score per (round, system, benchmark folder) of the stored Training ``rows``.

    Rows of other software or metrics are left out; the scores are sorted by
    benchmark, system, submitter and round.
    """
    folders: dict[tuple[str, str], list[ExportRow]] = defaultdict(list)
    for row in rows:
        if row.software == TRAINING_SOFTWARE and row.metric in (SCORE_METRIC, RUN_METRIC):
            folders[(row.software_version, row.location or row.benchmark)].append(row)
    scores = [_score(group) for group in folders.values()]
    return tuple(
        sorted(scores, key=lambda s: (s.benchmark, s.system, s.submitter, s.round, s.location))
    )
