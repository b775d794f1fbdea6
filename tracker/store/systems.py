"""Systems across rounds: the list of systems, and aliases that link a renamed system.

A system is one submitter and name (and division unless closed) across rounds;
what it is in each round is that round's description. A system renamed between
rounds (``XE9680_H200`` in one round, ``XE9680_H200_SXM_141GBx8_TRT`` in the
next) is linked explicitly: :func:`alias_system` records that one key names the
other, moves what is stored under the alias to the system it names, and every
later ingest of the alias lands there too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import CursorResult, Engine, Update, delete, func, select, update
from sqlalchemy.orm import Session
from sqlmodel import col

from tracker.errors import ConfigError
from tracker.store.models import Result, SoftwareVersion, System, SystemAlias, SystemDescription

__all__ = ["AliasOutcome", "SystemSummary", "alias_system", "list_systems", "load_aliases"]


@dataclass(frozen=True, slots=True)
class SystemSummary:
    """One stored system: its key, name, division, the versions it has results in, its aliases."""

    key: str
    name: str
    submitter: str | None
    division: str | None
    versions: tuple[str, ...]
    results: int
    aliases: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AliasOutcome:
    """What :func:`alias_system` did: results and round descriptions moved to ``key``."""

    alias_key: str
    key: str
    results_moved: int
    descriptions_moved: int
    renamed: bool
    """Whether the alias's system was renamed (``key`` had no system yet)."""


def load_aliases(session: Session) -> dict[str, str]:
    """Every alias key → the key of the system it names."""
    rows = session.execute(select(col(SystemAlias.alias_key), col(SystemAlias.key)))
    return {row[0]: row[1] for row in rows}


def alias_system(engine: Engine, alias_key: str, key: str) -> AliasOutcome:
    """Record that ``alias_key`` names the system ``key`` and move its results there."""
    if alias_key == key:
        raise ConfigError(f"{alias_key!r} cannot be an alias of itself")
    with Session(engine) as session, session.begin():
        aliases = load_aliases(session)
        key = aliases.get(key, key)
        if key == alias_key:
            raise ConfigError(f"{key!r} is already an alias of {alias_key!r}: that would be a loop")
        _record_alias(session, aliases, alias_key, key)
        old = session.scalar(select(System).where(col(System.key) == alias_key))
        if old is None:
            return AliasOutcome(alias_key, key, 0, 0, renamed=False)
        new = session.scalar(select(System).where(col(System.key) == key))
        if new is None:
            old.key = key
            return AliasOutcome(alias_key, key, 0, 0, renamed=True)
        assert old.id is not None and new.id is not None
        moved_descriptions = _move_descriptions(session, old.id, new.id)
        moved = _changed(
            session, update(Result).where(col(Result.system_id) == old.id).values(system_id=new.id)
        )
        session.delete(old)
        return AliasOutcome(alias_key, key, moved, moved_descriptions, renamed=False)


def _changed(session: Session, statement: Update) -> int:
    """Run an UPDATE; the rows it changed."""
    return cast("CursorResult[Any]", session.execute(statement)).rowcount or 0


def _record_alias(session: Session, aliases: dict[str, str], alias_key: str, key: str) -> None:
    """Add (or re-point) the alias; aliases that named ``alias_key`` now name ``key``."""
    now = datetime.now(UTC)
    for other, target in aliases.items():
        if target == alias_key:
            session.execute(
                update(SystemAlias).where(col(SystemAlias.alias_key) == other).values(key=key)
            )
    if alias_key in aliases:
        session.execute(
            update(SystemAlias).where(col(SystemAlias.alias_key) == alias_key).values(key=key)
        )
    else:
        session.add(SystemAlias(alias_key=alias_key, key=key, created_at=now))


def _move_descriptions(session: Session, old: int, new: int) -> int:
    """The alias's round descriptions go to the system, except rounds it describes already."""
    taken = set(
        session.scalars(
            select(col(SystemDescription.software_version_id)).where(
                col(SystemDescription.system_id) == new
            )
        )
    )
    session.execute(
        delete(SystemDescription).where(
            col(SystemDescription.system_id) == old,
            col(SystemDescription.software_version_id).in_(taken),
        )
    )
    return _changed(
        session,
        update(SystemDescription)
        .where(col(SystemDescription.system_id) == old)
        .values(system_id=new),
    )


def list_systems(engine: Engine) -> list[SystemSummary]:
    """Every stored system, by key, with the versions it has results in and its aliases."""
    with Session(engine) as session:
        aliases: dict[str, list[str]] = {}
        for alias, key in load_aliases(session).items():
            aliases.setdefault(key, []).append(alias)
        counts = dict(
            session.execute(
                select(col(Result.system_id), func.count()).group_by(col(Result.system_id))
            ).all()
        )
        versions: dict[int, set[str]] = {}
        query = (
            select(col(Result.system_id), col(SoftwareVersion.version))
            .join(SoftwareVersion, col(SoftwareVersion.id) == col(Result.software_version_id))
            .distinct()
        )
        for system_id, version in session.execute(query):
            versions.setdefault(system_id, set()).add(version)
        return [
            SystemSummary(
                key=s.key,
                name=s.name,
                submitter=s.submitter,
                division=s.division,
                versions=tuple(sorted(versions.get(s.id or 0, ()))),
                results=int(counts.get(s.id or 0, 0)),
                aliases=tuple(sorted(aliases.get(s.key, ()))),
            )
            for s in session.scalars(select(System).order_by(col(System.key)))
        ]
