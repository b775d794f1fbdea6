"""The Training oracle: every result folder scored by mlperf-logging and by the tracker, compared.

``make check-oracle`` runs, with the tracker's Python:

    python -m tests.oracle.check --oracle-python .venv-oracle/bin/python ROUND_FOLDER...

:mod:`tests.oracle.official` (run with ``--oracle-python``, the environment where
``mlperf-logging`` is installed) writes the package's figures for every benchmark
folder of the rounds; the tracker ingests each round folder into a database of its
own (``python -m tracker ingest``) and exports it (``export --format json``). Each
folder is then compared field by field (:data:`FIELDS`); the output names every
difference, and one line per data set (the rounds' parent folder) says how many
folders agree. The exit status is 1 when a folder disagrees or is missing on one
side, 2 when a side fails to run, 0 when everything agrees.
``--official-json FILE`` reads the package's figures from a file written earlier
instead of running it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

Row = dict[str, Any]
SCORE = "time_to_train_minutes"
RUN = "run_time_to_train_minutes"
TOLERANCE = 1e-9
OFFICIAL = Path(__file__).with_name("official.py")
FIELDS = (
    "has a score",
    "score_minutes",
    "scaling_factor",
    "olympic_mean_unscaled_minutes",
    "result_files",
    "converged runs",
    "run minutes",
    "runs_used",
    "dropped_fastest",
    "dropped_slowest",
    "dropped_non_converged",
    "samples_to_converge",
    "global_batch_size",
    "energy_j",
    "compliance warnings",
)
"""What is compared per folder."""
_WARNED = re.compile(r"'([^']+)' logged \d+ times with the same value")


def _same(mine: Any, theirs: Any) -> bool:
    if mine is None or theirs is None:
        return mine is None and theirs is None
    if isinstance(theirs, int | float) and isinstance(mine, int | float):
        return abs(mine - theirs) <= TOLERANCE * max(abs(theirs), 1e-12)
    return bool(mine == theirs)


def official_counts(folder: Mapping[str, Any]) -> dict[str, int]:
    """The olympic selection the package made (``_compute_olympic_average``), as counts."""
    files, converged = folder["result_files"], len(folder["converged"])
    not_converged, drop = files - converged, folder["max_dropped"]
    if folder["score_minutes"] is None:
        return {}
    fastest = min(drop, converged)
    slowest = min(max(drop - not_converged, 0), converged - fastest)
    return {
        "runs_used": converged - fastest - slowest,
        "dropped_fastest": fastest,
        "dropped_slowest": slowest,
        "dropped_non_converged": not_converged,
    }


def _official_values(folder: Mapping[str, Any]) -> dict[str, Any]:
    score, factor = folder["score_minutes"], folder["scaling_factor"]
    return {
        "has a score": score is not None,
        "score_minutes": score,
        "scaling_factor": factor if score is not None else None,
        "olympic_mean_unscaled_minutes": None if score is None else score / factor,
        "result_files": folder["result_files"] if score is not None else None,
        "samples_to_converge": folder["samples_to_converge"] if score is not None else None,
        "global_batch_size": folder["global_batch_size"] if score is not None else None,
        "energy_j": folder["energy_j"] if score is not None else None,
        **official_counts(folder),
    }


def _tracker_values(score: Row | None) -> dict[str, Any]:
    extra: Mapping[str, Any] = score["extra"] if score is not None else {}
    values: dict[str, Any] = {"has a score": score is not None}
    values["score_minutes"] = None if score is None else score["value"]
    for name in ("scaling_factor", "olympic_mean_unscaled_minutes", "result_files"):
        values[name] = extra.get(name)
    for name in ("samples_to_converge", "global_batch_size", "energy_j"):
        values[name] = extra.get(name)
    if score is not None:
        for name in ("runs_used", "dropped_fastest", "dropped_slowest", "dropped_non_converged"):
            values[name] = extra.get(name)
    return values


def compare_folder(official: Mapping[str, Any], rows: Sequence[Row]) -> list[str]:
    """The fields on which the tracker's rows of one folder differ from the package's."""
    score = next((r for r in rows if r["metric"] == SCORE), None)
    theirs, mine = _official_values(official), _tracker_values(score)
    differences = [
        f"{name}: tracker {mine.get(name)!r}, mlperf-logging {theirs.get(name)!r}"
        for name in FIELDS
        if name in theirs and not _same(mine.get(name), theirs.get(name))
    ]
    runs = {Path(r["artifact_path"]).name: r for r in rows if r["metric"] == RUN}
    converged = {name for name, r in runs.items() if r["valid"]}
    if converged != set(official["converged"]):
        differences.append(
            f"converged runs: only the tracker {sorted(converged - set(official['converged']))}, "
            f"only mlperf-logging {sorted(set(official['converged']) - converged)}"
        )
    for name in sorted(converged & set(official["converged"])):
        if not _same(runs[name]["value"], official["converged"][name]):
            differences.append(
                f"run minutes of {name}: tracker {runs[name]['value']!r}, "
                f"mlperf-logging {official['converged'][name]!r}"
            )
    for name, run in sorted(runs.items()):
        warned = sorted(set(_WARNED.findall(run["extra"].get("compliance_warnings", ""))))
        if warned != official["warned_keys"].get(name, []):
            differences.append(
                f"compliance warnings of {name}: tracker {warned}, "
                f"mlperf-logging {official['warned_keys'].get(name, [])}"
            )
    return differences


def tracker_rows(round_folder: Path, work: Path) -> list[Row]:
    """The round ingested by the tracker's command line into a database of its own."""
    database = work / f"{len(list(work.glob('*.db')))}-{round_folder.name}.db"
    url = f"sqlite:///{database}"
    base = [sys.executable, "-m", "tracker", "--database-url", url]
    env = {**os.environ, "TRACKER_CACHE_DIR": str(work / "cache")}
    run = subprocess.run(
        [*base, "ingest", str(round_folder)], capture_output=True, text=True, env=env
    )
    if run.returncode != 0:
        raise RuntimeError(f"tracker ingest {round_folder} failed:\n{run.stdout}{run.stderr}")
    exported = subprocess.run(
        [*base, "export", "--format", "json"], capture_output=True, text=True, env=env
    )
    if exported.returncode != 0:
        raise RuntimeError(f"tracker export failed:\n{exported.stderr}")
    rows: list[Row] = json.loads(exported.stdout)
    return rows


