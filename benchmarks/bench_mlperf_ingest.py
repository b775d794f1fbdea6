"""Benchmark: ingest of a published MLPerf Inference round (run by `make bench`).

Builds, in a temporary folder, a round tree of at least 20,000 result folders
by replicating the real v5.1 fixtures (``../shared/data/mlperf-inference/v5.1``,
or ``$TRACKER_SHARED_DATA``) under new system names (hard links, so the tree
costs no disk space), then measures, in one process:

* the first ingest into a fresh SQLite database, read by ``--jobs`` worker
  processes (default: every core; result folders per second; target ≥ 3,500/s);
* the same first ingest in one process (``--jobs 1``; anchor: ≥ 2,000/s);
* an unchanged re-ingest with the snapshot cache (anchor: ≤ 5 % of the first);
* an unchanged re-ingest without it (every file read and hashed again, nothing
  parsed or stored), for comparison.

Then ``tracker ingest`` as a command (start-up included) of the 30 copies of
v5.1 (2,460 result folders) the issue measures, with ``--jobs 1`` and ``--jobs N``
(target ≥ 2,500 folders per CPU second, ≥ 3,500 per wall second on 2 cores). The
package's bytecode is compiled first, as ``pip install`` of a wheel leaves it: where
``PYTHONDONTWRITEBYTECODE`` is set, an editable install compiles every module of the
tracker again at each start (about 0.13 s of CPU on a 2-core machine).

Beside them, two floors of the 2,460-folder command (once, CPU seconds): the
least any reader of these folders must do (list the folders the tracker lists,
read and hash with sha256 the files it reads, no parsing: the folder
counterpart of the archive benchmark's minimal stream-and-read), and the least
the command spends before and after its work (the interpreter, the import of
the CLI and of the store, and the exit). Their sum bounds the folders per CPU
second the command could reach with parsing and storing that cost nothing.

Each figure is the median of ``--runs`` repetitions (default 3, each into a
fresh database), as wall time and as CPU time of this process and its workers
(user + sys). Prints the figures (and every run's), the machine's load
average, and writes them to ``benchmarks/results/mlperf_ingest.json``.
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import tracker
from tracker.formats.mlperf_inference.read import MLPerfInferenceReader
from tracker.ingest.parallel import default_jobs
from tracker.ingest.run import ingest_source
from tracker.records.results import SourceSpec
from tracker.sources.tree import FolderTree
from tracker.store.facade import Store

MIN_FOLDERS = 20_000
ANCHOR_FOLDERS_PER_S = 2_000
ANCHOR_REINGEST_RATIO = 0.05
TARGET_FOLDERS_PER_S = 3_500
CLI_COPIES = 30
"""Copies of v5.1 in the tree the issue measures with ``tracker ingest`` (2,460 folders)."""
RESULTS = Path(__file__).parent / "results" / "mlperf_ingest.json"
_PLATFORM_LEVEL = {"results": 3, "measurements": 3, "compliance": 3}


def _fixtures() -> Path:
    shared = Path(os.environ.get("TRACKER_SHARED_DATA", Path(__file__).parents[2] / "shared/data"))
    source = shared / "mlperf-inference" / "v5.1"
    if not source.is_dir():
        sys.exit(f"{source} is missing (set TRACKER_SHARED_DATA)")
    return source


def _result_folders(base: Path) -> int:
    return sum(1 for _ in base.glob("*/*/results/*/*/*/performance/run_1"))


def _replicate(base: Path, out: Path, copies: int) -> None:
    """``copies`` renamed copies of every system of ``base`` (hard links) under ``out``."""
    for copy in range(copies):
        for root, _dirs, files in os.walk(base):
            parts = Path(root).relative_to(base).parts
            if len(parts) < 3:
                continue  # the table and the submitters' own files are not replicated
            renamed = list(parts)
            if parts[2] in _PLATFORM_LEVEL and len(parts) > 3:
                renamed[3] = f"{parts[3]}_r{copy}"
            folder = out.joinpath(*renamed)
            folder.mkdir(parents=True, exist_ok=True)
            for name in files:
                target = name
                if parts[2] == "systems" and len(parts) == 3:
                    target = f"{Path(name).stem}_r{copy}.json"
                os.link(Path(root) / name, folder / target)


@dataclass(frozen=True, slots=True)
class _Timed:
    wall_s: float
    cpu_s: float
    folders: int
    stored: int


def _cpu_s() -> float:
    """CPU seconds of this process and of its children that have ended (the workers)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _timed_ingest(store: Store, spec: SourceSpec, cache: Path | None, jobs: int) -> _Timed:
    """One ingest: wall time and CPU time of this process and its workers."""
    cpu_start, start = _cpu_s(), time.perf_counter()
    outcome = ingest_source(store, spec, strict=True, cache_dir=cache, jobs=jobs)
    elapsed, cpu = time.perf_counter() - start, _cpu_s() - cpu_start
    saved = outcome.saved
    stored = saved.results_stored if saved else 0
    return _Timed(elapsed, cpu, outcome.runs_found, stored)


