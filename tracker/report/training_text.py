"""MLPerf Training in words: the sentences and hover texts of the Training pages.

Time to train is in minutes, lower is better: a gain of 1.043× means the
newer round trains 1.043 times as fast. Scaling efficiency compares
accelerator-minutes (time x accelerators): E = (T0 x N0) / (T x N), 1.0 for
perfect scaling.
"""

from __future__ import annotations

from tracker.analysis import SeriesGain
from tracker.report.filters import format_count, format_number
from tracker.report.training_input import TrainingRun, TrainingScore

__all__ = [
    "gain_text",
    "minutes",
    "run_hover",
    "run_summary",
    "scaling_text",
    "score_hover",
    "untimed_text",
]

_ARROW = "\N{RIGHTWARDS ARROW}"
_WHY = {
    "used": "used in the olympic mean",
    "dropped (fastest)": "dropped: the fastest run (olympic mean)",
    "dropped (slowest)": "dropped: the slowest run (olympic mean)",
    "not scored": "its folder has no score",
}


def minutes(value: float, digits: int = 2) -> str:
    """``29.60 min`` (thousands separated)."""
    return f"{value:,.{digits}f} min"


def gain_text(system: str, benchmark: str, gain: SeriesGain) -> str:
    """``hpf_n8, llama2_70b_lora: v5.0 → v5.1, 29.60 → 28.37 minutes to train: 1.043× faster
    (software gain)``; ``gain.gain`` is direction-aware (above 1: faster)."""
    head = (
        f"{system}, {benchmark}: {gain.baseline} {_ARROW} {gain.candidate}, "
        f"{gain.baseline_level:,.2f} {_ARROW} {gain.candidate_level:,.2f} minutes to train"
    )
    if round(gain.gain, 3) == 1.0:
        return f"{head}: unchanged"
    if gain.gain > 1.0:
        return f"{head}: {gain.gain:.3f}× faster (software gain)"
    return f"{head}: {1.0 / gain.gain:.3f}× slower (software loss)"


def scaling_text(
    submitter: str,
    benchmark: str,
    version: str,
    systems: tuple[str, str],
    accelerators: tuple[int, int],
    times: tuple[float, float],
    efficiency: float,
    floor: float,
) -> str:
    """``Corp, bert (v5.1): a → b, 8 → 32 accelerators (4×), 10.00 → 3.00 minutes to train
    (3.33× faster; 80 → 96 accelerator-minutes): scaling efficiency 0.83, below the 0.90 floor``."""
    (n0, n1), (t0, t1) = accelerators, times
    speedup = t0 / t1 if t1 > 0 else float("nan")
    verdict = "below" if efficiency < floor else "at or above"
    return (
        f"{submitter}, {benchmark} ({version}): {systems[0]} {_ARROW} {systems[1]}, "
        f"{n0:,} {_ARROW} {n1:,} accelerators ({format_number(n1 / n0)}×), "
        f"{t0:,.2f} {_ARROW} {t1:,.2f} minutes to train ({speedup:.2f}× faster; "
        f"{format_number(t0 * n0)} {_ARROW} {format_number(t1 * n1)} accelerator-minutes): "
        f"scaling efficiency {efficiency:.2f}, {verdict} the {floor:.2f} floor"
    )


def score_hover(score: TrainingScore) -> str:
    """What the score point of a round says: how it was computed from the runs."""
    used = sum(run.role == "used" for run in score.runs)
    runs = f"{used} of {format_count(len(score.runs), 'run')} used"
    if score.score_minutes is None:
        failed = sum(not run.converged for run in score.runs)
        return f"no score: {format_count(failed, 'run')} did not converge; {runs}"
    mean = score.olympic_mean_minutes
    how = f"olympic mean {minutes(mean, 4)}" if mean is not None else "olympic mean"
    return (
        f"score {minutes(score.score_minutes, 4)} = {how} × scaling factor "
        f"{score.scaling_factor:.6g}; {runs}"
    )


def _why(run: TrainingRun) -> str:
    if not run.converged:
        return f"not converged: {run.reason}" if run.reason else "not converged"
    return _WHY.get(run.role, run.role)


def run_hover(round_label: str, run: TrainingRun) -> str:
    """``v5.0 · run 3 (result_3) · 24.8860 min · dropped: the fastest run (olympic mean)``."""
    time = minutes(run.minutes, 4) if run.minutes is not None else "no time"
    return f"{round_label} · run {run.index} ({run.run}) · {time} · {_why(run)}"


def run_summary(score: TrainingScore) -> str:
    """``8 of 10 runs used; dropped: fastest result_3, slowest result_7``."""
    used = sum(run.role == "used" for run in score.runs)
    dropped = [
        f"{label} {run.run}"
        for label, role in (("fastest", "dropped (fastest)"), ("slowest", "dropped (slowest)"))
        for run in score.runs
        if run.role == role
    ]
    dropped += [f"not converged {run.run}" for run in score.runs if not run.converged]
    text = f"{used} of {format_count(len(score.runs), 'run')} used"
    if score.score_minutes is None:
        text = f"no score ({text})"
    return text + (f"; dropped: {', '.join(dropped)}" if dropped else "")


def untimed_text(run: TrainingRun) -> str:
    """A run that did not converge: ``result_4 (no time: no run_stop): <reason>``."""
    time = minutes(run.minutes, 4) if run.minutes is not None else "no time"
    return f"{run.run} ({time}): {run.reason or 'did not converge'}"
