"""Plain records the analysis use case hands to the gate and the report.

Like :mod:`tracker.records` (which is full), this module imports only the
standard library at run time: :class:`SeriesInfo` says what a series key stands
for, :class:`SweepTarget` is one sweep read at the interactivity target. The
analysis types :class:`SweepTarget` holds are imported for type checking only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tracker.analysis import CostEstimate, ThroughputAtTarget

__all__ = ["AXIS_STACK", "AXIS_VERSION", "SeriesInfo", "SweepTarget"]

AXIS_VERSION = "version"
"""The axis of a series across software versions."""
AXIS_STACK = "software_stack"
"""The axis of configurations of one version that differ only in software."""


@dataclass(frozen=True, slots=True)
class SeriesInfo:
    """What a series key stands for (for findings and the report).

    ``axis`` is ``"version"`` for series across software versions and
    ``"software_stack"`` for configurations of one ``version`` that differ only in
    software; ``system`` is then the platform (submitter, accelerator and counts).
    """

    software: str
    system: str
    benchmark: str
    scenario: str
    workload: str
    metric: str
    unit: str
    higher_is_better: bool
    axis: str = AXIS_VERSION
    version: str | None = None


@dataclass(frozen=True, slots=True)
class SweepTarget:
    """One sweep read at the interactivity target, with its cost when priced.

    ``result`` holds tokens/s per accelerator when ``accelerators`` is known, else
    the system's tokens/s (``per_accelerator`` false). ``tokens_per_s_at_target``
    and ``peak_tokens_per_s`` are always the whole system's.
    """

    key: str
    software: str
    version: str
    system: str
    benchmark: str
    scenario: str
    curve_workload: str
    sweep_key: str
    accelerator: str | None
    accelerators: int | None
    result: ThroughputAtTarget
    tokens_per_s_at_target: float | None
    peak_tokens_per_s: float | None
    cost_at_target: CostEstimate | None = None
    cost_at_peak: CostEstimate | None = None
    cost_note: str = ""

    @property
    def per_accelerator(self) -> bool:
        return self.accelerators is not None

    @property
    def is_sla_miss(self) -> bool:
        """No measured point meets the target (the whole front is less interactive)."""
        front = self.result.front
        return bool(front) and front[-1][0] < self.result.target_tokens_per_s_per_user
