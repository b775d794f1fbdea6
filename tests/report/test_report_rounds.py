"""A round at a glance (issue #36), on the shared rounds with the v6.0 and v6.1 tables.

Each round's page holds an accelerator × benchmark matrix: for every benchmark and
scenario, the best result per accelerator of each accelerator model, closed and
open divisions apart. Every cell of v6.0 and v6.1 is the figure ``tracker compare
--round`` prints (the best of the model's systems, to 6 significant digits), and
the matrix has no cell the command does not imply. Then what the page says besides:
what moved since the previous round (the same configuration only), the preview
systems marked, and the link from the overview's first lines.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from tests.support.rounds_site import RoundsSite, build_rounds_site, tracker
from tracker.report.filters import format_compact, format_ratio, ratio_class

Cells = dict[tuple[str, str, str, str], str]
"""(division, benchmark, scenario, accelerator) → the best result per accelerator (6 digits)."""


@pytest.fixture(scope="module")
def rounds(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> RoundsSite:
    return build_rounds_site(shared_data, tmp_path_factory.mktemp("rounds"))


_CASE = re.compile(r"^(v\S+) (\S+) (\S+) \(")
_ROW = re.compile(
    r"^  \d+\. (?P<key>.+?)(?: \((?:preview|rdi)\))?: \d+ × (?P<accelerator>.+?)"
    r"(?: \(the description says \d+\))?, (?P<value>\S+) per accelerator \("
)
_DIVISION = re.compile(r" \[(?P<division>[^\]]+)\]$")


def compare_cells(text: str) -> Cells:
    """The matrix ``tracker compare --round`` implies: per case, division and accelerator
    model, the largest figure per accelerator among its systems."""
    best: dict[tuple[str, str, str, str], float] = {}
    case: tuple[str, str] | None = None
    for line in text.splitlines():
        if (found := _CASE.match(line)) is not None:
            case = (found[2], found[3])
            continue
        if (row := _ROW.match(line)) is None:
            continue
        assert case is not None, line
        division = _DIVISION.search(row["key"])
        key = (division["division"] if division else "closed", *case, row["accelerator"])
        best[key] = max(best.get(key, 0.0), float(row["value"].replace(",", "")))
    return {key: f"{value:.6g}" for key, value in best.items()}


_SECTION = re.compile(
    r'<section class="round-division" id="division-([^"]+)">(.*?)</section>', re.S
)
_CELL = re.compile(
    r'<td class="matrix-cell [^"]*" data-value="([^"]+)" data-case="([^"]+)"'
    r' data-accelerator="([^"]+)" data-ratio="([^"]+)"'
)


def page_cells(page: Path) -> tuple[Cells, dict[tuple[str, str, str, str], float]]:
    """The matrix of a round page: its cells' figures (6 digits) and ratios."""
    cells: Cells = {}
    ratios = {}
    for division, body in _SECTION.findall(page.read_text(encoding="utf-8")):
        for value, case, accelerator, ratio in _CELL.findall(body):
            benchmark, scenario = html.unescape(case).split("|")
            key = (division, benchmark, scenario, html.unescape(accelerator))
            assert key not in cells, key
            cells[key] = f"{float(value):.6g}"
            ratios[key] = float(ratio)
    return cells, ratios


def round_page(site: Path, label: str) -> Path:
    report = json.loads((site / "report.json").read_text(encoding="utf-8"))
    (href,) = [h for h, shown in report["pages"]["rounds"].items() if shown == label]
    return site / href


