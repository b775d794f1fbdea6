"""The settings of an analysis run as stored with its findings, and read back.

``tracker analyze`` stores its settings with the findings it wrote
(:func:`recorded_settings`); ``tracker report`` analyses with the settings of the
latest stored run, or the defaults when none was stored, overridden by its own
options (:func:`report_settings`, :func:`settings_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from tracker.analysis_records import AnalysisRunSettings

if TYPE_CHECKING:
    from tracker.analyze.run import AnalysisSettings

__all__ = [
    "OPTION_NAMES",
    "ChosenSettings",
    "ReportOverrides",
    "recorded_settings",
    "report_settings",
    "settings_line",
    "settings_of",
]


def recorded_settings(
    settings: AnalysisSettings, price_book: Mapping[str, float] | None, source: str = ""
) -> AnalysisRunSettings:
    """What is stored of one run: the target, the floors, the resolved prices, the rest."""
    other = {
        "interpolation": settings.interpolation,
        "family_method": settings.family_method,
        "compare": asdict(settings.compare),
        "change_points": asdict(settings.change_points),
        "drift": asdict(settings.drift),
        "per_series_thresholds": settings.thresholds is not None,
    }
    return AnalysisRunSettings(
        target_tokens_per_s_per_user=settings.target_tokens_per_s_per_user,
        efficiency_floor=settings.efficiency_floor,
        efficiency_drop_floor=settings.efficiency_drop_floor,
        price_book=None if price_book is None else dict(sorted(price_book.items())),
        price_book_source=source if price_book is not None else "",
        other=other,
    )


def settings_of(stored: AnalysisRunSettings) -> AnalysisSettings:
    """The analysis settings a stored run's target and floors stand for (the rest default)."""
    from tracker.analyze.run import AnalysisSettings

    return AnalysisSettings(
        target_tokens_per_s_per_user=stored.target_tokens_per_s_per_user,
        efficiency_floor=stored.efficiency_floor,
        efficiency_drop_floor=stored.efficiency_drop_floor,
    )


@dataclass(frozen=True, slots=True)
class ReportOverrides:
    """The analysis options ``tracker report`` was given; ``None``: not given."""

    target_tokens_per_s_per_user: float | None = None
    efficiency_floor: float | None = None
    price_book: Mapping[str, float] | None = None
    price_book_source: str = ""


@dataclass(frozen=True, slots=True)
class ChosenSettings:
    """The settings a report uses: ``run`` (``analysed_at``: the stored run's, ``None`` for
    the defaults) and the report options that override them."""

    run: AnalysisRunSettings
    overridden: tuple[str, ...] = ()


def report_settings(
    stored: AnalysisRunSettings | None, overrides: ReportOverrides | None = None
) -> ChosenSettings:
    """The latest stored run's settings (else the defaults), with the report's options over them."""
    from tracker.analyze.run import AnalysisSettings

    given = overrides or ReportOverrides()
    run = stored or recorded_settings(AnalysisSettings(), None)
    changes: dict[str, Any] = {}
    if given.target_tokens_per_s_per_user is not None:
        changes["target_tokens_per_s_per_user"] = given.target_tokens_per_s_per_user
    if given.efficiency_floor is not None:
        changes["efficiency_floor"] = given.efficiency_floor
    if given.price_book is not None:
        changes["price_book"] = dict(sorted(given.price_book.items()))
        changes["price_book_source"] = given.price_book_source
    names = tuple(OPTION_NAMES[name] for name in OPTION_NAMES if name in changes)
    return ChosenSettings(replace(run, **changes), names)


OPTION_NAMES = {
    "target_tokens_per_s_per_user": "--target-tokens-per-s-per-user",
    "efficiency_floor": "--efficiency-floor",
    "price_book": "--price-book",
}
"""The options of ``tracker analyze`` and ``tracker report`` that set each setting."""


def settings_line(chosen: ChosenSettings) -> str:
    """The line ``tracker report`` prints: which settings it uses, and from where."""
    run = chosen.run
    at = run.analysed_at
    origin = (
        f"those of the analysis stored {at:%Y-%m-%d %H:%M} UTC"
        if at is not None
        else "no stored analysis, the defaults"
    )
    if chosen.overridden:
        origin += f", overridden by {', '.join(chosen.overridden)}"
    book = "no price book"
    if run.price_book is not None:
        book = f"price book {run.price_book_source or '(file not named)'}"
    return (
        f"Settings: {origin}: target {run.target_tokens_per_s_per_user:g} tokens/s/user, "
        f"efficiency floor {run.efficiency_floor:g}, {book}"
    )
