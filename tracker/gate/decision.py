"""The release gate: one analysis of a version pair and a policy → a verdict and an exit code.

:func:`evaluate_gate` is pure: it takes an :class:`~tracker.analyze.run.AnalysisOutcome`
of ``baseline`` → ``candidate`` (``analyse`` of the store's records, as
``run_analysis(..., save=False)`` gives it: nothing is stored, so a gate never
changes the findings or their triage) and a :class:`~tracker.gate.policy.GatePolicy`,
and decides:

* every comparison's verdict is decided once, in the analysis, under the policy's
  floor and q for its series (:func:`gate_settings` passes the policy as the
  run's thresholds; the q-values stay those of the run's one Benjamini–Hochberg family);
* ``regression`` items: measured series with a REGRESSION verdict; ``target``
  items: the throughput at the interactivity target regressed, or the candidate's
  sweeps no longer reach the target that the baseline's reached; ``scaling`` items:
  scaling efficiency of the candidate dropped against an earlier version; ``invalid``
  items: a series with a candidate result stored as invalid where the baseline has a
  valid one (:mod:`tracker.gate.items`; such a result is otherwise left out of the
  comparison), with the stored reason;
  ``missing`` items: a baseline series without a candidate result
  (:mod:`tracker.gate.items`; not failing unless ``fail_on`` lists it);
  ``configuration`` items: a series whose hardware part changed between the two
  versions (the comparability rule, :mod:`tracker.analyze.groupings`): not compared,
  never failing, with what changed (``host CPU A → B``); every measured item says
  what changed besides the software too (``nothing but the software``);
* an item of a kind the policy does not ``fail_on``, or covered by an unexpired
  acknowledgement (of the file, or a stored finding triaged as acknowledged or
  expected: :mod:`tracker.gate.policy`), does not fail; improvements never fail;
* items that share a cause are one issue (:mod:`tracker.gate.items`): the summary
  counts issues, the formats print one line per issue, the JSON keeps every item;
* exit 0 nothing failing; 1 at least one failing item; 3 (only ``strict``) nothing
  failing but SUSPECT or INCONCLUSIVE results that are not acknowledged.
  Exit 2 (usage, configuration, data) is raised as :class:`~tracker.errors.ConfigError`
  by :func:`resolve_pair` and :func:`evaluate_gate` (no series in common).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING, Any, TypeVar

from tracker.analyze.groupings import NOTHING_BUT_SOFTWARE
from tracker.analyze.run import AnalysisOutcome, analyse
from tracker.analyze.settings import AnalysisSettings
from tracker.errors import EXIT_GATE_FAILED, EXIT_OK, EXIT_STRICT_SUSPECT, ConfigError
from tracker.gate.items import (
    KIND_CONFIGURATION,
    KIND_EXPECTED,
    KIND_INVALID,
    KIND_MISSING,
    KIND_SCALING,
    STATE_ACKNOWLEDGED,
    STATE_CONFIGURATION,
    STATE_FAILING,
    STATE_INCONCLUSIVE,
    STATE_ORDER,
    STATE_SUSPECT,
    ExpectationCheck,
    GateIssue,
    GateItem,
    InvalidCandidate,
    InvalidWatch,
    base_item,
    baseline_series,
    count_text,
    expectation_items,
    gate_issues,
    invalid_items,
    item_state,
    missing_items,
    scaling_items,
    sweep_points,
)
from tracker.gate.items import with_reasons as invalid_with_reasons
from tracker.gate.policy import GatePolicy, stored_triage
from tracker.records.findings import SeriesInfo, StoredFinding
from tracker.records.keys import Selection, VersionPair, systems_of
from tracker.records.results import OUTPUT_TOKENS_PER_S, AnalysisSample, SweepSample
from tracker.stats.compare import Comparison, Verdict, blind_share
from tracker.stats.defaults import SENSITIVITY_CHANGE, ComparePolicy
from tracker.stats.significance import Method
from tracker.versions import version_orders

if TYPE_CHECKING:
    from tracker.store.facade import Store

__all__ = [
    "GateIssue",
    "GateItem",
    "GateResult",
    "SeriesSensitivity",
    "evaluate_gate",
    "gate_settings",
    "resolve_pair",
    "run_gate",
]


@dataclass(frozen=True, slots=True)
class SeriesSensitivity:
    """One compared series: its verdict and the smallest change (%, the worse way; ∞:
    none) it could have confirmed, and whether that lies past its floor."""

    key: str
    verdict: str
    detectable_pct: float | None
    under_powered: bool


@dataclass(frozen=True, slots=True)
class GateResult:
    """The gate's decision: the exit code, every reported item, the settings used."""

    pair: VersionPair
    exit_code: int
    strict: bool
    items: tuple[GateItem, ...]
    compared: int
    family_size: int
    family_method: str
    policy: GatePolicy
    version_order: Mapping[str, tuple[str, ...]]
    issues: tuple[GateIssue, ...] = ()
    baseline_series: int = 0
    """Series of the candidate's software with a baseline result (missing ones included)."""
    expectations: tuple[ExpectationCheck, ...] = ()
    """What became of each expectation of the policy that applies to the candidate."""
    sensitivity: tuple[SeriesSensitivity, ...] = ()
    """Every compared series' verdict and the smallest change it could have confirmed."""
    sensitivity_change: float = SENSITIVITY_CHANGE
    """The change the summary's sensitivity counts series against (0.05: 5%)."""
    softwares: tuple[str, ...] = ()
    """The software names the gate looked at (several: the summary names them)."""
    selection: Selection = field(default_factory=Selection)
    """What ``--software``, ``--benchmark`` and ``--system`` selected."""
    has_sweeps: bool = False
    """Whether any series was read at the interactivity target (else the target is moot)."""
    has_scaling: bool = False
    """Whether any scaling group was judged (else the efficiency floor is moot)."""

    @property
    def baseline(self) -> str:
        return self.pair.baseline

    @property
    def candidate(self) -> str:
        return self.pair.candidate

    def with_state(self, state: str) -> tuple[GateItem, ...]:
        """The items in ``state``."""
        return tuple(i for i in self.items if i.state == state)

    def issues_in(self, state: str) -> tuple[GateIssue, ...]:
        """The issues in ``state``."""
        return tuple(i for i in self.issues if i.state == state)

    @property
    def missing(self) -> tuple[GateItem, ...]:
        """The baseline series without a candidate result."""
        return tuple(i for i in self.items if i.kind == KIND_MISSING)

    @property
    def blind_share(self) -> float | None:
        """The share of the compared series that could not see a :attr:`sensitivity_change`."""
        return blind_share(self.sensitivity, self.sensitivity_change)

    @property
    def under_powered(self) -> int:
        """How many compared series could not confirm a change at their floor."""
        return sum(s.under_powered for s in self.sensitivity)

    def sensitivity_text(self) -> str:
        """``40% of 25 series could not see a 5% change`` (empty without comparisons)."""
        share, change = self.blind_share, f"{self.sensitivity_change:.0%}"
        if share is None:
            return ""
        if share == 0.0:
            return f"every series could see a {change} change"
        return f"{share:.0%} of {len(self.sensitivity)} series could not see a {change} change"

    @property
    def summary(self) -> str:
        """One line: the exit code and what it means, counting issues (and missing series),
        and the share of the compared series that could not see a 5% change."""
        failing = self.issues_in(STATE_FAILING)
        doubtful = len(self.issues_in(STATE_SUSPECT)) + len(self.issues_in(STATE_INCONCLUSIVE))
        acked = len(self.issues_in(STATE_ACKNOWLEDGED))
        pair = str(self.pair)
        if len(self.softwares) > 1:
            pair += f" of {', '.join(self.softwares)}"
        pair += f"; {self.sensitivity_text()}" if self.sensitivity else ""
        missing = count_text(self.missing, self.baseline_series)
        missing_fails = any(i.kinds[0] == KIND_MISSING for i in failing)
        if self.exit_code == EXIT_GATE_FAILED:
            return (
                f"gate: {self.exit_code} ({_failing_text(failing, missing, missing_fails)}, {pair})"
            )
        note = f"; {missing}" if missing else ""
        changed = len(self.issues_in(STATE_CONFIGURATION))
        if changed:
            note = f"; {changed} configuration changed (not compared){note}"
        if self.exit_code == EXIT_STRICT_SUSPECT:
            doubts = f"{doubtful} suspect or inconclusive, strict"
            return f"gate: {EXIT_STRICT_SUSPECT} (no regression; {doubts}{note}, {pair})"
        met = sum(e.met for e in self.expectations)
        note = (f"; {acked} acknowledged" if acked else "") + note
        note = (f"; {doubtful} suspect or inconclusive" if doubtful else "") + note
        note = (f"; {met} expected gain{'s' if met != 1 else ''} met" if met else "") + note
        return f"gate: {EXIT_OK} (no regression{note}, {pair})"


