"""Which settings a report uses: the stored run's, else the defaults, under its own options."""

from __future__ import annotations

from datetime import UTC, datetime

from tracker.analyze.settings import (
    AnalysisSettings,
    ReportOverrides,
    recorded_settings,
    report_settings,
    settings_line,
    settings_of,
)
from tracker.records.findings import AnalysisRunSettings

STORED = AnalysisRunSettings(
    target_tokens_per_s_per_user=30.0,
    efficiency_floor=0.85,
    efficiency_drop_floor=0.04,
    price_book={"b200": 6.25},
    price_book_source="prices.toml",
    analysed_at=datetime(2026, 12, 3, 16, 19, 33, tzinfo=UTC),
)


def test_a_run_records_its_target_floors_prices_and_other_knobs() -> None:
    run = recorded_settings(
        AnalysisSettings(target_tokens_per_s_per_user=30.0, efficiency_floor=0.8),
        {"b200": 6.25},
        "prices.toml",
    )
    assert (run.target_tokens_per_s_per_user, run.efficiency_floor) == (30.0, 0.8)
    assert (run.price_book, run.price_book_source) == ({"b200": 6.25}, "prices.toml")
    assert run.other["interpolation"] == "pchip" and run.other["compare"]["q_level"] == 0.05
    assert recorded_settings(AnalysisSettings(), None, "ignored.toml").price_book_source == ""


def test_the_stored_settings_are_used_and_named() -> None:
    chosen = report_settings(STORED)
    assert chosen.run == STORED and chosen.overridden == ()
    assert settings_of(chosen.run).target_tokens_per_s_per_user == 30.0
    assert settings_of(chosen.run).efficiency_drop_floor == 0.04
    assert settings_line(chosen) == (
        "Settings: those of the analysis stored 2026-12-03 16:19 UTC: target 30 tokens/s/user, "
        "efficiency floor 0.85, price book prices.toml"
    )


def test_report_options_override_and_are_listed_in_option_order() -> None:
    given = ReportOverrides(
        target_tokens_per_s_per_user=40.0, price_book={"h200": 3.8}, price_book_source="b.toml"
    )
    chosen = report_settings(STORED, given)
    assert chosen.overridden == ("--target-tokens-per-s-per-user", "--price-book")
    assert chosen.run.target_tokens_per_s_per_user == 40.0
    assert chosen.run.efficiency_floor == 0.85  # not given: the stored one
    assert (chosen.run.price_book, chosen.run.price_book_source) == ({"h200": 3.8}, "b.toml")
    assert chosen.run.analysed_at == STORED.analysed_at


def test_without_a_stored_run_the_defaults_are_used_and_said() -> None:
    chosen = report_settings(None, ReportOverrides(efficiency_floor=0.7))
    assert chosen.run.analysed_at is None and chosen.run.price_book is None
    assert settings_line(chosen) == (
        "Settings: no stored analysis, the defaults, overridden by --efficiency-floor: "
        "target 50 tokens/s/user, efficiency floor 0.7, no price book"
    )
