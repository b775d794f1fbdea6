"""Software gains per series and aggregated per system and per benchmark."""

from __future__ import annotations

import math

import pytest

from tracker.stats import (
    SampleRow,
    SeriesSamples,
    aggregate_gains,
    consecutive_gains,
    series_from_rows,
    series_gain,
    software_gains,
)


def series(
    key: str,
    versions: list[str],
    values: list[float],
    *,
    hib: bool = True,
    system: str = "GB200 x72",
    benchmark: str = "llama2-70b-99",
) -> SeriesSamples:
    return SeriesSamples(key, tuple(versions), tuple((v,) for v in values), hib, system, benchmark)


def test_gain_of_one_platform_between_two_rounds() -> None:
    s = series("gb200/llama/Offline", ["v5.1", "v6.0"], [10_000.0, 16_000.0])
    gain = series_gain(s, "v5.1", "v6.0")
    assert gain is not None
    assert gain.gain == pytest.approx(1.6) and gain.delta_pct == pytest.approx(60.0)
    assert (gain.baseline, gain.candidate, gain.system) == ("v5.1", "v6.0", "GB200 x72")


def test_latency_gain_is_the_inverse_ratio() -> None:
    s = series("lat", ["a", "b"], [200.0, 100.0], hib=False)
    gain = series_gain(s, "a", "b")
    assert gain is not None and gain.gain == pytest.approx(2.0) and gain.delta_pct == -50.0


def test_two_configurations_that_differ_only_in_software_within_a_round() -> None:
    rows = [
        SampleRow("hpe-dl385/llama/Server", "TensorRT 10.11", 3000.0, True, "HPE DL385", "llama"),
        SampleRow("hpe-dl385/llama/Server", "TensorRT 10.14", 3300.0, True, "HPE DL385", "llama"),
    ]
    (s,) = series_from_rows(rows, version_order=["TensorRT 10.11", "TensorRT 10.14"])
    (gain,) = software_gains([s], "TensorRT 10.11", "TensorRT 10.14")
    assert gain.gain == pytest.approx(1.1) and gain.system == "HPE DL385"


def test_series_without_both_versions_have_no_gain() -> None:
    s = series("x", ["v5.1"], [1.0])
    assert series_gain(s, "v5.1", "v6.0") is None
    zero = series("z", ["a", "b"], [0.0, 1.0])
    assert series_gain(zero, "a", "b") is None
    assert software_gains([s, zero], "v5.1", "v6.0") == ()


def test_repeats_use_the_median() -> None:
    s = SeriesSamples("r", ("a", "b"), ((1.0, 9.0, 2.0), (4.0, 3.0, 100.0)), True)
    gain = series_gain(s, "a", "b")
    assert gain is not None and gain.gain == pytest.approx(2.0)


def test_aggregates_are_geometric_means_with_counts() -> None:
    data = [
        series("s1", ["v5.1", "v6.0"], [100.0, 200.0], system="A", benchmark="llama"),
        series("s2", ["v5.1", "v6.0"], [100.0, 50.0], system="A", benchmark="dlrm"),
        series("s3", ["v5.1", "v6.0"], [100.0, 160.0], system="B", benchmark="llama"),
        series("s4", ["v5.1", "v6.0"], [10.0, 40.0], hib=False, system="B", benchmark="dlrm"),
    ]
    gains = software_gains(data, "v5.1", "v6.0")
    by_system = {s.group: s for s in aggregate_gains(gains, by="system")}
    assert by_system["A"].geometric_mean == pytest.approx(1.0) and by_system["A"].count == 2
    assert by_system["B"].geometric_mean == pytest.approx(math.sqrt(1.6 * 0.25))
    assert (by_system["B"].min_gain, by_system["B"].max_gain) == pytest.approx((0.25, 1.6))
    by_benchmark = {s.group: s for s in aggregate_gains(gains, by="benchmark")}
    assert by_benchmark["llama"].geometric_mean == pytest.approx(math.sqrt(2.0 * 1.6))
    assert by_benchmark["llama"].count == 2
    custom = aggregate_gains(gains, by=lambda g: "all")
    assert [(s.group, s.count) for s in custom] == [("all", 4)]
    with pytest.raises(ValueError):
        aggregate_gains(gains, by="submitter")


def test_consecutive_gains_follow_the_version_order() -> None:
    s = series("s", ["v4.1", "v5.1", "v6.0"], [100.0, 125.0, 200.0])
    assert [(g.baseline, g.candidate, round(g.gain, 3)) for g in consecutive_gains([s])] == [
        ("v4.1", "v5.1", 1.25),
        ("v5.1", "v6.0", 1.6),
    ]
