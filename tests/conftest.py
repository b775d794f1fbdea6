"""Shared fixtures: the shared real-data folder, and databases on SQLite and PostgreSQL.

* ``shared_data``: ``$TRACKER_SHARED_DATA`` (default ``<repo>/../shared/data``);
  tests that need it skip when it is missing, unless ``TRACKER_REQUIRE_SHARED_DATA=1``
  (set by ``.ci/run``), where a missing folder fails.
* ``database_url``: a fresh SQLite file, and — when ``TRACKER_TEST_POSTGRES_URL``
  is set — a fresh PostgreSQL schema of the test's own, dropped afterwards.
* every test gets its own ``TRACKER_CACHE_DIR`` (downloads, ingest snapshots).
* ``run_tracker``: the ``tracker`` CLI run in-process (click's ``CliRunner``), for
  tests where a process of its own adds nothing but its start-up time.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Mapping, Sequence
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import settings
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tracker.store.facade import Store, normalise_database_url

REPO_ROOT = Path(__file__).resolve().parent.parent
POSTGRES_URL_VARIABLE = "TRACKER_TEST_POSTGRES_URL"

# Hypothesis: "dev" by default (quick), "ci" when CI is set (.ci/run sets CI=1): the same
# 100 examples per test on every run (derandomized: more would repeat the same draw on every
# run, not search further), and "fuzz" (`make fuzz`): 2,000 fresh random examples per test,
# the deep search to run before a release or after a parser change. HYPOTHESIS_PROFILE picks
# one. Failures print the reproduction blob; no example database is written.
settings.register_profile(
    "dev", max_examples=40, deadline=timedelta(seconds=2), database=None, print_blob=True
)
settings.register_profile(
    "ci",
    max_examples=100,
    deadline=timedelta(seconds=2),
    derandomize=True,
    database=None,
    print_blob=True,
)
settings.register_profile(
    "fuzz", max_examples=2000, deadline=timedelta(seconds=5), database=None, print_blob=True
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite the golden files in tests/golden/ from the current output",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    """True when the run was started with ``--update-golden``."""
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(autouse=True)
def _private_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Downloads and ingest snapshots of a test go to its own folder, never to ~/.cache.

    ``COLUMNS`` and ``LINES`` are unset: output is as wide as a run without a terminal
    makes it, whoever started pytest (a terminal, CI, or pytest-xdist, whose workers set
    ``COLUMNS=80``); a test about the width sets them itself. ``TRACKER_PROGRESS=none``:
    no progress lines on stderr; a test about progress sets it itself.
    """
    monkeypatch.setenv("TRACKER_CACHE_DIR", str(tmp_path / "tracker-cache"))
    monkeypatch.setenv("TRACKER_PROGRESS", "none")
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = Path(os.environ.get("TRACKER_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
    if not path.is_dir():
        message = f"shared data folder {path} is missing (set TRACKER_SHARED_DATA)"
        if os.environ.get("TRACKER_REQUIRE_SHARED_DATA") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def loadgen_local(shared_data: Path) -> Path:
    return shared_data / "loadgen-local"


def _postgres_schema_url(base_url: str) -> Iterator[str]:
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(normalise_database_url(base_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = make_url(normalise_database_url(base_url)).update_query_dict(
        {"options": f"-csearch_path={schema}"}
    )
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL to an empty database of the test's own, on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'tracker.db'}"
        return
    base_url = os.environ.get(POSTGRES_URL_VARIABLE)
    if not base_url:
        pytest.skip(f"{POSTGRES_URL_VARIABLE} is not set")
    yield from _postgres_schema_url(base_url)


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    opened = Store.open(database_url)
    try:
        yield opened
    finally:
        opened.close()


class RunTracker:
    """``run_tracker(["gate", "--candidate", "2.0"], env={...})``: the CLI in this process.

    The entry point is the command group behind the console script (``tracker.cli:cli``;
    the script itself, :func:`tracker.cli.main`, also freezes the collector at exit). The
    result is click's :class:`~click.testing.Result`: ``exit_code``, ``stdout`` and ``stderr``
    apart (click >= 8.2), ``output`` (both, interleaved). ``env`` applies to this
    run only (``None`` unsets a variable); ``GITHUB_STEP_SUMMARY`` is unset unless
    given, so a gate run in CI never writes to the job's summary. An exception the
    CLI does not turn into an exit code is raised, not reported as exit 1. The
    working directory is the test's: use ``monkeypatch.chdir`` for relative paths.
    """

    def __call__(
        self,
        args: Sequence[str],
        env: Mapping[str, str | None] | None = None,
        *,
        input: str | None = None,
    ) -> Result:
        from tracker.cli import cli

        return CliRunner().invoke(
            cli,
            list(args),
            input=input,
            env={"GITHUB_STEP_SUMMARY": None, **(env or {})},
            catch_exceptions=False,
        )


@pytest.fixture
def run_tracker() -> RunTracker:
    """Runs ``tracker ARGS`` in-process (see :class:`RunTracker`)."""
    return RunTracker()
