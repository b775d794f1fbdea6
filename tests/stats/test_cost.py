"""Price books and cost per million output tokens."""

from __future__ import annotations

import pytest

from tracker.errors import ConfigError
from tracker.stats import cost_per_million_tokens, estimate_cost, parse_price_book, price_for

BOOK = b"""
# $/accelerator-hour
"NVIDIA B200-SXM-180GB" = 6.25
"NVIDIA  H200-SXM-141GB" = 4
"""


def test_cost_per_million_tokens_follows_the_spec_formula() -> None:
    # 4 GPUs at $6.25/h serving 718 tok/s: 25 $/h / (718 * 3600 tok/h) * 1e6
    usd = cost_per_million_tokens(price_per_hour=6.25, accelerators=4, tokens_per_s=718.0)
    assert usd == pytest.approx(25.0 / (718.0 * 3600.0) * 1e6)
    assert usd == pytest.approx(9.672, abs=1e-3)
    faster = cost_per_million_tokens(price_per_hour=6.25, accelerators=4, tokens_per_s=1997.0)
    assert usd is not None and faster == pytest.approx(usd * 718.0 / 1997.0)


def test_price_book_names_match_up_to_case_and_spaces() -> None:
    book = parse_price_book(BOOK, source="prices.toml")
    assert price_for(book, "nvidia b200-sxm-180gb") == 6.25
    assert price_for(book, "NVIDIA H200-SXM-141GB") == 4.0
    assert price_for(book, "B200") is None  # no substring matching (it would hit GB200)


def test_estimate_cost_is_none_without_price_or_throughput() -> None:
    book = parse_price_book(BOOK)
    est = estimate_cost(book, accelerator="NVIDIA B200-SXM-180GB", accelerators=8, tokens_per_s=1e4)
    assert est is not None and est.usd_per_million_tokens == pytest.approx(
        6.25 * 8 / (1e4 * 3600) * 1e6
    )
    assert estimate_cost(book, accelerator="TPU v7", accelerators=8, tokens_per_s=1e4) is None
    assert (
        estimate_cost(book, accelerator="NVIDIA B200-SXM-180GB", accelerators=8, tokens_per_s=0.0)
        is None
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"[broken", "not a valid TOML"),
        (b'"B200" = "cheap"', "must be a number"),
        (b'"B200" = true', "must be a number"),
        (b'"B200" = -1.0', "must be positive"),
        (b'"B200" = 1.0\n"b200 " = 2.0', "listed twice"),
        (b'[gpus]\n"B200" = 1.0', "must be a number"),
        (b"\xff", "not a valid TOML"),
    ],
)
def test_bad_price_books_name_the_file(data: bytes, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as excinfo:
        parse_price_book(data, source="prices.toml")
    assert str(excinfo.value).startswith("prices.toml: ")


def test_cost_refuses_nonsense_inputs() -> None:
    with pytest.raises(ValueError):
        cost_per_million_tokens(price_per_hour=1.0, accelerators=0, tokens_per_s=1.0)