@pytest.mark.parametrize("label", ["v6.0", "v6.1"])
def test_the_round_matrix_is_what_tracker_compare_prints(rounds: RoundsSite, label: str) -> None:
    expected = compare_cells(tracker(rounds.url, "compare", "--round", label))
    cells, ratios = page_cells(round_page(rounds.site, label))
    assert len(expected) > 100
    assert cells == expected
    # Each column's leader is 1; every other cell is its figure over the leader's.
    leaders: dict[tuple[str, str, str], float] = {}
    for (division, benchmark, scenario, _acc), value in cells.items():
        column = (division, benchmark, scenario)
        leaders[column] = max(leaders.get(column, 0.0), float(value))
    for key, value in cells.items():
        assert ratios[key] == pytest.approx(float(value) / leaders[key[:3]], rel=1e-5)
    assert {d for d, *_rest in cells} == {"closed", "open"}


def _text(path: Path) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", path.read_text("utf-8"))).split())


def test_a_round_says_what_moved_since_the_previous_one(rounds: RoundsSite) -> None:
    text = _text(round_page(rounds.site, "v6.1"))
    moved = text[text.index("What moved since v6.0") :]
    # tracker compare --round v6.1 --against-round v6.0: GB300 NVL72 x72 deepseek-r1
    # Server, nothing but the software changed: 1.491× per accelerator.
    assert re.search(
        r"deepseek-r1 Server GB300-NVL72_GB300-288GB_aarch64x72_TRT \(NVIDIA\) 72 × NVIDIA GB300"
        r" [\d,.]+ → [\d,.]+ tokens/s 1\.49×",
        moved,
    ), moved[:2000]
    assert "whose configuration changed" in moved
    # Vera Rubin NVL72 is a preview system: marked in its cells.
    page = round_page(rounds.site, "v6.1").read_text(encoding="utf-8")
    assert re.search(
        r'data-accelerator="NVIDIA Vera Rubin"[^>]*>[^<]*<span class="matrix-value">'
        r'[^<]+</span> <span class="matrix-ratio">1×</span> <span class="label">'
        r"preview</span>",
        page,
    )


def test_the_overview_links_every_round_in_its_first_lines(rounds: RoundsSite) -> None:
    index = (rounds.site / "index.html").read_text(encoding="utf-8")
    first_screen = index[index.index("<main>") : index.index("<h2")]
    links = re.findall(r'<a href="(round/[^"]+)">([^<]+)</a>', first_screen)
    assert [shown for _href, shown in links] == ["v5.1", "v6.0", "v6.1"]
    assert all((rounds.site / href).is_file() for href, _shown in links)


def test_matrix_cells_are_compact_and_coloured_by_ratio() -> None:
    assert [format_compact(v) for v in (9066.0, 652_750.0, 2_494_310.0, 760.555, 0.61)] == [
        "9.07k",
        "653k",
        "2.49M",
        "760.6",
        "0.61",
    ]
    assert [format_ratio(r) for r in (1.0, 0.38812, 2.5714)] == ["1×", "0.388×", "2.57×"]
    assert [ratio_class(r) for r in (1.0, 0.95, 0.9, 0.7, 0.5, 0.39)] == [
        "ratio-5",
        "ratio-5",
        "ratio-4",
        "ratio-3",
        "ratio-2",
        "ratio-1",
    ]


def analyze_counts(output: str) -> dict[str, int]:
    """What ``tracker analyze`` printed: series, comparisons per verdict, configuration
    changes."""
    series = re.search(r"^Analysed [\d,]+ results .* in ([\d,]+) series", output, re.M)
    compared = re.search(r"^Comparisons: (\d+) \(.*\): (.*)$", output, re.M)
    changed = re.search(r"^Configuration changed: (\d+) series", output, re.M)
    assert series and compared and changed, output
    counts = {"series": int(series[1].replace(",", "")), "compared": int(compared[1])}
    for part in compared[2].split(", "):
        verdict, n = part.rsplit(" ", 1)
        counts[verdict] = int(n)
    counts["configuration_changed"] = int(changed[1])
    return counts


def overview_counts(index: Path) -> dict[str, int]:
    """The overview's analysis line: each count it states, by name."""
    found = re.findall(r'<span data-count="([^"]+)">([\d,]+)</span>', index.read_text("utf-8"))
    return {name: int(n.replace(",", "")) for name, n in found}


