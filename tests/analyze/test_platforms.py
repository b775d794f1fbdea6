"""Platforms compared per accelerator (issue #13): the figures people quote from MLPerf v6.1.

The v6.0 round's (filtered) table and v6.1's whole ``summary.json`` are
ingested; ``tracker compare`` must print, to three significant digits:
Vera Rubin NVL72 (a *preview* system, and said so) against NVIDIA's GB300 NVL72
x72 per accelerator (3.74× qwen3-vl Interactive, 2.57× deepseek-r1 Interactive),
the same-system gain v6.0 → v6.1 where nothing but the software changed
(deepseek-r1 Server, 1.491×), the same accelerator at another system size
(qwen3-vl Server x4 → x72, 1.615× per accelerator) apart from it as a
configuration change, with what changed (accelerators, precision), and the
scaling efficiency x72 → x288 (deepseek-r1 Offline, 0.995).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tracker.analyze.platforms import (
    CONFIGURATION_CHANGED,
    SAME_SYSTEM,
    rank_platforms,
    round_gains,
    size_scaling,
)
from tracker.cli import cli
from tracker.records.results import AnalysisSample

VR = "VR-NVL72_VR-288GB_aarch64x72_TRT"
GB300 = "NVIDIA/GB300-NVL72_GB300-288GB_aarch64x72_TRT"


def tracker(url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", url, *args])


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> str:
    database = f"sqlite:///{tmp_path_factory.mktemp('platforms') / 'tracker.db'}"
    tables = ("v6.0/summary_results.json", "v6.1/summary.json")
    result = tracker(
        database, "ingest", *(str(shared_data / "mlperf-inference" / t) for t in tables)
    )
    assert result.exit_code == 0, result.output
    return database


def three_digits(value: float) -> str:
    return f"{value:.3g}"


def ratio(output: str, pattern: str) -> float:
    """The ratio (``N×``) or efficiency at the end of the line matching ``pattern``."""
    line = next((ln for ln in output.splitlines() if re.search(pattern, ln)), None)
    assert line is not None, f"{pattern!r} not in:\n{output}"
    return float(re.findall(r"([0-9.]+)×", line)[-1])


def section(output: str, title: str) -> str:
    """The lines of ``output`` under the heading that starts with ``title``."""
    blocks = output.split("\n\n")
    return next(b.strip() for b in blocks if b.strip().startswith(title))


def test_platforms_per_accelerator_within_the_round(url: str) -> None:
    result = tracker(url, "compare", "--round", "v6.1", "--system", VR, "--system", GB300)
    assert result.exit_code == 0, result.output
    qwen = section(result.output, "v6.1 qwen3-vl-235b-a22b Interactive")
    deepseek = section(result.output, "v6.1 deepseek-r1 Interactive")
    assert three_digits(ratio(qwen, VR)) == "3.74"
    assert three_digits(ratio(deepseek, VR)) == "2.57"
    assert "(reference)" in deepseek.splitlines()[-1]
    for case in (qwen, deepseek):  # Vera Rubin is a preview system, GB300 an available one
        assert f"NVIDIA/{VR} (preview): 72 ×" in case
        assert f"{GB300}: 72 ×" in case


def test_a_system_name_several_submitters_use_must_be_qualified(url: str) -> None:
    name = GB300.split("/", 1)[1]
    result = tracker(url, "compare", "--round", "v6.1", "--system", VR, "--system", name)
    assert result.exit_code == 2
    assert "give one as submitter/name" in result.output


def test_gains_across_rounds_and_scaling_across_sizes(url: str) -> None:
    args = ("compare", "--round", "v6.1", "--against-round", "v6.0", "--system", GB300)
    result = tracker(url, *args)
    assert result.exit_code == 0, result.output
    same = section(result.output, f"v6.0 → v6.1, {SAME_SYSTEM}")
    assert three_digits(ratio(same, r"deepseek-r1 Server")) == "1.49"
    assert f"{ratio(same, r'deepseek-r1 Server'):.4g}" == "1.491"
    lines = same.splitlines()
    at = next(i for i, ln in enumerate(lines) if "deepseek-r1 Server" in ln)
    assert lines[at + 1].strip() == "besides the software: nothing but the software"
    changed = section(result.output, f"v6.0 → v6.1, {CONFIGURATION_CHANGED}")
    line = r"qwen3-vl-235b-a22b Server: .*x4_TRT → .*x72_TRT \(x4 → x72, different system sizes\)"
    assert f"{ratio(changed, line):.4g}" == "1.615"
    lines = changed.splitlines()
    at = next(i for i, ln in enumerate(lines) if re.search(line, ln))
    assert "configuration changed: accelerators 4 → 72" in lines[at + 1]
    assert "precision fp32 → bf16" in lines[at + 1]
    scaling = section(result.output, "Scaling over system sizes in v6.1")
    step = next(ln for ln in scaling.splitlines() if "deepseek-r1 Offline: x72 → x288" in ln)
    efficiency = float(re.search(r"efficiency ([0-9.]+)", step).group(1))  # type: ignore[union-attr]
    assert three_digits(efficiency) == "0.995"
    assert "against x8" in step


def sample(system: str, version: str, value: float, count: int, **labels: str) -> AnalysisSample:
    return AnalysisSample(
        software="mlperf-inference",
        version=version,
        system_key=f"{labels.get('submitter', 'S')}/{system}",
        system=system,
        submitter=labels.get("submitter", "S"),
        division="closed",
        accelerator=labels.get("accelerator", "A1"),
        nodes=1,
        accelerators_total=count,
        host_cpu=None,
        benchmark="b",
        scenario="Offline",
        workload="",
        metric="tokens_per_s",
        unit="tokens/s",
        higher_is_better=True,
        value=value,
        is_valid=True,
        software_stack=None,
        sweep_key=None,
    )


def test_the_pure_functions() -> None:
    samples = [
        sample("x8", "v1", 80.0, 8),
        sample("x16", "v1", 150.0, 16),
        sample("x32", "v1", 288.0, 32),
        sample("other", "v1", 40.0, 2, accelerator="A2"),
        sample("x8", "v0", 40.0, 8),
        sample("x4", "v0", 30.0, 4),
    ]
    (ranking,) = rank_platforms(samples, round_label="v1")
    assert [r.system for r in ranking.results] == ["other", "x8", "x16", "x32"]
    assert ranking.reference == "S/other" and ranking.results[0].ratio == 1.0
    (pair,) = rank_platforms(samples, round_label="v1", systems=("x8", "other"))
    assert [r.ratio for r in pair.results] == [1.0, 0.5]  # to the last system named
    steps = size_scaling(samples, round_label="v1", systems=("x8",))
    assert [(s.from_accelerators, s.to_accelerators) for s in steps] == [(8, 16), (16, 32)]
    assert steps[1].efficiency == pytest.approx(9.0 / 9.375)
    assert steps[1].efficiency_vs_smallest == pytest.approx(0.9)
    gains = round_gains(samples, old_round="v0", new_round="v1", systems=("x8",))
    assert [(g.kind, g.old_system, g.new_system) for g in gains] == [
        (SAME_SYSTEM, "x8", "x8"),
        (CONFIGURATION_CHANGED, "x8", "x16"),
        (CONFIGURATION_CHANGED, "x8", "x32"),
        (CONFIGURATION_CHANGED, "x4", "x8"),
    ]
    assert gains[0].besides == "nothing but the software"
    assert gains[1].besides == "configuration changed: accelerators 8 → 16"
    assert gains[0].ratio == 2.0 and gains[1].ratio == pytest.approx(9.375 / 5.0)
