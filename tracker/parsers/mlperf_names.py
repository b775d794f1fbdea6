"""Canonical MLPerf benchmark and scenario names, for series keys across rounds and tables.

Result folders and tables spell the same benchmark and scenario differently:
``offline`` / ``Offline`` (MLCommons-automation submitters use lower-case
folders), ``llama3_1-8b`` / ``llama3.1-8b`` (the checker's built-in aliases).
A result is stored under the canonical spelling, so that one benchmark and
scenario is one series and one page whichever round or table it came from;
the spelling the files use is kept in ``extra`` (:func:`spelling_extra`).

Only spelling is canonical here (case, ``_`` for ``.`` between digits): an
open-division name that a submitter maps to an official model through
``model_mapping.json`` (``llama3_1-405b_pruned``) stays its own benchmark, and so
does ``resnet50`` (a name, not a spelling, of the checker's ``resnet``).
"""

from __future__ import annotations

import re

from tracker.parsers.mlperf_rules import OFFICIAL_MODELS, folder_scenario
from tracker.records import ExtraValue

__all__ = ["canonical_benchmark", "canonical_scenario", "spelling_extra"]

_DIGIT_UNDERSCORE = re.compile(r"(?<=\d)_(?=\d)")


def canonical_scenario(name: str) -> str:
    """``offline`` → ``Offline``, ``online`` → ``Server``; an unknown name is kept as given."""
    return folder_scenario(name) or name


def canonical_benchmark(name: str) -> str:
    """``llama3_1-8b`` → ``llama3.1-8b``, ``DeepSeek-R1`` → ``deepseek-r1``; others as given."""
    if name in OFFICIAL_MODELS:
        return name
    spelled = _DIGIT_UNDERSCORE.sub(".", name.strip().lower())
    return spelled if spelled in OFFICIAL_MODELS else name


def spelling_extra(benchmark: str, scenario: str) -> dict[str, ExtraValue]:
    """The files' own spellings, where they differ from the canonical names."""
    extra: dict[str, ExtraValue] = {}
    if canonical_benchmark(benchmark) != benchmark:
        extra["benchmark_as_named"] = benchmark
    if canonical_scenario(scenario) != scenario:
        extra["scenario_as_named"] = scenario
    return extra