def _failing_text(failing: Sequence[GateIssue], missing: str, missing_fails: bool) -> str:
    """What failed, counted by kind: ``2 regressions, 1 invalid, 1 expected gain not shown``."""
    invalid = sum(i.kinds[0] == KIND_INVALID for i in failing)
    expected = sum(i.kinds[0] == KIND_EXPECTED for i in failing)
    scaling = sum(i.kinds[0] == KIND_SCALING for i in failing)
    others = (KIND_INVALID, KIND_MISSING, KIND_EXPECTED, KIND_SCALING)
    regressed = sum(i.kinds[0] not in others for i in failing)
    parts = [f"{regressed} regression{'s' if regressed != 1 else ''}"] if regressed else []
    parts += [f"{scaling} scaling-efficiency issue{'s' if scaling != 1 else ''}"] if scaling else []
    parts += [f"{invalid} invalid"] if invalid else []
    parts += (
        [f"{expected} expected gain{'s' if expected != 1 else ''} not shown"] if expected else []
    )
    parts += [missing] if missing_fails else []
    note = f"; {missing}" if missing and not missing_fails else ""
    return ", ".join(parts) + note


def resolve_pair(
    orders: Mapping[str, Sequence[str]], baseline: str | None, candidate: str
) -> VersionPair:
    """Check both versions exist; the default baseline is the version before the candidate
    (``orders``: each software's versions in order)."""
    known = sorted({v for order in orders.values() for v in order})
    listed = ", ".join(known) if known else "none (ingest some results first)"
    for label, name in ((candidate, "candidate"), (baseline, "baseline")):
        if label is not None and label not in known:
            raise ConfigError(f"unknown {name} version {label!r}; versions known: {listed}")
    if baseline is not None:
        if baseline == candidate:
            raise ConfigError("the baseline and the candidate are the same version")
        return VersionPair(baseline, candidate)
    for software in sorted(s for s, order in orders.items() if candidate in order):
        at = orders[software].index(candidate)
        if at > 0:
            return VersionPair(orders[software][at - 1], candidate)
    raise ConfigError(
        f"{candidate!r} is the first version of its software: give --baseline (known: {listed})"
    )


