"""Cost per 1M tokens: the filters that show it, the cost of input, output and all tokens,
and the input tokens/s of a sweep point."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from tracker.records.findings import AnalysisRunSettings
from tracker.report.filters import FILTERS, format_usd, format_usd_range
from tracker.report.inputs import settings_used
from tracker.stats.serving import CostEstimate, token_costs
from tracker.store.read import sweep_sample


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.851852, "$1.85"),  # as `tracker analyze` prints it (3 significant digits)
        (1.8, "$1.8"),
        (0.0377771, "$0.0378"),
        (0.0000123456, "$0.0000123"),  # never an exponent
        (999.4, "$999"),
        (12345.6, "$12,346"),
        (None, "\N{EM DASH}"),
        (math.nan, "\N{EM DASH}"),
    ],
)
def test_dollars_have_three_significant_digits(value: float | None, text: str) -> None:
    assert format_usd(value) == text
    if value is not None and math.isfinite(value) and value < 999.5 and value > 0.001:
        assert text == f"${value:.3g}"


def test_a_cost_range_names_both_ends() -> None:
    assert format_usd_range(1.27, 1.3) == "$1.27 \N{EN DASH} $1.3"
    assert format_usd_range(None, 1.3) == "\N{EM DASH}"
    assert FILTERS["format_usd"] is format_usd and FILTERS["format_usd_range"] is format_usd_range


def test_input_output_and_total_costs_share_the_hourly_price() -> None:
    # 4 accelerators at $4/h serving 3,200 output and 6,400 input tokens/s
    estimate = CostEstimate("node", 4.0, 4, 3200.0, 16.0 / (3200.0 * 3600.0) * 1e6)
    costs = token_costs(estimate, input_tokens_per_s=6400.0)
    assert costs.output_usd == pytest.approx(estimate.usd_per_million_tokens)
    assert costs.input_usd == pytest.approx(16.0 / (6400.0 * 3600.0) * 1e6)
    assert costs.total_usd == pytest.approx(16.0 / (9600.0 * 3600.0) * 1e6)
    unknown = token_costs(estimate, input_tokens_per_s=None)
    assert unknown.input_usd is None and unknown.total_usd is None and unknown.output_usd


def _point(extra: dict[str, object]) -> float | None:
    labels = ("sweep", "chat/c4", "sw", "1.0", "acme/node", "llm", "concurrency", None, 4, 4.0)
    return sweep_sample(*labels, 1000.0, True, extra).input_tokens_per_s


def test_a_point_input_rate_is_the_tool_figure_else_from_the_mean_lengths() -> None:
    assert _point({"input_tokens_per_s": 5000.0, "isl_measured": 1.0, "osl_measured": 1.0}) == 5000
    assert _point({"isl_measured": 2048.0, "osl_measured": 512.0}) == 4000.0
    assert _point({"isl_requested": 100.0, "osl_requested": 400.0}) == 250.0
    assert _point({"isl_measured": 2048.0}) is None
    assert _point({}) is None


def test_the_page_settings_list_the_prices_and_when_the_analysis_ran() -> None:

    run = AnalysisRunSettings(
        30.0,
        0.9,
        0.05,
        {"b": 2.0, "a": 1.0},
        "p.toml",
        analysed_at=datetime(2026, 1, 2, tzinfo=UTC),
    )
    used = settings_used(run, ("--price-book",))
    assert [(p.accelerator, p.usd_per_hour) for p in used.prices] == [("a", 1.0), ("b", 2.0)]
    assert (used.analysed_at, used.has_price_book, used.overridden) == (
        "2026-01-02T00:00:00Z",
        True,
        ("--price-book",),
    )
    defaults = settings_used(AnalysisRunSettings(50.0, 0.9, 0.05))
    assert (defaults.analysed_at, defaults.has_price_book, defaults.prices) == ("", False, ())
