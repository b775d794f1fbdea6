"""The grouping rules of tracker.analyze.groupings, on small hand-made records.

Latency scenarios form no scaling group, a power-capped (MaxQ) system is a
family of its own, a closed and an open configuration are never compared with
each other, and a ``-99.9`` twin that repeats its ``-99`` run counts once.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tracker.analyze.groupings import power_mode, twin_benchmark, twin_pairs
from tracker.analyze.run import analyse
from tracker.records.results import AnalysisSample, VersionInfo
from tracker.stats import SeriesSamples

BASE = AnalysisSample(
    software="mlperf-inference",
    version="v1.0",
    system_key="Corp/box-x1",
    system="box-x1",
    submitter="Corp",
    division="closed",
    accelerator="Acc-1",
    nodes=1,
    accelerators_total=1,
    host_cpu="cpu-1",
    benchmark="model-99",
    scenario="Offline",
    workload="",
    metric="samples_per_s",
    unit="samples/s",
    higher_is_better=True,
    value=100.0,
    is_valid=True,
    software_stack="Runtime 1.0",
    sweep_key=None,
)


def _versions(*labels: str) -> list[VersionInfo]:
    return [VersionInfo("mlperf-inference", v, f"{i:04d}") for i, v in enumerate(labels)]


def _at(count: int, value: float, **changes: object) -> AnalysisSample:
    name = f"box-x{count}"
    fields: dict[str, object] = {"system_key": f"Corp/{name}", "system": name}
    fields.update(changes)
    return replace(BASE, accelerators_total=count, value=value, **fields)  # type: ignore[arg-type]


def test_a_singlestream_or_multistream_group_yields_no_scaling_efficiency() -> None:
    samples = [
        _at(n, latency, scenario=scenario, metric="latency_ms", unit="ms", higher_is_better=False)
        for scenario in ("SingleStream", "MultiStream")
        for n, latency in ((1, 10.0), (8, 10.0))
    ]
    outcome = analyse(samples, [], _versions("v1.0"))
    assert outcome.groups() == ()
    assert not any(outcome.scaling_issues.values())


def test_a_throughput_group_yields_its_efficiency() -> None:
    outcome = analyse([_at(1, 100.0), _at(8, 600.0)], [], _versions("v1.0"))
    (group,) = outcome.groups()
    assert [p.efficiency for p in group.points] == [1.0, pytest.approx(0.75)]
    (finding,) = outcome.findings
    assert finding.kind == "scaling_efficiency"
    assert finding.evidence["at_version"]["systems"] == ["Corp/box-x8"]
    assert finding.evidence["at_version"]["base_systems"] == ["Corp/box-x1"]


def test_a_maxq_system_is_a_family_of_its_own() -> None:
    maxq = _at(8, 300.0, system_key="Corp/box-x8_MaxQ", system="box-x8_MaxQ")
    outcome = analyse([_at(1, 100.0), _at(8, 790.0), maxq], [], _versions("v1.0"))
    (group,) = outcome.groups()
    assert [(p.accelerators, p.value, p.labels) for p in group.points] == [
        (1, 100.0, ("Corp/box-x1",)),
        (8, 790.0, ("Corp/box-x8",)),
    ]
    assert group.key.power_mode == "performance"
    assert outcome.findings == ()


def test_different_host_cpus_are_different_families() -> None:
    other_host = _at(8, 600.0, host_cpu="cpu-2")
    assert analyse([_at(1, 100.0), other_host], [], _versions("v1.0")).groups() == ()


def test_a_closed_and_an_open_configuration_yield_no_stack_comparison() -> None:
    closed = [_at(8, 800.0 + i, software_stack="Runtime 1.0") for i in range(3)]
    opened = [
        _at(8, 1000.0 + i, software_stack="Runtime 2.0", division="open", system_key="Corp/b")
        for i in range(3)
    ]
    outcome = analyse([*closed, *opened], [], _versions("v1.0"))
    assert outcome.stack_series == ()
    assert outcome.comparisons.comparisons == ()
    # the same pair within one division is ranked, stack against stack, with no direction
    same = [replace(s, division="closed") for s in opened]
    outcome = analyse([*closed, *same], [], _versions("v1.0"))
    assert len(outcome.stack_series) == 1
    assert outcome.comparisons.comparisons == () and outcome.findings == ()
    (ranking,) = outcome.stack_rankings
    assert [(stack, ratio) for stack, _level, ratio in ranking.stacks] == [
        ("Runtime 2.0", 1.0),
        ("Runtime 1.0", pytest.approx(801.0 / 1001.0)),
    ]


def test_a_twin_pair_yields_one_finding_that_names_the_twin() -> None:
    samples = []
    for benchmark, value_v2 in (("model-99", 150.0), ("model-99.9", 150.0 * (1 + 3e-7))):
        samples += [
            _at(8, 100.0, benchmark=benchmark, version="v1.0"),
            _at(8, value_v2, benchmark=benchmark, version="v2.0"),
        ]
    outcome = analyse(samples, [], _versions("v1.0", "v2.0"))
    (finding,) = [f for f in outcome.findings if f.kind == "improvement"]
    assert "|model-99|" in finding.series_key
    (twin,) = finding.evidence["twins"]
    assert "|model-99.9|" in twin
    assert len(outcome.comparisons.comparisons) == 1


def test_a_99_9_result_from_another_run_is_not_a_twin() -> None:
    samples = []
    for benchmark, value_v2 in (("model-99", 150.0), ("model-99.9", 140.0)):
        samples += [
            _at(8, 100.0, benchmark=benchmark, version="v1.0"),
            _at(8, value_v2, benchmark=benchmark, version="v2.0"),
        ]
    outcome = analyse(samples, [], _versions("v1.0", "v2.0"))
    assert len([f for f in outcome.findings if f.kind == "improvement"]) == 2
    assert all("twins" not in f.evidence for f in outcome.findings)


def test_twin_scaling_findings_count_once() -> None:
    samples = [
        _at(n, value, benchmark=benchmark)
        for benchmark in ("model-99", "model-99.9")
        for n, value in ((1, 100.0), (8, 600.0))
    ]
    outcome = analyse(samples, [], _versions("v1.0"))
    assert len(outcome.groups()) == 2  # both groups are shown
    (finding,) = outcome.findings  # one finding
    assert finding.evidence["key"]["benchmark"] == "model-99"


@pytest.mark.parametrize(
    ("name", "mode"),
    [
        ("H200-SXM-141GBx8_TRT_MaxQ", "power-capped"),
        ("node (maxq)", "power-capped"),
        ("GB200 Max-Q", "power-capped"),
        ("H200-SXM-141GBx8_TRT", "performance"),
        ("MaxQuant-box", "performance"),
        (None, "performance"),
    ],
)
def test_power_mode_reads_maxq_from_the_system_name(name: str | None, mode: str) -> None:
    assert power_mode(name) == mode


def test_twin_benchmark_and_pairs() -> None:
    assert twin_benchmark("llama2-70b-99.9") == "llama2-70b-99"
    assert twin_benchmark("llama2-70b-99") is None
    a = SeriesSamples("a", ("v1",), ((29739.9,),), True)
    b = SeriesSamples("b", ("v1",), ((29739.88,),), True)
    labels = {"a": ("sw", "sys", "m-99", "Server"), "b": ("sw", "sys", "m-99.9", "Server")}
    assert twin_pairs([a, b], labels) == {"b": "a"}
    c = SeriesSamples("b", ("v1",), ((29000.0,),), True)
    assert twin_pairs([a, c], labels) == {}


def test_versions_of_different_precision_classes_are_not_compared() -> None:
    samples = [
        _at(8, 100.0, version="v1.0", precision="fp8"),
        _at(8, 150.0, version="v2.0", precision="FP4"),
    ]
    outcome = analyse(samples, [], _versions("v1.0", "v2.0"))
    assert outcome.comparisons.comparisons == ()
    assert outcome.gains == ()
    same = [replace(s, precision="fp8") for s in samples]
    (comparison,) = analyse(same, [], _versions("v1.0", "v2.0")).comparisons.comparisons
    assert comparison.evidence.delta_pct == pytest.approx(50.0)
    unstated = [replace(s, precision=None) for s in samples]  # nothing stated: compared
    assert len(analyse(unstated, [], _versions("v1.0", "v2.0")).comparisons.comparisons) == 1


def test_stacks_of_different_precision_classes_are_not_compared() -> None:
    fp8 = [_at(8, 800.0 + i, software_stack="Runtime 1.0", precision="fp8") for i in range(3)]
    fp4 = [
        _at(8, 1000.0 + i, software_stack="Runtime 2.0", precision="fp4", system_key="Corp/b")
        for i in range(3)
    ]
    assert analyse([*fp8, *fp4], [], _versions("v1.0")).stack_series == ()
    same = [replace(s, precision="fp8") for s in fp4]
    (stacks,) = analyse([*fp8, *same], [], _versions("v1.0")).stack_series
    assert "fp8" in stacks.system