def _comparison_item(
    c: Comparison,
    info: SeriesInfo,
    kind: str,
    policy: GatePolicy,
    today: date,
    besides: str = NOTHING_BUT_SOFTWARE,
) -> GateItem | None:
    ev, verdict = c.evidence, c.verdict  # decided under the policy (see gate_settings)
    if verdict is Verdict.NO_CHANGE:
        return None
    ack = policy.acknowledgement_for(ev.key, ev.candidate, today=today)
    delta = ev.delta_pct
    return replace(
        base_item(info, ev.key, kind, VersionPair(ev.baseline, ev.candidate)),
        verdict=verdict.value,
        state=item_state(verdict, kind, policy, ack),
        worse=ev.g is not None and ev.g < 0,
        delta_pct=delta,
        ci_pct=ev.ci_pct,
        p_value=ev.p_value,
        q_value=c.q_value,
        method=ev.method.value if isinstance(ev.method, Method) else str(ev.method),
        n_baseline=ev.n_baseline,
        n_candidate=ev.n_candidate,
        floor=ev.floor,
        q_level=c.q_level if c.q_level is not None else policy.q_level,
        detail=ev.note,
        acknowledgement=ack,
        besides_software=besides,
        detectable_pct=c.detectable_pct,
        under_powered=c.under_powered,
    )