def _build(work: Path, copies: int | None = None) -> tuple[Path, float]:
    """The replicated round tree under ``work`` (kept and reused if it is there)."""
    tree = work / ("v5.1" if copies is None else f"v5.1-x{copies}")
    if tree.is_dir():  # kept from an earlier run: bring it into the caches, as a fresh one is
        for root, _dirs, files in os.walk(tree):
            for name in files:
                os.stat(os.path.join(root, name))
        return tree, 0.0
    base = work / "base"
    if not base.is_dir():
        shutil.copytree(_fixtures(), base)
    copies = copies or -(-MIN_FOLDERS // _result_folders(base))
    build_start = time.perf_counter()
    _replicate(base, tree, copies)
    return tree, time.perf_counter() - build_start


def _one_run(tree: Path, work: Path, jobs: int) -> dict[str, _Timed]:
    """First ingest into a fresh database (``jobs`` workers, then one process), then the
    two unchanged re-ingests."""
    spec = SourceSpec(location=str(tree), kind="auto")
    cache = work / "cache"
    timed = {}
    for name, workers in (("serial", 1), ("first", jobs)):
        shutil.rmtree(cache, ignore_errors=True)
        (work / "bench.db").unlink(missing_ok=True)
        with Store.open(f"sqlite:///{work / 'bench.db'}") as store:
            timed[name] = _timed_ingest(store, spec, cache, workers)
    with Store.open(f"sqlite:///{work / 'bench.db'}") as store:
        timed["again"] = _timed_ingest(store, spec, cache, jobs)
        timed["rehash"] = _timed_ingest(store, spec, None, jobs)
    return timed


def _cli_run(tree: Path, work: Path, jobs: int) -> _Timed:
    """``tracker ingest --jobs N`` of ``tree`` into a fresh database, as a command."""
    (work / "cli.db").unlink(missing_ok=True)
    shutil.rmtree(work / "cli-cache", ignore_errors=True)
    command = [sys.executable, "-m", "tracker", "--database-url", f"sqlite:///{work / 'cli.db'}"]
    env = {**os.environ, "TRACKER_CACHE_DIR": str(work / "cli-cache")}
    cpu_start, start = _cpu_s(), time.perf_counter()
    subprocess.run([*command, "ingest", "--jobs", str(jobs), str(tree)], check=True, env=env)
    elapsed, cpu = time.perf_counter() - start, _cpu_s() - cpu_start
    folders = _result_folders(tree)
    return _Timed(elapsed, cpu, folders, folders)


class _ListedTree(FolderTree):
    """A folder tree that remembers every folder it lists."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.listed: list[str] = []

    def _scan(self, folder: str) -> tuple[list[str], list[str]]:
        self.listed.append(folder)
        return super()._scan(folder)


def _io_floor_cpu_s(tree: Path) -> float:
    """CPU seconds to list the folders and to read and hash the files the reader does
    (which it finds out first, untimed); the best of three."""
    listed = _ListedTree(tree)
    MLPerfInferenceReader().read(
        listed, SourceSpec(location=str(tree)), strict=False, progress=None
    )
    folders = [os.path.join(tree, folder) for folder in listed.listed]
    files = [os.path.join(tree, artifact.path) for artifact in listed.artifacts()]
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for folder in folders:
            os.stat(folder)
            with os.scandir(folder) as entries:
                list(entries)
        for name in files:
            descriptor = os.open(name, os.O_RDONLY)
            try:
                data = os.read(descriptor, os.fstat(descriptor).st_size + 1)
            finally:
                os.close(descriptor)
            hashlib.sha256(data).hexdigest()
        best = min(best, time.process_time() - start)
    return best


def _start_and_exit_floor_cpu_s() -> float:
    """CPU seconds of a process that imports the CLI and the store and exits as the console
    script does (the collector frozen), the median of five: what an ingest command spends
    before and after its work."""
    script = "import gc, tracker.cli, tracker.store.write, tracker.store.models; gc.freeze()"
    spent = []
    for _ in range(5):
        before = _cpu_s()
        subprocess.run([sys.executable, "-c", script], check=True)
        spent.append(_cpu_s() - before)
    return statistics.median(spent)


def _floors(figures: dict[str, object], io_s: float, start_s: float) -> dict[str, float]:
    """The 2,460-folder command's CPU over its floors (reading, start and exit), and the
    folders per CPU second it would reach at them."""
    folders = cast(int, figures["cli_result_folders"])
    command_s = folders / cast(float, figures["cli_serial_folders_per_cpu_s"])
    return {
        "cli_io_floor_cpu_s": io_s,
        "cli_start_and_exit_floor_cpu_s": start_s,
        "cli_serial_cpu_over_floors": command_s / (io_s + start_s),
        "cli_folders_per_cpu_s_at_floors": folders / (io_s + start_s),
    }


def _figures(runs: list[dict[str, _Timed]], build_s: float, jobs: int) -> dict[str, object]:
    """Medians over the runs, wall and CPU time; the per-run figures beside them."""

    def median(name: str, field: str) -> float:
        return float(statistics.median(getattr(run[name], field) for run in runs))

    first = runs[0]["first"]
    figures: dict[str, object] = {
        "runs": len(runs),
        "jobs": jobs,
        "load_average_1min": os.getloadavg()[0],
        "result_folders": first.folders,
        "results_stored": first.stored,
        "reingest_results_stored": runs[0]["again"].stored,
        "cli_result_folders": runs[0]["cli_jobs"].folders,
        "tree_build_s": build_s,
        "anchor_folders_per_s": ANCHOR_FOLDERS_PER_S,
        "target_folders_per_s": TARGET_FOLDERS_PER_S,
        "anchor_reingest_ratio": ANCHOR_REINGEST_RATIO,
    }
    for clock, field in (("", "wall_s"), ("cpu_", "cpu_s")):
        first_s = median("first", field)
        figures[f"first_ingest_{clock}s"] = first_s
        figures[f"folders_per_{clock}s"] = first.folders / first_s
        figures[f"serial_folders_per_{clock}s"] = first.folders / median("serial", field)
        figures[f"reingest_{clock}s"] = median("again", field)
        figures[f"reingest_{clock}ratio"] = statistics.median(
            getattr(r["again"], field) / getattr(r["first"], field) for r in runs
        )
        figures[f"reingest_without_snapshot_{clock}s"] = median("rehash", field)
        for name in ("cli_serial", "cli_jobs"):
            figures[f"{name}_folders_per_{clock}s"] = runs[0][name].folders / median(name, field)
    figures["per_run"] = [
        {
            f"{name}_{field}": round(getattr(timed, field), 4)
            for name, timed in run.items()
            for field in ("wall_s", "cpu_s")
        }
        for run in runs
    ]
    return figures


def main() -> None:
    """Run the benchmark (``--runs N`` times, medians reported).

    ``--tree DIR`` keeps the generated trees in DIR for later runs.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, help="keep the generated tree here for later runs")
    parser.add_argument("--runs", type=int, default=3, help="repetitions (medians reported)")
    parser.add_argument("--jobs", type=int, default=default_jobs(), help="worker processes")
    args = parser.parse_args()
    compileall.compile_dir(Path(tracker.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tree, build_s = _build(args.tree or work)
        cli_tree, _build_s = _build(args.tree or work, CLI_COPIES)
        runs = []
        for _ in range(max(1, args.runs)):
            run = _one_run(tree, work, args.jobs)
            run["cli_serial"] = _cli_run(cli_tree, work, 1)
            run["cli_jobs"] = _cli_run(cli_tree, work, args.jobs)
            runs.append(run)
        io_floor_s = _io_floor_cpu_s(cli_tree)
    figures = _figures(runs, build_s, args.jobs)
    figures.update(_floors(figures, io_floor_s, _start_and_exit_floor_cpu_s()))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for key, value in figures.items():
        if key == "per_run":
            continue
        shown = f"{value:.4g}" if isinstance(value, float) else str(value)
        print(f"{key:>34}: {shown}")
    for number, run in enumerate(cast(list[dict[str, float]], figures["per_run"]), start=1):
        print(f"run {number}: " + ", ".join(f"{k} {v:.3f}" for k, v in run.items()))
    for clock in ("", "cpu_"):
        speed = cast(float, figures[f"folders_per_{clock}s"]) / TARGET_FOLDERS_PER_S
        ratio = cast(float, figures[f"reingest_{clock}ratio"]) / ANCHOR_REINGEST_RATIO
        what = "CPU" if clock else "wall"
        print(f"{what}: folders/s vs target {speed:.2f}x, re-ingest ratio vs anchor {ratio:.2f}x")
    one_core = cast(float, figures["serial_folders_per_cpu_s"])
    print(
        f"one process (--jobs 1): {one_core:.0f} folders per CPU second, "
        f"{one_core / ANCHOR_FOLDERS_PER_S:.2f}x the one-core anchor ({ANCHOR_FOLDERS_PER_S}/s)"
    )
    print(
        f"the {figures['cli_result_folders']}-folder command (--jobs 1): "
        f"{cast(float, figures['cli_serial_cpu_over_floors']):.2f}x its floors in CPU; "
        "with parsing and storing that cost nothing it would reach "
        f"{cast(float, figures['cli_folders_per_cpu_s_at_floors']):.0f} folders per CPU second"
    )
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
