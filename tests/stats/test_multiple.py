"""Benjamini–Hochberg and Benjamini–Yekutieli q-values."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats  # type: ignore[import-untyped]

from tracker.stats import adjust_pvalues, q_values
from tracker.stats.significance import FamilyMethod as Method


def test_bh_q_values_by_hand() -> None:
    # m = 4, sorted p = .01 .02 .03 .5 -> p*m/rank = .04 .04 .04 .5 (then running minimum)
    adjusted = adjust_pvalues([0.03, 0.5, 0.01, 0.02])
    assert adjusted.family_size == 4 and adjusted.method == "bh"
    assert adjusted.q_values == pytest.approx((0.04, 0.5, 0.04, 0.04))


def test_by_is_more_conservative_than_bh() -> None:
    p = np.random.default_rng(0).uniform(0, 0.1, 50)
    assert np.all(q_values(p, "by") >= q_values(p, "bh"))


def test_an_empty_family_has_size_zero() -> None:
    assert adjust_pvalues([]).family_size == 0
    assert q_values([]).shape == (0,)


@pytest.mark.parametrize("bad", [[1.2], [-0.1], [[0.1, 0.2]]])
def test_p_values_outside_the_unit_interval_are_refused(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        q_values(bad)


@settings(max_examples=200)
@given(
    st.lists(
        st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.01, 0.05, 0.5, 1.0])),
        min_size=1,
        max_size=60,
    ),
    st.sampled_from(["bh", "by"]),
)
def test_q_values_equal_scipys_false_discovery_control(p: list[float], method: Method) -> None:
    expected = stats.false_discovery_control(np.asarray(p), method=method)
    np.testing.assert_allclose(q_values(p, method), expected, rtol=1e-12, atol=0.0)


def test_the_analysis_does_not_import_scipy_stats() -> None:
    code = (
        "import sys, tracker.report.publish, tracker.gate.decision, tracker.analyze.run;"
        "sys.exit(1 if 'scipy.stats' in sys.modules or 'scipy.interpolate' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
