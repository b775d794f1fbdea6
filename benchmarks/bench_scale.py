"""Scale benchmark (run by `make bench`): 1,000,000 results ingested, analysed, reported, gated.

The data are real files of a supported kind: one MLPerf Inference results
table (``summary_results.json``, the columns of the MLCommons final-report
generator) per round, ingested through the real path (``tracker ingest
--kind mlperf-table --strict``: the folder is hashed, the table parsed, each
row labelled and stored by ``Store.save_source`` in one transaction per round).
By default (seeded):

* 50 rounds (``v1.0`` … ``v5.9``: the software versions);
* 2,500 systems (50 submitters × 50; 40% of them in families of 4 that share
  an accelerator model at 1, 2, 4 and 8 accelerators, so scaling groups form,
  the others alone with 8 accelerators) × 4 benchmark/scenario pairs (resnet
  Offline and Server, bert-99 Offline, llama2-70b-99 Offline) = 10,000 series;
* each series published twice per round (closed and open division of the same
  system: two samples of one series), i.e. 20,000 results per round and
  1,000,000 in all. Values have 1% noise; about 30% of the series (or
  families) step by ±3–30% once, 5% lose 10% in the last round, and one
  family in 50 loses scaling efficiency in the last round.

Each step runs in a subprocess of its own, the real command line: ``ingest``
(every round in one process), ``analyze`` (stores the findings), ``report``
(the static site) and ``gate --candidate <last round>`` (a release gate,
nothing stored). For each step the wall time, the CPU time (user + system) and
the peak resident memory of that process (``os.wait4``'s ``ru_maxrss``) are
printed and written to ``benchmarks/results/scale.json``; a step whose peak RSS
exceeds ``--limit-mb`` (500) is marked, and the script exits 1.

The database is a fresh SQLite file by default; ``--database-url
postgresql+psycopg://...`` runs the same on PostgreSQL in a schema of its own
(created, and dropped afterwards unless ``--keep``). ``--rounds`` and
``--systems`` scale it down for a quick look; ``--steps analyze,report`` with
``--work DIR`` (and the URL of the kept schema) measures again on the
database of an earlier run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tracker.store.facade import normalise_database_url

RESULTS = Path(__file__).parent / "results" / "scale.json"
SEED = 20261202
LIMIT_MB = 500.0
SUBMITTERS_SYSTEMS = 50
"""Systems per submitter."""
COMBOS = (
    # benchmark folder, official model, scenario, unit label, level
    ("resnet50", "resnet", "Offline", "Samples/s", 90_000.0),
    ("resnet50", "resnet", "Server", "Queries/s", 80_000.0),
    ("bert-99", "bert-99", "Offline", "Samples/s", 9_000.0),
    ("llama2-70b-99", "llama2-70b-99", "Offline", "Tokens/s", 30_000.0),
)
DIVISIONS = ("closed", "open")
STEPS = ("ingest", "analyze", "report", "gate")
FAMILY = (1, 2, 4, 8)
"""Accelerator counts of the systems of one family (one accelerator model)."""


def _round_label(index: int) -> str:
    return f"v{1 + index // 10}.{index % 10}"


@dataclass(frozen=True, slots=True)
class _System:
    """One system: its accelerator model and count, and its family (``None``: on its own)."""

    platform: str
    submitter: str
    accelerator: str
    count: int
    family: int | None


def _system(index: int) -> _System:
    """Systems of 2 in 5 groups of 4 form families (one accelerator at 1, 2, 4 and 8)."""
    group, member = divmod(index, len(FAMILY))
    in_family = group % 5 < 2
    return _System(
        platform=f"system-{index:05d}",
        submitter=f"Submitter{index // SUBMITTERS_SYSTEMS:03d}",
        accelerator=f"Accelerator-F{group:04d}" if in_family else f"Accelerator-S{index:05d}",
        count=FAMILY[member] if in_family else 8,
        family=group if in_family else None,
    )


@dataclass(frozen=True, slots=True)
class _Path:
    level: float
    steps: tuple[tuple[int, float], ...]
    """(first round, factor) of each level change."""

    def at(self, index: int) -> float:
        return self.level * math.prod(f for at, f in self.steps if index >= at)


def _path(level: float, rounds: int, rng: random.Random) -> _Path:
    """30% of the paths step once (±3–30%), 5% lose 10% in the last round."""
    steps: list[tuple[int, float]] = []
    if rng.random() < 0.3 and rounds > 20:
        at = rng.randrange(10, rounds - 10)
        steps.append((at, 1 + rng.choice((-1, 1)) * rng.uniform(0.03, 0.3)))
    if rng.random() < 0.05:
        steps.append((rounds - 1, 0.9))
    return _Path(level * rng.uniform(0.5, 2.0), tuple(steps))


def _plan(systems: int, rounds: int, rng: random.Random) -> list[_Path]:
    """The level path of every series (system-major, then benchmark/scenario).

    The systems of a family share their path per benchmark/scenario, scaled by
    ``count × 0.98^log2(count)`` (efficiency ≥ 94%); in 1 family of 50 the systems
    with more than one accelerator lose 15% in the last round (an efficiency drop).
    """
    plans: list[_Path] = []
    families: dict[tuple[int, int], _Path] = {}
    for index in range(systems):
        system = _system(index)
        for c, (*_names, level) in enumerate(COMBOS):
            if system.family is None:
                plans.append(_path(level, rounds, rng))
                continue
            shared = families.get((system.family, c))
            if shared is None:
                shared = families[(system.family, c)] = _path(level / 8, rounds, rng)
            scale = system.count * 0.98 ** math.log2(system.count)
            steps = shared.steps
            if system.family % 50 == 7 and system.count > 1:
                steps = (*steps, (rounds - 1, 0.85))
            plans.append(_Path(shared.level * scale, steps))
    return plans


def _table(
    index: int, systems: int, plans: Sequence[_Path], rng: random.Random
) -> list[dict[str, Any]]:
    """One round's results table: a row per system, benchmark/scenario and division."""
    label = _round_label(index)
    rows: list[dict[str, Any]] = []
    for number in range(systems):
        system = _system(number)
        for c, (folder, model, scenario, unit, _level) in enumerate(COMBOS):
            level = plans[number * len(COMBOS) + c].at(index)
            for division in DIVISIONS:
                value = level * (1 + rng.gauss(0.0, 0.01))
                location = f"{division}/{system.submitter}/results/{system.platform}/{folder}"
                rows.append(
                    {
                        "version": label,
                        "Location": f"{location}/{scenario}",
                        "Platform": system.platform,
                        "System": f"{system.platform} ({system.count}x {system.accelerator})",
                        "Suite": "datacenter",
                        "Availability": "available",
                        "Model": model,
                        "UsedModel": folder,
                        "Performance_Result": float(f"{value:.6g}"),
                        "Performance_Units": unit,
                        "Accelerator": system.accelerator,
                        "Nodes": 1,
                        "a#": system.count,
                        "Processor": "Example CPU 64-core",
                        "Software": "ExampleRT 1; driver 570",
                    }
                )
    return rows


