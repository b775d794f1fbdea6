"""The tracker installs anywhere: an sdist that builds a working wheel, and that wheel.

* The distribution is ``mlperf-results-tracker`` (``tracker`` on the package index is an
  unrelated project); the import package and the console script stay ``tracker``.
* The sdist carries what the build, ``make test`` and ``make bench`` read; a wheel built
  from the unpacked sdist has the same files as one built from the checkout, with the
  templates, migrations and jobs, and the licenses.
* That wheel, installed with pip into a fresh virtual environment outside the checkout,
  runs ``tracker demo`` (needs the package index for the dependencies; a network failure
  skips the test, except under ``CI=1``, where it fails).
* ``make demo`` installs the runtime only, ``make test`` the development tools too; the
  GitHub Actions example installs the tracker by name, not the repository it runs in;
  the README and the example policy cite files that exist.
"""

from __future__ import annotations

import configparser
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
import yaml
from hatchling.builders.sdist import SdistBuilder
from hatchling.builders.wheel import WheelBuilder
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO_ROOT = Path(__file__).resolve().parent.parent
DISTRIBUTION = "mlperf-results-tracker"
# sha256 of https://www.apache.org/licenses/LICENSE-2.0.txt, the full text unmodified.
APACHE_2_0_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"

SHIPPED_FILES = (
    "tracker/_data/templates/index.html",
    "tracker/_data/templates/base.html",
    "tracker/_data/templates/static/plotly-basic.min.js",
    "tracker/_data/templates/static/plotly-basic.LICENSE.txt",
    "tracker/_data/migrations/env.py",
    "tracker/_data/jobs/demo.toml",
)

# Files and folders of the checkout the sdist must carry: every file under each folder.
SDIST_FILES = (
    "pyproject.toml",
    "README.md",
    "CHANGELOG.md",
    "LICENSE",
    "alembic.ini",
    "Makefile",
)
SDIST_FOLDERS = (
    "tracker",
    "templates",
    "migrations",
    "jobs",
    "tests",
    "scripts",
    "docs",
    "benchmarks",
)
# What .gitignore keeps out of the sdist (and what a test run leaves behind).
_NOT_SHIPPED = re.compile(r"(^|/)(__pycache__|\.hypothesis|benchmarks/results)(/|$)|\.(pyc|db)$")

# Imports only the stdlib-backed tracker.paths; prints where the shipped folders are.
FIND_SHIPPED_DIRS = """
import json, tracker, tracker.paths as p
print(json.dumps({
    "package": tracker.__file__,
    "templates": str(p.templates_dir()),
    "migrations": str(p.migrations_dir()),
    "jobs": str(p.jobs_dir()),
}))
"""

# Run by the fresh environment's interpreter (argv[1]: the distribution): where tracker
# comes from, and its metadata.
DESCRIBE_INSTALL = """
import json, sys, sysconfig, importlib.metadata as m, tracker
dist = m.distribution(sys.argv[1])
print(json.dumps({
    "package": tracker.__file__,
    "purelib": sysconfig.get_paths()["purelib"],
    "version": tracker.__version__,
    "dist_version": dist.version,
    "scripts": {e.name: e.value for e in dist.entry_points if e.group == "console_scripts"},
    "licenses": sorted(str(f) for f in dist.files if "/licenses/" in str(f)),
}))
"""

# pip's messages when the package index cannot be reached.
_NETWORK_ERRORS = (
    "NewConnectionError",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "Max retries exceeded",
    "ConnectTimeout",
    "ReadTimeout",
    "ProxyError",
    "No matching distribution found",
)


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would point Python or the tracker elsewhere."""
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "PYTHONPYCACHEPREFIX")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("TRACKER_")}
    return {**env, **extra}


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("sdist")
    (built,) = SdistBuilder(str(REPO_ROOT)).build(directory=str(directory), versions=["standard"])
    return Path(built)


@pytest.fixture(scope="module")
def unpacked_sdist(sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(sdist) as archive:
        archive.extractall(directory, filter="data")
    (root,) = directory.iterdir()
    return root


@pytest.fixture(scope="module")
def wheel(unpacked_sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from the unpacked sdist, as pip builds one from the package index."""
    directory = tmp_path_factory.mktemp("dist")
    (built,) = WheelBuilder(str(unpacked_sdist)).build(
        directory=str(directory), versions=["standard"]
    )
    return Path(built)


