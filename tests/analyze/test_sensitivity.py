"""Issue 34 in ``tracker analyze``: the run's sensitivity line and each finding's figure."""

from __future__ import annotations

import numpy as np

from tracker.analyze.run import analyse
from tracker.analyze.summary import summary_lines
from tracker.records.results import AnalysisSample, VersionInfo
from tracker.versions import version_sort_key


def _sample(i: int, version: str, value: float) -> AnalysisSample:
    return AnalysisSample(
        "stack", version, f"/node-{i}", f"node-{i}", None, None, "GPU", 1, None, None,
        "llama", "Offline", "", "tokens_per_s", "tokens/s", True, value, True, "s", None,
    )  # fmt: skip


def _outcome(cv: float):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(3)
    samples = [
        _sample(i, version, float(x))
        for i in range(40)
        for version, level in (("1.0", 1.0), ("1.1", 0.85 if i == 0 else 1.0))
        for x in 1000.0 * level * (1.0 + rng.normal(0.0, cv, 3))
    ]
    versions = [VersionInfo("stack", v, version_sort_key(v)) for v in ("1.0", "1.1")]
    return analyse(samples, [], versions)


def test_the_summary_says_how_many_series_could_not_see_five_percent() -> None:
    quiet = [line for line in summary_lines(_outcome(0.005)) if line.startswith("Sensitivity")]
    noisy = [line for line in summary_lines(_outcome(0.04)) if line.startswith("Sensitivity")]
    assert quiet[0].startswith("Sensitivity: 0% of the compared series could not see a 5%")
    assert noisy[0].startswith("Sensitivity: 100% of the compared series could not see a 5%")
    assert "40 under-powered" in noisy[0]


def test_a_finding_stores_what_its_series_could_have_detected() -> None:
    (finding,) = (f for f in _outcome(0.005).findings if f.kind == "regression")
    assert 0.0 < finding.evidence["detectable_pct"] < 5.0
    assert str(finding.evidence["sensitivity"]).startswith("could detect ≥ ")
