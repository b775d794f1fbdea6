"""The seed figures of SPEC §1, as data through the whole path: files → ingest → analyze.

* 718 → 1,997 tokens/s on 4 GPUs at 50 tokens/s/user: two AIPerf sweeps whose
  fronts around the target are straight lines (PCHIP then reproduces the line
  exactly, so the figures can be checked by hand). The target throughput is
  stored **per accelerator** (SPEC §4: tokens/s per accelerator), 179.5 and
  499.25; the whole system's figures, 718 and 1,997, are reported beside it. The
  tokens/s/user statistic is AIPerf's: the mean of per-request 1/TPOT.
* 1 rack (72 GPUs) → 4 racks (288 GPUs) at 99% efficiency: no finding; at 80%: a
  finding under the floor, and a drop against the previous round.
* A 1.6× gain of one platform between two MLPerf rounds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.analysis_trees import tracker_ok, write_aiperf_sweep, write_mlperf_result
from tracker.analyze.run import run_analysis
from tracker.store.facade import Store

GPUS = 4
TARGET = 50.0
STATISTIC = "mean of per-request 1/TPOT"


def line(at_target: float, slope: float, x: float) -> float:
    """System tokens/s on a straight front through (50 tokens/s/user, ``at_target``)."""
    return at_target + slope * (TARGET - x)


# (concurrency, system output tokens/s, tokens/s/user); the points around 50 lie on a
# line through the seed figure, the least interactive point bends the curve.
BEFORE = [(c, line(718.0, 12.0, x), x) for c, x in ((1, 90.0), (2, 65.0), (4, 40.0), (8, 25.0))]
BEFORE.append((16, 1100.0, 12.0))
AFTER = [(c, line(1997.0, 30.0, x), x) for c, x in ((2, 75.0), (4, 55.0), (8, 45.0), (16, 30.0))]
AFTER += [(1, 497.0, 100.0), (32, 2700.0, 15.0)]


def ingest_sweep(database_url: str, root: Path, version: str) -> None:
    tracker_ok(
        database_url,
        "ingest",
        str(root),
        "--kind",
        "aiperf",
        "--software",
        "nim",
        "--software-version",
        version,
        "--system",
        "b200-node",
        "--accelerators",
        str(GPUS),
    )


def findings_json(database_url: str, *status: str) -> list[dict]:
    result = tracker_ok(database_url, "findings", "--format", "json", *status)
    found: list[dict] = json.loads(result.stdout)
    return found


def test_718_to_1997_tokens_per_s_at_50_per_user_is_a_2_78x_software_gain(
    database_url: str, tmp_path: Path
) -> None:
    ingest_sweep(database_url, write_aiperf_sweep(tmp_path / "2.0.11", BEFORE), "2.0.11")
    ingest_sweep(database_url, write_aiperf_sweep(tmp_path / "2.0.12", AFTER), "2.0.12")
    summary = tracker_ok(database_url, "analyze").stdout
    assert "Throughput at 50 tokens/s/user (mean of per-request 1/TPOT; pchip" in summary
    assert "2 sweeps, 2 reached, 0 not reached" in summary

    with Store.open(database_url) as store:
        outcome = run_analysis(store, save=False)
    by_version = {t.version: t for t in outcome.targets}
    before, after = by_version["2.0.11"], by_version["2.0.12"]
    for found, system_total in ((before, 718.0), (after, 1997.0)):
        assert found.accelerators == GPUS and found.per_accelerator
        assert found.result.statistic == STATISTIC and found.result.method == "pchip"
        assert found.result.tokens_per_s_per_accelerator == pytest.approx(system_total / GPUS)
        assert found.tokens_per_s_at_target == pytest.approx(system_total)
    assert before.peak_tokens_per_s == pytest.approx(1100.0)
    assert after.peak_tokens_per_s == pytest.approx(2700.0)

    (gain,) = [g for g in outcome.gains if g.key == before.key]
    assert gain.key.endswith(
        f"output_tokens_per_s_per_accelerator at 50 tokens/s/user ({STATISTIC})"
    )
    assert gain.gain == pytest.approx(1997.0 / 718.0) and round(gain.gain, 2) == 2.78

    (improvement,) = [f for f in findings_json(database_url) if f["series_key"] == before.key]
    assert improvement["kind"] == "improvement" and improvement["status"] == "open"
    assert (improvement["baseline_version"], improvement["candidate_version"]) == (
        "2.0.11",
        "2.0.12",
    )
    assert improvement["change_pct"] == pytest.approx(100.0 * (1997.0 / 718.0 - 1.0))
    evidence = improvement["evidence"]
    assert evidence["baseline_level"] == pytest.approx(179.5)
    assert evidence["candidate_level"] == pytest.approx(499.25)
    assert evidence["unit"] == "tokens/s/accelerator" and evidence["workload"] == "isl65536-osl400"


def test_cost_per_million_output_tokens_at_the_target_and_at_peak(
    database_url: str, tmp_path: Path
) -> None:
    ingest_sweep(database_url, write_aiperf_sweep(tmp_path / "2.0.12", AFTER), "2.0.12")
    # AIPerf files do not name the accelerator: a local system is priced by its name
    book = tmp_path / "prices.toml"
    book.write_text('"NVIDIA B200-SXM-180GB" = 6.0\n"b200-node" = 6.25\n', "utf-8")
    summary = tracker_ok(database_url, "analyze", "--price-book", str(book)).stdout
    # $/1M = price × accelerators / (tokens/s × 3600) × 1e6
    at_target = 6.25 * GPUS / (1997.0 * 3600.0) * 1e6  # 3.477
    at_peak = 6.25 * GPUS / (2700.0 * 3600.0) * 1e6  # 2.572
    assert f"1 of 1 sweeps priced; ${at_target:.3g}-${at_target:.3g} at the target" in summary
    with Store.open(database_url) as store:
        outcome = run_analysis(store, save=False, price_book={"b200-node": 6.25})
    (target,) = outcome.targets
    assert target.cost_at_target is not None and target.cost_at_peak is not None
    assert target.cost_at_target.usd_per_million_tokens == pytest.approx(at_target)
    assert target.cost_at_peak.usd_per_million_tokens == pytest.approx(at_peak)
    assert (target.cost_at_target.accelerators, target.cost_at_target.price_per_hour) == (4, 6.25)
    with Store.open(database_url) as store:
        unpriced = run_analysis(store, save=False, price_book={"other": 1.0})
    assert unpriced.targets[0].cost_at_peak is None
    assert unpriced.targets[0].cost_note == "'b200-node' is not in the price book"


def test_a_curve_that_never_reaches_the_target_is_an_sla_miss_not_a_zero(
    database_url: str, tmp_path: Path
) -> None:
    slow = [(c, 500.0 * c, 40.0 - c) for c in (1, 2, 4)]  # every point under 50 tokens/s/user
    ingest_sweep(database_url, write_aiperf_sweep(tmp_path / "slow", slow), "2.0.11")
    summary = tracker_ok(database_url, "analyze").stdout
    assert "1 sweeps, 0 reached, 1 not reached" in summary
    (miss,) = [f for f in findings_json(database_url) if f["kind"] == "sla_miss"]
    assert miss["candidate_version"] == "2.0.11"
    assert miss["evidence"]["most_interactive_tokens_per_s_per_user"] == 39.0
    assert miss["evidence"]["statistic"] == STATISTIC
    with Store.open(database_url) as store:
        outcome = run_analysis(store, save=False)
    (target,) = outcome.targets
    assert target.result.tokens_per_s_per_accelerator is None
    assert target.result.best_measured is None and target.is_sla_miss
    assert not any(s.key == target.key for s in outcome.series)  # "not reached" is not zero


def round_with_racks(root: Path, rack: float, efficiency: float) -> Path:
    """GB300: one rack (72) with ``rack`` tokens/s and four racks at ``efficiency``."""
    write_mlperf_result(root, "GB300-NVL72x72_TRT", nodes=18, per_node=4, tokens_per_s=rack)
    racks = 4 * efficiency * rack
    write_mlperf_result(root, "GB300-NVL72x288_TRT", nodes=72, per_node=4, tokens_per_s=racks)
    return root


def test_four_racks_at_99_percent_then_80_percent_and_a_1_6x_gain_across_rounds(
    database_url: str, tmp_path: Path
) -> None:
    tracker_ok(database_url, "ingest", str(round_with_racks(tmp_path / "v5.1", 1e6, 0.99)))
    tracker_ok(database_url, "analyze")
    with Store.open(database_url) as store:
        first = run_analysis(store, save=False)
    (group,) = first.groups()
    assert group.version == "v5.1" and group.key.accelerator == "NVIDIA GB300"
    assert [(p.accelerators, p.efficiency) for p in group.points] == [
        (72, 1.0),
        (288, pytest.approx(0.99)),
    ]
    assert not any(f["kind"] == "scaling_efficiency" for f in findings_json(database_url))

    tracker_ok(database_url, "ingest", str(round_with_racks(tmp_path / "v6.0", 1.6e6, 0.80)))
    tracker_ok(database_url, "analyze")
    with Store.open(database_url) as store:
        second = run_analysis(store, save=False)
    efficiencies = {g.version: g.points[1].efficiency for g in second.groups()}
    assert efficiencies == {"v5.1": pytest.approx(0.99), "v6.0": pytest.approx(0.80)}
    scaling = [f for f in findings_json(database_url) if f["kind"] == "scaling_efficiency"]
    assert sorted(f["method"] for f in scaling) == ["efficiency_below_floor", "efficiency_drop"]
    for finding in scaling:
        evidence = finding["evidence"]
        assert finding["candidate_version"] == "v6.0"
        assert evidence["efficiency"] == pytest.approx(0.80)
        assert (evidence["base_accelerators"], evidence["accelerators"]) == (72, 288)
        assert evidence["at_version"]["value"] == pytest.approx(4 * 0.80 * 1.6e6)
    (drop,) = [f for f in scaling if f["method"] == "efficiency_drop"]
    assert drop["baseline_version"] == "v5.1"
    assert drop["evidence"]["baseline_efficiency"] == pytest.approx(0.99)

    one_rack = [g for g in second.gains if "GB300-NVL72x72_TRT" in g.key]
    assert [(g.baseline, g.candidate, round(g.gain, 6)) for g in one_rack] == [
        ("v5.1", "v6.0", 1.6)
    ]
    by_system = {s.group: s for s in second.gains_by_system}
    assert by_system["NVIDIA/GB300-NVL72x72_TRT"].geometric_mean == pytest.approx(1.6)
    gains = [f for f in findings_json(database_url) if f["kind"] == "improvement"]
    assert any(
        "GB300-NVL72x72_TRT" in f["series_key"] and f["change_pct"] == pytest.approx(60.0)
        for f in gains
    )
