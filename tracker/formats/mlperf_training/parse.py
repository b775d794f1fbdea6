"""MLPerf Training scoring, as the MLCommons ``mlperf-logging`` result summarizer computes it.

Per result folder (``results/<system>/<benchmark>/``), following
``result_summarizer._compute_strong_score_standalone`` (package 4.1.68):

1. each ``result_*.txt`` is a run: :func:`check_run` applies the compliance
   checks the log decides (:mod:`tracker.formats.mlperf_training.parse_checks`); a
   run that fails them, has no ``run_start``/``run_stop`` or does not parse
   is *non-converged*;
2. a run's time to train is (first ``run_stop`` - the last ``run_start`` before it, in
   file order) / 60000 minutes;
3. more than :func:`max_dropped` non-converged runs (4 for ``unet3d``, else 1):
   no score;
4. otherwise the converged times, sorted, lose the ``max_dropped`` fastest and
   ``max_dropped - non_converged`` slowest (a non-converged run takes the
   slowest slot), and the rest are averaged (olympic mean);
5. the score is that mean times ``scaling_factor`` of ``scaling.json`` (1.0 without one);
6. with power logs, the energy: each converged run's joules over its
   ``power/result_<i>/node_*.txt`` (:func:`node_power`, :func:`run_energy`), olympic-averaged in
   the order of the runs' times, times the scaling factor.

Samples (or epochs) to converge follow the RCP checker per benchmark
(:func:`~tracker.formats.mlperf_training.parse_checks.rcp_step_unit`): per run, the
step of the last evaluation before a successful ``run_stop`` (stable diffusion: the
smallest step where FID and CLIP both pass; infinite when the run did not succeed),
one dropped at each end and the rest averaged. Everything here is pure: bytes and
lines in, numbers out.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tracker.errors import ParseError
from tracker.formats.mlperf_training.parse_checks import (
    SD_CLIP_MIN,
    SD_FID_MAX,
    LogLine,
    RunState,
    Seed,
    is_numeric,
    iter_mllog,
    rcp_step_unit,
    seed_of,
)

__all__ = [
    "FolderScore",
    "RESULT_FILE_COUNTS",
    "RunCheck",
    "RunRole",
    "check_run",
    "max_dropped",
    "node_power",
    "parse_scaling_json",
    "ruleset_for",
    "run_energy",
    "score_folder",
    "switch_power",
]


RESULT_FILE_COUNTS: Mapping[str, int] = {
    "bert": 10,
    "dlrm_dcnv2": 10,
    "retinanet": 5,
    "stable_diffusion": 10,
    "llama2_70b_lora": 10,
    "rgat": 10,
    "llama31_405b": 3,
    "llama31_8b": 10,
    "flux1": 10,
    "unet3d": 40,
}
"""Result files the package checker requires per benchmark (``benchmark_meta``)."""

_NOT_CONVERGED_EPOCHS = math.inf
_RCP_REJECTED = 1
"""Steps dropped at each end for ``samples_to_converge`` (the summarizer's ``samples_rejected``)."""


def ruleset_for(round_label: str) -> str:
    """The ``mlperf-logging`` ruleset of a round: ``v5.1`` → ``5.1.0``."""
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?", round_label.strip())
    if match is None:
        return round_label
    return f"{match[1]}.{match[2]}.{match[3] or 0}"


def max_dropped(benchmark: str) -> int:
    """Runs dropped at each end of the olympic mean, and the most that may not converge."""
    return 4 if benchmark == "unet3d" else 1


@dataclass(frozen=True, slots=True)
class RunCheck:
    """One run (``result_<i>.txt``) as the summarizer sees it."""

    file: str
    minutes: float | None
    """``None`` without both ``run_start`` and ``run_stop``."""
    run_stop_status: str | None
    reasons: tuple[str, ...]
    """Why the run is non-converged (empty: it converged)."""
    epochs_to_converge: float
    """Samples or epochs to converge as the RCP checker reads them (inf: did not converge;
    nan: the RCP checker cannot read the log)."""
    global_batch_size: float | None
    line: int | None
    """The line of the run_stop (else run_start), for the stored sample."""
    seeds: tuple[Seed, ...] = ()
    warnings: tuple[str, ...] = ()
    """Compliance warnings: keys required once, logged more often with one value."""

    @property
    def converged(self) -> bool:
        return not self.reasons and self.minutes is not None

    @property
    def time_to_train_ms(self) -> float | None:
        return None if self.minutes is None else self.minutes * 60000.0


def check_run(
    lines: Iterable[bytes], *, path: str, file: str, benchmark: str, ruleset: str
) -> RunCheck:
    """Read one result file line by line: its time to train and its compliance.

    Raises :class:`ParseError` (file and line) for a line that does not parse,
    a log without ``:::MLLOG`` lines and a log without ``run_start``.
    """
    state = RunState(benchmark=benchmark, ruleset=ruleset)
    found = _RunTimes(benchmark, ruleset)
    last = 0
    for entry in iter_mllog(lines, path=path):
        state.feed(entry)
        found.feed(entry)
        last = entry.line
    if not last:
        raise ParseError(path, "no :::MLLOG lines: not an MLPerf Training result log")
    if found.start is None:
        where = found.stop.line if found.stop is not None else last
        raise ParseError(path, "no run_start in the log: the run's time is unknown", line=where)
    reasons = state.finish()
    if found.stop is None:
        reasons = ["no run_stop: the run did not finish"] + [
            r for r in reasons if not r.startswith("'run_stop' logged 0")
        ]
    minutes = None
    if found.stop is not None:
        minutes = (found.stop.time_ms - found.start.time_ms) / 60000.0
    return RunCheck(
        file=file,
        minutes=minutes,
        run_stop_status=found.status,
        reasons=tuple(reasons),
        epochs_to_converge=found.rcp.epochs(),
        global_batch_size=found.batch_size,
        line=(found.stop or found.start).line,
        seeds=tuple(found.seeds),
        warnings=tuple(state.warnings()),
    )


class _RunTimes:
    """The run's start and stop, its batch size, seeds and the RCP checker's step.

    The start is the last ``run_start`` before the first ``run_stop`` in file order,
    as the result summarizer's ``_query_run_start_stop`` reads them (the compliance
    checker only warns about a repeated ``run_start``).
    """

    def __init__(self, benchmark: str, ruleset: str) -> None:
        self.start: LogLine | None = None
        self.stop: LogLine | None = None
        self.status: str | None = None
        self.batch_size: float | None = None
        self.seeds: list[Seed] = []
        self.rcp = _RcpSteps(benchmark, ruleset)

    def feed(self, entry: LogLine) -> None:
        key = entry.key
        if key == "run_start" and self.stop is None:
            self.start = entry
        elif key == "run_stop":
            if self.stop is None:
                self.stop = entry
                status = entry.metadata.get("status")
                self.status = None if status is None else str(status)
            self.rcp.stopped(entry)
        elif key == "global_batch_size" and is_numeric(entry.value):
            self.batch_size = float(entry.value)
        elif key in ("eval_accuracy", "eval_error"):
            self.rcp.evaluated(entry)
        elif key == "seed":
            self.seeds.append(seed_of(entry))


class _RcpSteps:
    """Samples (or epochs) to converge as ``rcp_checker.read_submission_file`` reads them.

    Per :func:`~.parse_checks.rcp_step_unit`: the step of the last evaluation before
    a ``run_stop`` whose status is ``success`` (stable diffusion: the smallest step at
    which FID and CLIP both pass, its evaluations being logged in any order); the
    last ``run_stop`` of the file decides, an unsuccessful one making it infinite.
    ``nan`` where the package's own reading fails (an evaluation without the step,
    a stable diffusion run without a passing evaluation): the folder then has none.
    """

    def __init__(self, benchmark: str, ruleset: str) -> None:
        self.unit = rcp_step_unit(benchmark, ruleset)
        self.paired = benchmark == "stable_diffusion"
        self.step: float | None = None
        self.evaluations: dict[Any, dict[str, Any]] = {}
        self.at_stop: float | None = None

    def evaluated(self, entry: LogLine) -> None:
        step = entry.metadata.get(self.unit)
        if self.paired:
            metric = entry.metadata.get("metric")
            key = step if step is not None else _MISSING
            self.evaluations.setdefault(key, {})[str(metric)] = entry.value
        elif is_numeric(step):
            number = float(step)
            self.step = round(number, 3) if self.unit == "epoch_num" else number
        else:
            self.step = math.nan

    def stopped(self, entry: LogLine) -> None:
        if entry.metadata.get("status") != "success":
            self.at_stop = _NOT_CONVERGED_EPOCHS
        elif self.paired:
            self.at_stop = _first_passing_step(self.evaluations)
        else:
            self.at_stop = math.nan if self.step is None else self.step

    def epochs(self) -> float:
        return _NOT_CONVERGED_EPOCHS if self.at_stop is None else self.at_stop


_MISSING = object()


def _first_passing_step(evaluations: Mapping[Any, Mapping[str, Any]]) -> float:
    """The smallest step at which FID <= 90 and CLIP >= 0.15 (the RCP checker's criteria)."""
    passing: list[float] = []
    for step, metrics in evaluations.items():
        fid, clip = metrics.get("FID"), metrics.get("CLIP")
        if step is _MISSING or not is_numeric(fid):
            return math.nan  # the package fails on this log (a KeyError there)
        if fid > SD_FID_MAX:
            continue
        if not is_numeric(clip) or not is_numeric(step):
            return math.nan
        if clip >= SD_CLIP_MIN:
            passing.append(float(step))
    return min(passing) if passing else math.nan


@dataclass(frozen=True, slots=True)
class RunRole:
    """What the olympic selection did with one run."""

    file: str
    role: str
    """``used``, ``dropped (fastest)``, ``dropped (slowest)`` or ``dropped (not converged)``."""


@dataclass(frozen=True, slots=True)
class FolderScore:
    """The official score of one result folder, or why there is none."""

    benchmark: str
    score_minutes: float | None
    """The olympic mean times the scaling factor (``None``: see ``no_score_reason``)."""
    olympic_mean_minutes: float | None
    scaling_factor: float
    roles: tuple[RunRole, ...]
    converged: int
    non_converged: int
    dropped_fastest: int
    dropped_slowest: int
    energy_j: float | None
    samples_to_converge: float | None
    no_score_reason: str | None

    @property
    def runs_used(self) -> int:
        return sum(role.role == "used" for role in self.roles)

    @property
    def runs_dropped(self) -> int:
        return len(self.roles) - self.runs_used


def score_folder(
    runs: Sequence[RunCheck],
    *,
    benchmark: str,
    scaling_factor: float = 1.0,
    energies: Mapping[str, float] | None = None,
    unreadable: Sequence[str] = (),
) -> FolderScore:
    """The olympic score of a folder's runs (``unreadable``: files that did not parse).

    ``energies`` maps a converged run's file to its joules when the folder has power logs.
    """
    drop = max_dropped(benchmark)
    good = sorted((r for r in runs if r.converged), key=lambda r: r.minutes or 0.0)
    bad = [r.file for r in runs if not r.converged] + list(unreadable)
    roles = [RunRole(name, "dropped (not converged)") for name in bad]
    slowest = max(drop - len(bad), 0)
    if len(bad) > drop:
        reason = f"{len(bad)} runs did not converge, at most {drop} may (too many non-converged)"
        kept: list[RunCheck] = []
        roles += [RunRole(r.file, "not scored") for r in good]
    else:
        reason = None
        kept = good[drop : len(good) - slowest]
        roles += [RunRole(r.file, "dropped (fastest)") for r in good[:drop]]
        roles += [RunRole(r.file, "used") for r in kept]
        roles += [RunRole(r.file, "dropped (slowest)") for r in good[len(good) - slowest :]]
    mean = _mean([r.minutes or 0.0 for r in kept])
    if reason is None and mean is None:
        reason = f"no run is left after dropping {drop} at each end"
    return FolderScore(
        benchmark=benchmark,
        score_minutes=None if mean is None or reason else mean * scaling_factor,
        olympic_mean_minutes=mean,
        scaling_factor=scaling_factor,
        roles=tuple(sorted(roles, key=lambda role: _natural(role.file))),
        converged=len(good),
        non_converged=len(bad),
        dropped_fastest=min(drop, len(good)) if reason is None else 0,
        dropped_slowest=min(slowest, len(good)) if reason is None else 0,
        energy_j=_energy(good, kept, drop, slowest, energies, scaling_factor, reason),
        samples_to_converge=_samples_to_converge(runs, len(unreadable), drop),
        no_score_reason=reason,
    )


def _energy(
    good: Sequence[RunCheck],
    kept: Sequence[RunCheck],
    drop: int,
    slowest: int,
    energies: Mapping[str, float] | None,
    scaling_factor: float,
    reason: str | None,
) -> float | None:
    if not energies or reason is not None or any(r.file not in energies for r in good):
        return None
    mean = _mean([energies[r.file] for r in good[drop : len(good) - slowest]])
    return None if mean is None or not kept else mean * scaling_factor


def _samples_to_converge(runs: Sequence[RunCheck], unreadable: int, drop: int) -> float | None:
    """The summarizer's ``samples_to_converge``: the runs' RCP steps, sorted, less one at
    each end (one whatever the benchmark), averaged; none when more than ``drop`` runs
    did not converge, fewer than three remain, or the RCP checker fails on a log."""
    steps = [r.epochs_to_converge for r in runs] + [_NOT_CONVERGED_EPOCHS] * unreadable
    if any(math.isnan(s) for s in steps) or sum(math.isinf(s) for s in steps) > drop:
        return None
    if len(steps) < 2 * _RCP_REJECTED + 1:
        return None
    steps.sort()
    return _mean(steps[_RCP_REJECTED : len(steps) - _RCP_REJECTED])


def _mean(values: Sequence[float]) -> float | None:
    if not values or any(math.isinf(v) for v in values):
        return None
    return sum(values) * 1.0 / len(values)


def _natural(name: str) -> tuple[str, int]:
    match = re.search(r"(\d+)", name)
    return (name, -1) if match is None else (name[: match.start()], int(match[1]))


def parse_scaling_json(data: bytes, *, path: str) -> float:
    """The ``scaling_factor`` of a folder's ``scaling.json``."""
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ParseError(path, f"not a valid scaling.json ({error})") from None
    factor = document.get("scaling_factor") if isinstance(document, dict) else None
    if not isinstance(factor, int | float) or isinstance(factor, bool):
        factor = None
    if factor is None or not math.isfinite(factor) or factor <= 0:
        raise ParseError(path, 'scaling.json must be {"scaling_factor": <positive number>}')
    return float(factor)


def node_power(lines: Iterable[bytes], *, path: str) -> float:
    """The mean power of one node's log in watts, times ``conversion_eff``.

    As ``_compute_power_node`` of the summarizer: readings (each times the
    milliseconds since the previous one) are summed from the last
    ``power_measurement_start`` until the first ``power_measurement_stop`` in
    time order, and divided by the window up to the last stop (the last
    reading when there is none). A run's joules on that node are this times
    its time to train in seconds (:func:`run_energy`).
    """
    entries = sorted(
        (e for e in iter_mllog(lines, path=path) if e.key in _POWER_KEYS), key=lambda e: e.time_ms
    )
    start = stop = last = previous = total = 0.0
    efficiency, started, stopped = 1.0, False, False
    for entry in entries:
        if entry.key == "power_measurement_start":
            start = previous = entry.time_ms
            started = True
        elif entry.key == "power_reading" and started and not stopped:
            total += _number_of(entry, path) * (entry.time_ms - previous)
            previous = entry.time_ms
            last = max(last, entry.time_ms)
        elif entry.key == "power_measurement_stop":
            stop, stopped = entry.time_ms, True
        elif entry.key == "conversion_eff":
            efficiency = _number_of(entry, path)
    if not started:
        raise ParseError(path, "no power_measurement_start in the power log")
    window = (stop if stopped else last) - start
    if window <= 0:
        raise ParseError(path, "the power measurement window is empty")
    return efficiency * total / window


def switch_power(lines: Iterable[bytes], *, path: str) -> float:
    """A switch's power log (``sw_<n>.txt``): its first ``interconnect_power_est`` times
    ``conversion_eff`` (``_compute_power_sw`` of the summarizer)."""
    efficiency = 1.0
    for entry in iter_mllog(lines, path=path):
        if entry.key == "conversion_eff":
            efficiency = _number_of(entry, path)
        elif entry.key == "interconnect_power_est":
            return efficiency * _number_of(entry, path)
    return 0.0


def run_energy(node_powers: Iterable[float], time_to_train_ms: float) -> float:
    """Joules of one run: the nodes' powers (:func:`node_power`) over its time to train."""
    return sum(power * time_to_train_ms / 1000.0 for power in node_powers)


_POWER_KEYS = frozenset(
    {"power_measurement_start", "power_reading", "power_measurement_stop", "conversion_eff"}
)


def _number_of(entry: LogLine, path: str) -> float:
    if not is_numeric(entry.value):
        raise ParseError(path, f"{entry.key} is {entry.value!r}, not a number", line=entry.line)
    return float(entry.value)
