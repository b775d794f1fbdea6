"""The ``:::MLLOG`` line parser and the MLPerf Training scoring rules, on hand-made logs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tracker.errors import ParseError
from tracker.formats.mlperf_training.parse import (
    RunCheck,
    check_run,
    node_power,
    parse_scaling_json,
    ruleset_for,
    run_energy,
    score_folder,
)
from tracker.formats.mlperf_training.parse_checks import check_seeds, iter_mllog

T0 = 1_700_000_000_000


def line(key: str, value: Any = None, t: float = T0, prefix: str = "", **metadata: Any) -> bytes:
    payload = {
        "namespace": "",
        "time_ms": t,
        "event_type": "POINT_IN_TIME",
        "key": key,
        "value": value,
        "metadata": {"file": "train.py", "lineno": 1, **metadata},
    }
    return f"{prefix}:::MLLOG {json.dumps(payload)}\n".encode()


def run_log(
    minutes: float = 10.0,
    *,
    accuracy: float = 0.92,
    stop: str | None = "success",
    init_minutes: float = 1.0,
    division: str = "closed",
) -> list[bytes]:
    """A closed llama2_70b_lora run that passes every check (unless told otherwise)."""
    start = T0 + init_minutes * 60000
    lines = [
        b"plain text lines are ignored\n",
        line("submission_org", "org"),
        line("submission_platform", "box"),
        line("submission_division", division),
        line("submission_benchmark", "llama2_70b_lora"),
        line("cache_clear", True),
        line("init_start", t=T0),
        line("global_batch_size", 8),
        line("gradient_accumulation_steps", 1),
        line("opt_base_learning_rate", 0.0004),
        line("opt_learning_rate_training_steps", 800),
        line("opt_gradient_clip_norm", 0.3),
        line("opt_adamw_weight_decay", 0.0001),
        line("lora_alpha", 32),
        line("lora_rank", 16),
        line("train_samples", 3901),
        line("eval_samples", 173),
        line("init_stop", t=start - 1),
        line("run_start", t=start),
        line("block_start", t=start, samples_count=0),
        line("block_stop", t=start + 1, samples_count=0),
        line("eval_start", t=start + 2, samples_count=3072),
        line("eval_stop", t=start + 3, samples_count=3072),
        line("eval_accuracy", 0.95, t=start + 4, prefix=" 0: ", samples_count=2688),
        line("eval_accuracy", accuracy, t=start + 5, samples_count=3072),
    ]
    if stop is not None:
        lines.append(line("run_stop", t=start + minutes * 60000, status=stop, samples_count=3072))
    return lines


def check(lines: list[bytes], benchmark: str = "llama2_70b_lora") -> RunCheck:
    return check_run(lines, path="r/result_0.txt", file="result_0.txt", benchmark=benchmark,
                     ruleset="5.1.0")  # fmt: skip


def test_lines_are_parsed_after_the_token_and_others_skipped() -> None:
    lines = [b"hello\n", line("run_start", prefix=" 0: "), b"\n", line("run_stop", t=T0 + 5)]
    found = list(iter_mllog(lines, path="x.txt"))
    assert [(e.line, e.key, e.time_ms) for e in found] == [
        (2, "run_start", T0),
        (4, "run_stop", T0 + 5),
    ]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (line("run_stop")[:-40] + b"\n", "not JSON"),  # a truncated line
        (b":::MLLOG run_stop happened\n", "not JSON"),  # a non-JSON payload
        (b":::MLLOG [1, 2]\n", "not a JSON object"),
        (b':::MLLOG {"time_ms": 1}\n', "no 'key'"),
        (b':::MLLOG {"key": "run_stop", "time_ms": "soon"}\n', "numeric 'time_ms'"),
    ],
)
def test_a_malformed_line_names_the_file_and_line(bad: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message) as raised:
        list(iter_mllog([line("run_start"), b"text\n", bad], path="a/result_3.txt"))
    assert (raised.value.path, raised.value.line) == ("a/result_3.txt", 3)
    assert str(raised.value).startswith("a/result_3.txt: line 3: ")


def test_a_compliant_run_converges_with_its_time() -> None:
    run = check(run_log(12.5))
    assert run.converged and run.reasons == ()
    assert run.minutes == pytest.approx(12.5)
    assert (run.run_stop_status, run.global_batch_size, run.epochs_to_converge) == (
        "success",
        8.0,
        3072.0,
    )


def test_a_missing_run_start_is_an_error_with_the_line() -> None:
    lines = [x for x in run_log() if b'"run_start"' not in x]
    with pytest.raises(ParseError, match="no run_start") as raised:
        check(lines)
    assert raised.value.line == len(lines)  # the run_stop line


def test_a_log_without_mllog_lines_is_an_error() -> None:
    with pytest.raises(ParseError, match="no :::MLLOG lines"):
        check([b"nothing here\n"])


def test_no_run_stop_is_a_non_converged_run_without_time() -> None:
    run = check(run_log(stop=None, accuracy=0.95))
    assert not run.converged and run.minutes is None
    assert run.reasons[0] == "no run_stop: the run did not finish"
    assert any("quality target not reached" in r and "0.95" in r for r in run.reasons)


def test_an_aborted_run_that_reached_the_target_still_converges() -> None:
    # the checker does not look at the status value; the RCP checker marks its epochs infinite
    run = check(run_log(stop="aborted"))
    assert run.converged and run.run_stop_status == "aborted"
    assert run.epochs_to_converge == float("inf")


def test_the_initialisation_limit_depends_on_the_division() -> None:
    slow = check(run_log(init_minutes=32.3))
    assert not slow.converged
    assert "init_stop 32.3 minutes after the first init_start (limit 30 minutes)" in slow.reasons[0]
    assert check(run_log(init_minutes=32.3, division="open")).converged


def test_a_run_stop_without_status_and_a_missing_key_fail() -> None:
    lines = [x for x in run_log() if b'"train_samples"' not in x]
    lines[-1] = line("run_stop", t=T0 + 11 * 60000)
    reasons = check(lines).reasons
    assert any("run_stop has no status" in r for r in reasons)
    assert "'train_samples' logged 0 times; exactly once required" in reasons


def runs(*minutes: float | None) -> list[RunCheck]:
    return [
        RunCheck(
            f"result_{n}.txt",
            m,
            "success",
            () if m is not None else ("no run_stop",),
            3072.0,
            8.0,
            1,
        )  # fmt: skip
        for n, m in enumerate(minutes)
    ]


def test_olympic_mean_drops_the_fastest_and_slowest() -> None:
    score = score_folder(runs(5, 1, 2, 3, 9), benchmark="retinanet", scaling_factor=2.0)
    assert score.olympic_mean_minutes == pytest.approx((2 + 3 + 5) / 3)
    assert score.score_minutes == pytest.approx(2 * (2 + 3 + 5) / 3)
    assert (score.runs_used, score.dropped_fastest, score.dropped_slowest) == (3, 1, 1)
    assert [r.role for r in score.roles][:2] == ["used", "dropped (fastest)"]


def test_one_non_converged_run_takes_the_slowest_slot() -> None:
    score = score_folder(runs(5, 1, None, 3, 9), benchmark="retinanet")
    assert score.olympic_mean_minutes == pytest.approx((3 + 5 + 9) / 3)
    assert (score.dropped_fastest, score.dropped_slowest, score.non_converged) == (1, 0, 1)


def test_more_than_one_non_converged_run_gives_no_score_and_says_why() -> None:
    score = score_folder(runs(5, None, None, 3, 9), benchmark="retinanet")
    assert score.score_minutes is None
    assert score.no_score_reason is not None and "2 runs did not converge" in score.no_score_reason
    assert score_folder(runs(*([None] * 4), *([1.0] * 36)), benchmark="unet3d").score_minutes


def test_scaling_json_and_power_logs() -> None:
    assert parse_scaling_json(b'{"scaling_factor": 1.0625}', path="s.json") == 1.0625
    with pytest.raises(ParseError, match="scaling_factor"):
        parse_scaling_json(b'{"factor": 2}', path="s.json")
    power = [
        line("conversion_eff", 0.5, t=T0),
        line("power_measurement_start", t=T0),
        line("power_reading", 100.0, t=T0 + 1000),
        line("power_reading", 300.0, t=T0 + 2000),
        line("power_measurement_stop", t=T0 + 2000),
        line("power_reading", 900.0, t=T0 + 3000),  # after the stop: not counted
    ]
    watts = node_power(power, path="node_0.txt")
    assert watts == pytest.approx(0.5 * (100 * 1000 + 300 * 1000) / 2000)
    assert run_energy([watts, watts], 60000.0) == pytest.approx(2 * watts * 60)


def test_rulesets() -> None:
    assert (ruleset_for("v5.1"), ruleset_for("5.0"), ruleset_for("v4.1.2")) == (
        "5.1.0",
        "5.0.0",
        "4.1.2",
    )


def seeded(seed: object, lineno: int = 393) -> list[bytes]:
    return [*run_log(), line("seed", seed, lineno=lineno)]


def test_the_seeds_a_run_logs_are_kept_with_their_source_line() -> None:
    (seed,) = check(seeded(23282)).seeds
    assert (seed.source, seed.value) == ("train.py:393", 23282)
    assert check(seeded("7")).seeds[0].value == 7  # the package's int(): "7" is 7
    assert check(seeded("seven")).seeds[0].value is None
    assert check(run_log()).seeds == ()


def test_the_seed_check_wants_a_seed_per_run_and_no_seed_twice_on_one_line() -> None:
    runs = [("result_0.txt", check(seeded(1)).seeds), ("result_1.txt", check(seeded(2)).seeds)]
    assert check_seeds(runs) == []
    same = [*runs, ("result_2.txt", check(seeded(1)).seeds)]
    assert check_seeds(same) == ["result_2.txt logs seed 1 at train.py:393 as result_0.txt does"]
    assert check_seeds([*runs, ("result_2.txt", check(seeded(1, lineno=9)).seeds)]) == []
    assert check_seeds([("result_0.txt", ())]) == ["result_0.txt logs no seed"]
    bad = check(seeded("seven")).seeds
    assert check_seeds([("result_0.txt", bad)]) == [
        f"result_0.txt: line {len(run_log()) + 1}: seed 'seven' is not an integer"
    ]
    many = [(f"result_{i}.txt", ()) for i in range(5)]
    assert check_seeds(many)[-1] == "2 more"  # three are named
