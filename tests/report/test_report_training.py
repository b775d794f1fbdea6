"""The report's MLPerf Training pages and overview section, from the real v5.0 and v5.1 rounds.

The two rounds of ``../shared/data/mlperf-training`` are ingested and the
report is rendered once per module, both through the command line; the tests
read the rendered HTML and the chart specs in it (no browser).
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_rows import tracker
from tests.support.field_docs import field_docs
from tracker.formats.mlperf_training.read import RUN_TIME_TO_TRAIN, SCORE, SOFTWARE
from tracker.records.results import VersionInfo
from tracker.report.common import SystemNames
from tracker.report.inputs import (
    RUN_METRIC,
    SCORE_METRIC,
    TRAINING_SOFTWARE,
    ReportInput,
    TrainingRun,
    TrainingScore,
)
from tracker.report.pages.training import (
    STRIP_WIDTH,
    TrainingBenchmarkPage,
    TrainingIndexPage,
    TrainingLine,
    TrainingRow,
    build_training_pages,
    run_offsets,
    training_href,
)
from tracker.store.facade import Store

Figure = dict[str, Any]
ROUNDS = ["v5.0", "v5.1"]


@pytest.fixture(scope="module")
def site(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("training-report")
    url = f"sqlite:///{work / 'tracker.db'}"
    rounds = shared_data / "mlperf-training"
    result = tracker(url, work / "cache", "ingest", str(rounds / "v5.0"), str(rounds / "v5.1"))
    assert result.exit_code == 0, result.output
    result = tracker(url, work / "cache", "report", "--out", str(work / "site"))
    assert result.exit_code == 0, result.output
    return work / "site"


def text_of(page: Path) -> str:
    """The page's visible text, one space between words."""
    raw = page.read_text(encoding="utf-8")
    raw = re.sub(r"<script.*?</script>|data-figure='[^']*'", "", raw, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", raw)).split())


def figures(page: Path) -> dict[str, Figure]:
    """Each chart of the page by its caption."""
    raw = page.read_text(encoding="utf-8")
    found = re.findall(r"<figcaption>(.*?)</figcaption>\s*<div[^>]*data-figure='([^']*)'", raw)
    return {html.unescape(title): json.loads(html.unescape(spec)) for title, spec in found}


def traces(figure: Figure) -> dict[str, Figure]:
    return {trace["name"]: trace for trace in figure["data"]}


def test_the_reports_names_are_the_readers() -> None:
    assert (TRAINING_SOFTWARE, SCORE_METRIC, RUN_METRIC) == (
        SOFTWARE,
        SCORE.name,
        RUN_TIME_TO_TRAIN.name,
    )


def test_the_overview_says_the_software_gain_and_the_scaling_in_words(site: Path) -> None:
    text = text_of(site / "index.html")
    assert "MLPerf Training 3 changes across rounds and system sizes" in text
    assert (
        "MangoBoost MI300X-LLMBoost-GPUBoost-1node, llama2_70b_lora: v5.0 → v5.1, "
        "29.60 → 28.37 minutes to train: 1.043× faster (software gain) gain"
    ) in text
    assert (
        "University-of-Florida, llama31_8b (v5.1): hpg.dgxb200x8.n8 → hpg.dgxb200x8.n32, "
        "64 → 256 accelerators (4×), 18.10 → 10.02 minutes to train (1.81× faster; "
        "1,158 → 2,566 accelerator-minutes): scaling efficiency 0.45, below the 0.90 floor "
        "scaling warning"
    ) in text
    assert (
        "8 → 16 accelerators (2×), 29.60 → 16.36 minutes to train (1.81× faster; "
        "236.8 → 261.8 accelerator-minutes): scaling efficiency 0.90, at or above the 0.90 floor"
    ) in text
    assert 'href="training.html"' in (site / "index.html").read_text(encoding="utf-8")


def test_the_mangoboost_chart_has_the_score_and_every_run_dropped_runs_marked(
    site: Path,
) -> None:
    page = site / training_href("llama2_70b_lora")
    title = "MI300X-LLMBoost-GPUBoost-1node: time to train (minutes, lower is better)"
    chart = traces(figures(page)[title])
    score = chart["score (olympic mean × scaling factor)"]
    assert (score["x"], score["y"]) == ([0.0, 1.0], [29.5956, 28.374])
    assert score["customdata"] == ["v5.0", "v5.1"]  # the round in the hover box
    assert score["text"][0] == (
        "score 29.5956 min = olympic mean 28.1555 min × scaling factor 1.05115; 8 of 10 runs used"
    )
    mean = chart["olympic mean of the runs used, min–max of them"]
    assert mean["y"] == [28.1555, 27.4219] and mean["error_y"]["type"] == "data"
    used = chart["run used"]
    assert len(used["y"]) == 16 and sum(x < 0.5 for x in used["x"]) == 8
    fastest, slowest = chart["dropped: fastest"], chart["dropped: slowest"]
    assert fastest["y"] == [24.8856, 24.0474] and slowest["y"] == [32.3546, 27.7112]
    assert fastest["text"][0] == (
        "v5.0 · run 1 (result_1) · 24.8856 min · dropped: the fastest run (olympic mean)"
    )
    assert slowest["marker"]["symbol"] != used["marker"]["symbol"] != fastest["marker"]["symbol"]
    assert "not converged" not in chart
    layout = figures(page)[title]["layout"]
    assert layout["yaxis"]["title"]["text"].startswith("time to train")
    assert (layout["xaxis"]["tickvals"], layout["xaxis"]["ticktext"]) == ([0.0, 1.0], ROUNDS)


def test_runs_of_one_round_stand_side_by_side_in_file_order(site: Path) -> None:
    page = site / training_href("llama2_70b_lora")
    title = "MI300X-LLMBoost-GPUBoost-1node: time to train (minutes, lower is better)"
    runs = [
        (x, text.split(" · ")[1])
        for name, trace in traces(figures(page)[title]).items()
        if name.startswith(("run ", "dropped", "not converged"))
        for x, text in zip(trace["x"], trace["text"], strict=True)
    ]
    assert len(runs) == 20  # 10 runs in each round, none hidden behind another
    for tick, round_label in enumerate(ROUNDS):
        strip = sorted((x, run) for x, run in runs if abs(x - tick) < 0.5)
        assert [run for _x, run in strip] == [f"run {i} (result_{i})" for i in range(10)]
        xs = [x for x, _run in strip]
        assert xs == [round(tick + offset, 4) for offset in run_offsets(10)], round_label
    # the strip is centred on the round's tick and narrower than the gap between rounds
    assert run_offsets(10)[0] == -run_offsets(10)[-1] and run_offsets(10)[-1] <= STRIP_WIDTH / 2
    assert len(set(run_offsets(10))) == 10


def test_run_offsets_are_even_centred_and_the_same_for_the_same_count() -> None:
    assert run_offsets(0) == [] and run_offsets(1) == [0.0]
    assert run_offsets(3) == [-0.08, 0.0, 0.08]  # a few runs stay close to their tick
    assert run_offsets(5) == run_offsets(5)
    wide = run_offsets(40)  # unet3d's 40 runs still fit between two ticks
    assert (wide[0], wide[-1]) == (-STRIP_WIDTH / 2, STRIP_WIDTH / 2)
    steps = {round(b - a, 4) for a, b in zip(wide, wide[1:], strict=False)}
    assert len(steps) <= 2 and min(steps) > 0  # even (to the 4 decimals kept)


def test_runs_that_did_not_converge_are_marked_with_their_reason(site: Path) -> None:
    dlrm = traces(next(iter(figures(site / training_href("dlrm_dcnv2")).values())))
    failed = dlrm["not converged"]
    assert failed["y"] == [1.62282] and failed["marker"]["symbol"] == "x"
    assert failed["text"][0].startswith(
        "v5.1 · run 1 (result_1) · 1.6228 min · not converged: quality target not reached"
    )
    bert = text_of(site / training_href("bert"))
    assert (
        "tinybox_green v5.0 6 accelerators 213.6043 min 213.6043 min 1 8 of 10 runs used; "
        "dropped: fastest result_3, not converged result_2 result_2 (218.6423 min): line 8: "
        "init_stop 32.3 minutes after the first init_start (limit 30 minutes)"
    ) in bert
    retinanet = text_of(site / training_href("retinanet"))
    assert "result_4 (no time): no run_stop: the run did not finish" in retinanet


def test_the_training_page_links_every_benchmark_and_report_json_lists_them(site: Path) -> None:
    text = text_of(site / "training.html")
    assert "15 result folders" in text
    assert "llama2_70b_lora 5 systems, 6 result folders" in text
    report = json.loads((site / "report.json").read_text(encoding="utf-8"))
    assert len(report["pages"]["training"]) == 8
    assert all((site / href).is_file() for href in report["pages"]["training"])
    assert [line["kind"] for line in report["overview"]["training"]] == [
        "gain",
        "scaling",
        "scaling",
    ]


def test_a_folder_without_a_score_shows_its_runs_and_says_so() -> None:
    runs = (
        TrainingRun("result_0", 10.0, "not scored", True),
        TrainingRun("result_1", 12.0, "not scored", False, "quality target not reached"),
        TrainingRun("result_2", None, "dropped (not converged)", False, "no run_stop"),
    )
    score = TrainingScore(
        "v5.0", "Corp", "box", "Corp/box", "bert", "Corp/results/box/bert", 8, None, None, 1.0, runs
    )
    data = ReportInput(
        points=(), versions=(VersionInfo(TRAINING_SOFTWARE, "v5.0", "0"),), training=(score,)
    )
    index, pages = build_training_pages(data, SystemNames([]), (), generated_at="now")
    assert index.folders == 1 and [href for href, _p in pages] == [training_href("bert")]
    page = pages[0][1]
    row = page.rows[0]
    assert row.score is None and row.runs.startswith("no score (0 of 3 runs used")
    assert row.not_converged == (
        "result_1 (12.0000 min): quality target not reached",
        "result_2 (no time): no run_stop",
    )
    chart = traces(page.charts[0].spec)
    assert chart["score (olympic mean × scaling factor)"]["y"] == [None]
    assert chart["score (olympic mean × scaling factor)"]["text"] == [
        "no score: 2 runs did not converge; 0 of 3 runs used"
    ]
    assert chart["run of a folder with no score"]["y"] == [10.0]
    assert chart["not converged"]["y"] == [12.0]


@pytest.mark.parametrize(
    "context_class",
    [TrainingBenchmarkPage, TrainingIndexPage, TrainingLine, TrainingRow],
    ids=lambda c: c.__name__,
)
def test_every_training_page_field_has_help_text(context_class: type[Any]) -> None:
    docs = field_docs(context_class)
    for item in dataclasses.fields(context_class):
        assert docs.get(item.name), f"{context_class.__name__}.{item.name} has no help"


def test_the_report_reads_only_the_training_rows_from_the_store(site: Path) -> None:
    with Store.open(f"sqlite:///{site.parent / 'tracker.db'}") as store:
        rows = list(store.iter_export_rows(software=TRAINING_SOFTWARE))
        assert len(rows) == 147 and {r.software for r in rows} == {TRAINING_SOFTWARE}
        assert list(store.iter_export_rows(software="mlperf-inference")) == []