def _configuration_items(outcome: AnalysisOutcome, pair: VersionPair) -> list[GateItem]:
    """One item per series of ``pair`` whose configuration changed: listed, never failing."""
    items = []
    for change in outcome.configuration_changes:
        if (
            VersionPair(change.baseline, change.candidate) != pair
            or change.key not in outcome.infos
        ):
            continue
        text = change.besides.text
        items.append(
            replace(
                base_item(outcome.infos[change.key], change.key, KIND_CONFIGURATION, pair),
                verdict="configuration_changed",
                state=STATE_CONFIGURATION,
                delta_pct=change.delta_pct,
                detail=text,
                besides_software=text,
                twins=change.twins,
            )
        )
    return items


def _not_reached(
    outcome: AnalysisOutcome, policy: GatePolicy, pair: VersionPair, today: date
) -> list[GateItem]:
    baseline, candidate = pair.baseline, pair.candidate
    reached: dict[tuple[str, str], list[bool]] = {}
    for t in outcome.targets:
        if t.version in pair:
            ok = t.result.tokens_per_s_per_accelerator is not None
            reached.setdefault((t.key, t.version), []).append(ok)
    items = []
    for key in sorted({k for k, _v in reached}):
        before, after = reached.get((key, baseline)), reached.get((key, candidate))
        if before and after and any(before) and not any(after) and key in outcome.infos:
            ack = policy.acknowledgement_for(key, candidate, today=today)
            verdict = Verdict.REGRESSION
            items.append(
                replace(
                    base_item(outcome.infos[key], key, "target", pair),
                    verdict="not_reached",
                    state=item_state(verdict, "target", policy, ack),
                    worse=True,
                    detail=f"the candidate's sweeps no longer reach "
                    f"{policy.target_tokens_per_s_per_user:g} tokens/s/user",
                    acknowledgement=ack,
                )
            )
    return items


def _exit_code(items: Sequence[GateItem], strict: bool) -> int:
    states = {i.state for i in items}
    if STATE_FAILING in states:
        return EXIT_GATE_FAILED
    if strict and states & {STATE_SUSPECT, STATE_INCONCLUSIVE}:
        return EXIT_STRICT_SUSPECT
    return EXIT_OK


def _compared_items(
    outcome: AnalysisOutcome,
    policy: GatePolicy,
    pair: VersionPair,
    compared: Sequence[Comparison],
    today: date,
) -> list[GateItem]:
    """The items of the pair's comparisons, and of the series without usable values."""
    targets = {t.key for t in outcome.targets}
    items: list[GateItem] = []
    for c in compared:
        kind = "target" if c.key in targets else "regression"
        besides = outcome.besides.get((c.key, pair))
        text = besides.text if besides is not None else NOTHING_BUT_SOFTWARE
        item = _comparison_item(c, outcome.infos[c.key], kind, policy, today, text)
        if item is not None:
            items.append(replace(item, twins=tuple(outcome.twins.get(c.key, ()))))
    for key in outcome.comparisons.missing:
        if key in outcome.infos:
            kind = "target" if key in targets else "regression"
            ack = policy.acknowledgement_for(key, pair.candidate, today=today)
            items.append(
                replace(
                    base_item(outcome.infos[key], key, kind, pair),
                    verdict=Verdict.INCONCLUSIVE.value,
                    state=item_state(Verdict.INCONCLUSIVE, kind, policy, ack),
                    detail="no usable values on one side",
                    acknowledgement=ack,
                )
            )
    return items


