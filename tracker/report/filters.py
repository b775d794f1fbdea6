"""Formatting for the report templates, registered as Jinja filters.

Templates only loop and branch; every number or label they show goes through
one of these functions, so the formatting has unit tests and one home.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

from tracker.records.keys import SeriesKey, split_key
from tracker.records.results import Configuration

__all__ = [
    "EVIDENCE_SHOWN",
    "FILTERS",
    "chart_attribute",
    "chart_json",
    "configuration_items",
    "evidence_items",
    "evidence_json",
    "evidence_name",
    "format_change",
    "format_breakable",
    "format_compact",
    "format_ratio",
    "ratio_class",
    "format_configuration_change",
    "format_twins",
    "format_ci",
    "format_count",
    "format_direction",
    "format_efficiency",
    "format_evidence",
    "format_gain",
    "format_invalid",
    "format_kind",
    "format_label",
    "format_number",
    "format_p",
    "format_pair_family",
    "format_point",
    "format_range",
    "format_repeats",
    "format_scaling",
    "format_usd",
    "format_usd_range",
    "format_value",
    "format_verdict_count",
    "format_workload",
    "format_versions",
    "sort_value",
]

_NO_VALUE = "\N{EM DASH}"


def format_number(value: float) -> str:
    """A number with 3-4 significant digits; whole numbers with thousands separators.

    >>> format_number(309777.6), format_number(12.3456), format_number(0.0035212)
    ('309,778', '12.35', '0.00352')
    """
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 999.5:
        return f"{value:,.0f}"
    if magnitude >= 1:
        return f"{value:.4g}"
    return f"{value:.3g}"


def format_value(value: float, unit: str) -> str:
    """A number followed by its unit: ``1,997 tokens/s``."""
    number = format_number(value)
    return f"{number} {unit}" if unit else number


def format_breakable(text: str) -> Markup:
    """``text`` escaped, with a line-break opportunity after each ``_`` (``<wbr>``): a long
    identifier such as ``output_tokens_per_s_per_accelerator`` wraps in a narrow column
    instead of widening it (and is never cut)."""
    return Markup("_<wbr>").join(escape(part) for part in text.split("_"))


def format_compact(value: float) -> str:
    """A number in at most 4 characters and a suffix, for a matrix cell: ``9.07k``, ``653k``,
    ``2.49M``, ``760.6``; the exact figure goes in the cell's title.

    >>> format_compact(9066.0), format_compact(652750.0), format_compact(2494310.0)
    ('9.07k', '653k', '2.49M')
    """
    magnitude = abs(value)
    if not math.isfinite(value) or magnitude < 999.5:
        return format_number(value)
    if magnitude < 999_500:
        return f"{value / 1e3:.3g}k"
    if magnitude < 999_500_000:
        return f"{value / 1e6:.3g}M"
    return f"{value / 1e9:.3g}G"


def format_ratio(value: float | None) -> str:
    """A ratio to a reference in 3 significant digits: ``0.388×``, ``1×``, ``2.57×``."""
    if value is None or not math.isfinite(value):
        return _NO_VALUE
    return f"{value:.3g}×"


RATIO_BANDS = (0.95, 0.8, 0.6, 0.4)
"""Lower bounds of the colour bands of a ratio to the leader, best first."""


def ratio_class(value: float) -> str:
    """The CSS class colouring a ratio to the leader: ``ratio-5`` (0.95 and above, the
    leader's band) down to ``ratio-1`` (under 0.4); a sequential scale, not a verdict."""
    for index, bound in enumerate(RATIO_BANDS):
        if value >= bound:
            return f"ratio-{len(RATIO_BANDS) + 1 - index}"
    return "ratio-1"


def format_range(low: float, high: float, unit: str) -> str:
    """The spread of the samples: ``1,990 – 2,003 tokens/s``."""
    return format_value(low, "") + " \N{EN DASH} " + format_value(high, unit)


def format_usd(value: float | None) -> str:
    """Dollars to 3 significant digits, as ``tracker analyze`` prints them; an em dash for none.

    >>> format_usd(1.851852), format_usd(0.0377771), format_usd(12345.6), format_usd(None)
    ('$1.85', '$0.0378', '$12,346', '—')
    """
    if value is None or not math.isfinite(value):
        return _NO_VALUE
    if abs(value) >= 999.5:
        return f"${value:,.0f}"
    text = f"{value:.3g}"
    if "e" in text:  # under $0.0001: fixed-point digits, never an exponent
        text = f"{value:.{2 - math.floor(math.log10(abs(value)))}f}"
    return f"${text}"


def format_usd_range(low: float | None, high: float | None) -> str:
    """The spread of costs: ``$1.83 – $1.87``; an em dash when either end is unknown."""
    if low is None or high is None:
        return _NO_VALUE
    return format_usd(low) + " \N{EN DASH} " + format_usd(high)


def format_direction(higher_is_better: bool) -> str:
    """Which way is better, in words."""
    return "higher is better" if higher_is_better else "lower is better"


def format_count(n: int, singular: str, plural: str | None = None) -> str:
    """A count and its noun: ``1 series``, ``1,200 samples``."""
    noun = singular if n == 1 else (plural if plural is not None else singular + "s")
    return f"{n:,} {noun}"


def format_verdict_count(n: int, verdict: str) -> str:
    """A count of one verdict in words: ``1 regression``, ``2 improvements``, ``3 unchanged``."""
    nouns = {"suspect": "suspect change", "no_change": "unchanged", "scaling": "scaling warning"}
    noun = nouns.get(verdict.removesuffix("_efficiency"), format_kind(verdict).lower())
    same = ("unchanged", "inconclusive", "configuration changed")
    return format_count(n, noun, noun if noun in same else None)


def format_repeats(n: int) -> str:
    """The number of samples behind a value: ``n=3``."""
    return f"n={n:,}"


def format_invalid(valid_count: int, n: int) -> str:
    """How many samples came from invalid runs: ``1 of 3 samples invalid``."""
    invalid = n - valid_count
    noun = "sample" if n == 1 else "samples"
    return f"{invalid:,} of {n:,} {noun} invalid"


def format_label(text: str) -> str:
    """A label, or an em dash when it is empty."""
    return text if text else _NO_VALUE


_MINUS = "\N{MINUS SIGN}"


def _signed_pct(value: float) -> str:
    """``+12.3%`` / ``−4.1%`` (a true minus sign)."""
    text = f"{value:+.1f}%"
    return text.replace("-", _MINUS)


def format_change(delta_pct: float | None, higher_is_better: bool) -> str:
    """A relative change with its direction in words: ``+12.3% better``, ``−4.1% worse``.

    ``delta_pct`` is the raw change of the metric; whether that is better depends
    on the metric's direction. A change that rounds to 0.0% is ``no change``.
    """
    if delta_pct is None or not math.isfinite(delta_pct):
        return _NO_VALUE
    if round(delta_pct, 1) == 0:
        return "0.0% (no change)"
    better = (delta_pct > 0) == higher_is_better
    return f"{_signed_pct(delta_pct)} {'better' if better else 'worse'}"


def format_configuration_change(delta_pct: float | None) -> str:
    """The raw change of a series whose configuration changed, said not to be a software
    change: ``+4,401.5% (not a software change)``."""
    if delta_pct is None or not math.isfinite(delta_pct):
        return _NO_VALUE
    return f"{_signed_pct(delta_pct)} (not a software change)"


def _count_of(count: int | None, what: str | None) -> str:
    return " × ".join(t for t in (f"{count:,}" if count is not None else "", what or "") if t)


def configuration_items(conf: Configuration) -> list[tuple[str, str]]:
    """What a round says a system is, as (name, value) lines, only those it states:
    ``("Accelerators", "96 × AMD Instinct MI355X (x94) (the description says 94)")``."""
    accelerators = (
        "none: CPU only" if conf.cpu_only else _count_of(conf.accelerators_total, conf.accelerator)
    )
    if conf.accelerators_stated is not None and not conf.cpu_only:
        accelerators += f" (the description says {conf.accelerators_stated:,})"
    nodes = ""
    if conf.nodes is not None:
        each = conf.accelerators_per_node
        nodes = format_count(conf.nodes, "node")
        nodes += f", {format_count(each, 'accelerator')} per node" if each is not None else ""
    host = _count_of(conf.host_cpus_per_node, conf.host_cpu)
    if host and conf.host_cpus_per_node is not None:
        host += " per node"
    if host and conf.host_cores is not None:
        host += f", {format_count(conf.host_cores, 'core')} each"
    power = conf.power_mode or "performance (no power cap stated)"
    if conf.tgp_w is not None:
        power += f", TGP {conf.tgp_w:g} W"
    items = [
        ("Accelerators", accelerators),
        ("Nodes", nodes),
        ("Host CPUs", host),
        ("Host memory", conf.host_memory or ""),
        ("Interconnect", conf.interconnect or ""),
        ("Framework", conf.framework or ""),
        ("Software stack", conf.software or ""),
        ("Driver", conf.driver or ""),
        ("Power", power),
        ("Availability", conf.availability or ""),
        ("Division", conf.division or ""),
        ("Notes", conf.notes or ""),
    ]
    return [(name, value) for name, value in items if value]


def format_twins(keys: Sequence[str]) -> str:
    """The series one measurement was also published as: ``yolo-99 MultiStream
    (Dell/Dell_Pro_Max_GB10x1)``, each series key as its benchmark, scenario and system."""
    out = []
    for key in keys:
        series = SeriesKey.parse(key)
        if series is None:
            out.append(key)
        else:
            out.append(f"{series.benchmark} {series.scenario} ({series.system})")
    return ", ".join(out) or _NO_VALUE


def format_ci(ci: Sequence[float | None] | None) -> str:
    """A confidence interval of a relative change: ``−2.1% to +5.3%``."""
    if not ci or len(ci) != 2 or ci[0] is None or ci[1] is None:
        return _NO_VALUE
    low, high = float(ci[0]), float(ci[1])
    if not (math.isfinite(low) and math.isfinite(high)):
        return _NO_VALUE
    return f"{_signed_pct(low)} to {_signed_pct(high)}"


def format_p(value: float | None, name: str = "p") -> str:
    """A p- or q-value: ``p=0.0032``, ``q<0.0001``; an em dash when untested."""
    if value is None or not math.isfinite(value):
        return _NO_VALUE
    if value < 0.0001:
        return f"{name}<0.0001"
    return f"{name}={value:.2g}" if value < 0.01 else f"{name}={value:.3f}"


def format_gain(factor: float | None) -> str:
    """A direction-aware gain factor: ``1.23× (+23.0% better)``; above 1 is better."""
    if factor is None or not math.isfinite(factor) or factor <= 0:
        return _NO_VALUE
    pct = 100.0 * (factor - 1.0)
    if round(pct, 1) == 0:
        return "1.00× (no change)"
    return f"{factor:.2f}× ({_signed_pct(pct)} {'better' if pct > 0 else 'worse'})"


def format_efficiency(value: float | None) -> str:
    """A scaling efficiency (a fraction) as a percentage: ``93.4%``."""
    if value is None or not math.isfinite(value):
        return _NO_VALUE
    return f"{100.0 * value:.1f}%"


def format_scaling(before: float | None, after: float | None, floor: float | None) -> str:
    """A scaling finding in words, efficiencies as fractions: ``E 0.97 → 0.84 (floor 0.90)``.

    ``before`` is the efficiency at the baseline version (None: the finding is about
    one version, ``E 0.84 (floor 0.90)``).
    """

    def e(value: float | None) -> str | None:
        return f"{value:.2f}" if value is not None and math.isfinite(value) else None

    now, then, limit = e(after), e(before), e(floor)
    if now is None:
        return _NO_VALUE
    text = f"E {then} \N{RIGHTWARDS ARROW} {now}" if then is not None else f"E {now}"
    return f"{text} (floor {limit})" if limit is not None else text


def _concurrency(workload: str) -> int | None:
    """The concurrency of a sweep point's workload (``isl1024-osl1024/c16`` → 16)."""
    head, _, point = workload.rpartition("/")
    return int(point[1:]) if head and point[:1] == "c" and point[1:].isdigit() else None


def format_point(series_key: str, metric: str = "") -> str:
    """Where on its workload a finding is: ``concurrency 16``, ``8 → 32 accelerators``,
    ``at 50 tokens/s/user``; empty when the series has a single point.

    >>> format_point("sw|/node|llm|concurrency|isl1024-osl1024/c16|tps")
    'concurrency 16'
    >>> format_point("mlperf|Corp|Accel|llm|Offline||qps|closed stack|x8->x32")
    '8 → 32 accelerators'
    """
    parts = split_key(series_key)
    last = parts[-1]
    if len(parts) > 6 and last.startswith("x") and "->x" in last:
        low, _, high = last[1:].partition("->x")
        return f"{low} \N{RIGHTWARDS ARROW} {high} accelerators"
    concurrency = _concurrency(parts[4] if len(parts) == 6 else "")
    if concurrency is not None:
        return f"concurrency {concurrency:,}"
    head, sep, tail = metric.partition(" at ")
    return f"at {tail}" if sep and head else ""


def format_pair_family(size: int, q_level: float) -> str:
    """The multiple-testing family of a compared pair in words."""
    if size <= 0:
        return "no p-values in this pair"
    return (
        f"Benjamini\N{EN DASH}Hochberg over {format_count(size, 'one-sided p-value')}"
        f" in each direction, confirmed when q < {q_level:g}"
    )


def format_kind(kind: str) -> str:
    """A finding kind or verdict in words: ``scaling_efficiency`` → ``Scaling efficiency``."""
    text = kind.replace("_", " ").strip()
    return text[:1].upper() + text[1:] if text else _NO_VALUE


def format_versions(baseline: str | None, candidate: str | None) -> str:
    """A version pair: ``v5.1 → v6.0``; one version alone when the other is missing."""
    if baseline and candidate:
        return f"{baseline} \N{RIGHTWARDS ARROW} {candidate}"
    return baseline or candidate or _NO_VALUE


def sort_value(value: float | str | None) -> str:
    """The ``data-sort`` attribute of a table cell: a plain number (9 significant digits,
    enough to order by), or empty when none."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return f"{float(value):.9g}" if math.isfinite(value) else ""


def chart_json(spec: Mapping[str, Any]) -> str:
    """A chart spec as compact JSON with sorted keys (escaped by the template: it is data)."""
    return json.dumps(spec, sort_keys=True, separators=(",", ":"), allow_nan=False)


_ATTRIBUTE = str.maketrans({"&": "&amp;", "'": "&#39;"})


def chart_attribute(spec: Mapping[str, Any]) -> Markup:
    """A chart spec as the value of a *single-quoted* HTML attribute (``data-figure='…'``).

    The JSON of :func:`chart_json` with ``&`` and ``'`` escaped, the only characters
    that mean anything inside a single-quoted attribute value: its many double
    quotes, ``<`` and ``>`` stay one byte each (``&#34;`` would be five).
    """
    return Markup(chart_json(spec).translate(_ATTRIBUTE))


EVIDENCE_SHOWN = frozenset(
    {
        "baseline",
        "benchmark",
        "candidate",
        "ci_pct",
        "delta_pct",
        "higher_is_better",
        "metric",
        "note",
        "p_value",
        "q_value",
        "scenario",
        "software",
        "system",
    }
)
"""Evidence items a findings table shows in columns of their own (left out of the rest)."""


def format_evidence(value: Any) -> str:
    """An evidence value to read: numbers to 6 significant digits, lists and mappings inline.

    >>> format_evidence({"systems": ["a/x", "b/y"], "value": 922.8505211700921, "n": None})
    'n: —; systems: a/x, b/y; value: 922.851'
    """
    if _empty(value):
        return _NO_VALUE
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {format_evidence(value[k])}" for k in sorted(value))
    if isinstance(value, list | tuple):
        return ", ".join(format_evidence(v) for v in value)
    return str(value)


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


EVIDENCE_NAMES: Mapping[str, str] = {
    "g": "log change g",
    "p_sided": "side tested",
    "q_level": "q level",
    "n_baseline": "samples, baseline",
    "n_candidate": "samples, candidate",
    "besides_software": "besides the software",
    "family_method": "multiple testing",
    "family_size": "family size",
    "detectable_pct": "detectable change",
    "advised_repeats": "repeats advised",
    "under_powered": "under-powered",
    "base_accelerators": "base accelerators",
    "baseline_efficiency": "baseline efficiency",
    "baseline_level": "baseline level",
    "candidate_level": "candidate level",
    "at_baseline": "at the baseline",
    "at_version": "at version",
}
"""Readable names of the evidence items a finding's definition list shows."""


def evidence_name(name: str) -> str:
    """The readable name of an evidence item: ``welch_t_lo`` → ``welch t, low``,
    ``detectable_pct`` → ``detectable change`` (the value says %)."""
    if name in EVIDENCE_NAMES:
        return EVIDENCE_NAMES[name]
    words = name.split("_")
    tail = {"lo": ", low", "hi": ", high", "pct": " (%)"}.get(words[-1])
    if tail is not None and len(words) > 1:
        return " ".join(words[:-1]) + tail
    return " ".join(words)


def _evidence_text(name: str, value: Any) -> str:
    text = format_evidence(value)
    return f"{text}%" if name.endswith("_pct") and isinstance(value, float) else text


def evidence_items(evidence: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The evidence items not shown in their own columns and not empty, as (readable name,
    text to read), by name: a definition list, never a key/value dump.
    ``findings.csv`` holds every item exactly, by its key (:func:`evidence_json`)."""
    return [
        (evidence_name(name), _evidence_text(name, evidence[name]))
        for name in sorted(evidence)
        if name not in EVIDENCE_SHOWN and not _empty(evidence[name])
    ]


def evidence_json(evidence: Mapping[str, Any]) -> str:
    """Those items as one JSON object (the ``evidence`` column of ``findings.csv``)."""
    rest = {k: v for k, v in evidence.items() if k not in EVIDENCE_SHOWN}
    return json.dumps(rest, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def format_workload(series_key: str) -> str:
    """The workload of a series key (``software|system|benchmark|scenario|workload|metric``),
    without its sweep point (``isl1024-osl1024/c4`` → ``isl1024-osl1024``: the point is
    :func:`format_point`'s).

    Empty when the key has none (or is not a series key, like a scaling group's).
    """
    key = SeriesKey.parse(series_key)
    workload = key.workload if key is not None else ""
    return workload.rpartition("/")[0] if _concurrency(workload) is not None else workload


FILTERS: Mapping[str, Callable[..., Any]] = {
    "chart_attribute": chart_attribute,
    "chart_json": chart_json,
    "configuration_items": configuration_items,
    "evidence_items": evidence_items,
    "format_change": format_change,
    "format_configuration_change": format_configuration_change,
    "format_twins": format_twins,
    "format_ci": format_ci,
    "format_efficiency": format_efficiency,
    "format_gain": format_gain,
    "format_kind": format_kind,
    "format_p": format_p,
    "format_pair_family": format_pair_family,
    "format_point": format_point,
    "format_scaling": format_scaling,
    "format_versions": format_versions,
    "sort_value": sort_value,
    "format_count": format_count,
    "format_compact": format_compact,
    "format_breakable": format_breakable,
    "format_ratio": format_ratio,
    "ratio_class": ratio_class,
    "format_direction": format_direction,
    "format_invalid": format_invalid,
    "format_label": format_label,
    "format_number": format_number,
    "format_range": format_range,
    "format_repeats": format_repeats,
    "format_usd": format_usd,
    "format_usd_range": format_usd_range,
    "format_value": format_value,
    "format_verdict_count": format_verdict_count,
    "format_workload": format_workload,
}
"""Every filter the templates may use, by the name they use it under."""
