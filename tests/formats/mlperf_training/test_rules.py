"""MLPerf Training compliance, timing and samples to converge as mlperf-logging 4.1.68 has them.

Hand-made logs (the helpers of ``test_parse``): a key required exactly once and
logged once per GPU rank with one value is a warning, with two values an error; the
5.0.0 ruleset does not ask for ``submission_org``/``submission_platform``; a run is
timed from the last ``run_start`` before the first ``run_stop``; stable diffusion
converges at the smallest step where FID and CLIP both pass, however its
evaluations are ordered in the file.
"""

from __future__ import annotations

import math

import pytest

from tests.formats.mlperf_training.test_parse import T0, line, run_log
from tracker.formats.mlperf_training.parse import RunCheck, check_run, score_folder
from tracker.formats.mlperf_training.parse_checks import RULESETS, rcp_step_unit, rules_for


def check(lines: list[bytes], *, ruleset: str, benchmark: str = "llama2_70b_lora") -> RunCheck:
    return check_run(
        lines, path="r/result_0.txt", file="result_0.txt", benchmark=benchmark, ruleset=ruleset
    )


def per_rank(lines: list[bytes], key: str, values: list[str]) -> list[bytes]:
    """``lines`` with the ``key`` line logged once per rank (`` 0: `` …), with ``values``."""
    at = next(i for i, x in enumerate(lines) if f'"key": "{key}"'.encode() in x)
    ranks = [line(key, value, prefix=f"{rank}: ") for rank, value in enumerate(values)]
    return [*lines[:at], *ranks, *lines[at + 1 :]]


def test_a_key_logged_by_every_rank_with_one_value_is_a_warning_and_the_run_converges() -> None:
    lines = per_rank(run_log(), "submission_org", ["Dell"] * 8)
    run = check(lines, ruleset="5.1.0")
    assert run.converged and run.reasons == ()
    assert run.warnings == ("'submission_org' logged 8 times with the same value 'Dell'",)


def test_two_values_of_a_key_required_once_reject_the_run_naming_key_and_values() -> None:
    lines = per_rank(run_log(), "submission_org", ["Dell"] * 7 + ["NVIDIA"])
    run = check(lines, ruleset="5.1.0")
    assert not run.converged and run.warnings == ()
    assert run.reasons == (
        "'submission_org' logged 8 times with different values 'Dell' and 'NVIDIA'; "
        "exactly once required",
    )


def test_the_5_0_ruleset_does_not_ask_for_submission_org_or_platform() -> None:
    lines = [x for x in run_log() if b'"submission_platform"' not in x]
    assert check(lines, ruleset="5.0.0").converged
    assert check(lines, ruleset="5.1.0").reasons == (
        "'submission_platform' logged 0 times; exactly once required",
    )
    # nor does it count them: repeats with two values are not its business either
    assert check(per_rank(run_log(), "submission_org", ["a", "b"]), ruleset="5.0.0").converged


def test_the_rule_tables_name_the_ruleset_and_file_they_come_from() -> None:
    five, exact = rules_for("5.0.0")
    assert exact and five.source == "mlperf-logging 4.1.68, compliance_checker/training_5.0.0/"
    assert "submission_org" not in five.exactly_one
    assert "submission_org" in RULESETS["5.1.0"].exactly_one
    newer, exact = rules_for("6.0.0")  # not tabled: the nearest below
    assert (newer.version, exact) == ("5.1.0", False)
    assert rules_for("4.1.0")[0].version == "5.0.0"


def test_a_missing_benchmark_hyper_parameter_fails_a_closed_run() -> None:
    lines = [x for x in run_log() if b'"lora_rank"' not in x]
    assert check(lines, ruleset="5.1.0").reasons == (
        "'lora_rank' logged 0 times; exactly once required",
    )
    open_run = [x.replace(b'"closed"', b'"open"') for x in lines]
    assert check(open_run, ruleset="5.1.0").converged


def test_a_second_run_start_times_the_run_from_the_last_one_before_run_stop() -> None:
    # run_start at 1 minute, again 1524.66 ms later; run_stop 22.013161 minutes after the first
    lines = run_log(22.013161)
    at = next(i for i, x in enumerate(lines) if b'"run_start"' in x)
    second = line("run_start", t=T0 + 60000 + 1524.66)
    run = check([*lines[: at + 1], second, *lines[at + 1 :]], ruleset="5.1.0")
    assert run.minutes == pytest.approx(21.987750, abs=5e-7)  # not 22.013161
    assert run.converged and run.warnings == (
        "'run_start' logged 2 times with the same value None",
    )
    # a run_start after the first run_stop does not move the start
    late = [*lines, line("run_start", t=T0 + 30 * 60000)]
    assert check(late, ruleset="5.1.0").minutes == pytest.approx(22.013161)