def _sensitivity(compared: Sequence[Comparison]) -> tuple[SeriesSensitivity, ...]:
    """Each compared series' verdict and detection limit, for the summary and the JSON."""
    return tuple(
        SeriesSensitivity(c.key, c.verdict.value, c.detectable_pct, c.under_powered)
        for c in compared
    )


def evaluate_gate(
    outcome: AnalysisOutcome,
    policy: GatePolicy,
    *,
    pair: VersionPair,
    today: date,
    strict: bool = False,
    invalid: Sequence[InvalidCandidate] = (),
) -> GateResult:
    """Decide the gate for ``outcome``: an analysis of exactly ``pair`` under
    :func:`gate_settings` of ``policy`` (which decided every comparison's verdict);
    ``invalid``: the series whose candidate has invalid results (:class:`InvalidWatch`)."""
    if outcome.settings.thresholds != policy.series_thresholds():
        raise ValueError("evaluate_gate needs an analysis run with gate_settings(policy)")
    run = outcome.comparisons
    compared_pair = [
        c for c in run.comparisons if VersionPair(c.evidence.baseline, c.evidence.candidate) == pair
    ]
    found_invalid = invalid_items(invalid, outcome.infos, policy, pair=pair, today=today)
    changed = _configuration_items(outcome, pair)
    if not compared_pair and not run.missing and not found_invalid and not changed:
        raise ConfigError(
            f"no series has results for both {pair.baseline} and {pair.candidate}: "
            "nothing to compare"
        )
    items = _compared_items(outcome, policy, pair, compared_pair, today)
    items += _not_reached(outcome, policy, pair, today)
    items += [*scaling_items(outcome, policy, pair, today), *found_invalid, *changed]
    expected, checks = expectation_items(outcome, policy, pair, compared_pair)
    items += expected
    compared = {c.key for c in compared_pair} | set(run.missing) | {i.key for i in found_invalid}
    compared |= {i.key for i in changed}
    softwares = {outcome.infos[k].software for k in compared if k in outcome.infos}
    items += missing_items(
        outcome,
        policy,
        pair=pair,
        softwares=softwares,
        reported={i.key for i in items},
        today=today,
    )
    items.sort(key=lambda i: (STATE_ORDER[i.state], i.kind, i.key))
    return GateResult(
        pair=pair,
        exit_code=_exit_code(items, strict),
        strict=strict,
        items=tuple(items),
        compared=len(compared),
        family_size=run.family_size,
        family_method=run.family_method,
        policy=policy,
        version_order=outcome.version_order,
        issues=gate_issues(items, sweep_points(outcome, pair)),
        baseline_series=baseline_series(outcome, pair.baseline, softwares),
        expectations=checks,
        sensitivity=_sensitivity(compared_pair),
        **_moot_settings(outcome, pair, softwares),
    )


def _moot_settings(
    outcome: AnalysisOutcome, pair: VersionPair, softwares: Collection[str]
) -> dict[str, Any]:
    """The software names gated, and whether the target and the efficiency floor mattered
    to them (a microbenchmark gate names neither)."""
    return {
        "softwares": tuple(sorted(softwares)),
        "has_sweeps": any(t.software in softwares and t.version in pair for t in outcome.targets),
        "has_scaling": any(
            g.version in pair for s in softwares for g in outcome.scaling.get(s, ())
        ),
    }