def _names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def _dist_info_file(wheel: Path, name: str) -> str:
    with zipfile.ZipFile(wheel) as archive:
        (path,) = [n for n in archive.namelist() if n.endswith(f".dist-info/{name}")]
        return archive.read(path).decode("utf-8")


def _checkout_files(folder: str) -> set[str]:
    return {
        path.relative_to(REPO_ROOT).as_posix()
        for path in (REPO_ROOT / folder).rglob("*")
        if path.is_file() and not _NOT_SHIPPED.search(path.relative_to(REPO_ROOT).as_posix())
    }


def test_the_distribution_has_a_name_of_its_own_and_the_command_stays_tracker(
    wheel: Path,
) -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["name"] == DISTRIBUTION
    assert project["scripts"] == {"tracker": "tracker.cli:main"}
    metadata = Parser().parsestr(_dist_info_file(wheel, "METADATA"))
    assert metadata["Name"] == DISTRIBUTION
    assert wheel.name.startswith("mlperf_results_tracker-")
    assert metadata["Provides-Extra"] == "postgres"


def test_the_wheel_metadata_is_complete(wheel: Path) -> None:
    metadata = Parser().parsestr(_dist_info_file(wheel, "METADATA"))
    assert metadata["License-Expression"] == "Apache-2.0 AND MIT"
    urls = dict(u.split(", ", 1) for u in metadata.get_all("Project-URL") or [])
    assert set(urls) >= {"Homepage", "Documentation", "Changelog", "Issues"}
    assert all(url.startswith("https://") for url in urls.values())
    classifiers = metadata.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert metadata["Author"] and metadata["Requires-Python"] == ">=3.11"
    assert metadata["Description-Content-Type"] == "text/markdown"


def test_the_license_is_the_apache_license_2_0_text_and_ships_with_both_archives(
    sdist: Path, wheel: Path
) -> None:
    license_bytes = (REPO_ROOT / "LICENSE").read_bytes()
    assert hashlib.sha256(license_bytes).hexdigest() == APACHE_2_0_SHA256
    metadata = Parser().parsestr(_dist_info_file(wheel, "METADATA"))
    assert metadata["License-Expression"] == "Apache-2.0 AND MIT"  # MIT: the plotly.js bundle
    assert set(metadata.get_all("License-File") or []) == {
        "LICENSE",
        "templates/static/plotly-basic.LICENSE.txt",
    }
    assert _dist_info_file(wheel, "licenses/LICENSE").encode("utf-8") == license_bytes
    with tarfile.open(sdist) as archive:
        (member,) = [m for m in archive.getmembers() if m.name.endswith("/LICENSE")]
        shipped = archive.extractfile(member)
        assert shipped is not None and shipped.read() == license_bytes


def test_the_sdist_carries_what_the_build_and_the_tests_read(unpacked_sdist: Path) -> None:
    expected = set(SDIST_FILES)
    for folder in SDIST_FOLDERS:
        expected |= _checkout_files(folder)
    assert {"tests/golden/report.json", "templates/static/plotly-basic.LICENSE.txt"} <= expected
    assert any(name.startswith("tests/data/") for name in expected)
    shipped = {
        path.relative_to(unpacked_sdist).as_posix()
        for path in unpacked_sdist.rglob("*")
        if path.is_file()
    }
    missing = sorted(expected - shipped)
    assert not missing, f"missing from the sdist: {missing}"


def test_the_wheel_from_the_sdist_matches_the_wheel_from_the_checkout(
    wheel: Path, tmp_path: Path
) -> None:
    (from_checkout,) = WheelBuilder(str(REPO_ROOT)).build(
        directory=str(tmp_path), versions=["standard"]
    )
    assert _names(wheel) == _names(Path(from_checkout))


