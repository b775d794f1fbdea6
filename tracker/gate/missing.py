"""The gate's ``missing`` kind: baseline series without a candidate result.

A benchmark that crashed, a job that ran half its suites, a folder left out of
the ingest: the candidate then has no result where the baseline had one, and
without this check the gate compares what is there and passes. Every such
series is an item of kind ``missing`` (not failing unless the policy's
``fail_on`` lists ``missing``), counted in the summary line. Only series of a
software that has the candidate version are looked at, and series the gate
reports otherwise (an invalid candidate result, a target no longer reached)
are not reported again.

The **missing label** case is named as such: a per-accelerator series
(``X_per_accelerator``) missing where the candidate has ``X`` of the same
series means the candidate was stored without an accelerator count
(``tracker ingest`` without ``--accelerators``), not that its runs are missing.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import date

from tracker.analysis.issues import PER_ACCELERATOR
from tracker.analysis.verdicts import Verdict
from tracker.analyze.run import AnalysisOutcome
from tracker.gate.items import GateItem, base_item, item_state
from tracker.gate.policy import GatePolicy

__all__ = [
    "KIND_MISSING",
    "NO_ACCELERATOR_COUNT",
    "baseline_series",
    "count_text",
    "missing_items",
]

KIND_MISSING = "missing"
NO_ACCELERATOR_COUNT = (
    "no per-accelerator result: the candidate's results have no accelerator count "
    "(ingested without --accelerators?)"
)


def baseline_series(outcome: AnalysisOutcome, baseline: str, softwares: Collection[str]) -> int:
    """How many series of ``softwares`` have a (valid) baseline result."""
    return sum(
        s.index(baseline) is not None and outcome.infos[s.key].software in softwares
        for s in outcome.series
        if s.key in outcome.infos
    )


def _without_accelerators(key: str, at_candidate: Collection[str]) -> bool:
    """Whether ``key`` is a per-accelerator series whose plain form has a candidate result."""
    head, _, metric = key.rpartition("|")
    if PER_ACCELERATOR not in metric:
        return False
    return f"{head}|{metric.replace(PER_ACCELERATOR, '', 1)}" in at_candidate


def missing_items(
    outcome: AnalysisOutcome,
    policy: GatePolicy,
    *,
    baseline: str,
    candidate: str,
    softwares: Collection[str],
    reported: Collection[str],
    today: date,
) -> list[GateItem]:
    """One ``missing`` item per series of ``softwares`` with a baseline result and no
    candidate result, but those in ``reported`` (see the module docstring)."""
    at_candidate = {s.key for s in outcome.series if s.index(candidate) is not None}
    items: list[GateItem] = []
    for s in outcome.series:
        at = s.index(baseline)
        if at is None or s.key in at_candidate or s.key in reported:
            continue
        info = outcome.infos.get(s.key)
        if info is None or info.software not in softwares:
            continue
        ack = policy.acknowledgement_for(s.key, candidate, today=today)
        n = len(s.samples[at])
        detail = (
            NO_ACCELERATOR_COUNT
            if _without_accelerators(s.key, at_candidate)
            else f"no candidate result (the baseline has {n} value{'s' if n != 1 else ''})"
        )
        items.append(
            replace(
                base_item(info, s.key, KIND_MISSING, baseline, candidate),
                verdict=KIND_MISSING,
                state=item_state(Verdict.REGRESSION, KIND_MISSING, policy, ack),
                worse=True,
                n_baseline=n,
                detail=detail,
                acknowledgement=ack,
            )
        )
    return items


def count_text(missing: Sequence[GateItem], total: int) -> str:
    """``3 of 25 baseline series missing`` (empty without missing series)."""
    if not missing:
        return ""
    return f"{len(missing)} of {total} baseline series missing"
