"""The wheel ships the templates, migrations and ingest jobs, and finds them installed."""

from __future__ import annotations

import configparser
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hatchling.builders.wheel import WheelBuilder

REPO_ROOT = Path(__file__).resolve().parent.parent

SHIPPED_FILES = (
    "tracker/_data/templates/index.html",
    "tracker/_data/templates/base.html",
    "tracker/_data/migrations/env.py",
    "tracker/_data/ingest/demo.toml",
)

# Imports only the stdlib-backed tracker.paths; prints where the shipped folders are.
FIND_SHIPPED_DIRS = """
import json, tracker, tracker.paths as p
print(json.dumps({
    "package": tracker.__file__,
    "templates": str(p.templates_dir()),
    "migrations": str(p.migrations_dir()),
    "ingest": str(p.ingest_jobs_dir()),
}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("dist")
    builder = WheelBuilder(str(REPO_ROOT))
    (built,) = builder.build(directory=str(directory), versions=["standard"])
    return Path(built)


def _names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_wheel_ships_templates_migrations_and_ingest_jobs(wheel: Path) -> None:
    names = _names(wheel)
    missing = [name for name in SHIPPED_FILES if name not in names]
    assert not missing, f"missing from {wheel.name}: {missing}"
    revisions = [
        n for n in names if n.startswith("tracker/_data/migrations/versions/") and n.endswith(".py")
    ]
    assert revisions, "no Alembic revision in tracker/_data/migrations/versions/"


def test_wheel_ships_the_package_modules(wheel: Path) -> None:
    names = _names(wheel)
    assert {"tracker/__init__.py", "tracker/paths.py", "tracker/cli/__init__.py"} <= names
    assert not any(n.startswith(("tests/", "ingest/", "templates/", "migrations/")) for n in names)


def test_wheel_declares_the_tracker_console_script(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        (entry_points,) = [
            n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")
        ]
        text = archive.read(entry_points).decode("utf-8")
    parser = configparser.ConfigParser()
    parser.read_string(text)
    assert parser["console_scripts"]["tracker"] == "tracker.cli:cli"


def test_installed_package_finds_its_shipped_folders(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("PYTHONHOME", None)
    # -S: no site-packages, so the editable install of the checkout cannot be found.
    completed = subprocess.run(
        [sys.executable, "-S", "-c", FIND_SHIPPED_DIRS],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    found = json.loads(completed.stdout)
    assert Path(found["package"]).is_relative_to(site / "tracker")
    expected = {
        "templates": site / "tracker" / "_data" / "templates",
        "migrations": site / "tracker" / "_data" / "migrations",
        "ingest": site / "tracker" / "_data" / "ingest",
    }
    for key, folder in expected.items():
        assert Path(found[key]) == folder.resolve(), key
        assert not Path(found[key]).is_relative_to(REPO_ROOT), key
    assert (Path(found["templates"]) / "index.html").is_file()
    assert (Path(found["ingest"]) / "demo.toml").is_file()