def write_rounds(root: Path, *, rounds: int, systems: int) -> list[Path]:
    """Write one ``summary_results.json`` folder per round; return the folders."""
    rng = random.Random(SEED)
    plans = _plan(systems, rounds, rng)
    folders = []
    for index in range(rounds):
        folder = root / f"round-{_round_label(index)}"
        folder.mkdir(parents=True, exist_ok=True)
        rows = _table(index, systems, plans, rng)
        (folder / "summary_results.json").write_text(json.dumps(rows), encoding="utf-8")
        folders.append(folder)
    return folders


@dataclass(frozen=True, slots=True)
class Step:
    """What one step cost: its process's wall time, CPU time and peak RSS."""

    name: str
    command: list[str]
    exit_code: int
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    output_tail: str


def run_step(name: str, args: Sequence[str], env: dict[str, str], log: Path) -> Step:
    """Run ``python -m tracker ARGS`` in a subprocess of its own and measure that process."""
    command = [sys.executable, "-m", "tracker", *args]
    with log.open("wb") as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        _pid, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    return Step(
        name=name,
        command=["tracker", *args],
        exit_code=process.returncode,
        wall_s=round(wall, 2),
        cpu_s=round(usage.ru_utime + usage.ru_stime, 2),
        peak_rss_mb=round(usage.ru_maxrss / 1024, 1),  # kilobytes on Linux
        output_tail="\n".join(lines[-6:]),
    )


