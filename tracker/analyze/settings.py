"""The settings of an analysis run: its knobs, as stored with its findings and read back,
and the verdicts under the gate's per-series thresholds.

The settings of an analysis run as stored with its findings, and read back.

``tracker analyze`` stores its settings with the findings it wrote
(:func:`recorded_settings`); ``tracker report`` analyses with the settings of the
latest stored run, or the defaults when none was stored, overridden by its own
options (:func:`report_settings`, :func:`settings_of`).

Verdicts under per-series floors and q levels (the gate's policy), decided once.

A run's comparisons form one Benjamini–Hochberg family whatever the thresholds:
the q-values are those of the whole family. Without per-series thresholds every
verdict uses the run's floor and q level (:func:`tracker.stats.decide_verdicts`);
with them (:class:`SeriesThresholds`: fnmatch rules, built once from the gate's policy
file) each series' floor and q level decide its verdict; its evidence carries the floor
that was applied and its comparison the q level.

The files that set them (a price book, the gate's policy and acknowledgements) are read
by :func:`read_settings_file`: regular files of at most :data:`SETTINGS_FILE_LIMIT`
bytes. A FIFO (which may never end, or never start), a device (``/dev/zero``) or a
folder is refused with an error naming it, before a byte is read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from tracker.errors import ConfigError
from tracker.paths import READ_FLAGS, file_kind
from tracker.records.findings import AnalysisRunSettings, SeriesInfo
from tracker.stats import ChangeEvidence, ComparisonRun, decide_verdicts
from tracker.stats.compare import detectable_changes, directional_q_values, judge
from tracker.stats.defaults import (
    EFFICIENCY_DROP_FLOOR,
    EFFICIENCY_FLOOR,
    SENSITIVITY_POWER,
    ChangePointPolicy,
    ComparePolicy,
    DriftPolicy,
)
from tracker.stats.serving import Interpolation
from tracker.stats.significance import FamilyMethod

__all__ = [
    "ChosenSettings",
    "OPTION_NAMES",
    "ReportOverrides",
    "SeriesThresholds",
    "Threshold",
    "SETTINGS_FILE_LIMIT",
    "decide",
    "read_settings_file",
    "recorded_settings",
    "report_settings",
    "settings_line",
    "settings_of",
]


SETTINGS_FILE_LIMIT = 16 << 20
"""The largest settings file read (16 MiB: a policy or price book is a few kilobytes)."""


def read_settings_file(path: Path, what: str) -> bytes:
    """The bytes of the settings file ``path`` (``what``: "policy file", "price book"...);
    a :class:`ConfigError` naming it when it cannot be read, is not a regular file, or
    holds more than :data:`SETTINGS_FILE_LIMIT` bytes."""
    try:
        fd = os.open(path, READ_FLAGS)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the {what} ({error.strerror})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = file_kind(mode) or "not a file"
            raise ConfigError(
                f"{path}: the {what} must be a regular file, and this is {kind}: give the "
                "file itself"
            )
        chunks, size = [], 0
        while size <= SETTINGS_FILE_LIMIT and (chunk := os.read(fd, 1 << 20)):
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the {what} ({error.strerror})") from None
    finally:
        os.close(fd)
    if size > SETTINGS_FILE_LIMIT:
        raise ConfigError(
            f"{path}: over {SETTINGS_FILE_LIMIT >> 20} MiB, too big for a {what}: give the "
            f"{what} itself"
        )
    return b"".join(chunks)


@dataclass(frozen=True, slots=True)
class Threshold:
    """Floor and q for the series whose key, benchmark or metric matches ``match``."""

    match: str
    floor: float | None = None
    q: float | None = None
    efficiency_floor: float | None = None
    """The scaling-efficiency floor of the matching scaling groups (the gate's)."""

    def matches(self, key: str, benchmark: str, metric: str) -> bool:
        """fnmatch (case-sensitive) on the series key, the benchmark or the metric."""
        return any(fnmatchcase(text, self.match) for text in (key, benchmark, metric))


@dataclass(frozen=True, slots=True)
class SeriesThresholds:
    """Per-series floors and q levels: the rules in order, the last match winning per knob."""

    q_level: float
    """The q level of a series no rule sets one for."""
    rules: tuple[Threshold, ...] = ()

    def threshold_for(self, key: str, benchmark: str, metric: str) -> tuple[float | None, float]:
        """(floor, or ``None`` for the method's own, and q level) of the series ``key``."""
        floor: float | None = None
        q = self.q_level
        for rule in self.rules:
            if rule.matches(key, benchmark, metric):
                floor = rule.floor if rule.floor is not None else floor
                q = rule.q if rule.q is not None else q
        return floor, q

    def efficiency_floor_for(self, key: str, benchmark: str, metric: str, default: float) -> float:
        """The scaling-efficiency floor of series ``key`` (the last matching rule's)."""
        floor = default
        for rule in self.rules:
            if rule.efficiency_floor is not None and rule.matches(key, benchmark, metric):
                floor = rule.efficiency_floor
        return floor


@dataclass(frozen=True, slots=True)
class AnalysisSettings:
    """The knobs of one analysis run (defaults: :mod:`tracker.stats.defaults`)."""

    target_tokens_per_s_per_user: float = 50.0
    efficiency_floor: float = EFFICIENCY_FLOOR
    efficiency_drop_floor: float = EFFICIENCY_DROP_FLOOR
    interpolation: Interpolation = "pchip"
    family_method: FamilyMethod = "bh"
    compare: ComparePolicy = field(default_factory=ComparePolicy)
    change_points: ChangePointPolicy = field(default_factory=ChangePointPolicy)
    drift: DriftPolicy = field(default_factory=DriftPolicy)
    thresholds: SeriesThresholds | None = None
    """Per-series floors and q levels of the verdicts (the gate's policy); one family still."""

    def __post_init__(self) -> None:
        if not self.target_tokens_per_s_per_user > 0.0:
            raise ConfigError("the interactivity target must be a positive tokens/s/user")
        if not 0.0 < self.efficiency_floor <= 1.0:
            raise ConfigError("the efficiency floor must lie in (0, 1], e.g. 0.90")
        if not 0.0 <= self.efficiency_drop_floor < 1.0:
            raise ConfigError("the efficiency drop floor must lie in [0, 1), e.g. 0.05")


def decide(
    evidence: Sequence[ChangeEvidence],
    *,
    infos: Mapping[str, SeriesInfo],
    thresholds: SeriesThresholds | None,
    q_level: float,
    family_method: FamilyMethod,
    missing: Sequence[str],
    power: float = SENSITIVITY_POWER,
) -> ComparisonRun:
    """One family over all ``evidence``, each verdict and its sensitivity (at ``power``)
    under its series' thresholds."""
    if thresholds is None:
        return decide_verdicts(
            evidence, q_level=q_level, family_method=family_method, missing=missing, power=power
        )
    qs, family_size = directional_q_values(evidence, family_method)
    judged: list[ChangeEvidence] = []
    levels: list[float] = []
    for ev in evidence:
        info = infos[ev.key]
        floor, level = thresholds.threshold_for(ev.key, info.benchmark, info.metric)
        judged.append(ev if floor is None else replace(ev, floor=floor))
        levels.append(level)
    limits = detectable_changes(judged, qs, levels, power=power)
    comparisons = tuple(
        judge(ev, q, level, detectable_g=limit)
        for ev, q, level, limit in zip(judged, qs, levels, limits, strict=True)
    )
    return ComparisonRun(comparisons, family_size, q_level, family_method, tuple(missing))


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