def sd_log(evaluations: list[tuple[int, float, float]], *, stop: str = "success") -> list[bytes]:
    """A closed stable_diffusion run; ``evaluations`` (samples_count, FID, CLIP) in file order."""
    start = T0 + 60000
    lines = [
        line("submission_division", "closed"),
        line("submission_benchmark", "stable_diffusion"),
        line("cache_clear", True),
        line("init_start", t=T0),
        *(line(key, value) for key, value in _SD_KEYS),
        line("init_stop", t=start - 1),
        line("run_start", t=start),
        line("block_start", "training_step", t=start + 1, samples_count=0),
        line("block_stop", "training_step", t=start + 2, samples_count=2560000),
    ]
    for n, (step, fid, clip) in enumerate(evaluations):
        at = start + 3 * 3600000 + n * 60000
        lines.append(line("eval_start", t=at, samples_count=step))
        lines.append(line("eval_stop", t=at + 1, samples_count=step))
        lines.append(line("eval_accuracy", fid, t=at + 2, samples_count=step, metric="FID"))
        lines.append(line("eval_accuracy", clip, t=at + 3, samples_count=step, metric="CLIP"))
    # written last, with the time training ended
    lines.append(line("run_stop", t=start + 45 * 60000, status=stop, step_num=5000))
    return lines


_SD_KEYS = (
    ("gradient_accumulation_steps", 1),
    ("global_batch_size", 512),
    ("opt_name", "adamw"),
    ("opt_adamw_beta_1", 0.9),
    ("opt_adamw_beta_2", 0.999),
    ("opt_adamw_epsilon", 1e-08),
    ("opt_adamw_weight_decay", 0.01),
    ("opt_base_learning_rate", 0.00011264),
    ("opt_learning_rate_warmup_steps", 1000),
    ("train_samples", 6513144),
    ("eval_samples", 30000),
)


def sd(evaluations: list[tuple[int, float, float]], **kwargs: str) -> RunCheck:
    return check(sd_log(evaluations, **kwargs), ruleset="5.0.0", benchmark="stable_diffusion")


def test_stable_diffusion_converges_at_the_first_step_where_fid_and_clip_pass() -> None:
    # logged out of order: the last evaluation in the file (1,536,000) does not pass
    run = sd([(2048000, 85.1, 0.161), (2560000, 77.7, 0.169), (1536000, 95.3, 0.158)])
    assert run.converged and run.minutes == pytest.approx(45.0)
    assert run.epochs_to_converge == 2048000.0
    assert rcp_step_unit("stable_diffusion", "5.0.0") == "samples_count"
    assert rcp_step_unit("stable_diffusion", "3.1.0") == "step_num"


def test_stable_diffusion_needs_fid_and_clip_to_pass_at_one_step() -> None:
    # FID passes only at 2,560,000, CLIP only at 2,048,000: no evaluation passes both
    run = sd([(2048000, 91.0, 0.160), (2560000, 80.0, 0.140)])
    assert run.reasons == (
        "quality target not reached: no evaluation with FID <= 90 and CLIP >= 0.15 "
        "at one samples_count",
    )
    assert math.isnan(run.epochs_to_converge)  # the RCP checker itself has no step to give
    one = sd([(2048000, 80.0, 0.160)])
    assert one.reasons == ("1 evaluation(s) with a FID/CLIP metric; at least 2 required",)


def test_samples_to_converge_drops_one_run_at_each_end_and_nan_gives_none() -> None:
    passing = [sd([(s, 80.0, 0.16), (s + 512000, 80.0, 0.16)]) for s in (1536000, 2048000)]
    runs = [passing[0], *[passing[1]] * 6, sd([(2560000, 80.0, 0.16), (3072000, 80.0, 0.16)])]
    runs += [runs[-1]] * 2
    score = score_folder(runs, benchmark="stable_diffusion")
    assert score.samples_to_converge == pytest.approx((6 * 2048000 + 2 * 2560000) / 8)
    failed = sd([(2048000, 91.0, 0.160), (2560000, 80.0, 0.140)])
    assert score_folder([*runs, failed], benchmark="stable_diffusion").samples_to_converge is None
    aborted = sd([(2048000, 80.0, 0.16), (2560000, 80.0, 0.16)], stop="aborted")
    assert aborted.epochs_to_converge == math.inf
