"""Cost per token from an optional price book (SPEC §1, §4).

A price book is a TOML file of accelerator names and their price per
accelerator-hour in dollars, one per line::

    # $/accelerator-hour
    "NVIDIA B200-SXM-180GB" = 6.25
    "NVIDIA H200-SXM-141GB" = 3.80

``$/1M output tokens = price_per_hour × accelerators / (tokens_per_s × 3600) × 1e6``;
the same hourly cost over the input tokens/s, or over input + output tokens/s, gives
$/1M input tokens and $/1M tokens in all (:func:`token_costs`).

Names are matched exactly, up to case and runs of whitespace; there is no
substring matching ("B200" would also match "GB200").
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass

from tracker.errors import ConfigError

__all__ = [
    "CostEstimate",
    "TokenCosts",
    "cost_per_million_tokens",
    "estimate_cost",
    "normalise_accelerator",
    "parse_price_book",
    "price_for",
    "token_costs",
]


@dataclass(frozen=True, slots=True)
class CostEstimate:
    """Dollars per million output tokens of one result, with what it was computed from."""

    accelerator: str
    price_per_hour: float
    accelerators: int
    tokens_per_s: float
    usd_per_million_tokens: float


def normalise_accelerator(name: str) -> str:
    """The form price-book names are matched in: case-folded, whitespace collapsed."""
    return " ".join(name.split()).casefold()


def _price(source: str, name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{source}: the price of {name!r} must be a number of $/hour")
    price = float(value)
    if not math.isfinite(price) or price <= 0.0:
        raise ConfigError(f"{source}: the price of {name!r} must be positive, not {value!r}")
    return price


def parse_price_book(data: bytes, *, source: str = "price book") -> dict[str, float]:
    """Accelerator → $/accelerator-hour from TOML bytes, keys as :func:`normalise_accelerator`.

    Raises :class:`~tracker.errors.ConfigError` naming ``source`` for invalid TOML,
    a non-numeric or non-positive price, or two names that normalise alike.
    """
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{source}: not a valid TOML price book ({exc})") from exc
    book: dict[str, float] = {}
    for name, value in table.items():
        key = normalise_accelerator(name)
        if not key:
            raise ConfigError(f"{source}: an accelerator name is empty")
        if key in book:
            raise ConfigError(f"{source}: {name!r} is listed twice")
        book[key] = _price(source, name, value)
    return book


def price_for(book: Mapping[str, float], accelerator: str) -> float | None:
    """The price of ``accelerator`` in a parsed book, or ``None`` when it is not listed."""
    return book.get(normalise_accelerator(accelerator))


def cost_per_million_tokens(
    *, price_per_hour: float, accelerators: int, tokens_per_s: float
) -> float | None:
    """``price × accelerators / (tokens/s × 3600) × 1e6``; ``None`` without throughput."""
    if accelerators < 1 or price_per_hour <= 0.0:
        raise ValueError("need at least one accelerator and a positive price")
    if not math.isfinite(tokens_per_s) or tokens_per_s <= 0.0:
        return None
    return price_per_hour * accelerators / (tokens_per_s * 3600.0) * 1e6


def estimate_cost(
    book: Mapping[str, float], *, accelerator: str, accelerators: int, tokens_per_s: float
) -> CostEstimate | None:
    """The cost of one result; ``None`` for an unpriced accelerator or no throughput."""
    price = price_for(book, accelerator)
    if price is None:
        return None
    usd = cost_per_million_tokens(
        price_per_hour=price, accelerators=accelerators, tokens_per_s=tokens_per_s
    )
    if usd is None:
        return None
    return CostEstimate(accelerator, price, accelerators, tokens_per_s, usd)


@dataclass(frozen=True, slots=True)
class TokenCosts:
    """Dollars per million input, output and total tokens of one result (``None``: unknown)."""

    input_usd: float | None
    output_usd: float | None
    total_usd: float | None


def token_costs(estimate: CostEstimate, *, input_tokens_per_s: float | None) -> TokenCosts:
    """The hourly cost of ``estimate`` over its output, input and input + output tokens/s.

    ``input_tokens_per_s`` is the input throughput at the same load (``None`` when the
    files do not say: then only the output cost is known).
    """

    def per_million(tokens_per_s: float) -> float | None:
        return cost_per_million_tokens(
            price_per_hour=estimate.price_per_hour,
            accelerators=estimate.accelerators,
            tokens_per_s=tokens_per_s,
        )

    output = per_million(estimate.tokens_per_s)
    if input_tokens_per_s is None or not math.isfinite(input_tokens_per_s):
        return TokenCosts(None, output, None)
    total = per_million(estimate.tokens_per_s + input_tokens_per_s)
    return TokenCosts(per_million(input_tokens_per_s), output, total)
