"""Write the hand-made MLPerf Training result folders of this directory (see README.md).

Run ``python tests/data/mlperf-training/make_fixtures.py`` from the repository root;
the output is deterministic, so a rerun changes nothing. The logs follow the
published format line for line (``:::MLLOG`` JSON, rank prefixes, the keys the
closed compliance checker requires); the times and values are chosen, not measured.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NVIDIA_CODE = "/workspace/ft-llm/train.py"
CALLBACKS = "/usr/local/lib/python3.12/dist-packages/mlperf_common/callbacks/logging.py"
SD_CODE = "/workspace/sd/callbacks.py"
SD_EVAL = "/workspace/sd/infer_and_eval.py"


def mllog(
    key: str, value: Any, time_ms: int, *, file: str, lineno: int, rank: int | None = 0, **meta: Any
) -> str:
    event = (
        "INTERVAL_START"
        if key.endswith("_start")
        else "INTERVAL_END"
        if key.endswith("_stop")
        else "POINT_IN_TIME"
    )
    payload = {
        "namespace": "",
        "time_ms": time_ms,
        "event_type": event,
        "key": key,
        "value": value,
        "metadata": {"file": file, "lineno": lineno, **meta},
    }
    prefix = "" if rank is None else f"{rank}: "
    return f"{prefix}:::MLLOG {json.dumps(payload)}"


# Dell 1xXE9680Lx8B200, llama2_70b_lora: run times (ms) per result_<i>.txt. In each round
# the eight runs the olympic mean keeps average to the published score (v5.0: 11.325494
# minutes, v5.1: 8.886429 minutes); the fastest and the slowest are dropped.
DELL_RUNS_MS = {
    "v5.0": [679600, 671204, 679100, 679787, 702915, 679300, 679450, 679500, 679700, 679800],
    "v5.1": [533100, 533286, 528017, 533050, 533200, 547930, 532900, 533250, 533300, 533400],
}
DELL_START_MS = {"v5.0": 1745190000000, "v5.1": 1759120000000}
DELL_SUBMISSION = (
    ("submission_benchmark", "llama2_70b_lora"),
    ("submission_org", "Dell"),
    ("submission_division", "closed"),
    ("submission_status", "onprem"),
    ("submission_platform", "1xXE9680Lx8B200"),
)
DELL_EVALS = ((1536, 0.9371), (1920, 0.9318), (2304, 0.9290), (2688, 0.9262), (3072, 0.9247))


def dell_log(round_label: str, index: int) -> str:
    t = DELL_START_MS[round_label] + index * 3_600_000
    lines = [
        f"+ echo 'Beginning trial {index + 1} of 10'",
        mllog("cache_clear", True, t, file="<string>", lineno=3, rank=None),
        mllog("init_start", None, t + 21_000, file=NVIDIA_CODE, lineno=327),
    ]
    # every GPU rank logs the submission keys, each time with the same value
    for rank in range(8):
        for key, value in DELL_SUBMISSION:
            lines.append(mllog(key, value, t + 21_001, file=NVIDIA_CODE, lineno=328, rank=rank))
    for key, value in (
        ("opt_base_learning_rate", 0.0005),
        ("opt_adamw_weight_decay", 0.0001),
        ("opt_gradient_clip_norm", 0.3),
        ("lora_rank", 16),
        ("lora_alpha", 32),
        ("opt_learning_rate_training_steps", 800),
    ):
        lines.append(mllog(key, value, t + 21_600, file=NVIDIA_CODE, lineno=162))
    for key, value in (
        ("global_batch_size", 8),
        ("train_samples", 3901),
        ("eval_samples", 173),
        ("gradient_accumulation_steps", 1),
    ):
        lines.append(mllog(key, value, t + 22_200, file=CALLBACKS, lineno=328))
    lines.append(mllog("seed", 4100 + 17 * index, t + 22_201, file=NVIDIA_CODE, lineno=393))
    start = t + 240_000
    lines.append(mllog("init_stop", None, start, file=CALLBACKS, lineno=83))
    lines.append(mllog("run_start", None, start, file=CALLBACKS, lineno=83))
    stop = start + DELL_RUNS_MS[round_label][index]
    step = (stop - start) // (len(DELL_EVALS) + 1)
    lines.append(mllog("block_start", None, start + 1, file=CALLBACKS, lineno=89, samples_count=0))
    for n, (samples, accuracy) in enumerate(DELL_EVALS, start=1):
        at = start + n * step
        lines.append(
            mllog("eval_start", None, at, file=CALLBACKS, lineno=130, samples_count=samples)
        )
        lines.append(
            mllog("eval_accuracy", accuracy, at + 14_000, file=CALLBACKS, lineno=303,
                  samples_count=samples)
        )  # fmt: skip
        lines.append(
            mllog("eval_stop", None, at + 14_001, file=CALLBACKS, lineno=153, samples_count=samples)
        )
    lines.append(mllog("block_stop", None, stop - 1, file=CALLBACKS, lineno=95, samples_count=3072))
    lines.append(
        mllog("run_stop", None, stop, file=CALLBACKS, lineno=106, samples_count=3072,
              status="success")
    )  # fmt: skip
    lines.append("+ echo 'ENDING TIMING RUN'")
    return "\n".join(lines) + "\n"


def dell_system(round_label: str) -> dict[str, Any]:
    return {
        "submitter": "Dell",
        "division": "closed",
        "status": "Available on-premise",
        "system_name": "Dell PowerEdge XE9680L (8x B200-SXM-180GB)",
        "number_of_nodes": "1",
        "host_processors_per_node": "2",
        "host_processor_model_name": "Intel(R) Xeon(R) Platinum 8570",
        "host_processor_core_count": "56",
        "accelerators_per_node": "8",
        "accelerator_model_name": "NVIDIA B200-SXM-180GB",
        "accelerator_memory_capacity": "180 GB",
        "framework": "PyTorch NVIDIA Release 25.04" if round_label == "v5.1" else "PyTorch 25.03",
        "other_software_stack": {"cuda_version": "12.9" if round_label == "v5.1" else "12.8"},
        "operating_system": "Ubuntu 24.04",
        "sw_notes": "",
    }


# HPE Cray XD670 n1, stable_diffusion (v5.0): per run (result_1 .. result_10), the
# samples_count of each evaluation in the order the log writes them, and the first
# step at which FID <= 90 and CLIP >= 0.15 both hold (the RCP checker's step).
SD_RUNS: list[tuple[tuple[int, ...], int]] = [
    ((2048000, 2560000, 1536000), 1536000),
    ((2048000, 2560000, 1536000), 2048000),
    ((2560000, 2048000, 1536000), 2048000),
    ((2048000, 2560000, 1536000), 2048000),
    ((2560000, 2048000, 1536000), 2048000),
    ((2048000, 2560000, 1536000), 2048000),
    ((1536000, 2560000, 2048000), 2048000),
    ((1536000, 2560000, 2048000), 2560000),
    ((1536000, 2048000, 2560000), 2560000),
    ((1536000, 2048000, 2560000), 2560000),
]
SD_RUN_MS = [2614120, 2591730, 2637410, 2598830, 2622080, 2571990, 2609760, 2689920, 2702110,
             2655340]  # fmt: skip
SD_START_MS = 1745610012345
SD_GLOBAL_BATCH = 512


def sd_metrics(step: int, passing_from: int) -> tuple[float, float]:
    """FID and CLIP at ``step``: passing (FID <= 90, CLIP >= 0.15) from ``passing_from`` on."""
    if step >= passing_from:
        return 77.74 + (step - passing_from) / 1e6, 0.1697
    return 90.69 + (passing_from - step) / 1e5, 0.1631


def sd_log(index: int) -> str:
    order, passing_from = SD_RUNS[index]
    t = SD_START_MS + index * 7_200_000
    lines = [
        f"+ echo 'Beginning trial {index + 1:02d} of 10'",
        mllog("cache_clear", True, t, file="<string>", lineno=4, rank=None),
        mllog("init_start", None, t + 18_556, file="/workspace/sd/main.py", lineno=77),
        mllog("seed", 2718281 + 7919 * index, t + 19_489, file="/workspace/sd/main.py",
              lineno=95),
    ]  # fmt: skip
    for key, value in (
        ("gradient_accumulation_steps", 1),
        ("global_batch_size", SD_GLOBAL_BATCH),
        ("opt_name", "adamw"),
        ("opt_adamw_beta_1", 0.9),
        ("opt_adamw_beta_2", 0.999),
        ("opt_adamw_epsilon", 1e-08),
        ("opt_adamw_weight_decay", 0.01),
        ("opt_base_learning_rate", 0.00011264),
        ("opt_learning_rate_warmup_steps", 1000),
        ("train_samples", 6513144),
        ("eval_samples", 30000),
        ("submission_benchmark", "stable_diffusion"),
        ("submission_org", "SUBMISSION_ORG_PLACEHOLDER"),
        ("submission_division", "closed"),
        ("submission_status", "onprem"),
        ("submission_platform", "1xSUBMISSION_PLATFORM_PLACEHOLDER"),
    ):
        lines.append(mllog(key, value, t + 44_300, file=SD_CODE, lineno=278))
    start = t + 100_777
    lines.append(mllog("init_stop", None, start - 1, file=SD_CODE, lineno=405))
    lines.append(mllog("run_start", None, start, file=SD_CODE, lineno=405))
    last_step = max(order)
    stop = start + SD_RUN_MS[index]
    blocks = 4
    for n in range(blocks):
        first, last = last_step * n // blocks, last_step * (n + 1) // blocks
        at = start + SD_RUN_MS[index] * n // blocks
        lines.append(mllog("block_start", "training_step", at + 1, file=SD_CODE, lineno=415,
                           samples_count=first))  # fmt: skip
        lines.append(mllog("block_stop", "training_step", at + 600_000, file=SD_CODE, lineno=449,
                           samples_count=last))  # fmt: skip
    # the evaluations run offline after training, in the order above
    evaluated = stop + 120_000
    for step in order:
        fid, clip = sd_metrics(step, passing_from)
        lines.append(mllog("eval_start", None, evaluated, file=SD_EVAL, lineno=98,
                           samples_count=step))  # fmt: skip
        lines.append(mllog("eval_stop", None, evaluated + 1_090_000, file=SD_EVAL, lineno=155,
                           samples_count=step))  # fmt: skip
        lines.append(mllog("eval_accuracy", fid, evaluated + 1_140_000, file=SD_EVAL, lineno=199,
                           samples_count=step, metric="FID"))  # fmt: skip
        lines.append(mllog("eval_accuracy", clip, evaluated + 1_240_000, file=SD_EVAL,
                           lineno=229, samples_count=step, metric="CLIP"))  # fmt: skip
        evaluated += 1_260_000
    # run_stop is written last, with the time training ended
    lines.append(
        mllog("run_stop", None, stop, file="/usr/local/lib/python3.10/dist-packages/hydra/core/"
              "utils.py", lineno=186, status="success", step_num=last_step // SD_GLOBAL_BATCH)
    )  # fmt: skip
    lines.append("0: ENDING TIMING RUN")
    return "\n".join(lines) + "\n"


def sd_system() -> dict[str, Any]:
    return {
        "submitter": "HPE",
        "division": "closed",
        "status": "Available on-premise",
        "system_name": "HPE Cray XD670",
        "number_of_nodes": "1",
        "host_processors_per_node": "2",
        "host_processor_model_name": "INTEL(R) XEON(R) PLATINUM 8562Y+",
        "host_processor_core_count": "32",
        "accelerators_per_node": "8",
        "accelerator_model_name": "NVIDIA H200",
        "accelerator_memory_capacity": "143771 MiB",
        "framework": "PyTorch NVIDIA Release 24.09",
        "other_software_stack": {"cuda_version": "12.6.1.006"},
        "operating_system": "Ubuntu 22.04.4 LTS",
        "sw_notes": "",
    }


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def main() -> None:
    for round_label in ("v5.0", "v5.1"):
        root = HERE / round_label / "Dell"
        write(root / "systems/1xXE9680Lx8B200.json", json.dumps(dell_system(round_label), indent=4))
        folder = root / "results/1xXE9680Lx8B200/llama2_70b_lora"
        for index in range(10):
            write(folder / f"result_{index}.txt", dell_log(round_label, index))
    system = "HPE-Cray-XD670-H200-SXM5-141GB_n1_24.09"
    root = HERE / "v5.0" / "HPE"
    write(root / f"systems/{system}.json", json.dumps(sd_system(), indent=4))
    for index in range(10):
        write(root / f"results/{system}/stable_diffusion/result_{index + 1}.txt", sd_log(index))


if __name__ == "__main__":
    main()
