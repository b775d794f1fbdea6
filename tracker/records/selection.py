"""Which series a command looks at: ``--software``, ``--benchmark`` and ``--system``.

Each option repeats and takes shell-style globs (``fnmatch``, case-sensitive: ``mylib``,
``llama2-70b-*``, ``*GB300*``); a series is selected when every option that was given
has a pattern matching it (patterns of one option are alternatives). A system matches
by its name or its key (``submitter/name``, the division in brackets where there is
one), so ``NVIDIA/*`` and ``*GB300*`` both work.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

__all__ = ["Selection", "systems_of"]


def _any(patterns: tuple[str, ...], texts: Iterable[str]) -> bool:
    names = [t for t in texts if t]
    return any(fnmatchcase(name, p) for p in patterns for name in names)


@dataclass(frozen=True, slots=True)
class Selection:
    """Glob patterns per label; an empty tuple selects every value of that label."""

    software: tuple[str, ...] = ()
    benchmark: tuple[str, ...] = ()
    system: tuple[str, ...] = ()

    @property
    def is_everything(self) -> bool:
        """Whether no option was given (every series is selected)."""
        return not (self.software or self.benchmark or self.system)

    def matches(self, software: str, benchmark: str, systems: Iterable[str]) -> bool:
        """Whether a series of ``software`` and ``benchmark`` on a system known by any of
        ``systems`` (its name, its key) is selected."""
        if self.software and not _any(self.software, (software,)):
            return False
        if self.benchmark and not _any(self.benchmark, (benchmark,)):
            return False
        return not self.system or _any(self.system, systems)

    def text(self) -> str:
        """``software mylib; benchmark llama*`` (empty when everything is selected)."""
        parts = (
            ("software", self.software),
            ("benchmark", self.benchmark),
            ("system", self.system),
        )
        return "; ".join(f"{name} {', '.join(p)}" for name, p in parts if p)


def systems_of(system_key: str, name: str = "") -> tuple[str, ...]:
    """The names a system answers to: ``name``, its key, the key without the division in
    brackets, and the part after ``submitter/``."""
    plain = system_key.split(" [", 1)[0]
    return tuple(dict.fromkeys(t for t in (name, system_key, plain, plain.split("/", 1)[-1]) if t))
