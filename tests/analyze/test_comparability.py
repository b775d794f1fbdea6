"""Software gains that are software (issue #31): each case of the issue on the shared files,
and a property over all shared rounds.

The shared rounds (v4.1, v5.1, v6.0, v6.1 with its whole ``summary.json``, and the whole
v6.0 table) are ingested once (table first), analysed and reported. Then:

* Dell's Pro Max GB10 yolo ran on the CPU in v6.0 ("CPU only submission" in the table's
  notes) and on its GPU in v6.1: *configuration changed (CPU-only → accelerated)*, in no
  headline, and no longer the analysis's best software gain (46.51× before);
* Quanta's GNR_86C (host CPU 6787P → 6788P) and D75H (6747P → 6776P, 48 → 64 cores,
  "B300 TGP 1100W" → not stated) name the host change wherever they are shown;
* Dell's XE9680 llama2-70b-99 fp16 (v4.1) → fp8 (v5.1) is no improvement on any page
  or command;
* twins count once: yolo-95/yolo-99 (byte-identical logs), Dell's and Quanta's v6.1
  llama3.1-8b Server 516.012, and Google's and Lambda's llama3.1-405b Server 1246.79
  (v5.1; those rows are not in the shared data: two small tables stand for them);
* ``tracker compare`` makes no scaling pair across host CPUs or stacks;
* a property: every finding, comparison row, gain and headline of the analysis, the
  report, ``tracker compare`` and the gate obeys the rule as the README writes it
  (:func:`same_hardware`, spelled out here apart from the tracker's own code).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.analysis_trees import tracker, tracker_ok
from tracker.analyze.platforms import SAME_SYSTEM, rank_platforms, round_gains, size_scaling
from tracker.analyze.run import AnalysisOutcome, run_analysis
from tracker.records.results import AnalysisSample, Configuration
from tracker.report.common import SystemNames
from tracker.report.pages.compare import compare_rows
from tracker.report.pages.overview import pair_gains
from tracker.report.publish import gather_report_input
from tracker.store.facade import Store

SOURCES = ("tables/v6.0", "v4.1", "v5.1", "v6.0", "v6.1", "v6.1/summary.json")
ROUNDS = ("v4.1", "v5.1", "v6.0", "v6.1")
GB10 = "Dell/Dell_Pro_Max_GB10x1"
QUANTA_GNR = "Quanta_Cloud_Technology/1-node-2S-GNR_86C"
QUANTA_D75H = "Quanta_Cloud_Technology/D75H-10U_B300-270GBx8_TRT"
XE9680 = "Dell/XE9680_H200_SXM_141GBx8_TRT"


@pytest.fixture(scope="module")
def url(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    work = tmp_path_factory.mktemp("comparability")
    database = f"sqlite:///{work / 'tracker.db'}"
    rounds = shared_data / "mlperf-inference"
    for source in SOURCES:
        tracker_ok(database, "ingest", str(rounds / source))
    return database


@pytest.fixture(scope="module")
def analysed(url: str) -> str:
    """What ``tracker analyze`` prints (the findings are stored)."""
    return tracker_ok(url, "analyze").stdout


@pytest.fixture(scope="module")
def findings(url: str, analysed: str) -> list[dict[str, Any]]:
    return json.loads(tracker_ok(url, "findings", "--format", "json").stdout)


@pytest.fixture(scope="module")
def site(url: str, analysed: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("comparability-site") / "site"
    tracker_ok(url, "report", "--out", str(out))
    return out


@pytest.fixture(scope="module")
def samples(url: str) -> list[AnalysisSample]:
    with Store.open(url) as store:
        return list(store.iter_analysis_samples())


@pytest.fixture(scope="module")
def outcome(url: str, analysed: str) -> AnalysisOutcome:
    with Store.open(url) as store:
        return run_analysis(store, save=False)


def _text(path: Path) -> str:
    page = path.read_text(encoding="utf-8")
    return " ".join(re.sub(r"<[^>]+>", " ", page).replace("&amp;", "&").split())


def _of(found: list[dict[str, Any]], system: str, benchmark: str = "") -> list[dict[str, Any]]:
    return [
        f
        for f in found
        if f"|{system}|" in f["series_key"]
        and (not benchmark or f"|{benchmark}|" in f["series_key"])
    ]


# --- the written rule, spelled out apart from tracker.analyze.groupings --------------------

_MARKS = re.compile(r"\((?:\s*x\s*\d+\s*|[^)]*power\s*cap[^)]*)\)|\((?:R|TM)\)", re.IGNORECASE)


def _norm(text: str | None) -> str | None:
    return " ".join(_MARKS.sub(" ", text or "").split()).casefold() or None


def _hosts(c: Configuration) -> int | None:
    if c.host_cpus_per_node is None or c.nodes is None:
        return c.host_cpus_per_node
    return c.host_cpus_per_node * c.nodes


def same_hardware(a: Configuration, b: Configuration, pa: str | None, pb: str | None) -> bool:
    """The README's rule: a change is a software change only when accelerator model and
    count, host CPU model and count, power mode (and a TGP both sides state), division and
    precision class (where both state one) are the same; CPU-only never pairs with accelerated.
    A field one side does not state decides nothing."""
    if a.cpu_only != b.cpu_only:
        return False
    pairs: list[tuple[object, object]] = [
        (_norm(a.host_cpu), _norm(b.host_cpu)),
        (_hosts(a), _hosts(b)),
        (a.power_mode or "performance", b.power_mode or "performance"),
        (a.tgp_w, b.tgp_w),
        ((a.division or "").casefold() or None, (b.division or "").casefold() or None),
        (pa, pb),
    ]
    if not a.cpu_only:
        pairs += [(_norm(a.accelerator), _norm(b.accelerator))]
        pairs += [(a.accelerators_total, b.accelerators_total)]
    return all(x == y for x, y in pairs if x is not None and y is not None)


Sides = dict[tuple[str, str], tuple[Configuration, str | None]]


@pytest.fixture(scope="module")
def sides(samples: list[AnalysisSample]) -> Sides:
    """(series key, version) → what its results ran on, straight from the store."""
    out: Sides = {}
    for s in samples:
        if s.configuration is not None:
            precision = " ".join((s.precision or "").split()).casefold() or None
            out.setdefault((str(s.series_key), s.version), (s.configuration, precision))
    return out


def _software(sides: Sides, key: str, baseline: str, candidate: str) -> bool:
    (a, pa), (b, pb) = sides[(key, baseline)], sides[(key, candidate)]
    return same_hardware(a, b, pa, pb)


# --- the cases of the issue ----------------------------------------------------------------


def test_gb10_cpu_only_to_accelerated_is_a_configuration_change_in_no_headline(
    analysed: str, findings: list[dict[str, Any]], site: Path
) -> None:
    found = _of(findings, GB10)
    assert {f["kind"] for f in found} == {"configuration_changed"}
    assert len(found) == 3  # Offline, SingleStream, MultiStream; yolo-99 is yolo-95's twin
    for f in found:
        assert f["evidence"]["besides_software"] == "configuration changed: CPU-only → accelerated"
    # the analysis's best software gain is no longer the GB10's 46.51x
    best = next(ln for ln in analysed.splitlines() if ln.startswith("Software gains:"))
    assert "GB10" not in best and "46.51x" not in best
    index = (site / "index.html").read_text(encoding="utf-8")
    headlines = index[: index.index("<h2>Scaling-efficiency warnings</h2>")]  # sentences, gains
    assert "Dell_Pro_Max_GB10x1" not in headlines  # and losses, open findings
    assert "4,401" not in index and "4401" not in index


def test_quanta_pairs_name_the_host_change(
    url: str, findings: list[dict[str, Any]], site: Path
) -> None:
    gnr = _of(findings, QUANTA_GNR)
    assert gnr and {f["kind"] for f in gnr} == {"configuration_changed"}
    for f in gnr:
        assert "host CPU Intel Xeon 6787P → Intel Xeon 6788P" in f["evidence"]["besides_software"]
    d75h = _of(findings, QUANTA_D75H)
    assert {f["kind"] for f in d75h} == {"configuration_changed"}
    for f in d75h:
        text = f["evidence"]["besides_software"]
        assert text.startswith(
            "configuration changed: host CPU Intel Xeon 6747P → Intel Xeon 6776P"
        )
        assert "TGP 1100 W → not stated" in text and "host cores 48 → 64" in text
    compared = tracker_ok(url, "compare", "--round", "v6.1", "--against-round", "v6.0").stdout
    lines = compared.splitlines()
    at = next(i for i, ln in enumerate(lines) if "deepseek-r1 Server: D75H-10U_B300" in ln)
    assert "host CPU Intel Xeon 6747P → Intel Xeon 6776P" in lines[at + 1]
    gate = tracker(url, "gate", "--baseline", "v6.0", "--candidate", "v6.1", "--format", "json")
    doc = json.loads(gate.stdout)
    assert gate.exit_code == 1  # the candidate's scaling efficiency below the floor (#35)
    assert {i["kind"] for i in doc["items"] if i["state"] == "failing"} == {"scaling"}
    items = [
        i
        for i in doc["items"]
        if QUANTA_D75H in i["key"] and i["kind"] != "missing"  # llama3.1-405b: not in v6.1
    ]
    assert items and {i["state"] for i in items} == {"configuration changed"}
    assert all("host CPU Intel Xeon 6747P" in i["besides_software"] for i in items)
    page = next((site / "compare").glob("mlperf-inference-v6-0-v6-1-*.html"))
    assert "host CPU Intel Xeon 6787P → Intel Xeon 6788P" in _text(page)


def test_xe9680_fp16_to_fp8_is_no_improvement_on_any_page_or_command(
    url: str, findings: list[dict[str, Any]], site: Path
) -> None:
    found = _of(findings, XE9680, "llama2-70b-99")
    assert found and {f["kind"] for f in found} == {"configuration_changed"}
    assert all("precision fp16 → fp8" in f["evidence"]["besides_software"] for f in found)
    page = _text(next((site / "compare").glob("mlperf-inference-v4-1-v5-1-*.html")))
    row = page[page.index("llama2-70b-99 · Server tokens_per_s · XE9680") :][:400]
    assert row.startswith("llama2-70b-99 · Server tokens_per_s · XE9680")
    assert "precision fp16 → fp8" in row and "(not a software change)" in row
    assert "better" not in row.split("(not a software change)")[0]
    gate = tracker_ok(url, "gate", "--baseline", "v4.1", "--candidate", "v5.1", "--format", "json")
    items = [i for i in json.loads(gate.stdout)["items"] if f"{XE9680}|llama2-70b-99|" in i["key"]]
    assert items and all(i["verdict"] == "configuration_changed" for i in items)
    compared = tracker_ok(
        url, "compare", "--round", "v5.1", "--against-round", "v4.1", "--system", XE9680
    ).stdout
    same = compared.split(SAME_SYSTEM)[1].split("\n\n")[0] if SAME_SYSTEM in compared else ""
    assert "llama2-70b-99" not in same


def test_yolo_variants_and_dell_quanta_twins_give_one_finding_each(
    findings: list[dict[str, Any]],
) -> None:
    yolo = _of(findings, GB10)
    assert {f["evidence"]["benchmark"] for f in yolo} == {"yolo-95"}
    for f in yolo:
        (twin,) = f["evidence"]["twins"]
        assert twin == f["series_key"].replace("|yolo-95|", "|yolo-99|")
    server = "llama3.1-8b|Server"
    dell = [f for f in _of(findings, "Dell/1-node-2S-GNR_86C") if server in f["series_key"]]
    quanta = [f for f in _of(findings, QUANTA_GNR) if server in f["series_key"]]
    assert quanta == []  # Quanta's 516.012 is Dell's: counted once, in Dell's finding
    (finding,) = dell
    assert finding["kind"] == "improvement"
    assert finding["evidence"]["besides_software"] == "nothing but the software"
    assert finding["evidence"]["twins"] == [f"mlperf-inference|{QUANTA_GNR}|{server}||tokens_per_s"]


def _table_row(round_label: str, submitter: str, value: float) -> dict[str, object]:
    system = "B200-SXM-180GBx8_TRT"
    return {
        "ID": f"{round_label[1:]}-0001",
        "Submitter": submitter,
        "Availability": "available",
        "Category": "closed",
        "Suite": "datacenter",
        "System": f"{submitter} B200",
        "Platform": system,
        "UsedModel": "llama3.1-405b",
        "Model": "llama3.1-405b",
        "Scenario": "Server",
        "Accuracy": "",
        "Nodes": 1,
        "Processor": "Intel(R) Xeon(R) Platinum 8570",
        "host_processors_per_node": 2,
        "host_processor_core_count": "56",
        "Accelerator": "NVIDIA B200-SXM-180GB",
        "a#": 8,
        "Location": f"closed/{submitter}/results/{system}/llama3.1-405b/Server",
        "Software": "TensorRT 10.11, CUDA 12.9",
        "Notes": "B200 TGP 1000W",
        "version": round_label,
        "inferred": 0,
        "weight_data_types": "fp4",
        "p#": 2,
        "Performance_Result": value,
        "Performance_Units": "Tokens/s",
    }


def test_google_and_lambda_twins_give_one_finding(tmp_path: Path, database_url: str) -> None:
    # Google and Lambda both publish v5.1 llama3.1-405b Server 1246.79 on one configuration
    # (the case; the v5.1 rows are not in the shared data, so two tables stand for
    # them, each system with an earlier round of its own)
    for round_label, values in (("v5.0", (1101.2, 1087.5)), ("v5.1", (1246.79, 1246.79))):
        folder = tmp_path / round_label
        folder.mkdir()
        rows = [
            _table_row(round_label, *row) for row in zip(("Google", "Lambda"), values, strict=True)
        ]
        (folder / "summary_results.json").write_text(json.dumps(rows), encoding="utf-8")
        tracker_ok(database_url, "ingest", str(folder))
    tracker_ok(database_url, "analyze")
    found = json.loads(tracker_ok(database_url, "findings", "--format", "json").stdout)
    (finding,) = found
    assert finding["kind"] == "improvement" and "|Google/" in finding["series_key"]
    assert finding["evidence"]["twins"] == [finding["series_key"].replace("|Google/", "|Lambda/")]
    gate = tracker_ok(
        database_url, "gate", "--baseline", "v5.0", "--candidate", "v5.1", "--format", "json"
    )
    (item,) = [i for i in json.loads(gate.stdout)["items"] if i["verdict"] == "improvement"]
    assert item["twins"] == finding["evidence"]["twins"]


def test_compare_makes_no_scaling_pair_across_host_cpus_or_stacks(
    samples: list[AnalysisSample],
) -> None:
    steps = 0
    for round_label in ROUNDS:
        by_system: dict[tuple[str | None, ...], AnalysisSample] = {}
        for s in samples:
            if s.version == round_label:
                by_system.setdefault((s.submitter, s.system, s.benchmark, s.scenario), s)
        for step in size_scaling(samples, round_label=round_label):
            case = (step.benchmark, step.scenario)
            before = by_system[(step.submitter, step.from_system, *case)]
            after = by_system[(step.submitter, step.to_system, *case)]
            a, b = before.configuration, after.configuration
            assert a is not None and b is not None
            assert _norm(a.host_cpu) == _norm(b.host_cpu), step
            assert a.host_cpus_per_node == b.host_cpus_per_node, step
            framework = [(s.software_stack or "").split(";")[0].strip() for s in (before, after)]
            assert framework[0] == framework[1], step
            assert (a.power_mode, a.cpu_only) == (b.power_mode, b.cpu_only), step
            steps += 1
    assert steps > 20
    # GATEOverflow's RTX 4090 x1 (onnxruntime on a Ryzen) is no size of x2 (TensorRT on a Xeon)
    v51 = size_scaling(samples, round_label="v5.1")
    assert not [s for s in v51 if s.submitter == "GATEOverflow"]


# --- the property ---------------------------------------------------------------------------


def test_every_finding_comparison_gain_and_headline_obeys_the_written_rule(
    url: str,
    findings: list[dict[str, Any]],
    outcome: AnalysisOutcome,
    samples: list[AnalysisSample],
    sides: Sides,
    site: Path,
) -> None:
    counted = {"findings": 0, "rows": 0, "gains": 0, "compare": 0}
    for f in findings:  # tracker findings
        if f["kind"] in ("improvement", "regression", "suspect", "configuration_changed"):
            software = _software(
                sides, f["series_key"], f["baseline_version"], f["candidate_version"]
            )
            assert software == (f["kind"] != "configuration_changed"), f
            said = f["evidence"]["besides_software"]
            assert said.startswith(
                "nothing but the software" if software else "configuration changed:"
            )
            counted["findings"] += 1
    for g in outcome.gains:  # the analysis's software gains (its summary's best and worst)
        assert _software(sides, g.key, g.baseline, g.candidate), g
    with Store.open(url) as store:  # the report's comparison rows and its headlines' gains
        data = gather_report_input(store)
        names = SystemNames((i.key, i.name) for i in data.systems)
        for pair in data.pairs:
            for row in compare_rows(pair, data.infos, names):
                key = next(k for k, i in data.infos.items() if _is_row(i, row, pair.software))
                software = _software(sides, key, pair.baseline, pair.candidate)
                assert software == (row.verdict != "configuration_changed"), (key, row)
                counted["rows"] += 1
            gains = pair_gains(pair, data.infos, names)
            twins = {t for g in gains for t in pair.twins.get(g.series_key, ())}
            for gain in gains:
                assert _software(sides, gain.series_key, pair.baseline, pair.candidate)
                assert gain.series_key not in twins  # one measurement, one gain
                counted["gains"] += 1
    for old, new in zip(ROUNDS, ROUNDS[1:], strict=False):  # tracker compare --against-round
        for gain in round_gains(samples, old_round=old, new_round=new):
            if gain.kind == SAME_SYSTEM:
                assert gain.besides.startswith("nothing but the software"), gain
                counted["compare"] += 1
            else:
                assert gain.besides.startswith("configuration changed:"), gain
    assert all(counted.values()), counted
    # stacks of one round are a ranking: no finding or comparison has a direction between them
    stacks = {s.key for s in outcome.stack_series}
    assert not [f for f in findings if f["series_key"] in stacks]
    # availability is shown where platforms are ranked: Vera Rubin NVL72 is a preview system
    vr = [
        r.availability
        for ranking in rank_platforms(samples, round_label="v6.1")
        for r in ranking.results
        if r.system == "VR-NVL72_VR-288GB_aarch64x72_TRT"
    ]
    assert vr and set(vr) == {"preview"}


def _is_row(info: Any, row: Any, software: str) -> bool:
    return (
        info.software == software
        and info.axis == "version"
        and (info.benchmark, info.scenario, info.workload, info.metric)
        == (row.benchmark, row.scenario, row.workload, row.metric)
        and info.system == row.system_key
    )
