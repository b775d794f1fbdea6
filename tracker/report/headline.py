"""The overview's first lines: one sentence per software about its newest pair.

``1.2.0 against 1.1.0: 1 regression (example-llm-70b isl1024-osl1024, −8.0%),
2 improvements; 2 unchanged``. It counts issues (series that share a cause are
one, :mod:`tracker.report.issues`) and scaling warnings (one per group and size
step) as the gate does, from the :class:`~tracker.report.pages_compare.PairSummary`
of each software's newest pair; the comparison page of the pair starts with it too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tracker.report.filters import format_count
from tracker.report.pages_compare import PairSummary

__all__ = ["Headline", "build_headlines", "headline_text", "pair_headline"]


@dataclass(frozen=True, slots=True)
class Headline:
    """One software's answer: its newest pair of versions in one sentence."""

    software: str = field(metadata={"help": "Software name."})
    text: str = field(
        metadata={"help": "The sentence, e.g. '1.2.0 against 1.1.0: 1 regression …'."}
    )
    href: str = field(metadata={"help": "The comparison page of the pair."})
    regressions: int = field(
        metadata={"help": "Regressions of the pair (the sentence leads with them)."}
    )
    attention: int = field(
        default=0, metadata={"help": "Regressions and scaling warnings: what needs a person."}
    )


def _signed_pct(value: float) -> str:
    return f"{value:+.1f}%".replace("-", "\N{MINUS SIGN}")


def headline_text(
    counts: Mapping[str, int],
    baseline: str,
    candidate: str,
    worst: Sequence[tuple[str, float]],
    *,
    scaling: int = 0,
) -> str:
    """``1.2.0 against 1.1.0: 1 regression (chat, −8.0%), 2 improvements; 24 unchanged``.

    ``worst`` names the regressed workloads with their largest change, worst first;
    ``scaling`` scaling warnings come after the regressions (``2 scaling warnings``).
    """
    parts = []
    regressions = counts.get("regression", 0)
    if regressions:
        named = ", ".join(f"{name}, {_signed_pct(pct)}" for name, pct in worst[:3])
        more = f" and {len(worst) - 3} more" if len(worst) > 3 else ""
        parts.append(
            format_count(regressions, "regression") + (f" ({named}{more})" if named else "")
        )
    if scaling:
        parts.append(format_count(scaling, "scaling warning"))
    for verdict, noun in (("suspect", "suspect change"), ("improvement", "improvement")):
        if counts.get(verdict, 0) or verdict == "improvement":
            parts.append(format_count(counts.get(verdict, 0), noun))
    tail = [f"{counts.get('no_change', 0):,} unchanged"]
    if counts.get("inconclusive", 0):
        tail.append(f"{counts['inconclusive']:,} inconclusive")
    return f"{candidate} against {baseline}: " + ", ".join(parts) + "; " + ", ".join(tail)


def pair_headline(pair: PairSummary) -> Headline:
    """The sentence of one compared pair, counting its issues and scaling warnings."""
    worst = [(i.name, i.change_pct) for i in pair.regressions if i.change_pct is not None]
    counts = {c.verdict: c.count for c in pair.issues}
    text = headline_text(counts, pair.baseline, pair.candidate, worst, scaling=pair.scaling)
    regressions = counts.get("regression", 0)
    return Headline(pair.software, text, pair.pages[0], regressions, regressions + pair.scaling)


def build_headlines(pairs: Sequence[PairSummary]) -> tuple[Headline, ...]:
    """One sentence per software about its newest pair, those with regressions first."""
    out = [pair_headline(p) for p in pairs if p.is_latest]
    return tuple(sorted(out, key=lambda h: (h.regressions == 0, h.attention == 0, h.software)))
