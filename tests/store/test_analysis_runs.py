"""An analysis run's settings are stored with its findings and read back, newest first."""

from __future__ import annotations

from datetime import UTC, datetime

from tracker.records.findings import AnalysisRunSettings, FindingRecord
from tracker.store.facade import Store


def _finding(fingerprint: str) -> FindingRecord:
    return FindingRecord(
        fingerprint=fingerprint, kind="regression", series_key=f"s|{fingerprint}", method="t"
    )


def test_no_stored_analysis_has_no_settings(store: Store) -> None:
    assert store.latest_analysis_settings() is None
    store.save_findings([_finding("a")], analysed_at=datetime(2026, 1, 1, tzinfo=UTC))
    assert store.latest_analysis_settings() is None  # findings saved without settings


def test_the_latest_run_settings_come_back_as_stored(store: Store) -> None:
    first = AnalysisRunSettings(
        target_tokens_per_s_per_user=50.0, efficiency_floor=0.9, efficiency_drop_floor=0.05
    )
    second = AnalysisRunSettings(
        target_tokens_per_s_per_user=30.0,
        efficiency_floor=0.85,
        efficiency_drop_floor=0.05,
        price_book={"nvidia b200-sxm-180gb": 6.25, "example-node": 4.0},
        price_book_source="prices.toml",
        other={"interpolation": "pchip", "compare": {"q_level": 0.05}},
    )
    early, late = datetime(2026, 1, 1, 8, tzinfo=UTC), datetime(2026, 1, 2, 9, 30, tzinfo=UTC)
    store.save_findings([_finding("a")], analysed_at=early, settings=first)
    store.save_findings([_finding("a"), _finding("b")], analysed_at=late, settings=second)
    found = store.latest_analysis_settings()
    assert found is not None
    assert found.analysed_at == late
    assert (found.target_tokens_per_s_per_user, found.efficiency_floor) == (30.0, 0.85)
    assert found.price_book == {"example-node": 4.0, "nvidia b200-sxm-180gb": 6.25}
    assert found.price_book_source == "prices.toml"
    assert found.other == {"interpolation": "pchip", "compare": {"q_level": 0.05}}
    store.save_findings([], analysed_at=late, settings=first)
    newest = store.latest_analysis_settings()
    assert newest is not None and newest.price_book is None and newest.price_book_source == ""
