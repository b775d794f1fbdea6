"""Unit tests of the report's formatting filters (exact strings)."""

from __future__ import annotations

import json

import pytest

from tracker.records.results import Configuration
from tracker.report.filters import (
    FILTERS,
    configuration_items,
    evidence_items,
    evidence_json,
    format_change,
    format_ci,
    format_configuration_change,
    format_count,
    format_direction,
    format_efficiency,
    format_evidence,
    format_gain,
    format_invalid,
    format_kind,
    format_label,
    format_number,
    format_p,
    format_range,
    format_repeats,
    format_twins,
    format_value,
    format_versions,
    sort_value,
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


# Filters of the analysis pages


@pytest.mark.parametrize(
    ("delta", "higher_is_better", "expected"),
    [
        (12.34, True, "+12.3% better"),
        (-4.06, True, "\N{MINUS SIGN}4.1% worse"),
        (-10.0, False, "\N{MINUS SIGN}10.0% better"),
        (3.0, False, "+3.0% worse"),
        (0.01, True, "0.0% (no change)"),
        (None, True, "\N{EM DASH}"),
        (float("nan"), True, "\N{EM DASH}"),
    ],
)
def test_format_change_says_better_or_worse_by_direction(
    delta: float | None, higher_is_better: bool, expected: str
) -> None:
    assert format_change(delta, higher_is_better) == expected


def test_format_ci_shows_both_ends_with_units() -> None:
    assert format_ci((-2.14, 5.3)) == "\N{MINUS SIGN}2.1% to +5.3%"
    assert format_ci(None) == "\N{EM DASH}"
    assert format_ci([None, 1.0]) == "\N{EM DASH}"


@pytest.mark.parametrize(
    ("value", "name", "expected"),
    [
        (0.00321, "p", "p=0.0032"),
        (0.2, "q", "q=0.200"),
        (0.00001, "p", "p<0.0001"),
        (None, "q", "\N{EM DASH}"),
    ],
)
def test_format_p(value: float | None, name: str, expected: str) -> None:
    assert format_p(value, name) == expected


def test_format_gain_is_a_factor_with_its_direction() -> None:
    assert format_gain(2.01) == "2.01× (+101.0% better)"
    assert format_gain(0.9) == "0.90× (\N{MINUS SIGN}10.0% worse)"
    assert format_gain(1.0) == "1.00× (no change)"
    assert format_gain(None) == "\N{EM DASH}"


def test_format_efficiency_kind_versions_and_sort_value() -> None:
    assert format_efficiency(0.934) == "93.4%"
    assert format_kind("scaling_efficiency") == "Scaling efficiency"
    assert format_kind("no_change") == "No change"
    assert format_versions("v5.1", "v6.0") == "v5.1 → v6.0"
    assert format_versions(None, "v6.0") == "v6.0"
    assert sort_value(1.5) == "1.5"
    assert sort_value(None) == ""
    assert sort_value(float("inf")) == ""


def test_sort_value_keeps_nine_significant_digits() -> None:
    assert sort_value(-8.832458637373296) == "-8.83245864"
    assert sort_value(3.028007359895416e-09) == "3.02800736e-09"
    assert sort_value(8) == "8"


def test_format_evidence_reads_values_plainly() -> None:
    assert format_evidence("efficiency_drop") == "efficiency_drop"
    assert format_evidence(0.9367518374153588) == "0.936752"
    assert format_evidence(True) == "true" and format_evidence(20) == "20"
    assert format_evidence(None) == format_evidence([]) == format_evidence("") == "\N{EM DASH}"
    assert format_evidence({"b": [1, 2.5], "a": "<x>"}) == "a: <x>; b: 1, 2.5"


def test_evidence_items_leave_out_columns_and_empty_values_but_the_csv_keeps_them() -> None:
    evidence = {"benchmark": "resnet50", "p_value": 0.01, "g": 0.1416130325535896, "spikes": []}
    assert evidence_items(evidence) == [("log change g", "0.141613")]
    assert json.loads(evidence_json(evidence)) == {"g": 0.1416130325535896, "spikes": []}


def test_evidence_items_have_readable_names() -> None:
    evidence = {"welch_t_lo": 1.5, "detectable_pct": 9.516258, "n_baseline": 3, "p_sided": 0.01}
    assert evidence_items(evidence) == [
        ("detectable change", "9.51626%"),
        ("samples, baseline", "3"),
        ("side tested", "0.01"),
        ("welch t, low", "1.5"),
    ]


def test_a_configuration_change_is_shown_as_no_software_change() -> None:
    assert format_configuration_change(4401.5) == "+4401.5% (not a software change)"
    assert format_configuration_change(-97.9) == "\N{MINUS SIGN}97.9% (not a software change)"
    assert format_configuration_change(None) == "\N{EM DASH}"


def test_twins_are_named_by_benchmark_scenario_and_system() -> None:
    keys = ["mlperf-inference|Dell/Dell_Pro_Max_GB10x1|yolo-99|MultiStream||p99_ms", "odd"]
    assert format_twins(keys) == "yolo-99 MultiStream (Dell/Dell_Pro_Max_GB10x1), odd"


def test_configuration_items_say_what_the_round_states() -> None:
    amd = Configuration(
        accelerator="AMD Instinct MI355X 288GB HBM3e (x94)",
        accelerators_total=96,
        nodes=12,
        accelerators_per_node=8,
        accelerators_stated=94,
        host_cpu="AMD EPYC 9575F",
        host_cpus_per_node=2,
        host_cores=64,
        tgp_w=1400.0,
        availability="available",
        division="closed",
    )
    assert configuration_items(amd) == [
        ("Accelerators", "96 × AMD Instinct MI355X 288GB HBM3e (x94) (the description says 94)"),
        ("Nodes", "12 nodes, 8 accelerators per node"),
        ("Host CPUs", "2 × AMD EPYC 9575F per node, 64 cores each"),
        ("Power", "performance (no power cap stated), TGP 1400 W"),
        ("Availability", "available"),
        ("Division", "closed"),
    ]
    cpu = Configuration(accelerator="NVIDIA GB10", accelerators_total=1, cpu_only=True)
    assert configuration_items(cpu)[0] == ("Accelerators", "none: CPU only")
    assert ("Power", "MaxQ") in configuration_items(Configuration(power_mode="MaxQ"))


def test_long_identifiers_may_wrap_after_underscores_and_stay_escaped() -> None:
    from tracker.report.filters import format_breakable

    assert str(format_breakable("tokens_per_s")) == "tokens_<wbr>per_<wbr>s"
    assert str(format_breakable("<b>_x")) == "&lt;b&gt;_<wbr>x"


def test_versions_are_coloured_light_to_dark_never_red_or_green() -> None:
    from tracker.report.charts import _COLORS, version_color

    three = [version_color(i, 3) for i in range(3)]
    assert three == ["#6baed6", "#2171b5", "#08306b"]
    assert version_color(0, 1) == "#08306b"
    assert len({version_color(i, 9) for i in range(9)}) == 5
    assert not {"#cf222e", "#1a7f37"} & {*_COLORS, *three}


def test_gains_are_drawn_on_a_ratio_axis() -> None:
    from tracker.report.charts import gain_bar_chart

    chart = gain_bar_chart(
        "g", "t", ["a", "b", "c"], [44.0, 1.6, 0.5], x_title="x", hover=["", "", ""]
    )
    (trace,) = chart.spec["data"]
    # log10 of each gain: a 2× loss is as long as a 2× gain; +4,400% does not flatten the rest.
    assert trace["x"] == [1.64345, 0.20412, -0.30103]
    assert trace["marker"]["color"] == ["#1a7f37", "#1a7f37", "#cf222e"]
    axis = chart.spec["layout"]["xaxis"]
    assert axis["ticktext"] == ["0.5×", "1×", "2×", "5×", "10×", "20×"]
    narrow = gain_bar_chart("g", "t", ["a"], [1.6], x_title="x", hover=[""])
    assert narrow.spec["layout"]["xaxis"]["ticktext"] == ["1×", "1.25×", "1.5×"]