@contextmanager
def _database(url: str | None, work: Path, *, keep: bool, fresh: bool) -> Iterator[str]:
    """A fresh SQLite file in ``work``, or a fresh schema of the PostgreSQL database ``url``.

    Unless ``fresh``, the database of an earlier run: the file in ``work``, or ``url`` as given.
    """
    if url is None:
        if fresh:
            (work / "scale.db").unlink(missing_ok=True)
        yield f"sqlite:///{work / 'scale.db'}"
        return
    if not fresh:
        yield url
        return
    base = normalise_database_url(url)
    if make_url(base).get_backend_name() != "postgresql":
        raise SystemExit("--database-url: give a postgresql+psycopg:// URL (SQLite is the default)")
    schema = f"bench_scale_{uuid.uuid4().hex[:8]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    scoped = make_url(base).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield scoped.render_as_string(hide_password=False)
    finally:
        if keep:
            print(f"kept schema {schema}")
        else:
            with admin.connect() as connection:
                connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--database-url", help="PostgreSQL URL (default: a fresh SQLite file)")
    parser.add_argument("--rounds", type=int, default=50, help="versions (default 50)")
    parser.add_argument("--systems", type=int, default=2500, help="systems (× 4 series; 2,500)")
    parser.add_argument("--limit-mb", type=float, default=LIMIT_MB, help="peak RSS limit per step")
    parser.add_argument("--work", type=Path, help="keep the data, database and site in this folder")
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL schema")
    parser.add_argument("--out", type=Path, default=RESULTS, help="figures (JSON)")
    parser.add_argument(
        "--steps",
        default=",".join(STEPS),
        help="comma-separated steps to run (default: all); without ingest, --work must hold "
        "the database of an earlier run",
    )
    return parser.parse_args()


def _steps(folders: Sequence[Path], work: Path, rounds: int) -> list[tuple[str, list[str]]]:
    ingest = ["ingest", "--kind", "mlperf-table", "--strict", *map(str, folders)]
    return [
        ("ingest", ingest),
        ("analyze", ["analyze"]),
        ("report", ["report", "--out", str(work / "site")]),
        ("gate", ["gate", "--candidate", _round_label(rounds - 1)]),
    ]


def _measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    chosen = [name.strip() for name in args.steps.split(",") if name.strip()]
    if unknown := sorted(set(chosen) - set(STEPS)):
        raise SystemExit(f"--steps: unknown step(s) {', '.join(unknown)}; use {', '.join(STEPS)}")
    fresh = "ingest" in chosen
    start = time.perf_counter()
    folders = write_rounds(work / "data", rounds=args.rounds, systems=args.systems) if fresh else []
    generate_s = time.perf_counter() - start
    steps: list[Step] = []
    with _database(args.database_url, work, keep=args.keep, fresh=fresh) as url:
        env = {**os.environ, "TRACKER_DATABASE_URL": url, "TRACKER_CACHE_DIR": str(work / "cache")}
        for name, step_args in _steps(folders, work, args.rounds):
            if name not in chosen:
                continue
            step = run_step(name, step_args, env, work / f"{name}.log")
            steps.append(step)
            print(
                f"{name:>8}: {step.wall_s:8.1f} s wall {step.cpu_s:8.1f} s CPU "
                f"{step.peak_rss_mb:7.0f} MB peak RSS (exit {step.exit_code})",
                flush=True,
            )
            if step.exit_code not in (0, 1) or (name != "gate" and step.exit_code != 0):
                raise SystemExit(f"{name} failed (exit {step.exit_code}):\n{step.output_tail}")
    database = "postgresql" if args.database_url else "sqlite"
    sqlite_file = work / "scale.db"
    return {
        "database": database,
        "sqlite_file_mb": round(sqlite_file.stat().st_size / 2**20, 1)
        if database == "sqlite" and sqlite_file.exists()
        else None,
        "rounds": args.rounds,
        "systems": args.systems,
        "series": args.systems * len(COMBOS),
        "samples_per_version": len(DIVISIONS),
        "results": args.rounds * args.systems * len(COMBOS) * len(DIVISIONS),
        "generate_s": round(generate_s, 2),
        "limit_mb": args.limit_mb,
        "cpus": os.cpu_count(),
        "steps": [asdict(s) for s in steps],
        "total_wall_s": round(sum(s.wall_s for s in steps), 2),
        "over_limit": [s.name for s in steps if s.peak_rss_mb > args.limit_mb],
    }


def main() -> None:
    args = _arguments()
    if args.work is not None:
        args.work.mkdir(parents=True, exist_ok=True)
        figures = _measure(args, args.work)
    else:
        with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
            figures = _measure(args, Path(tmp))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(
        f"{figures['results']:,} results ({figures['series']:,} series × {figures['rounds']} "
        f"versions × {figures['samples_per_version']} samples) on {figures['database']}: "
        f"data written in {figures['generate_s']:.1f} s, steps {figures['total_wall_s']:.1f} s"
    )
    print(f"written to {args.out}")
    if figures["over_limit"]:
        print(f"over the {args.limit_mb:g} MB limit: {', '.join(figures['over_limit'])}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