def test_wheel_ships_templates_migrations_and_jobs(wheel: Path) -> None:
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
    assert not any(n.startswith(("tests/", "jobs/", "templates/", "migrations/")) for n in names)


def test_wheel_declares_the_tracker_console_script(wheel: Path) -> None:
    parser = configparser.ConfigParser()
    parser.read_string(_dist_info_file(wheel, "entry_points.txt"))
    assert parser["console_scripts"]["tracker"] == "tracker.cli:main"


def test_installed_package_finds_its_shipped_folders(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    # -S: no site-packages, so the editable install of the checkout cannot be found.
    completed = subprocess.run(
        [sys.executable, "-S", "-c", FIND_SHIPPED_DIRS],
        cwd=tmp_path,
        env=_clean_env(PYTHONPATH=str(site)),
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
        "jobs": site / "tracker" / "_data" / "jobs",
    }
    for key, folder in expected.items():
        assert Path(found[key]) == folder.resolve(), key
        assert not Path(found[key]).is_relative_to(REPO_ROOT), key
    assert (Path(found["templates"]) / "index.html").is_file()
    assert (Path(found["jobs"]) / "demo.toml").is_file()


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment outside the checkout, the wheel pip-installed into it
    (with its dependencies from the package index; ``--no-compile``: no bytecode written,
    which the test does not need and which costs several seconds)."""
    root = tmp_path_factory.mktemp("elsewhere")
    venv = root / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", str(venv)], env=_clean_env(), check=True, timeout=300
    )
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    done = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            "--no-compile",
        ]
        + [str(wheel)],
        cwd=root,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        message = f"pip install {wheel.name} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        if not os.environ.get("CI") and any(e in done.stderr for e in _NETWORK_ERRORS):
            pytest.skip(f"the package index is not reachable (CI=1 fails here); {message}")
        pytest.fail(message)
    return venv


def test_the_wheel_installed_elsewhere_is_the_tracker_that_runs(installed: Path) -> None:
    python = installed / ("Scripts" if os.name == "nt" else "bin") / "python"
    done = subprocess.run(
        [str(python), "-c", DESCRIBE_INSTALL, DISTRIBUTION],
        cwd=installed.parent,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    package = Path(found["package"]).resolve()
    assert package.is_relative_to(Path(found["purelib"]).resolve()), found
    assert package.is_relative_to(installed.resolve()), found
    assert not package.is_relative_to(REPO_ROOT), found
    assert found["dist_version"] == found["version"]
    assert found["scripts"] == {"tracker": "tracker.cli:main"}
    assert any(name.endswith("/licenses/LICENSE") for name in found["licenses"]), found


def test_the_wheel_installed_elsewhere_runs_the_demo(installed: Path) -> None:
    script = installed / ("Scripts" if os.name == "nt" else "bin") / "tracker"
    out = installed.parent / "demo-out"
    done = subprocess.run(
        [str(script), "demo", "--out", str(out)],
        cwd=installed.parent,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout[-3000:]}{done.stderr[-3000:]}"
    lines = (done.stdout + done.stderr).splitlines()
    assert any(line.startswith("gate: 1 (") for line in lines), done.stdout[-3000:]
    assert (out / "site" / "index.html").is_file()


def _dry_run(target: str, venv: Path) -> str:
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "-C", str(REPO_ROOT), target, f"VENV={venv}"],
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_installs_the_runtime_only_and_make_test_adds_the_dev_tools(
    tmp_path: Path,
) -> None:
    venv = tmp_path / "venv"
    demo = _dry_run("demo", venv)
    assert "--group" not in demo
    assert "pip install -e '.[postgres]'" in demo
    assert "tracker demo --out demo" in demo
    for command in demo.splitlines():
        if "pip install" in command:
            assert not re.search(r"\s(-q|--quiet)\b", command), command
    # a line says what each step does before it runs
    steps = [line for line in demo.splitlines() if line.startswith("echo ")]
    assert len(steps) >= 3 and all("==>" in step for step in steps), demo
    # after `make demo`: its stamp is there, `make test` still installs the dev group
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    (venv / ".installed-runtime").touch()
    after_demo = _dry_run("test", venv)
    assert "pip install -e '.[postgres]' --group dev" in after_demo
    assert "tracker demo" not in after_demo
    for target in ("lint", "bench"):
        assert "--group dev" in _dry_run(target, venv), target


def test_the_ci_script_runs_make_test() -> None:
    ci = (REPO_ROOT / ".ci" / "run").read_text("utf-8")
    assert re.search(r"^make test$", ci, re.MULTILINE)


def test_the_workflow_installs_the_tracker_by_name_not_the_repository_it_runs_in() -> None:
    workflow = yaml.safe_load((REPO_ROOT / "docs" / "github-actions-gate.yml").read_text("utf-8"))
    job = workflow["jobs"]["gate"]
    runs = [str(step.get("run", "")) for step in job["steps"]]
    (install,) = [run for run in runs if "pip install" in run]
    assert not re.search(r"pip install\s+['\"]?\.", install), install
    assert '"$TRACKER_PACKAGE"' in install
    requirement = Requirement(job["env"]["TRACKER_PACKAGE"])
    assert canonicalize_name(requirement.name) == DISTRIBUTION
    assert requirement.extras == {"postgres"}
    assert requirement.url and requirement.url.startswith(("git+https://", "https://"))


def test_the_readme_and_the_example_policy_cite_files_that_exist() -> None:
    top = "|".join(re.escape(folder) for folder in SDIST_FOLDERS)
    cited = re.compile(rf"(?<![\w/.-])((?:{top})/[\w./-]*[\w/])")
    for document in ("README.md", "docs/gate.example.toml"):
        text = (REPO_ROOT / document).read_text("utf-8")
        assert "docs/anchors" not in text, document
        paths = {path for path in cited.findall(text) if not _NOT_SHIPPED.search(path)}
        missing = sorted(path for path in paths if not (REPO_ROOT / path).exists())
        assert not missing, f"{document} cites files that are not in the repository: {missing}"


OUTSIDE_DOCUMENTS = re.compile(
    r"SPEC\b|DEVELOPERS\.md|anchors'? ?§|docs/anchors|format notes|llm-serving(\.md)?|"
    r"mlperf-inference\.md|regression-trackers\.md|\.\./shared"
)
"""How the project's planning documents, which are not in the repository, were cited."""


EXAMPLE_PATHS = {"tests/test_x.py", "tests/test_parse.py", "tracker/_data/"}
"""Paths that stand for a user's files in examples, or for where a wheel installs its data."""


def _code_and_docs() -> list[Path]:
    """Every file of the package, its templates, migrations, jobs and documentation."""
    found = [*sorted((REPO_ROOT / "tracker").rglob("*.py"))]
    for folder in ("templates", "migrations", "jobs", "docs"):
        found += sorted(
            p
            for p in (REPO_ROOT / folder).rglob("*")
            if p.is_file() and p.suffix in {".py", ".html", ".md", ".toml", ".yml", ".mako"}
        )
    return found


def test_every_document_the_code_cites_is_in_the_repository() -> None:
    top = "|".join(re.escape(folder) for folder in SDIST_FOLDERS)
    cited = re.compile(rf"(?<![\w/.-])((?:{top})/[\w./-]*[\w/])")
    outside: dict[str, list[str]] = {}
    missing: dict[str, list[str]] = {}
    for path in _code_and_docs():
        text = path.read_text("utf-8")
        name = path.relative_to(REPO_ROOT).as_posix()
        if found := sorted({m.group(0) for m in OUTSIDE_DOCUMENTS.finditer(text)}):
            outside[name] = found
        paths = {p for p in cited.findall(text) if not _NOT_SHIPPED.search(p)} - EXAMPLE_PATHS
        if gone := sorted(p for p in paths if not (REPO_ROOT / p).exists()):
            missing[name] = gone
    assert outside == {}, "cites documents that are not in the repository"
    assert missing == {}, "cites files that are not in the repository"
