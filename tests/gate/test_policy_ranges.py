"""Acknowledgement version ranges compare places in the version order, not spellings."""

from __future__ import annotations

import pytest

from tracker.gate.policy import _in_range


@pytest.mark.parametrize(
    ("version", "spec", "inside"),
    [
        ("2.0.0", "..2.0", True),
        ("v2.0", "1.0..2.0", True),
        ("2.0.1", "..2.0", False),
        ("2.0.13", "2.0.12..2.0.14", True),
        ("2.0.9", "2.0.12..2.0.14", False),
        ("2.0", "2.0", True),
        ("2.0.0", "2.0", False),  # a single version is matched as written
        ("anything", "*", True),
    ],
)
def test_a_range_holds_every_spelling_of_its_places(version: str, spec: str, inside: bool) -> None:
    assert _in_range(version, spec) is inside
