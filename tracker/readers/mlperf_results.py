"""Turning what was read of an MLPerf round into stored results (shared by both MLPerf readers).

Every MLPerf result belongs to software ``mlperf-inference`` at version =
the round (``v5.1``); the system JSON's framework and software stack strings
are its ``software_stack``. A result is one sample per round and location
(``sample_id``), so the same published result read from its logs, its table,
a folder, an archive or a download is stored once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from tracker.errors import ConfigError
from tracker.parsers.mlperf_table import TableRow
from tracker.records import ExtraValue, ResultRecord, SoftwareRecord, SourceSpec
from tracker.sources.tree import SourceTree

__all__ = [
    "cross_check_notes",
    "SOFTWARE",
    "mark_twins",
    "normalize_round",
    "resolve_round",
    "round_from_name",
    "sample_id",
    "software",
    "twin_location",
]

SOFTWARE = "mlperf-inference"
_ROUND = re.compile(r"(?:^|[^0-9A-Za-z])v(\d+\.\d+)(?=$|[^0-9])")


def sample_id(location: str) -> str:
    """The identity of a published result across the ways it can be read."""
    return f"{SOFTWARE}:{location}"


def normalize_round(label: str) -> str:
    """``"5.1"`` → ``"v5.1"``; other labels are kept as given."""
    label = label.strip()
    return f"v{label}" if re.fullmatch(r"\d+\.\d+", label) else label


def round_from_name(name: str) -> str | None:
    """The round in a folder or archive name: ``v5.1``, ``inference_results_v5.1-<ref>``."""
    match = _ROUND.search(name)
    return f"v{match.group(1)}" if match else None


def resolve_round(
    table_rounds: Iterable[str], spec: SourceSpec, tree: SourceTree, notes: set[str]
) -> str:
    """The round of a source: its results table, else ``--software-version``, else its name."""
    versions = sorted({normalize_round(v) for v in table_rounds})
    given = normalize_round(spec.labels.software_version or "") or None
    if len(versions) == 1:
        if given and given != versions[0]:
            notes.add(f"the results table says {versions[0]}; --software-version {given} ignored")
        return versions[0]
    if len(versions) > 1:
        notes.add(f"the results table names several rounds ({', '.join(versions)})")
    if given:
        return given
    for name in (tree.root_name, spec.location.rstrip("/").rsplit("/", 1)[-1]):
        found = round_from_name(name)
        if found:
            return found
    raise ConfigError(
        f"{spec.location}: cannot tell which MLPerf round this is (no results table, and no "
        "vX.Y in its name); pass --software-version vX.Y"
    )


def mark_twins(results: list[ResultRecord], digests: Mapping[str, str]) -> list[ResultRecord]:
    """Mark each ``-99.9`` result whose run is the very one of its ``-99`` twin.

    ``digests`` maps a result's location to the hash of its run's log; the
    twin is marked ``twin_of`` (the ``-99`` benchmark), so rankings count it once.
    """
    marked = []
    for result in results:
        location = result.location or ""
        twin = twin_location(location)
        if twin and digests.get(twin) and digests.get(twin) == digests.get(location):
            extra: dict[str, ExtraValue] = {**result.extra, "twin_of": twin.split("/")[4]}
            result = _with_extra(result, extra)
        marked.append(result)
    return marked


def twin_location(location: str) -> str | None:
    """The ``-99`` folder a ``-99.9`` result folder may be a twin of."""
    parts = location.split("/")
    if len(parts) != 6 or not parts[4].endswith("-99.9"):
        return None
    parts[4] = parts[4].removesuffix(".9")
    return "/".join(parts)


def _with_extra(result: ResultRecord, extra: Mapping[str, ExtraValue]) -> ResultRecord:
    return replace(result, extra=dict(sorted(extra.items())))


def software(round_label: str) -> SoftwareRecord:
    """The software version of a published result: the round."""
    return SoftwareRecord(software=SOFTWARE, version=round_label)


_MAX_LISTED = 20
"""Disagreements listed one by one; the rest are counted."""


def cross_check_notes(
    disagreements: list[str],
    rows: Mapping[str, TableRow],
    results: list[ResultRecord],
    has_table: bool,
    within_files: Sequence[str] = (),
) -> set[str]:
    """The notes of the cross-checks: against the results table (when there is one) and
    of each result file against itself (always)."""
    found = {f"result file disagrees with itself: {d}" for d in within_files[:_MAX_LISTED]}
    if len(within_files) > _MAX_LISTED:
        found.add(
            f"result files disagree with themselves on {len(within_files) - _MAX_LISTED} more"
        )
    if not has_table:
        return found
    notes = {f"results table disagrees: {d}" for d in disagreements[:_MAX_LISTED]}
    if len(disagreements) > _MAX_LISTED:
        notes.add(f"results table disagrees on {len(disagreements) - _MAX_LISTED} more results")
    read = {r.location for r in results}
    missing = sorted(set(rows) - read)
    if missing:
        rows_word = "row has" if len(missing) == 1 else "rows have"
        notes.add(
            f"{len(missing)} results table {rows_word} no logs here (or no result read "
            f"from them; first: {missing[0]})"
        )
    unlisted = len(read - set(rows))
    if unlisted:
        notes.add(f"{unlisted} results read from logs are not in the results table")
    return notes | found
