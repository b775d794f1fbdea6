"""Scaling groups and efficiency on synthetic inputs shaped like the real fixtures.

The fixture groups named in the issue (e.g. v6.0 NVIDIA GB300 x72 and x288,
v5.1 University-of-Florida B200 x1 and x8) are checked on the real data once the
ingest feeds them; here the arithmetic and the findings are pinned down.
"""

from __future__ import annotations

import pytest

from tracker.stats import (
    ScalingIssue,
    ScalingKey,
    ScalingPoint,
    efficiency,
    efficiency_below_floor,
    efficiency_drops,
    scaling_findings,
    scaling_groups,
    scaling_key,
)

GB300 = scaling_key(
    submitter="NVIDIA",
    accelerator="NVIDIA GB300",
    benchmark="deepseek-r1",
    scenario="Offline",
    metric="tokens_per_s",
    software_stack="TensorRT-LLM 1.1",
    division="closed",
)
B200 = scaling_key(
    submitter="University-of-Florida",
    accelerator="NVIDIA B200-SXM-180GB",
    benchmark="llama2-70b-99",
    scenario="Server",
    metric="tokens_per_s",
    software_stack="TensorRT 10.11",
)


def point(
    key: ScalingKey,
    version: str,
    n: int,
    value: float,
    *,
    higher_is_better: bool = True,
    label: str = "",
) -> ScalingPoint:
    return ScalingPoint(key, version, n, value, higher_is_better, label)


def test_one_rack_to_four_racks_at_ninety_nine_percent() -> None:
    points = [
        point(GB300, "v6.0", 72, 1_000_000.0, label="GB300-NVL72"),
        point(GB300, "v6.0", 288, 3_960_000.0, label="GB300-NVL72x4"),
    ]
    (group,) = scaling_groups(points)
    assert group.key == GB300 and group.version == "v6.0" and group.base_accelerators == 72
    base, big = group.points
    assert base.efficiency == 1.0
    assert big.accelerators == 288 and big.efficiency == pytest.approx(0.99)
    assert big.labels == ("GB300-NVL72x4",)
    assert efficiency_below_floor([group]) == ()


def test_efficiency_of_one_to_eight_accelerators_below_the_floor() -> None:
    (group,) = scaling_groups([point(B200, "v5.1", 1, 1000.0), point(B200, "v5.1", 8, 6800.0)])
    assert group.points[1].efficiency == pytest.approx(0.85)
    (finding,) = efficiency_below_floor([group])
    assert finding.issue is ScalingIssue.BELOW_FLOOR
    assert (finding.accelerators, finding.base_accelerators) == (8, 1)
    assert finding.efficiency == pytest.approx(0.85) and finding.threshold == 0.90
    assert efficiency_below_floor([group], floor=0.80) == ()


def test_latency_metrics_use_the_inverse() -> None:
    # time-to-train 100 min on 8 accelerators, 14 min on 64: E = 100*8 / (14*64)
    key = scaling_key(
        submitter="X", accelerator="H200", benchmark="llama", scenario="", metric="minutes"
    )
    pts = [
        point(key, "v1", 8, 100.0, higher_is_better=False),
        point(key, "v1", 64, 14.0, higher_is_better=False),
    ]
    (group,) = scaling_groups(pts)
    assert group.points[1].efficiency == pytest.approx(800 / 896)
    assert efficiency(14.0, 64, 100.0, 8, False) == pytest.approx(800 / 896)


def test_groups_are_split_by_version_and_key() -> None:
    other_stack = scaling_key(
        submitter="University-of-Florida",
        accelerator="NVIDIA B200-SXM-180GB",
        benchmark="llama2-70b-99",
        scenario="Server",
        metric="tokens_per_s",
        software_stack="TensorRT 10.14",
    )
    pts = [
        point(B200, "v5.1", 1, 1000.0),
        point(B200, "v5.1", 8, 7600.0),
        point(B200, "v6.0", 1, 1100.0),
        point(other_stack, "v5.1", 8, 8000.0),
    ]
    groups = scaling_groups(pts)
    assert [(g.key, g.version) for g in groups] == [(B200, "v5.1")]


