"""An Endpoints result of a latency scenario takes the benchmark's LoadGen metric (issue #13)."""

from __future__ import annotations

import json

import pytest

from tracker.errors import ParseError
from tracker.formats.mlperf_endpoints.parse_result import (
    EndpointsRoundResult,
    parse_endpoints_result,
)

LATENCY = {
    "n_samples_issued": 1000,
    "n_samples_completed": 1000,
    "duration_ns": 700e9,
    "latency": {
        "percentiles": {"90.0": 2.0e6, "99.0": 3.0e6},
        "early_stopping_percentiles": {"90.0": 2.5e6, "99.0": 3.5e6},
    },
}


def parse(doc: dict[str, object], scenario: str) -> EndpointsRoundResult:
    data = json.dumps(doc).encode()
    return parse_endpoints_result(
        data, path="r.json", model="resnet50", scenario=scenario, round_label="v6.1"
    )


@pytest.mark.parametrize(("scenario", "latency_ms"), [("SingleStream", 2.5), ("MultiStream", 3.5)])
def test_latency_scenarios_give_the_early_stopping_percentile_in_ms(
    scenario: str, latency_ms: float
) -> None:
    found = parse(LATENCY, scenario)
    assert (found.metric.unit, found.value) == ("ms", latency_ms)
    assert found.metric.higher_is_better is False
    percentile = "90.0" if scenario == "SingleStream" else "99.0"
    assert found.key == f"latency.early_stopping_percentiles.{percentile}"


def test_a_latency_scenario_without_latencies_names_the_percentile() -> None:
    with pytest.raises(ParseError, match="no 'latency' p90 for a SingleStream run"):
        parse({**LATENCY, "latency": {}}, "SingleStream")
