"""Issue 34 in the gate: expected gains (``[[expect]]``, the mirror of acknowledgements) and
the sensitivity statement of each item and of the summary line.

The gate runs on in-memory records (``analyse`` of the pair under the policy, then
``evaluate_gate``), 3 repeats a version, seeded.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from tracker.analyze.run import analyse
from tracker.errors import ConfigError
from tracker.gate.decision import GateResult, evaluate_gate, gate_settings
from tracker.gate.output import gate_json, gate_markdown, settings_lines
from tracker.gate.policy import GatePolicy, parse_policy
from tracker.records.keys import VersionPair
from tracker.records.results import AnalysisSample, VersionInfo
from tracker.versions import version_sort_key

TODAY = date(2026, 9, 1)


def _sample(i: int, benchmark: str, version: str, value: float) -> AnalysisSample:
    return AnalysisSample(
        "stack", version, f"/node-{i}", f"node-{i}", None, None, "GPU", 1, None, None,
        benchmark, "Offline", "", "tokens_per_s", "tokens/s", True, value, True, "s", None,
    )  # fmt: skip


def _records(
    gains: dict[str, list[float]], *, cv: float = 0.01, series: int = 30, seed: int = 0
) -> tuple[list[AnalysisSample], list[VersionInfo]]:
    """``series`` series of each benchmark; ``gains[benchmark][k]`` is the level of version
    ``1.k`` against ``1.0`` (3 repeats each)."""
    rng = np.random.default_rng(seed)
    samples = []
    labels = [f"1.{k}" for k in range(max(len(v) for v in gains.values()))]
    for benchmark, levels in gains.items():
        for i in range(series):
            for label, level in zip(labels, levels, strict=False):
                for x in 1000.0 * level * (1.0 + rng.normal(0.0, cv, 3)):
                    samples.append(_sample(i, benchmark, label, float(x)))
    return samples, [VersionInfo("stack", v, version_sort_key(v)) for v in labels]


def _gate(
    records: tuple[list[AnalysisSample], list[VersionInfo]], policy: GatePolicy, pair: VersionPair
) -> GateResult:
    samples, versions = records
    outcome = analyse(samples, [], versions, settings=gate_settings(policy), pair=pair)
    return evaluate_gate(outcome, policy, pair=pair, today=TODAY)


def _policy(text: str, tmp_path: Path) -> GatePolicy:
    return parse_policy(text.encode(), source="gate.toml", base_dir=tmp_path)


EXPECT = '[[expect]]\nmatch = "llama*"\ncandidate = "{c}"\nmin_gain = 0.10\nreason = "v2"\n'
PAIR = VersionPair("1.0", "1.1")


def test_an_expected_gain_that_shows_is_met_and_the_gate_passes(tmp_path: Path) -> None:
    policy = _policy(EXPECT.format(c="1.1"), tmp_path)
    result = _gate(_records({"llama-70b": [1.0, 1.15], "resnet": [1.0, 1.0]}), policy, PAIR)
    assert result.exit_code == 0
    (check,) = result.expectations
    assert check.met and check.matched == check.shown == 30
    assert "1 expected gain met" in result.summary
    assert any("shown by 30 of 30 series" in line for line in settings_lines(result))


def test_an_expected_gain_that_does_not_show_fails_the_gate(tmp_path: Path) -> None:
    policy = _policy(EXPECT.format(c="1.1"), tmp_path)
    result = _gate(_records({"llama-70b": [1.0, 1.03], "resnet": [1.0, 1.0]}), policy, PAIR)
    assert result.exit_code == 1
    failing = result.with_state("failing")
    assert len(failing) == 30 and {i.kind for i in failing} == {"expected"}
    assert "expected ≥ +10% for llama* at 1.1 (v2): measured +3." in failing[0].detail
    assert "30 expected gains not shown" in result.summary
    assert not result.expectations[0].met


def test_an_expected_gain_nothing_measures_fails_the_gate(tmp_path: Path) -> None:
    policy = _policy(EXPECT.format(c="1.1").replace("llama*", "gpt*"), tmp_path)
    result = _gate(_records({"llama-70b": [1.0, 1.15]}), policy, PAIR)
    assert result.exit_code == 1
    (item,) = result.with_state("failing")
    assert item.kind == "expected" and "no compared series matches" in item.detail


def test_an_expectation_is_checked_only_at_its_candidate(tmp_path: Path) -> None:
    policy = _policy(EXPECT.format(c="1.1"), tmp_path)
    records = _records({"llama-70b": [1.0, 1.15, 1.15]})
    later = _gate(records, policy, VersionPair("1.1", "1.2"))
    assert later.exit_code == 0 and later.expectations == ()


def test_over_a_range_a_gain_already_in_the_baseline_retires_the_expectation(
    tmp_path: Path,
) -> None:
    policy = _policy(EXPECT.format(c="1.1..1.3"), tmp_path)
    landed = _records({"llama-70b": [1.0, 1.15, 1.15]})
    first = _gate(landed, policy, VersionPair("1.0", "1.1"))
    after = _gate(landed, policy, VersionPair("1.1", "1.2"))
    assert first.exit_code == 0 and first.expectations[0].shown == 30
    assert after.exit_code == 0 and after.expectations[0].retired == 30
    assert after.expectations[0].met
    pending = _gate(_records({"llama-70b": [1.0, 1.0, 1.0]}), policy, VersionPair("1.1", "1.2"))
    assert pending.exit_code == 1 and not pending.expectations[0].met


def test_expect_entries_are_read_and_checked(tmp_path: Path) -> None:
    (entry,) = _policy(EXPECT.format(c="2.1.0"), tmp_path).expectations
    assert (entry.match, entry.candidate, entry.min_gain, entry.reason) == (
        "llama*",
        "2.1.0",
        0.10,
        "v2",
    )
    assert entry.applies_to("2.1.0") and not entry.applies_to("2.1.1")
    with pytest.raises(ConfigError, match="expect 1: 'min_gain' is required"):
        _policy('[[expect]]\nmatch = "a"\ncandidate = "1"\n', tmp_path)
    with pytest.raises(ConfigError, match="expect 1: unknown key 'gain'"):
        _policy('[[expect]]\nmatch = "a"\ncandidate = "1"\ngain = 0.1\n', tmp_path)
    with pytest.raises(ConfigError, match="expect 1.min_gain: must lie between 0"):
        _policy('[[expect]]\nmatch = "a"\ncandidate = "1"\nmin_gain = -0.1\n', tmp_path)


def test_the_summary_counts_the_series_that_could_not_see_five_percent() -> None:
    policy = GatePolicy()
    quiet = _records({"llama-70b": [1.0, 1.0]}, cv=0.005, series=40)
    noisy = _records({"llama-70b": [1.0, 1.0]}, cv=0.04, series=40)
    assert _gate(quiet, policy, PAIR).summary.endswith(
        "1.0 → 1.1; every series could see a 5% change)"
    )
    result = _gate(noisy, policy, PAIR)
    assert result.summary.endswith("1.0 → 1.1; 100% of 40 series could not see a 5% change)")
    assert result.under_powered == 40
    doc = json.loads(gate_json(result))
    assert doc["sensitivity"]["blind_share"] == 1.0 and len(doc["sensitivity"]["series"]) == 40
    assert doc["sensitivity"]["series"][0]["detectable_pct"] > 5.0


def test_each_item_says_what_its_series_could_have_detected() -> None:
    result = _gate(_records({"llama-70b": [1.0, 0.90]}, series=40), GatePolicy(), PAIR)
    item = result.with_state("failing")[0]
    assert item.detectable_pct is not None and 1.0 < item.detectable_pct < 5.0
    assert item.sensitivity.startswith("could detect ≥ ")
    assert item.sensitivity in gate_markdown(result)
