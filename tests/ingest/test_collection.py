"""Fewer garbage collections while a source is read and stored (issue 19): the ingest and
its worker processes run the cyclic collector at raised thresholds, and the thresholds
are the caller's again afterwards."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from tracker.ingest.parallel import INGEST_THRESHOLDS, fewer_collections, worker_pool
from tracker.ingest.run import ingest_source
from tracker.records.results import SourceSpec
from tracker.store.facade import Store

DEFAULTS = (700, 10, 10)


@pytest.fixture(autouse=True)
def default_thresholds() -> Iterator[None]:
    before = gc.get_threshold()
    gc.set_threshold(*DEFAULTS)
    yield
    gc.set_threshold(*before)


def _thresholds(_task: int) -> tuple[int, int, int]:
    threshold: tuple[int, int, int] = gc.get_threshold()
    return threshold


def test_the_block_collects_at_the_ingest_thresholds_and_restores_the_callers() -> None:
    with fewer_collections():
        assert gc.get_threshold() == INGEST_THRESHOLDS
    assert gc.get_threshold() == DEFAULTS


def test_the_thresholds_are_restored_when_the_block_raises() -> None:
    with pytest.raises(KeyError), fewer_collections():
        raise KeyError("x")
    assert gc.get_threshold() == DEFAULTS


def test_a_threshold_the_caller_set_higher_is_kept() -> None:
    gc.set_threshold(500_000, 5, 1_000)
    with fewer_collections():
        assert gc.get_threshold() == (500_000, 50, 1_000)
    assert gc.get_threshold() == (500_000, 5, 1_000)


def test_a_source_is_read_and_stored_at_the_ingest_thresholds(
    store: Store, shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[int, int, int]] = []
    save = Store.save_source

    def save_and_look(self: Store, *args: object, **kwargs: object) -> object:
        seen.append(gc.get_threshold())
        return save(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "save_source", save_and_look)
    round_folder = shared_data / "mlperf-inference" / "v5.1"
    outcome = ingest_source(store, SourceSpec(location=str(round_folder)))
    assert outcome.saved is not None and outcome.saved.results_stored > 0
    assert seen == [INGEST_THRESHOLDS]
    assert gc.get_threshold() == DEFAULTS


def test_a_worker_process_collects_at_the_ingest_thresholds() -> None:
    with worker_pool(2) as pool:
        found = list(pool(_thresholds, [1, 2, 3, 4]))
    assert found == [INGEST_THRESHOLDS] * 4
    assert gc.get_threshold() == DEFAULTS
