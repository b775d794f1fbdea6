"""A person's triage is never overwritten by an analysis saving its findings at the same time.

The analysis's save reads the stored findings and writes them back in one
transaction. Each test commits a ``set-status`` from a second connection at the
critical moment, after that read and before the write (from the ``evaluated``
callback, which the save calls in between), and checks that the person's status
is what is stored in the end, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from sqlalchemy import text
from sqlalchemy.engine import make_url

from tracker.records.findings import FindingRecord, StoredFinding
from tracker.store.facade import Store

_BLOCKED_WITHIN_S = 10.0
"""How long the person's set-status may take to either finish or wait for a lock."""
_SQLITE_WAIT_S = 1.0
"""On SQLite a set-status waiting for the write lock cannot be seen: wait this long."""

T0 = datetime(2026, 12, 1, tzinfo=UTC)


def _finding(fp: str) -> FindingRecord:
    return FindingRecord(
        fingerprint=fp,
        kind="regression",
        series_key=f"s|{fp}",
        method="threshold",
        software="vllm",
        baseline_version="1.0",
        candidate_version="1.1",
        change_pct=-20.0,
        evidence={"baseline": "1.0", "candidate": "1.1", "delta_pct": -20.0},
    )


class _Person:
    """A person's ``findings set-status``, from a second connection, in a thread of its own."""

    def __init__(self, database_url: str) -> None:
        self.backend = make_url(database_url).get_backend_name()
        self.name = f"person-{uuid.uuid4().hex[:12]}"
        url = database_url
        if self.backend == "postgresql":
            url = make_url(database_url).update_query_dict({"application_name": self.name})
            url = url.render_as_string(hide_password=False)
        self.store = Store.open(url)
        self.errors: list[BaseException] = []
        self.thread: threading.Thread | None = None

    def set_status(self, finding_id: int, status: str, note: str) -> None:
        def work() -> None:
            try:
                self.store.set_finding_status(finding_id, status=status, note=note)
            except BaseException as error:  # reported by finish()
                self.errors.append(error)

        self.thread = threading.Thread(target=work, daemon=True)
        self.thread.start()

    def committed_or_waiting(self, monitor: Store) -> str:
        """Whether the set-status committed at once or waits for the analysis's lock."""
        assert self.thread is not None
        if self.backend != "postgresql":
            self.thread.join(_SQLITE_WAIT_S)
            return "waiting" if self.thread.is_alive() else "committed"
        deadline = time.monotonic() + _BLOCKED_WITHIN_S
        query = text(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE application_name = :name AND wait_event_type = 'Lock'"
        )
        while time.monotonic() < deadline:
            self.thread.join(0.02)
            if not self.thread.is_alive():
                return "committed"
            with monitor.engine.connect() as connection:
                if connection.execute(query, {"name": self.name}).scalar_one():
                    return "waiting"
        raise AssertionError("the person's set-status neither finished nor waited for a lock")

    def finish(self) -> None:
        assert self.thread is not None
        self.thread.join(60)
        assert not self.thread.is_alive()
        self.store.close()
        if self.errors:
            raise self.errors[0]


def _interleaving(
    person: _Person, monitor: Store, finding_id: int, status: str, note: str, seen: list[str]
) -> Callable[[StoredFinding], bool]:
    """An ``evaluated`` callback that makes the person triage ``finding_id`` in the middle."""

    def evaluated(_finding: StoredFinding) -> bool:
        if not seen:
            person.set_status(finding_id, status, note)
            seen.append(person.committed_or_waiting(monitor))
        return True

    return evaluated


def _by_fingerprint(store: Store) -> dict[str, StoredFinding]:
    return {f.fingerprint: f for f in store.list_findings()}


def test_acknowledging_during_an_analysis_that_closes_the_finding_is_kept(
    store: Store, database_url: str
) -> None:
    store.save_findings([_finding("a")], analysed_at=T0)
    stored = _by_fingerprint(store)["a"]
    assert (stored.status, stored.is_current) == ("open", True)

    person, seen = _Person(database_url), []
    note = "known: new scheduler"
    evaluated = _interleaving(person, store, stored.id, "acknowledged", note, seen)
    # The second run no longer finds "a": an "open" finding it would close as fixed.
    saved = store.save_findings([], analysed_at=T0 + timedelta(days=1), evaluated=evaluated)
    person.finish()

    assert seen  # the person acted between the analysis's read and its write
    after = _by_fingerprint(store)["a"]
    assert (after.status, after.status_note) == ("acknowledged", note)
    assert after.is_current is False
    # Either the analysis saw the person's status (and left it), or the person's
    # change waited for the analysis and was applied on top of its "fixed".
    assert saved.closed + saved.no_longer_found == 1


def test_triaging_during_an_analysis_that_reopens_the_finding_is_kept(
    store: Store, database_url: str
) -> None:
    store.save_findings([_finding("a"), _finding("b")], analysed_at=T0)
    store.save_findings([_finding("b")], analysed_at=T0 + timedelta(days=1))  # closes "a"
    stored = _by_fingerprint(store)
    assert (stored["a"].status, stored["a"].is_current) == ("fixed", False)

    person, seen = _Person(database_url), []
    note = "expected: the new default halves the batch"
    evaluated = _interleaving(person, store, stored["a"].id, "expected", note, seen)
    # The third run finds "a" again (it would reopen it) and no longer finds "b",
    # so that the save asks what the run evaluated after deciding about "a".
    store.save_findings([_finding("a")], analysed_at=T0 + timedelta(days=2), evaluated=evaluated)
    person.finish()

    assert seen
    after = _by_fingerprint(store)
    assert (after["a"].status, after["a"].status_note) == ("expected", note)
    assert after["a"].is_current is True
    assert (after["b"].status, after["b"].is_current) == ("fixed", False)


def test_on_postgresql_the_persons_change_waits_for_the_analysis(
    store: Store, database_url: str
) -> None:
    """The row lock, not luck: on PostgreSQL the set-status waits for the analysis's lock."""
    if make_url(database_url).get_backend_name() != "postgresql":
        return  # SQLite's write transactions already exclude each other
    store.save_findings([_finding("a")], analysed_at=T0)
    stored = _by_fingerprint(store)["a"]
    person, seen = _Person(database_url), []
    evaluated = _interleaving(person, store, stored.id, "acknowledged", "mine", seen)
    store.save_findings([], analysed_at=T0 + timedelta(days=1), evaluated=evaluated)
    person.finish()
    assert seen == ["waiting"]
    assert _by_fingerprint(store)["a"].status == "acknowledged"