def official_folders(oracle_python: str, rounds: Sequence[Path], work: Path) -> dict[str, Any]:
    out = work / "official.json"
    run = subprocess.run(
        [oracle_python, str(OFFICIAL), str(out), *map(str, rounds)], capture_output=True, text=True
    )
    if run.returncode != 0:
        raise RuntimeError(f"mlperf-logging failed:\n{run.stdout}{run.stderr}")
    document: dict[str, Any] = json.loads(out.read_text())
    return document


def check(document: Mapping[str, Any], rounds: Sequence[Path], work: Path) -> int:
    """Print the comparison of every folder; 1 if one disagrees or is missing, else 0."""
    version = f"{document['package']} {document['version']}"
    print(f"{version} against the tracker, per folder: {', '.join(FIELDS)}")
    failed = False
    for parent in dict.fromkeys(r.parent for r in rounds):
        agree = total = 0
        for round_folder in (r for r in rounds if r.parent == parent):
            rows = tracker_rows(round_folder, work)
            official = [f for f in document["folders"] if f["round_path"] == str(round_folder)]
            mine = {r["location"] for r in rows if r["software"] == "mlperf-training"}
            for folder in official:
                total += 1
                where = f"{round_folder.name}/{folder['folder']}"
                found = [r for r in rows if r["location"] == folder["folder"]]
                differences = compare_folder(folder, found) if found else ["not read"]
                agree += not differences
                print(f"  {'agree' if not differences else 'DISAGREE'}  {where}")
                for difference in differences:
                    print(f"      {difference}")
            extra = mine - {f["folder"] for f in official}
            for location in sorted(extra):
                total += 1
                print(f"  DISAGREE  {round_folder.name}/{location}: not scored by {version}")
        print(f"{parent}: {agree} of {total} folders agree with {version}")
        failed = failed or agree != total
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.oracle.check", description=__doc__)
    parser.add_argument("rounds", nargs="+", type=Path, help="round folders (v5.0, v5.1, ...)")
    parser.add_argument("--oracle-python", help="the Python where mlperf-logging is installed")
    parser.add_argument("--official-json", type=Path, help="official.py's output, from before")
    options = parser.parse_args(argv)
    rounds = [r.resolve() for r in options.rounds]
    missing = [str(r) for r in rounds if not r.is_dir()]
    if missing or not (options.oracle_python or options.official_json):
        parser.error(f"no such round folder: {', '.join(missing)}" if missing else
                     "give --oracle-python or --official-json")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="tracker-oracle-") as folder:
        work = Path(folder)
        try:
            document = (
                json.loads(options.official_json.read_text())
                if options.official_json
                else official_folders(options.oracle_python, rounds, work)
            )
            return check(document, rounds, work)
        except RuntimeError as error:
            print(f"Error: {error}", file=sys.stderr)
            return 2


if __name__ == "__main__":
    sys.exit(main())