def test_the_overview_counts_as_tracker_analyze_does(rounds: RoundsSite) -> None:
    expected = analyze_counts(rounds.analyze_output)
    assert expected["compared"] > 60 and expected["improvement"] > 20
    assert overview_counts(rounds.site / "index.html") == expected


def test_the_power_results_are_ranked_per_watt_beside_performance(rounds: RoundsSite) -> None:
    # v5.1: Lenovo's SR680a V3 measured with power (the results table's Power_Result, W).
    text = _text(round_page(rounds.site, "v5.1"))
    power = text[text.index("Performance per watt") :]
    rows = re.findall(
        r"(\d) SR680a_V3_B200SXMx8_TRT (\S+) (\w+)(?: \(the same measurement as (\S+)\))?"
        r" ([\d.]+) tokens/s per W ([\d,]+) tokens/s ([\d,]+) W",
        power,
    )
    # Five results, of which one is the -99.9 twin of a -99 one (the same run): four rows,
    # best per watt first (the Server runs of -99 and -99.9 are two measurements).
    assert [r[:4] for r in rows] == [
        ("1", "llama2-70b-99", "Offline", "llama2-70b-99.9"),
        ("2", "llama2-70b-99.9", "Server", ""),
        ("3", "llama2-70b-99", "Server", ""),
        ("4", "whisper", "Offline", ""),
    ]
    assert rows[0][4:] == ("9.894", "102,909", "10,401")  # 102,909 tokens/s ÷ 10,401 W
    per_watt = [float(r[4]) for r in rows]
    assert per_watt == sorted(per_watt, reverse=True)


def test_a_benchmark_page_shows_performance_per_watt_beside_performance(
    rounds: RoundsSite,
) -> None:
    report = json.loads((rounds.site / "report.json").read_text(encoding="utf-8"))
    (href,) = [
        h for h, t in report["pages"]["benchmarks"].items() if t == "llama2-70b-99 · Offline"
    ]
    text = _text(rounds.site / href)
    # The newest round ranked first, the earlier ones folded under it, each with its figures.
    assert text.index("Ranked: mlperf-inference v6.0") < text.index("Ranked: mlperf-inference v5.1")
    v51 = text[text.index("Ranked: mlperf-inference v5.1") :]
    assert "Per watt" in v51
    # 102,909 tokens/s at 10,401 W (v5.1): 9.894 tokens/s per W.
    assert re.search(
        r"SR680a_V3_B200SXMx8_TRT Lenovo · 8 × NVIDIA B200-SXM-180GB 102,909 12,864 #\d+ 9\.894",
        text,
    )


def test_a_benchmark_page_ranks_by_result_and_per_accelerator(rounds: RoundsSite) -> None:
    report = json.loads((rounds.site / "report.json").read_text(encoding="utf-8"))
    (href,) = [
        h for h, t in report["pages"]["benchmarks"].items() if t == "deepseek-r1 · Interactive"
    ]
    text = _text(rounds.site / href)
    ranked = text[text.index("Ranked: mlperf-inference v6.1") :]
    ranked = ranked[: ranked.index("Ranked: mlperf-inference v6.0")]
    rows = re.findall(
        r"(\d+) (\S+(?: \(\w+\))?)(?: preview)? \S+ · (\d+) × .+? ([\d,]+) ([\d,]+) #(\d+)", ranked
    )
    assert len(rows) >= 5
    results = [int(r[3].replace(",", "")) for r in rows]
    assert results == sorted(results, reverse=True)  # ranked by result
    per = {int(r[5]): int(r[4].replace(",", "")) for r in rows}
    assert [per[k] for k in sorted(per)] == sorted(per.values(), reverse=True)
    # Vera Rubin NVL72 (preview): 652,750 tokens/s on 72, the most per accelerator.
    assert per[1] == 9066