def test_several_results_at_one_count_are_summarised_by_their_median() -> None:
    pts = [point(B200, "v5.1", 1, v) for v in (900.0, 1000.0, 1300.0)]
    (group,) = scaling_groups([*pts, point(B200, "v5.1", 8, 7600.0)])
    assert group.points[0].value == 1000.0 and group.points[0].n_results == 3
    assert group.points[1].efficiency == pytest.approx(0.95)


def test_points_with_wrong_counts_or_values_are_ignored() -> None:
    pts = [
        point(B200, "v5.1", 0, 1000.0),
        point(B200, "v5.1", 1, 1000.0),
        point(B200, "v5.1", 8, float("nan")),
        point(B200, "v5.1", 4, -3.0),
    ]
    assert scaling_groups(pts) == ()


def test_a_drop_against_the_baseline_version_is_a_finding() -> None:
    pts = [
        point(GB300, "v5.1", 72, 1000.0),
        point(GB300, "v5.1", 288, 3960.0),  # 0.99
        point(GB300, "v6.0", 72, 1500.0),
        point(GB300, "v6.0", 288, 5520.0),  # 0.92: fell 0.07, still above the floor
    ]
    groups = scaling_groups(pts)
    assert efficiency_below_floor(groups) == ()
    (drop,) = efficiency_drops(groups, baseline_version="v5.1", candidate_version="v6.0")
    assert drop.issue is ScalingIssue.DROP
    assert (drop.version, drop.baseline_version) == ("v6.0", "v5.1")
    assert drop.efficiency == pytest.approx(0.92) and drop.baseline_efficiency == pytest.approx(
        0.99
    )
    assert (
        efficiency_drops(groups, baseline_version="v5.1", candidate_version="v6.0", drop_floor=0.1)
        == ()
    )


def test_drops_compare_only_the_same_pair_of_counts() -> None:
    pts = [
        point(GB300, "v5.1", 4, 100.0),
        point(GB300, "v5.1", 72, 1782.0),  # E(72 | 4) = 0.99
        point(GB300, "v6.0", 72, 1500.0),
        point(GB300, "v6.0", 288, 4800.0),  # E(288 | 72) = 0.80: no v5.1 pair to compare
    ]
    groups = scaling_groups(pts)
    assert efficiency_drops(groups, baseline_version="v5.1", candidate_version="v6.0") == ()
    (low,) = efficiency_below_floor(groups)
    assert (low.version, low.accelerators, low.base_accelerators) == ("v6.0", 288, 72)


def test_findings_over_a_version_order_skip_versions_without_the_group() -> None:
    pts = [
        point(B200, "v4.1", 1, 1000.0),
        point(B200, "v4.1", 8, 7900.0),  # 0.9875
        point(B200, "v6.0", 1, 1000.0),
        point(B200, "v6.0", 8, 7300.0),  # 0.9125
    ]
    findings = scaling_findings(scaling_groups(pts), version_order=["v4.1", "v5.1", "v6.0"])
    (drop,) = findings
    assert drop.issue is ScalingIssue.DROP and drop.baseline_version == "v4.1"


def test_scaling_key_normalises_whitespace_and_none() -> None:
    a = scaling_key(
        submitter=" NVIDIA ", accelerator="NVIDIA  GB200", benchmark="b", scenario="s", metric="m"
    )
    b = scaling_key(
        submitter="NVIDIA",
        accelerator="NVIDIA GB200",
        benchmark="b",
        scenario="s",
        metric="m",
        software_stack=None,
    )
    assert a == b and a.software_stack == ""


def test_mixed_directions_in_one_group_are_refused() -> None:
    with pytest.raises(ValueError):
        scaling_groups(
            [point(B200, "v1", 1, 1.0), point(B200, "v1", 2, 2.0, higher_is_better=False)]
        )
    with pytest.raises(ValueError):
        efficiency(1.0, 0, 1.0, 1, True)
