"""The gate's ``invalid`` kind: candidate results stored as invalid where the baseline was valid.

The analysis reads valid samples only, so a series whose candidate run became
invalid (LoadGen's ``INVALID``, a checker's refusal, a throughput fallen to 0:
see :func:`tracker.readers.base.require_positive`) would drop out of the
comparison without a word. :class:`InvalidWatch` looks at the samples of the
two versions as the analysis streams them (one pass over the store) and
:func:`invalid_items` makes one item per such series: failing by default, like
every kind the policy's ``fail_on`` lists, unless an acknowledgement covers it.
The reason (``extra["invalid_reason"]``) is looked up only when there are such
series, in the stored results of the candidate.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING

from tracker.analysis.verdicts import Verdict
from tracker.analysis_records import SeriesInfo
from tracker.analyze.groupings import RUN_METRICS
from tracker.analyze.samples import series_key
from tracker.gate.items import GateItem, base_item, item_state
from tracker.gate.policy import GatePolicy
from tracker.records import AnalysisSample

if TYPE_CHECKING:
    from tracker.store.facade import Store

__all__ = ["KIND_INVALID", "InvalidCandidate", "InvalidWatch", "invalid_items", "with_reasons"]

KIND_INVALID = "invalid"


@dataclass(frozen=True, slots=True)
class InvalidCandidate:
    """A series with ``invalid`` of its ``total`` candidate results stored as invalid,
    where the baseline has ``baseline_valid`` valid results."""

    key: str
    invalid: int
    total: int
    baseline_valid: int
    reason: str = ""


class InvalidWatch:
    """Counts, per series, the valid baseline results and the candidate results (and how
    many of those are invalid) of the samples streamed through :meth:`samples`."""

    def __init__(self, baseline: str, candidate: str) -> None:
        self.baseline = baseline
        self.candidate = candidate
        self._baseline_valid: dict[str, int] = {}
        self._candidate: dict[str, list[int]] = {}
        """Series key → [invalid, total] at the candidate."""

    def samples(self, samples: Iterable[AnalysisSample]) -> Iterator[AnalysisSample]:
        """``samples``, unchanged, noted on the way."""
        pair = (self.baseline, self.candidate)
        for sample in samples:
            if sample.version in pair and sample.metric not in RUN_METRICS:
                self._note(sample)
            yield sample

    def _note(self, s: AnalysisSample) -> None:
        key = series_key(s.software, s.system_key, s.benchmark, s.scenario, s.workload, s.metric)
        if s.version == self.candidate:
            counts = self._candidate.setdefault(key, [0, 0])
            counts[0] += 0 if s.is_valid else 1
            counts[1] += 1
        elif s.is_valid:
            self._baseline_valid[key] = self._baseline_valid.get(key, 0) + 1

    def found(self) -> tuple[InvalidCandidate, ...]:
        """The series with an invalid candidate result and a valid baseline one, by key."""
        return tuple(
            InvalidCandidate(key, invalid, total, self._baseline_valid[key])
            for key, (invalid, total) in sorted(self._candidate.items())
            if invalid and key in self._baseline_valid
        )


def with_reasons(
    store: Store,
    candidate: str,
    found: Sequence[InvalidCandidate],
    infos: Mapping[str, SeriesInfo],
) -> tuple[InvalidCandidate, ...]:
    """``found`` with the stored reason of each (the first one stored), where there is one.

    Reads every stored result once: only ever run when the gate has invalid
    candidates to report. A stored result is matched to its series by its labels
    and its system (the series' system key is ``submitter/name``, then the division
    in brackets where the store adds it).
    """
    wanted: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for f in found:
        if f.key in infos:
            i = infos[f.key]
            labels = (i.software, i.benchmark, i.scenario, i.workload, i.metric)
            wanted.setdefault(labels, []).append((f.key, i.system))
    reasons: dict[str, str] = {}
    for row in store.iter_export_rows() if wanted else ():
        if row.valid or row.software_version != candidate:
            continue
        labels = (row.software, row.benchmark, row.scenario, row.workload, row.metric)
        reason = row.extra.get("invalid_reason")
        if labels not in wanted or not isinstance(reason, str) or not reason:
            continue
        system = f"{row.submitter or ''}/{row.system}"
        for key, system_key in wanted[labels]:
            if system_key == system or system_key.startswith(f"{system} ["):
                reasons.setdefault(key, reason.strip())
    return tuple(replace(f, reason=reasons.get(f.key, "")) for f in found)


def invalid_items(
    found: Iterable[InvalidCandidate],
    infos: Mapping[str, SeriesInfo],
    policy: GatePolicy,
    *,
    baseline: str,
    candidate: str,
    today: date,
) -> list[GateItem]:
    """One ``invalid`` item per series of ``found`` (see the module docstring)."""
    items = []
    for f in found:
        if f.key not in infos:
            continue
        ack = policy.acknowledgement_for(f.key, candidate, today=today)
        what = "result" if f.total == 1 else f"{f.invalid} of {f.total} results"
        detail = f"candidate {what} invalid" + (f": {f.reason}" if f.reason else "")
        items.append(
            replace(
                base_item(infos[f.key], f.key, KIND_INVALID, baseline, candidate),
                verdict=KIND_INVALID,
                state=item_state(Verdict.REGRESSION, KIND_INVALID, policy, ack),
                worse=True,
                n_baseline=f.baseline_valid,
                n_candidate=f.total - f.invalid,
                detail=detail,
                acknowledgement=ack,
            )
        )
    return items
