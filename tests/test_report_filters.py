"""Unit tests of the report's formatting filters (exact strings)."""

from __future__ import annotations

import pytest

from tracker.report.filters import (
    FILTERS,
    format_count,
    format_direction,
    format_invalid,
    format_label,
    format_number,
    format_range,
    format_repeats,
    format_value,
)


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        (1997.4, "tokens/s", "1,997 tokens/s"),
        (0.0035212, "ms", "0.00352 ms"),
        (309777.6, "samples/s", "309,778 samples/s"),
        (12.3456, "ms", "12.35 ms"),
        (999.4, "ms", "999.4 ms"),
        (999.96, "ms", "1,000 ms"),
        (1.0, "x", "1 x"),
        (0.5, "", "0.5"),
        (0.0, "ms", "0 ms"),
        (-0.0, "ms", "0 ms"),
        (-2500.4, "W", "-2,500 W"),
        (1234567.0, "tokens/s", "1,234,567 tokens/s"),
    ],
)
def test_format_value_keeps_three_to_four_significant_digits(
    value: float, unit: str, expected: str
) -> None:
    assert format_value(value, unit) == expected


def test_format_number_writes_non_finite_values_as_words() -> None:
    assert format_number(float("nan")) == "nan"
    assert format_number(float("inf")) == "inf"


def test_format_range_puts_the_unit_once_after_the_high_value() -> None:
    assert format_range(1990.0, 2003.0, "tokens/s") == "1,990 \N{EN DASH} 2,003 tokens/s"


def test_format_direction_names_the_better_side() -> None:
    assert format_direction(True) == "higher is better"
    assert format_direction(False) == "lower is better"


@pytest.mark.parametrize(
    ("n", "singular", "plural", "expected"),
    [
        (0, "sample", None, "0 samples"),
        (1, "sample", None, "1 sample"),
        (1200, "sample", None, "1,200 samples"),
        (3, "series", "series", "3 series"),
    ],
)
def test_format_count_pluralises_and_groups_thousands(
    n: int, singular: str, plural: str | None, expected: str
) -> None:
    assert format_count(n, singular, plural) == expected


def test_format_repeats_shows_the_sample_count() -> None:
    assert format_repeats(3) == "n=3"


def test_format_invalid_counts_the_invalid_samples() -> None:
    assert format_invalid(2, 3) == "1 of 3 samples invalid"
    assert format_invalid(0, 1) == "1 of 1 sample invalid"


def test_format_label_replaces_empty_text_with_a_dash() -> None:
    assert format_label("") == "\N{EM DASH}"
    assert format_label("llama2-70b") == "llama2-70b"


def test_every_filter_is_registered_under_its_own_name() -> None:
    assert {name: fn.__name__ for name, fn in FILTERS.items()} == {name: name for name in FILTERS}
