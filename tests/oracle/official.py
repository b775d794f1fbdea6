"""The official side of the Training oracle: mlperf-logging's own figures, as JSON.

Run by ``make check-oracle`` with the Python of its own virtual environment
(``.venv-oracle``, where ``mlperf-logging`` is installed; the tracker is not):

    python tests/oracle/official.py OUT.json ROUND_FOLDER...

Each ``ROUND_FOLDER`` is a round (``v5.0``: ``<submitter>/results/<system>/<benchmark>/``
below it; the ruleset is the folder's version, ``5.0.0``). Every benchmark folder is
copied to a temporary folder (the package reads files and may rewrite ``scaling.json``)
and scored with the package's functions, as its result summarizer scores it:

* ``result_summarizer._compute_strong_score_standalone(..., return_full_scores=True)``:
  the score, the scaling factor, the minutes of each run that passed compliance, the
  energy where there are power logs;
* ``rcp_checker.get_submission_epochs``: each run's samples (or epochs) to converge and
  the global batch size; ``samples_to_converge`` is their mean less one at each end, as
  ``_compute_strong_scaling_scores`` computes it;
* the compliance checker run on each file with warnings kept
  (``mlp_compliance.make_checker(..., quiet=False, werror=False)``): the keys it warns
  about (required once, logged more often with one value).

Only the standard library and ``mlperf_logging`` are imported.
"""

from __future__ import annotations

import contextlib
import glob
import io
import json
import logging
import re
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from mlperf_logging.compliance_checker import mlp_compliance
from mlperf_logging.rcp_checker import rcp_checker
from mlperf_logging.result_summarizer import result_summarizer

SAMPLES_REJECTED = 1  # _compute_strong_scaling_scores: samples_rejected
_WARNED = re.compile(r"Required EXACTLY_ONE occurrence of '([^']+)'")


def ruleset_of(round_folder: Path) -> str:
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?", round_folder.name)
    if match is None:
        raise SystemExit(f"{round_folder}: not a round folder (v<major>.<minor>)")
    return f"{match[1]}.{match[2]}.{match[3] or 0}"


def benchmark_folders(round_folder: Path) -> list[Path]:
    found = []
    for results in sorted(round_folder.glob("*/results")):
        for folder in sorted(p for p in results.glob("*/*") if p.is_dir()):
            if any(folder.glob("result_*.txt")):
                found.append(folder)
    return found


def warned_keys(result_file: str, ruleset: str) -> list[str]:
    checker = mlp_compliance.make_checker("training", ruleset, False, False)
    mlp_compliance.main(result_file, f"training_{ruleset}/common.yaml", checker)
    return sorted({m for w in checker.warnings.values() for m in _WARNED.findall(w)})


def samples_to_converge(files: list[str], ruleset: str) -> tuple[float | None, float | None]:
    try:
        batch, epochs, _ = rcp_checker.get_submission_epochs(files, ruleset, False)
        epochs = sorted(epochs)
    except Exception:  # noqa: BLE001 - as the summarizer, which prints a warning and goes on
        return None, None
    mean = None
    if len(epochs) >= 2 * SAMPLES_REJECTED + 1:
        kept = epochs[SAMPLES_REJECTED : len(epochs) - SAMPLES_REJECTED]
        mean = float(sum(kept) / len(kept))
    return mean, None if batch in (None, -1) else float(batch)


def score(folder: Path, round_folder: Path, ruleset: str) -> dict[str, Any]:
    benchmark = folder.name
    with tempfile.TemporaryDirectory(prefix="oracle-") as work:
        copy = Path(work) / benchmark
        shutil.copytree(folder, copy)
        has_power = result_summarizer._has_power(str(copy))
        runs, _power, minutes, energy, factor = result_summarizer._compute_strong_score_standalone(
            benchmark,
            folder.parent.name,
            has_power,
            str(copy),
            "training",
            ruleset,
            desc={"submitter": folder.parts[-4]},
            return_full_scores=True,
        )
        files = sorted(glob.glob(f"{copy}/result_*.txt"))
        to_converge, batch = samples_to_converge(files, ruleset)
        warnings = {Path(f).name: warned_keys(f, ruleset) for f in files}
    return {
        "round": round_folder.name,
        "round_path": str(round_folder.resolve()),
        "ruleset": ruleset,
        "folder": folder.relative_to(round_folder).as_posix(),
        "benchmark": benchmark,
        "result_files": len(files),
        "max_dropped": 4 if benchmark == "unet3d" else 1,
        "score_minutes": minutes,
        "scaling_factor": float(factor),
        "converged": {Path(name).name: float(value) for name, value in runs.items()},
        "energy_j": energy,
        "samples_to_converge": to_converge,
        "global_batch_size": batch,
        "warned_keys": {name: keys for name, keys in warnings.items() if keys},
    }


@contextlib.contextmanager
def quiet() -> Any:
    """The package prints and logs as it checks: kept off the terminal."""
    logging.disable(logging.CRITICAL)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        sys.stderr.write("usage: official.py OUT.json ROUND_FOLDER...\n")
        return 2
    out, rounds = Path(argv[0]), [Path(a) for a in argv[1:]]
    folders = []
    for round_folder in rounds:
        ruleset = ruleset_of(round_folder)
        for folder in benchmark_folders(round_folder):
            with quiet():
                folders.append(score(folder, round_folder, ruleset))
    document = {"package": "mlperf-logging", "version": metadata.version("mlperf-logging")}
    out.write_text(json.dumps({**document, "folders": folders}, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
