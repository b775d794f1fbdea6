"""Fuzzed input: a parser answers bad bytes with a ParseError naming the file, or a result.

Never another exception, a hang or an answer out of proportion to the input
(see :func:`tests.support.fuzz_targets.run_target` for what is checked). Each parsing
entry point (:data:`tests.support.fuzz_targets.TARGETS`) gets random bytes and token
soup made of its real files, every truncation of its real files (every byte
offset of a small file, a dense sample of a big one), random flips,
insertions, deletions and number poisoning of them, and, for JSON, values
replaced anywhere in the document. Example counts come from the hypothesis
profile (``tests/conftest.py``: ``ci`` when ``CI`` is set, else ``dev``).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.fuzz_targets import (
    INTERESTING_NUMBERS,
    JSON_TARGETS,
    TARGETS,
    encode,
    get_path,
    json_paths,
    nested,
    numbers_in,
    pruned,
    raw,
    replaced,
    run_target,
    seeds_of,
)

NAMES = list(TARGETS)
SMALL = 8 * 1024
"""A seed up to this size is cut at every byte offset; a bigger one at a dense sample."""
FUZZ = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def root(shared_data: Path) -> Path:
    return shared_data


def _seeds(name: str, root: Path) -> tuple[tuple[str, bytes], ...]:
    seeds = seeds_of(name, root)
    assert seeds, f"no real files to fuzz {name} with"
    return seeds


# --- random bytes -----------------------------------------------------------------

_TOKEN = re.compile(rb"[A-Za-z_]+|\d+(?:\.\d+)?|\s+|.", re.DOTALL)


@cache
def _soup(name: str, root: Path) -> st.SearchStrategy[bytes]:
    """Bytes made of the words, numbers and punctuation of the real files, in random order."""
    seeds = _seeds(name, root)
    tokens = sorted({t for _origin, data in seeds for t in _TOKEN.findall(data[:20000])})
    pieces = st.sampled_from(tokens) | st.sampled_from(INTERESTING_NUMBERS)
    return st.lists(pieces, max_size=80).map(b"".join)


@FUZZ
@given(data=st.data())
@pytest.mark.parametrize("name", NAMES)
def test_random_bytes(name: str, root: Path, data: st.DataObject) -> None:
    fuzzed = data.draw(st.binary(max_size=1024) | _soup(name, root), label="input")
    run_target(TARGETS[name], fuzzed, root)


# --- truncations ----------------------------------------------------------------------


def _cuts(data: bytes) -> list[int]:
    """Every offset of a small file; for a big one its ends, line boundaries and a grid."""
    size = len(data)
    if size <= SMALL:
        return list(range(size + 1))
    cuts = {*range(257), *range(size - 256, size + 1), *range(0, size, max(1, size // 512))}
    ends = [m.start() for m in re.finditer(rb"\n", data)]
    for end in ends[:: max(1, len(ends) // 256)]:
        cuts.update((end - 1, end, end + 1, end + 2))
    return sorted(c for c in cuts if 0 <= c <= size)


@pytest.mark.parametrize("name", NAMES)
def test_every_truncation_of_the_real_files(name: str, root: Path) -> None:
    """The first 4 real files cut everywhere (see :func:`_cuts`), the others at line ends."""
    target = TARGETS[name]
    for number, (origin, data) in enumerate(_seeds(name, root)):
        line_ends = [0, *(m.end() for m in re.finditer(rb"\n", data))]
        for cut in _cuts(data) if number < 4 else line_ends:
            run_target(target, data[:cut], root, origin)
        for start in line_ends[:: max(1, len(line_ends) // 32)]:
            run_target(target, data[start:], root, origin)  # the head lost instead


# --- mutations of the real files -------------------------------------------------------


@st.composite
def _mutated(draw: st.DrawFn, seeds: tuple[tuple[str, bytes], ...]) -> tuple[str, bytes]:
    origin, data = draw(st.sampled_from(seeds), label="seed")
    buffer = bytearray(data)
    numbers = numbers_in(data)
    for _ in range(draw(st.integers(1, 6), label="edits")):
        size = len(buffer)
        at = draw(st.integers(0, size), label="at")
        kind = draw(st.sampled_from(["flip", "insert", "delete", "repeat", "number", "poison"]))
        if kind == "flip" and at < size:
            buffer[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "insert":
            buffer[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif kind == "delete":
            del buffer[at : at + draw(st.integers(1, 64))]
        elif kind == "repeat":
            buffer[at:at] = buffer[at : at + draw(st.integers(1, 256))]
        elif kind == "number" and numbers and len(buffer) == len(data):
            start, end = draw(st.sampled_from(numbers))
            buffer[start:end] = draw(st.sampled_from(INTERESTING_NUMBERS))
        elif kind == "poison":
            buffer[at:at] = draw(st.sampled_from(INTERESTING_NUMBERS))
    return origin, bytes(buffer)


@FUZZ
@given(data=st.data())
@pytest.mark.parametrize("name", NAMES)
def test_mutated_real_files(name: str, root: Path, data: st.DataObject) -> None:
    origin, fuzzed = data.draw(_mutated(_seeds(name, root)), label="mutated")
    run_target(TARGETS[name], fuzzed, root, origin)


# --- JSON values replaced anywhere ------------------------------------------------------


_POISONS: tuple[object, ...] = (
    None,
    -1,
    -0.5,
    0,
    float("nan"),
    float("inf"),
    float("-inf"),
    10**400,
    raw("9" * 5000),
    raw("1e999"),
    "x",
    "\u00b2",
    [],
    {},
    [{"a": [1]}],
)


def _json_values() -> st.SearchStrategy[object]:
    """Malformed values: wrong types, NaN, infinities, negatives, huge numbers, deep nesting."""
    scalars = (
        st.sampled_from(_POISONS)
        | st.none()
        | st.booleans()
        | st.integers()
        | st.floats()
        | st.text(max_size=12)
        | st.builds(lambda depth: raw(nested(depth)), st.integers(60, 200))
    )
    return scalars | st.lists(scalars, max_size=3) | st.dictionaries(st.text(max_size=6), scalars)


@FUZZ
@given(data=st.data())
@pytest.mark.parametrize("name", JSON_TARGETS)
def test_json_values_replaced_anywhere(name: str, root: Path, data: st.DataObject) -> None:
    origin, seed = data.draw(st.sampled_from(_seeds(name, root)), label="seed")
    doc = json.loads(seed)
    paths = json_paths(doc)
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        path = data.draw(st.sampled_from(paths), label="path")
        try:
            get_path(doc, path)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed or replaced it
        delete = data.draw(st.booleans(), label="delete")
        if path and delete:
            doc = replaced(doc, path, None, delete=True)
        else:
            doc = replaced(doc, path, data.draw(_json_values(), label="value"))
    run_target(TARGETS[name], encode(doc), root, origin)


@pytest.mark.parametrize("name", JSON_TARGETS)
def test_every_field_poisoned(name: str, root: Path) -> None:
    """Each field (the first 100 of the first real file) given each malformed value in turn."""
    origin, seed = _seeds(name, root)[0]
    doc = pruned(json.loads(seed))
    for path in json_paths(doc, limit=100)[1:]:
        for poison in _POISONS:
            run_target(TARGETS[name], encode(replaced(doc, path, poison)), root, origin)
        run_target(TARGETS[name], encode(replaced(doc, path, None, delete=True)), root)


def _decoder_limit() -> int:
    """The deepest nesting ``json.loads`` accepts from here (it shares Python's recursion limit)."""
    low, high = 1, 100_000
    while low < high:
        middle = (low + high + 1) // 2
        try:
            json.loads(nested(middle))
        except RecursionError:
            high = middle - 1
        else:
            low = middle
    return low


@pytest.mark.parametrize("name", JSON_TARGETS)
def test_nesting_up_to_the_decoders_limit(name: str, root: Path) -> None:
    """Values nested to the decoder's limit, where printing or walking them overflows."""
    origin, seed = _seeds(name, root)[0]
    doc = pruned(json.loads(seed))
    limit = _decoder_limit()
    depths = sorted({*range(max(1, limit - 60), limit + 3, 2), 65, 200})
    for path in json_paths(doc, limit=24)[1:]:
        for depth in depths:
            run_target(TARGETS[name], encode(replaced(doc, path, raw(nested(depth)))), root)
