"""Fixtures of the report tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import RunTracker


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site ``tracker demo`` renders, made once for each test module that asks for it."""
    out = tmp_path_factory.mktemp("demo")
    result = RunTracker()(["demo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out / "site"
