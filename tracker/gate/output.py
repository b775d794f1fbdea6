"""The gate's verdict as Markdown (for the CI summary), JSON (for machines) and table cells.

Pure functions of a :class:`~tracker.gate.decision.GateResult`; the CLI prints them and
appends the Markdown to ``$GITHUB_STEP_SUMMARY``. With ``report`` (the report
folder, as the reader will reach it from where the output is shown) each series
links into the static report: the comparison page of the version pair when the
report has one (consecutive versions, or the first against the newest), else the
benchmark page.

Labels come from flags and files: in the Markdown every text goes through
:func:`tracker.text_safety.markdown_text` (no link, image, HTML or control
character of a label reaches the step summary) and each link target is
percent-encoded; the JSON escapes every control character, C1 and
bidirectional-override characters included (:func:`tracker.text_safety.json_text`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any
from urllib.parse import quote

from tracker.gate.decision import GateItem, GateResult
from tracker.report.urls import benchmark_href, compare_href
from tracker.text_safety import json_text, markdown_text

__all__ = [
    "GATE_COLUMNS",
    "gate_cells",
    "gate_json",
    "gate_markdown",
    "item_link",
    "settings_lines",
]

GATE_COLUMNS = ("state", "kind", "series", "versions", "Δ%", "CI (Δ%)", "p / q", "method, n")


def _has_page(order: Sequence[str], baseline: str, candidate: str) -> bool:
    if baseline not in order or candidate not in order:
        return False
    i, j = order.index(baseline), order.index(candidate)
    return j == i + 1 or (i == 0 and j == len(order) - 1)


def item_link(result: GateResult, item: GateItem, report: str | None) -> str | None:
    """A relative link into the report folder ``report`` for ``item`` (``None`` without one)."""
    if report is None:
        return None
    base = report.rstrip("/") + "/"
    order = result.version_order.get(item.software, ())
    if item.kind != "scaling" and _has_page(order, item.baseline, item.candidate):
        return base + compare_href(item.software, item.baseline, item.candidate)
    if item.kind == "scaling":
        return base + "scaling.html"
    return base + benchmark_href(item.benchmark, item.scenario)


def _series(item: GateItem) -> str:
    parts = [item.system, item.benchmark, item.scenario, item.workload, item.metric]
    return " · ".join(p for p in parts if p)


def _delta(item: GateItem) -> str:
    if item.delta_pct is None:
        return item.detail or "—"
    word = "worse" if item.worse else "better"
    return f"{item.delta_pct:+.1f}% ({word})"


def _ci(item: GateItem) -> str:
    if item.ci_pct is None:
        return "—"
    return f"[{item.ci_pct[0]:+.1f}%, {item.ci_pct[1]:+.1f}%]"


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.2g}"


def _pq(item: GateItem) -> str:
    return f"{_number(item.p_value)} / {_number(item.q_value)}"


def _method(item: GateItem) -> str:
    if not item.method:
        return "—"
    return f"{item.method}, n={item.n_baseline}/{item.n_candidate}"


def gate_cells(item: GateItem) -> tuple[str, ...]:
    """One row of the text table (columns :data:`GATE_COLUMNS`)."""
    return (
        item.state,
        item.kind,
        f"{item.software} | {_series(item)}",
        f"{item.baseline} → {item.candidate}",
        _delta(item),
        _ci(item),
        _pq(item),
        _method(item),
    )


def settings_lines(result: GateResult) -> list[str]:
    """The family size and the settings used (printed at the end of every format)."""
    p = result.policy
    lines = [
        f"Compared {result.compared} series of {result.baseline} → {result.candidate}; "
        f"family size {result.family_size} ({result.family_method.upper()}).",
        f"Settings: q {p.q_level:g}; floors {p.floor_repeats:.0%} with repeats, "
        f"{p.floor_single:.0%} single value (regression past 2× with no history); "
        f"target {p.target_tokens_per_s_per_user:g} tokens/s/user; "
        f"efficiency floor {p.efficiency_floor:.0%}; "
        f"failing kinds: {', '.join(sorted(p.fail_on)) or 'none'}"
        + ("; strict" if result.strict else "")
        + ".",
        f"Policy: {p.source or 'defaults'}; {len(p.thresholds)} thresholds; "
        f"acknowledgements: {p.acknowledgements_source or 'none'} "
        f"({len(p.acknowledgements)} entries).",
    ]
    return lines


_LINK_SAFE = "/#?=&%:;,.-_~+@!$'*"
"""Characters a Markdown link target keeps; anything else (spaces, parentheses,
brackets, control characters) is percent-encoded."""


def gate_markdown(result: GateResult, *, report: str | None = None) -> str:
    """A Markdown summary: the verdict, a table of every reported series, the settings."""
    icon = {0: "✅", 1: "❌", 3: "⚠️"}.get(result.exit_code, "")
    out = [f"## {icon} {markdown_text(result.summary)}".replace("  ", " "), ""]
    if result.items:
        out.append("| state | kind | series | versions | Δ% | CI (Δ%) | p / q | method, n |")
        out.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for item in result.items:
            cells = [markdown_text(c) for c in gate_cells(item)]
            link = item_link(result, item, report)
            if link is not None:
                cells[2] = f"[{cells[2]}]({quote(link, safe=_LINK_SAFE)})"
            if item.acknowledgement is not None:
                cells[0] += f" ({markdown_text(item.acknowledgement.reason)})"
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    else:
        out += ["No series changed past its floor.", ""]
    out += [f"{markdown_text(line)}  " for line in settings_lines(result)]
    return "\n".join(out).rstrip() + "\n"


def _item_json(result: GateResult, item: GateItem, report: str | None) -> dict[str, Any]:
    doc = asdict(item)
    doc["ci_pct"] = list(item.ci_pct) if item.ci_pct is not None else None
    doc["acknowledgement"] = None
    if item.acknowledgement is not None:
        ack = asdict(item.acknowledgement)
        ack["expires"] = None if item.acknowledgement.expires is None else str(ack["expires"])
        doc["acknowledgement"] = ack
    doc["link"] = item_link(result, item, report)
    return doc


def gate_json(result: GateResult, *, report: str | None = None) -> str:
    """The verdict as one JSON object (sorted keys)."""
    p = result.policy
    doc = {
        "exit_code": result.exit_code,
        "summary": result.summary,
        "baseline": result.baseline,
        "candidate": result.candidate,
        "strict": result.strict,
        "compared": result.compared,
        "family_size": result.family_size,
        "family_method": result.family_method,
        "items": [_item_json(result, i, report) for i in result.items],
        "settings": {
            "q": p.q_level,
            "floor_repeats": p.floor_repeats,
            "floor_single": p.floor_single,
            "target_tokens_per_s_per_user": p.target_tokens_per_s_per_user,
            "efficiency_floor": p.efficiency_floor,
            "fail_on": sorted(p.fail_on),
            "policy": p.source,
            "acknowledgements": p.acknowledgements_source,
            "thresholds": [asdict(t) for t in p.thresholds],
        },
    }
    return json_text(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False))
