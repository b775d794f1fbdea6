"""LLM-serving figures: throughput at an interactivity target, read from a concurrency
sweep, and cost per token from a price book.

Throughput at an interactivity target, from a concurrency sweep (as InferenceX reads its curves).

Each sweep point is ``(x, y)`` = (output tokens/s per user, tokens/s per
accelerator); the statistic behind ``x`` (``"median 1/TPOT"``, ``"p90 1/TPOT"``,
``"mean of 1/ITL"`` …) must be named and is recorded with the result.

1. Keep the upper-left Pareto front: a point is dropped when another has
   larger-or-equal ``x`` *and* larger-or-equal ``y``.
2. If the target lies outside ``[min x, max x]`` of the front, the result is
   NOT_REACHED: nothing is extrapolated, and "not reached" is not zero.
3. Otherwise interpolate the front monotonically (PCHIP,
   ``scipy.interpolate.PchipInterpolator``, the family of InferenceX's
   monotone spline) or linearly, and record which.

``best_measured`` is the MLPerf-style step value beside it: the highest measured
throughput among points that meet the target (``x ≥ target``), or ``None``.
Across versions, the throughput at the target is itself a series
(:func:`throughput_series`), which the comparison and change-point code can use.

Cost per token from an optional price book.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

import numpy as np
import numpy.typing as npt

from tracker.errors import ConfigError
from tracker.stats.series import SeriesSamples

__all__ = [
    "CostEstimate",
    "Reach",
    "ThroughputAtTarget",
    "TokenCosts",
    "VersionSweep",
    "cost_per_million_tokens",
    "estimate_cost",
    "normalise_accelerator",
    "pareto_front",
    "parse_price_book",
    "price_for",
    "throughput_at_interactivity",
    "throughput_series",
    "token_costs",
]


FloatArray = npt.NDArray[np.float64]
Interpolation = Literal["pchip", "linear"]


class Reach(StrEnum):
    """Whether the sweep's front covers the target."""

    REACHED = "reached"
    NOT_REACHED = "not_reached"


@dataclass(frozen=True, slots=True)
class ThroughputAtTarget:
    """The throughput per accelerator at an interactivity target, or why there is none."""

    target_tokens_per_s_per_user: float
    statistic: str
    """Which statistic of the per-user rate the front is drawn on (e.g. ``median``)."""
    method: Interpolation
    reach: Reach
    tokens_per_s_per_accelerator: float | None
    best_measured: float | None
    front: tuple[tuple[float, float], ...]
    """The Pareto front as ``(tokens/s/user, tokens/s per accelerator)``, ``x`` ascending."""
    reason: str = ""


@dataclass(frozen=True, slots=True)
class VersionSweep:
    """One version's sweep: parallel tuples of tokens/s/user and tokens/s per accelerator."""

    version: str
    interactivity: tuple[float, ...]
    throughput: tuple[float, ...]


def _valid(x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    xs = np.asarray(x, dtype=np.float64).ravel()
    ys = np.asarray(y, dtype=np.float64).ravel()
    if xs.shape != ys.shape:
        raise ValueError("interactivity and throughput must have the same length")
    keep = np.isfinite(xs) & np.isfinite(ys) & (xs > 0.0) & (ys > 0.0)
    return xs[keep], ys[keep]


def pareto_front(
    interactivity: npt.ArrayLike, throughput: npt.ArrayLike
) -> tuple[FloatArray, FloatArray]:
    """The upper-left Pareto front, ``x`` strictly ascending and ``y`` strictly descending.

    Points that are not positive and finite are ignored.
    """
    xs, ys = _valid(interactivity, throughput)
    if xs.size == 0:
        return xs, ys
    order = np.lexsort((-ys, -xs))  # x descending, best y first among equal x
    x_desc, y_desc = xs[order], ys[order]
    best_so_far = np.maximum.accumulate(y_desc)
    keep = np.ones(x_desc.size, dtype=np.bool_)
    keep[1:] = y_desc[1:] > best_so_far[:-1]
    return x_desc[keep][::-1].copy(), y_desc[keep][::-1].copy()


def _interpolate(fx: FloatArray, fy: FloatArray, target: float, method: Interpolation) -> float:
    if fx.size == 1:
        return float(fy[0])
    if method == "linear":
        return float(np.interp(target, fx, fy))
    # Imported here: scipy.interpolate costs about 27 MB of memory, needed only
    # where a sweep is interpolated.
    from scipy.interpolate import PchipInterpolator  # type: ignore[import-untyped]

    return float(PchipInterpolator(fx, fy, extrapolate=False)(target))


def throughput_at_interactivity(
    interactivity: npt.ArrayLike,
    throughput: npt.ArrayLike,
    *,
    target: float,
    statistic: str,
    method: Interpolation = "pchip",
) -> ThroughputAtTarget:
    """The tokens/s per accelerator that the sweep's front gives at ``target`` tokens/s/user.

    Parameters
    ----------
    interactivity, throughput
        One value per sweep point (e.g. per concurrency).
    target
        Tokens/s/user, e.g. 50 (= 20 ms per output token).
    statistic
        How tokens/s/user was computed; recorded, never guessed.
    method
        ``"pchip"`` (default) or ``"linear"``.
    """
    if not statistic:
        raise ValueError("name the tokens/s/user statistic (e.g. 'median 1/TPOT')")
    if method not in ("pchip", "linear"):
        raise ValueError(f"unknown interpolation {method!r}")
    xs, ys = _valid(interactivity, throughput)
    fx, fy = pareto_front(xs, ys)
    meets = ys[xs >= target]
    best = float(meets.max()) if meets.size else None
    front = tuple((float(a), float(b)) for a, b in zip(fx, fy, strict=True))
    head = (float(target), statistic, method)
    if fx.size == 0:
        return ThroughputAtTarget(
            *head, Reach.NOT_REACHED, None, best, front, "no valid sweep point"
        )
    if target > fx[-1] or target < fx[0]:
        side = "above the most" if target > fx[-1] else "below the least"
        reason = f"target {target:g} is {side} interactive point of the front; not extrapolated"
        return ThroughputAtTarget(*head, Reach.NOT_REACHED, None, best, front, reason)
    value = _interpolate(fx, fy, float(target), method)
    return ThroughputAtTarget(*head, Reach.REACHED, value, best, front)


def throughput_series(
    sweeps: Sequence[VersionSweep],
    *,
    key: str,
    target: float,
    statistic: str,
    method: Interpolation = "pchip",
    system: str = "",
    benchmark: str = "",
) -> tuple[tuple[ThroughputAtTarget, ...], SeriesSamples]:
    """Throughput at the target per version, and the series of the versions that reach it.

    ``sweeps`` are in version order. A version whose front does not reach the
    target is left out of the series (its result says why), so it can neither
    pass for zero nor hide as a regression.
    """
    results = tuple(
        throughput_at_interactivity(
            s.interactivity, s.throughput, target=target, statistic=statistic, method=method
        )
        for s in sweeps
    )
    reached: list[tuple[str, float]] = []
    for sweep, result in zip(sweeps, results, strict=True):
        if result.tokens_per_s_per_accelerator is not None:
            reached.append((sweep.version, result.tokens_per_s_per_accelerator))
    series = SeriesSamples(
        key=key,
        versions=tuple(v for v, _ in reached),
        samples=tuple((t,) for _, t in reached),
        higher_is_better=True,
        system=system,
        benchmark=benchmark,
    )
    return results, series


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
