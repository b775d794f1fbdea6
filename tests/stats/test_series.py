"""Series: building them from plain rows and from the store's points."""

from __future__ import annotations

import math

import pytest

from tracker.records.results import SeriesPoint
from tracker.stats import SampleRow, SeriesSamples, goodness, series_from_points, series_from_rows


def test_rows_become_series_in_the_explicit_version_order() -> None:
    rows = [
        SampleRow("a", "2.0.13", 10.0, True, "sys", "bench"),
        SampleRow("a", "2.0.9", 9.0, True, "sys", "bench"),
        SampleRow("a", "2.0.13", 11.0, True, "sys", "bench"),
        SampleRow("b", "2.0.9", 1.0, False),
    ]
    a, b = series_from_rows(rows, version_order=["2.0.9", "2.0.12", "2.0.13"])
    assert a.versions == ("2.0.9", "2.0.13") and a.samples == ((9.0,), (10.0, 11.0))
    assert (a.system, a.benchmark, a.higher_is_better) == ("sys", "bench", True)
    assert b.versions == ("2.0.9",) and not b.higher_is_better
    assert a.levels() == (9.0, 10.5)


def test_versions_outside_the_order_and_mixed_directions_are_refused() -> None:
    with pytest.raises(ValueError, match="not in version_order"):
        series_from_rows([SampleRow("a", "9.9", 1.0, True)], version_order=["1.0"])
    with pytest.raises(ValueError, match="both directions"):
        series_from_rows(
            [SampleRow("a", "1.0", 1.0, True), SampleRow("a", "1.0", 1.0, False)],
            version_order=["1.0"],
        )


def test_store_points_become_series() -> None:
    def point(version: str, values: tuple[float, ...]) -> SeriesPoint:
        return SeriesPoint(
            software="nim", version=version, system="b200x4", benchmark="llama",
            scenario="Server", workload="", metric="tokens_per_s", unit="tokens/s",
            higher_is_better=True, values=values, valid_count=len(values), is_example=False,
        )  # fmt: skip

    (s,) = series_from_points(
        [point("2.0.12", (1997.0,)), point("2.0.11", (718.0, 720.0))],
        version_order=["2.0.11", "2.0.12"],
    )
    assert s.key == "nim|b200x4|llama|Server||tokens_per_s"
    assert s.versions == ("2.0.11", "2.0.12") and s.samples == ((718.0, 720.0), (1997.0,))


def test_series_samples_are_validated() -> None:
    with pytest.raises(ValueError):
        SeriesSamples("x", ("a", "b"), ((1.0,),), True)
    with pytest.raises(ValueError):
        SeriesSamples("x", ("a", "a"), ((1.0,), (2.0,)), True)
    s = SeriesSamples("x", ("a", "b"), ((1.0,), ()), True)
    assert s.samples_at("c") is None and math.isnan(s.levels()[1])


def test_goodness_is_direction_aware_and_refuses_non_positive_values() -> None:
    assert goodness(100.0, 200.0, True) == pytest.approx(math.log(2))
    assert goodness(100.0, 200.0, False) == pytest.approx(-math.log(2))
    with pytest.raises(ValueError):
        goodness(0.0, 1.0, True)
