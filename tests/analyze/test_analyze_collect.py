"""``collect_samples`` keeps each value once, yet gives what a plain pass gives.

The reference below is the plain pass: every sample appended to its series, to
its software-stack group's list for its stack (per version), and to its scaling
group as a point. The collector must give the same series, the same stack
groups (values in arrival order, groups in the order they were found: the
analysis draws its bootstrap samples in that order) and the same scaling groups,
on random samples that mix stacks within a series and a version, stackless
samples, groups of several series, missing counts and invalid samples.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

import pytest

from tracker.analyze.collect import collect_samples, framework
from tracker.records.results import AnalysisSample
from tracker.stats import ScalingGroup, ScalingPoint, scaling_groups, scaling_key

STACKS = (None, "", "rt 1.0; drv 1", "rt 1.0; drv 2", "rt 1.1; drv 1", "other")


def _samples(seed: int, count: int = 3000, *, keep_stack: float = 0.0) -> list[AnalysisSample]:
    """Random samples; ``keep_stack``: the chance that a sample has its series' own stack
    (the rest: any stack), so that most series keep their facts for a while."""
    rng = random.Random(seed)
    systems = {}
    for n in range(12):  # a system's fields are one row's: constant per system key
        systems[n] = (
            f"sub{n % 3}/node{n}",
            f"node{n}" + ("_MaxQ" if n % 6 == 5 else ""),
            f"sub{n % 3}",
            "closed" if n % 4 else None,
            ("acc-a", "acc-b")[n // 3 % 2],  # node n and node n + 6: one submitter and model
            rng.choice((1, None)),
            (1, 2, 8, None, 0)[n % 5],
            ("cpu", "cpu-b", None)[n % 3],  # one host CPU per submitter
        )
    n_of = {fields[0]: n for n, fields in systems.items()}  # nodes 10 and 11 state a precision
    for n in (1, 4, 7):  # a second system of the same platform: groups of several series
        twin = (f"sub{n % 3}/twin{n}", f"twin{n}", *systems[n][2:])
        systems[len(systems)] = twin
        n_of[twin[0]] = n
    out = []
    own_stack: dict[tuple[Any, ...], str | None] = {}
    for _ in range(count):
        system = systems[rng.randrange(len(systems))]
        metric, higher = rng.choice(
            (("tokens_per_s", True), ("latency_ms", False), ("tokens_per_s_per_accelerator", True))
        )
        value = rng.choice((100.0, 110.0, 95.0, 0.0, -1.0)) * (1 + rng.random() / 10)
        labels = (
            rng.choice(("b1", "b2")),
            rng.choice(("Offline", "Offline", "Offline", "SingleStream")),
            rng.choice(("", "", "c8")),
        )
        own = own_stack.setdefault((system[2], *labels, metric), rng.choice(STACKS))
        out.append(
            AnalysisSample(
                "sw",
                f"1.{rng.randrange(6)}",
                *system,
                *labels,
                metric,
                "u",
                higher,
                value * (system[6] or 1),
                rng.random() > 0.05,
                own if rng.random() < keep_stack else rng.choice(STACKS),
                rng.choice((None, None, None, "sweep-1")),
                precision=(None, "FP8", "fp4")[n_of[system[0]] % 3 if n_of[system[0]] > 8 else 0],
            )
        )
    return out


def _reference(samples: list[AnalysisSample]) -> dict[str, Any]:
    """The plain pass: every sample kept in every structure it belongs to."""
    values: dict[str, dict[str, dict[str, list[float]]]] = {}
    stacks: dict[tuple[Any, ...], dict[str, list[float]]] = {}
    points: dict[str, list[ScalingPoint]] = defaultdict(list)
    firsts: dict[str, AnalysisSample] = {}
    for s in (s for s in samples if s.is_valid):
        key = str(s.series_key)
        first = firsts.setdefault(key, s)  # a series' count and kind are its first sample's
        by_version = values.setdefault(s.software, {}).setdefault(key, {})
        by_version.setdefault(s.version, []).append(s.value)
        count = first.accelerators_total
        if count is None:
            continue
        precision = s.precision.lower() if s.precision else None
        platform = (
            s.software,
            s.submitter,
            s.division,
            s.accelerator,
            count,
            s.nodes,
            s.host_cpu,
            precision,
        )
        labels = (s.benchmark, s.scenario, s.workload, s.metric, s.unit, s.higher_is_better)
        if s.software_stack:
            by_stack = stacks.setdefault((platform, s.version, labels), {})
            by_stack.setdefault(s.software_stack, []).append(s.value)
        scales = (  # the written rule (tracker.analyze.groupings), spelled out here
            count > 0
            and first.sweep_key is None
            and "per_accelerator" not in s.metric
            and "latency" not in s.metric
            and s.scenario not in ("SingleStream", "MultiStream")
        )
        if scales:
            group = scaling_key(
                submitter=s.submitter,
                accelerator=s.accelerator,
                benchmark=s.benchmark,
                scenario=s.scenario,
                metric=s.metric,
                software_stack=framework(s.software_stack),
                division=s.division,
                workload=s.workload,
                host_cpu=s.host_cpu,
                power_mode="power-capped" if s.system.endswith("_MaxQ") else "performance",
                family=precision,  # the precision class: part of a family (no configuration)
            )
            points[s.software].append(
                ScalingPoint(group, s.version, count, s.value, s.higher_is_better, s.system_key)
            )
    return {
        "values": values,
        "stacks": [(k, list(v.items())) for k, v in stacks.items() if len(v) > 1],
        "scaling": {sw: _groups(found) for sw, found in sorted(points.items())},
    }


def _groups(points: list[ScalingPoint]) -> tuple[ScalingGroup, ...]:
    """Scaling groups of points, counting a count only where the plain pass saw it."""
    by_version: dict[tuple[Any, ...], list[ScalingPoint]] = defaultdict(list)
    for p in points:
        by_version[(p.key, p.version, p.higher_is_better)].append(p)
    kept = [
        p
        for found in by_version.values()
        if len({p.accelerators for p in found}) > 1  # as the pass: raw counts, then usable
        for p in found
    ]
    return scaling_groups(kept)


@pytest.mark.parametrize("seed", range(8))
def test_collect_samples_matches_the_plain_pass(seed: int) -> None:
    _check_against_the_plain_pass(_samples(seed))


@pytest.mark.parametrize("seed", range(8))
def test_collect_samples_matches_the_plain_pass_when_series_keep_their_stack(seed: int) -> None:
    """Most series keep one stack (the collector's fast path) until a sample changes it."""
    _check_against_the_plain_pass(_samples(seed, keep_stack=0.98))


def _check_against_the_plain_pass(samples: list[AnalysisSample]) -> None:
    expected = _reference(samples)
    found = collect_samples(samples)
    assert found.samples == len(samples)
    assert found.invalid == sum(not s.is_valid for s in samples)
    values = {
        sw: {key: dict(by_version) for key, by_version in by_key.items()}
        for sw, by_key in found.values.items()
    }
    assert values == expected["values"]
    assert [(k, list(v.items())) for k, v in found.stacks.items()] == expected["stacks"]
    assert {sw: groups for sw, groups in found.scaling.items() if groups} == {
        sw: groups for sw, groups in expected["scaling"].items() if groups
    }
    assert sum(len(v) > 1 for v in found.stacks.values()) > 0  # the case is exercised
    assert any(found.scaling.values())
    assert len(expected["stacks"]) > 0
