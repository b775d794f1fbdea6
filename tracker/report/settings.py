"""What the report says of its analysis settings: which, and where each came from.

The report analyses with the settings of the latest stored analysis (``tracker
analyze`` stores them with its findings), or the defaults when none was stored;
``tracker report`` options override them and are named (:class:`SettingsUsed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC

from tracker.analysis_records import AnalysisRunSettings

__all__ = ["PriceRow", "SettingsUsed", "settings_used"]


@dataclass(frozen=True, slots=True)
class PriceRow:
    """One price of the price book."""

    accelerator: str = field(metadata={"help": "Accelerator or system name, as matched."})
    usd_per_hour: float = field(metadata={"help": "Dollars per accelerator-hour."})


@dataclass(frozen=True, slots=True)
class SettingsUsed:
    """The analysis settings of the report's pages, and where they came from."""

    target_tokens_per_s_per_user: float = field(
        metadata={"help": "Interactivity target where sweeps are read, tokens/s/user."}
    )
    efficiency_floor: float = field(metadata={"help": "Scaling efficiency below this: a finding."})
    efficiency_drop_floor: float = field(
        metadata={"help": "A fall of efficiency past this against the previous version: a finding."}
    )
    has_price_book: bool = field(metadata={"help": "Whether costs were computed."})
    price_book_source: str = field(metadata={"help": "The price book's file, as given."})
    prices: tuple[PriceRow, ...] = field(metadata={"help": "The prices used, by name."})
    stored: bool = field(
        metadata={"help": "From a stored analysis (`tracker analyze`); false: the defaults."}
    )
    analysed_at: str = field(
        metadata={"help": "When it ran (UTC, ISO 8601; not in report.json); empty: none stored."}
    )
    overridden: tuple[str, ...] = field(
        metadata={"help": "The `tracker report` options that override the stored settings."}
    )


def settings_used(run: AnalysisRunSettings, overridden: Sequence[str] = ()) -> SettingsUsed:
    """The page record of ``run`` (the stored settings, or the defaults when its
    ``analysed_at`` is ``None``) with the report options in ``overridden``."""
    at = run.analysed_at
    book = run.price_book
    return SettingsUsed(
        target_tokens_per_s_per_user=run.target_tokens_per_s_per_user,
        efficiency_floor=run.efficiency_floor,
        efficiency_drop_floor=run.efficiency_drop_floor,
        has_price_book=book is not None,
        price_book_source=run.price_book_source,
        prices=tuple(PriceRow(name, price) for name, price in sorted((book or {}).items())),
        stored=at is not None,
        analysed_at="" if at is None else at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        overridden=tuple(overridden),
    )