def gate_settings(policy: GatePolicy) -> AnalysisSettings:
    """The analysis settings a policy implies: its default q and floors, target and
    efficiency floor, and the policy itself as the per-series thresholds of the verdicts."""
    compare = ComparePolicy(
        q_level=policy.q_level,
        floor_repeats=policy.floor_repeats,
        floor_single=policy.floor_single,
    )
    return AnalysisSettings(
        target_tokens_per_s_per_user=policy.target_tokens_per_s_per_user,
        efficiency_floor=policy.efficiency_floor,
        compare=compare,
        thresholds=policy.series_thresholds(),
    )


def _selected_orders(
    orders: Mapping[str, Sequence[str]], selection: Selection
) -> dict[str, Sequence[str]]:
    """The version orders of the software ``selection`` picks (every one without
    ``--software``); none matching is a configuration error naming the known ones."""
    by_name = Selection(software=selection.software)
    chosen = {s: order for s, order in orders.items() if by_name.matches(s, "", ())}
    if not chosen:
        raise ConfigError(
            f"no software matches --software {' '.join(selection.software)}; "
            f"known: {', '.join(sorted(orders)) or 'none (ingest some results first)'}"
        )
    return chosen


_Sample = TypeVar("_Sample", AnalysisSample, SweepSample)


def _selected_samples(samples: Iterable[_Sample], selection: Selection) -> Iterator[_Sample]:
    """The samples of the series ``selection`` picks."""
    if selection.is_everything:
        yield from samples
        return
    for sample in samples:
        systems = systems_of(sample.system_key, getattr(sample, "system", ""))
        if selection.matches(sample.software, sample.benchmark, systems):
            yield sample


def run_gate(
    store: Store,
    policy: GatePolicy,
    *,
    candidate: str,
    baseline: str | None = None,
    today: date,
    strict: bool = False,
    selection: Selection | None = None,
) -> GateResult:
    """Analyse ``baseline`` → ``candidate`` in ``store`` (storing nothing) and decide the gate,
    over the series ``selection`` picks (every series without one).

    The versions are read once, for the pair and for the analysis; the samples are
    read once, for the analysis and for the invalid candidates it leaves out.
    """
    chosen = selection or Selection()
    orders = _selected_orders(version_orders(store.list_versions()), chosen)
    pair = resolve_pair(orders, baseline, candidate)
    watch = InvalidWatch(pair)
    outcome = analyse(
        watch.samples(_selected_samples(store.iter_analysis_samples(), chosen)),
        _selected_samples(store.iter_sweep_samples(metric=OUTPUT_TOKENS_PER_S.name), chosen),
        orders,
        settings=gate_settings(policy),
        pair=pair,
    )
    invalid = invalid_with_reasons(store, pair.candidate, watch.found(), outcome.infos)
    stored = store.list_findings()
    triage = stored_triage(stored, pair.candidate)
    result = evaluate_gate(
        outcome,
        replace(policy, triage=triage),
        pair=pair,
        today=today,
        strict=strict,
        invalid=invalid,
    )
    return with_finding_ids(replace(result, selection=chosen), stored)


def with_finding_ids(result: GateResult, stored: Sequence[StoredFinding]) -> GateResult:
    """``result`` with each item's stored finding id (same series, same candidate, and the
    same baseline where the finding has one): the ids ``tracker findings`` and the report
    show. Issues are regrouped from the items."""
    ids: dict[tuple[str, str | None], int] = {}
    for f in sorted(stored, key=lambda f: f.id):
        if f.candidate_version == result.candidate and f.is_current:
            ids.setdefault((f.series_key, f.baseline_version), f.id)
    if not ids:
        return result

    def find(item: GateItem) -> int | None:
        return ids.get((item.key, item.baseline), ids.get((item.key, None)))

    items = tuple(replace(i, finding_id=find(i)) for i in result.items)
    by_key = {id(i): n for n, i in enumerate(result.items)}
    issues = tuple(
        replace(
            issue,
            members=tuple(items[by_key[id(m)]] for m in issue.members),
            headline=items[by_key[id(issue.headline)]],
        )
        for issue in result.issues
    )
    return replace(result, items=items, issues=issues)
