"""The house rules of the package, checked on every module of ``tracker``.

The layers are an allow-list (:data:`LAYERS`): for each layer (a package or
module of ``tracker``), the parts of ``tracker`` it may import. The same table
stands in ``docs/architecture.md``, and a test checks that the page and
:data:`LAYERS` agree. The layers form an order (:data:`LAYER_ORDER`, bottom
first): no layer may import one above it, and no module takes part in an
import circle.

The other rules are data too (:data:`RULES`); :func:`check_module` reads a
module's source with :mod:`ast` and reports every import, call or name a rule
forbids. One test per module names the module, the line and the rule that was
broken. The rules are about what a module loads when it runs: imports under
``if TYPE_CHECKING:`` are for the type checker only, and no rule applies to them.

Parsers are recognised by their names: in :mod:`tracker.formats`, a module whose
name starts with ``parse`` is a parser (pure: bytes in, records out), every
other module there reads files through :mod:`tracker.sources`.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIR = REPO_ROOT / "tracker"
ARCHITECTURE = REPO_ROOT / "docs" / "architecture.md"

STDLIB = "<stdlib>"
"""Stands for every standard-library module in a rule's ``only_imports``."""

PARSERS = ("tracker.formats.parse*", "tracker.formats.*.parse*")
"""The parser modules, by name (fnmatch patterns over dotted module names)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One house rule.

    A rule applies to the modules inside one of the packages in ``scope``
    (a package means itself and every module below it; an entry with ``*`` is
    an fnmatch pattern over dotted names) unless they are inside one of
    ``exempt``. Package prefixes match whole dotted components: ``ingest``
    matches ``ingest.jobs`` but not ``tracker.ingest.run``.
    """

    name: str
    scope: tuple[str, ...]
    exempt: tuple[str, ...] = ()
    only_imports: tuple[str, ...] | None = None
    """When set, the only packages the module may import (:data:`STDLIB` for the stdlib)."""
    forbidden_imports: tuple[str, ...] = ()
    forbidden_calls: tuple[str, ...] = ()
    """Built-in functions the module may not call, such as ``print``."""
    forbidden_methods: tuple[str, ...] = ()
    """Method names the module may not call on any object, such as ``read_bytes``."""
    forbidden_names: tuple[str, ...] = ()
    """Dotted names the module may not use or import, such as ``os.environ``."""
    only_tracker_imports: tuple[str, ...] | None = None
    """When set, the only parts of ``tracker`` the module may import (its layer's
    allow-list); other packages are left to the other rules."""

    def applies_to(self, module: str) -> bool:
        return any(_inside(module, p) for p in self.scope) and not any(
            _inside(module, p) for p in self.exempt
        )


PARSERS_ARE_PURE = (
    "parsers are pure: they import only the stdlib, records, errors and other parsers"
)
DATABASE = ("sqlalchemy", "sqlmodel", "alembic")
DATABASE_LAYER = ("tracker.store",)

ANYTHING = ("tracker",)
LAYERS: dict[str, tuple[str, ...]] = {
    # Leaves: errors, records and helpers that import no other part of tracker.
    "tracker.errors": (),
    # The package itself (and any top-level module not listed below).
    "tracker": ("tracker.errors",),
    "tracker.paths": (),
    "tracker.text_safety": (),
    "tracker.kinds": (),
    "tracker.records": (),
    "tracker.versions": ("tracker.records",),
    # Reading: the files of a source, and the formats read from them.
    "tracker.sources": ("tracker.errors", "tracker.records", "tracker.paths"),
    "tracker.formats": ("tracker.errors", "tracker.records", "tracker.kinds", "tracker.sources"),
    # Statistics: pure functions over arrays.
    "tracker.stats": ("tracker.errors", "tracker.records"),
    # The database.
    "tracker.store": ("tracker.errors", "tracker.records", "tracker.versions", "tracker.paths"),
    # Use cases.
    "tracker.analyze": (
        "tracker.errors",
        "tracker.records",
        "tracker.versions",
        "tracker.paths",
        "tracker.stats",
        "tracker.store",
    ),
    "tracker.report.urls": (),
    "tracker.gate": (
        "tracker.errors",
        "tracker.records",
        "tracker.versions",
        "tracker.text_safety",
        "tracker.stats",
        "tracker.store",
        "tracker.analyze",
        "tracker.report.urls",
    ),
    "tracker.report": (
        "tracker.errors",
        "tracker.records",
        "tracker.versions",
        "tracker.paths",
        "tracker.text_safety",
        "tracker.stats",
        "tracker.analyze.groupings",
    ),
    # Gathers the report's input: the one report module that reads the store and analyses.
    "tracker.report.publish": (
        "tracker.errors",
        "tracker.records",
        "tracker.versions",
        "tracker.paths",
        "tracker.stats",
        "tracker.store",
        "tracker.analyze",
        "tracker.report",
    ),
    "tracker.ingest": (
        "tracker.errors",
        "tracker.records",
        "tracker.versions",
        "tracker.kinds",
        "tracker.sources",
        "tracker.formats",
        "tracker.store",
    ),
    # The demo may use every layer but the CLI (checked by its own rule).
    "tracker.demo": ANYTHING,
    "tracker.cli": ANYTHING,
    "tracker.__main__": ANYTHING,
}
"""Each layer (a package or module of tracker) → the parts of tracker it may import.

A module belongs to the innermost layer it is inside of; it may always import
from its own layer.
"""

LAYER_ORDER: tuple[str, ...] = tuple(LAYERS)
"""The layers from the bottom up: each may import only layers listed before it."""

USE_CASES = ("tracker.ingest", "tracker.analyze", "tracker.gate", "tracker.demo")


def _layer_rules() -> tuple[Rule, ...]:
    """One allow-list rule per layer, each exempting the layers nested inside it."""
    rules = []
    for layer, allowed in LAYERS.items():
        inner = tuple(other for other in LAYERS if other.startswith(layer + "."))
        own = () if allowed == ANYTHING else (layer,)
        rules.append(
            Rule(
                name=f"layer {layer} imports only {', '.join(allowed) or 'nothing'} from tracker",
                scope=(layer,),
                exempt=inner,
                only_tracker_imports=(*allowed, *own),
            )
        )
    return tuple(rules)


RULES: tuple[Rule, ...] = (
    Rule(
        name=PARSERS_ARE_PURE,
        scope=PARSERS,
        only_imports=(STDLIB, "tracker.records", "tracker.errors", *PARSERS),
    ),
    Rule(
        name="parsers never open files: they are given bytes",
        scope=PARSERS,
        forbidden_calls=("open",),
        forbidden_methods=("open", "read_bytes", "read_text"),
        forbidden_names=("io.open", "builtins.open", "os.open"),
    ),
    Rule(
        name="statistics import only the stdlib, numpy, scipy, records, errors and stats",
        scope=("tracker.stats",),
        only_imports=(
            STDLIB,
            "numpy",
            "scipy",
            "tracker.records",
            "tracker.errors",
            "tracker.stats",
        ),
    ),
    Rule(
        name="the report never touches the database, the network, ingest or the CLI",
        scope=("tracker.report",),
        exempt=("tracker.report.publish",),
        forbidden_imports=(*DATABASE, "httpx", *DATABASE_LAYER, "tracker.ingest", "click"),
    ),
    Rule(
        name="only tracker.store imports the database libraries",
        scope=("tracker",),
        exempt=DATABASE_LAYER,
        forbidden_imports=DATABASE,
    ),
    Rule(
        name="only tracker.sources.fetch imports httpx",
        scope=("tracker",),
        exempt=("tracker.sources.fetch",),
        forbidden_imports=("httpx",),
    ),
    Rule(
        name="only tracker.cli imports click or rich",
        scope=("tracker",),
        exempt=("tracker.cli",),
        forbidden_imports=("click", "rich"),
    ),
    Rule(
        name="only tracker.cli prints, exits, reads the environment or writes to the terminal",
        scope=("tracker",),
        exempt=("tracker.cli",),
        forbidden_calls=("print", "exit", "quit"),
        forbidden_names=(
            "sys.exit",
            "os.environ",
            "os.environb",
            "os.getenv",
            "os.getenvb",
            "sys.stdout",
            "sys.stderr",
        ),
    ),
    Rule(
        name="tracker.errors imports nothing from tracker",
        scope=("tracker.errors",),
        forbidden_imports=("tracker",),
    ),
    Rule(
        name="tracker.records imports nothing but the stdlib at run time",
        scope=("tracker.records",),
        only_imports=(STDLIB, "tracker.records"),
    ),
    Rule(
        name="nothing in tracker imports the top-level jobs or tests folders",
        scope=("tracker",),
        forbidden_imports=("jobs", "tests"),
    ),
    Rule(
        name="use cases never import a parser: readers call them",
        scope=USE_CASES,
        forbidden_imports=PARSERS,
    ),
    Rule(
        name="only the CLI imports the CLI",
        scope=("tracker",),
        exempt=("tracker.cli", "tracker.__main__"),
        forbidden_imports=("tracker.cli",),
    ),
    Rule(
        name="the CLI reaches the database only through the store's face, tracker.store",
        scope=("tracker.cli",),
        forbidden_imports=tuple(
            f"tracker.store.{p.stem}"
            for p in sorted((PACKAGE_DIR / "store").glob("*.py"))
            if p.stem != "__init__"
        ),
    ),
    Rule(
        name="the report's links import only the stdlib (the gate imports them)",
        scope=("tracker.report.urls",),
        only_imports=(STDLIB,),
    ),
    *_layer_rules(),
)


@dataclass(frozen=True, slots=True, order=True)
class Violation:
    path: str
    line: int
    rule: str
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what} (rule: {self.rule})"


def _inside(module: str, package: str) -> bool:
    """``module`` is ``package`` or below it; a ``package`` with ``*`` is an fnmatch pattern."""
    if "*" in package:
        return fnmatch.fnmatchcase(module, package)
    return module == package or module.startswith(package + ".")


def _is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes inside ``if TYPE_CHECKING:`` bodies (never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                skipped.update(id(n) for n in ast.walk(child))
    return skipped


def _is_stdlib(module: str) -> bool:
    return module.split(".")[0] in sys.stdlib_module_names


def module_name(path: Path, package_dir: Path = PACKAGE_DIR) -> str:
    """``tracker/report/render.py`` -> ``tracker.report.render``; packages lose ``__init__``."""
    parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def tracker_modules(package_dir: Path = PACKAGE_DIR) -> dict[str, Path]:
    """Every module of the package, by its dotted name."""
    return {module_name(p, package_dir): p for p in sorted(package_dir.rglob("*.py"))}


@dataclass(frozen=True, slots=True)
class _Import:
    line: int
    module: str


def _imports(
    tree: ast.Module, module: str, *, is_package: bool, known_modules: frozenset[str]
) -> Iterator[_Import]:
    """Every module imported, with relative imports resolved to absolute names.

    ``from X import n`` imports ``X.n`` when that is a known module, else ``X``.
    Imports under ``if TYPE_CHECKING:`` are left out: they never run.
    """
    skipped = _type_checking_only(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield _Import(node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, is_package=is_package)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                target = candidate if candidate in known_modules else base
                yield _Import(node.lineno, target)


def _absolute(node: ast.ImportFrom, module: str, *, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    drop = node.level - 1
    if drop > len(package) - 1:
        raise ValueError(f"{module}: relative import beyond the top-level package")
    parts = package[: len(package) - drop] if drop else package
    return ".".join([*parts, *([node.module] if node.module else [])])


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local names bound by imports -> the dotted names they stand for."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    bound[top] = top
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """``os.environ.get`` for that attribute chain, its root resolved through imports."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    root = aliases.get(node.id, node.id)
    return ".".join([root, *reversed(attrs)])


def check_module(
    module: str,
    source: str,
    *,
    path: str,
    is_package: bool = False,
    known_modules: frozenset[str] = frozenset(),
    rules: tuple[Rule, ...] = RULES,
) -> list[Violation]:
    """Every way ``source`` (the module ``module``) breaks one of ``rules``."""
    tree = ast.parse(source, filename=path)
    imports = list(
        _imports(tree, module, is_package=is_package, known_modules=known_modules | {module})
    )
    aliases = _aliases(tree)
    found: set[Violation] = set()
    for rule in rules:
        if not rule.applies_to(module):
            continue
        for imp in imports:
            if rule.only_imports is not None and not any(
                _is_stdlib(imp.module) if allowed == STDLIB else _inside(imp.module, allowed)
                for allowed in rule.only_imports
            ):
                found.add(Violation(path, imp.line, rule.name, f"imports {imp.module}"))
            for banned in rule.forbidden_imports:
                if _inside(imp.module, banned):
                    found.add(Violation(path, imp.line, rule.name, f"imports {imp.module}"))
            allowed_here = rule.only_tracker_imports
            if (
                allowed_here is not None
                and _inside(imp.module, "tracker")
                and not any(_inside(imp.module, allowed) for allowed in allowed_here)
            ):
                found.add(Violation(path, imp.line, rule.name, f"imports {imp.module}"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    name = f"{node.module}.{alias.name}"
                    for banned in rule.forbidden_names:
                        if _inside(name, banned):
                            found.add(Violation(path, node.lineno, rule.name, f"imports {name}"))
            elif isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Name) and func.id in rule.forbidden_calls:
                    if func.id not in aliases:  # a local import of that name is not the builtin
                        found.add(Violation(path, node.lineno, rule.name, f"calls {func.id}()"))
                if isinstance(func, ast.Attribute) and func.attr in rule.forbidden_methods:
                    found.add(Violation(path, node.lineno, rule.name, f"calls .{func.attr}()"))
            elif isinstance(node, ast.Attribute | ast.Name):
                used = _dotted(node, aliases)
                if used is None:
                    continue
                for banned in rule.forbidden_names:
                    if _inside(used, banned):
                        found.add(Violation(path, node.lineno, rule.name, f"uses {banned}"))
    return sorted(found)


MODULES = tracker_modules()
KNOWN_MODULES = frozenset(MODULES)


@pytest.mark.parametrize("module", sorted(MODULES), ids=sorted(MODULES))
def test_module_follows_the_house_import_rules(module: str) -> None:
    path = MODULES[module]
    violations = check_module(
        module,
        path.read_text(encoding="utf-8"),
        path=path.relative_to(REPO_ROOT).as_posix(),
        is_package=path.name == "__init__.py",
        known_modules=KNOWN_MODULES,
    )
    assert not violations, "\n".join(str(v) for v in violations)


def test_every_module_of_the_package_is_checked() -> None:
    assert {
        "tracker",
        "tracker.cli",
        "tracker.records.results",
        "tracker.formats.loadgen.parse",
    } <= set(MODULES)
    assert all(any(rule.applies_to(m) for rule in RULES) for m in MODULES)


def test_rules_exist_for_packages_that_are_not_written_yet() -> None:
    assert any(rule.applies_to("tracker.stats.regression") for rule in RULES)
    fetch_rules = [r for r in RULES if "httpx" in r.forbidden_imports]
    assert fetch_rules and not any(r.applies_to("tracker.sources.fetch") for r in fetch_rules)
    assert any(r.applies_to("tracker.report.fetching") for r in fetch_rules)


def _violations(module: str, source: str, *, is_package: bool = False) -> list[Violation]:
    return check_module(module, source, path=f"<{module}>", is_package=is_package)


def _rules_broken(module: str, source: str, *, is_package: bool = False) -> set[str]:
    return {v.rule for v in _violations(module, source, is_package=is_package)}


def _found(module: str, source: str, *, is_package: bool = False) -> list[tuple[int, str]]:
    """The lines and what was found there, whatever rules (one or several) it broke."""
    return sorted({(v.line, v.what) for v in _violations(module, source, is_package=is_package)})


def test_parser_module_may_not_import_the_database() -> None:
    source = "from __future__ import annotations\nimport json\n\nimport sqlalchemy\n"
    violations = _violations("tracker.formats.fake.parse", source)
    assert {(v.line, v.what) for v in violations} == {(4, "imports sqlalchemy")}
    assert {v.rule for v in violations} == {
        PARSERS_ARE_PURE,
        "only tracker.store imports the database libraries",
    }
    assert any(
        str(v).startswith(
            "<tracker.formats.fake.parse>:4: imports sqlalchemy (rule: parsers are pure"
        )
        for v in violations
    )


def test_parser_module_may_import_records_errors_and_other_parsers() -> None:
    source = (
        "import re\n"
        "from tracker.errors import ParseError\n"
        "from tracker.records.results import ParsedResult\n"
        "from tracker.formats.parse_json import JsonObject\n"
        "from .parse import SUMMARY_LOG_NAME\n"
    )
    assert _violations("tracker.formats.loadgen.parse_fake", source) == []


@pytest.mark.parametrize(
    "source",
    [
        "from tracker import store",
        "from tracker.store.facade import Store",
        "from .. import models",
        "from ..schema import upgrade_schema",
        "import jinja2",
        "import click",
        "from rich.console import Console",
        "import httpx",
    ],
)
def test_parser_module_may_not_import_outside_its_allowance(source: str) -> None:
    known = frozenset({"tracker.store.facade", "tracker.store.models", "tracker.store.first_use"})
    violations = check_module(
        "tracker.formats.fake.parse", source, path="<fake>", known_modules=known
    )
    assert PARSERS_ARE_PURE in {v.rule for v in violations}


@pytest.mark.parametrize(
    "source",
    [
        "def read(path):\n    return open(path, 'rb').read()\n",
        "def read(path):\n    return path.read_bytes()\n",
        "def read(path):\n    return path.read_text()\n",
        "def read(path):\n    with path.open('rb') as f:\n        return f.read()\n",
        "import io\n\ndef read(path):\n    return io.open(path).read()\n",
    ],
)
def test_parser_module_may_not_open_files(source: str) -> None:
    assert "parsers never open files: they are given bytes" in _rules_broken(
        "tracker.formats.fake.parse", source
    )


@pytest.mark.parametrize(
    "source",
    [
        "def shout():\n    print('hello')\n",
        "import sys\n\ndef stop():\n    sys.exit(1)\n",
        "def stop():\n    exit(1)\n",
        "import os\n\nHOME = os.environ['HOME']\n",
        "import os\n\nHOME = os.environ.get('HOME')\n",
        "import os as _os\n\nHOME = _os.getenv('HOME')\n",
        "from os import environ\n",
        "import sys\n\nsys.stderr.write('oops')\n",
        "from sys import stdout\n",
    ],
)
def test_only_the_cli_may_print_exit_or_read_the_environment(source: str) -> None:
    rule = "only tracker.cli prints, exits, reads the environment or writes to the terminal"
    assert rule in _rules_broken("tracker.store.facade", source)
    assert _rules_broken("tracker.cli", source) == set()


def test_non_cli_module_printing_is_reported_with_its_line() -> None:
    source = "def f() -> None:\n    x = 1\n    print(x)\n"
    (violation,) = _violations("tracker.report.fake", source)
    assert (violation.line, violation.what) == (3, "calls print()")


def test_report_may_not_import_the_store_or_ingest() -> None:
    source = "from tracker.store.facade import Store\nfrom tracker.ingest.run import read_job\n"
    assert _found("tracker.report.fake", source) == [
        (1, "imports tracker.store.facade"),
        (2, "imports tracker.ingest.run"),
    ]


def test_only_the_database_layer_imports_sqlalchemy() -> None:
    source = "from sqlalchemy.orm import Session\n"
    assert _violations("tracker.store.facade", source) == []
    assert [v.what for v in _violations("tracker.ingest.run", source)] == ["imports sqlalchemy.orm"]


def test_analysis_may_import_numpy_and_scipy_but_not_the_store() -> None:
    allowed = "import math\nimport numpy as np\nfrom scipy import stats\nfrom . import helpers\n"
    assert _violations("tracker.stats.fake", allowed) == []
    assert _violations("tracker.stats", "from . import regression\n", is_package=True) == []
    (violation,) = _violations("tracker.stats.fake", "import pandas\n")
    assert violation.what == "imports pandas"


def test_errors_and_records_import_nothing_from_tracker() -> None:
    assert _violations("tracker.errors", "from tracker.records.results import Labels\n")
    assert _violations("tracker.records.results", "from tracker.errors import ConfigError\n")
    assert _violations("tracker.records.results", "import numpy\n")
    assert _violations("tracker.records.results", "import json\nfrom datetime import date\n") == []


def test_tracker_may_not_import_the_top_level_ingest_or_tests_packages() -> None:
    assert {v.what for v in _violations("tracker.demo", "import jobs\nfrom tests import x\n")} == {
        "imports jobs",
        "imports tests",
    }
    assert _violations("tracker.demo", "from tracker.ingest.run import read_job\n") == []


def test_relative_imports_resolve_against_the_package() -> None:
    source = "from ..store import Store\n"
    assert _found("tracker.report.render", source) == [(1, "imports tracker.store")]
    assert _found("tracker.report", source, is_package=True) == [(1, "imports tracker.store")]


def test_every_module_belongs_to_a_layer_with_one_allow_list() -> None:
    for module in MODULES:
        layers = [r for r in RULES if r.only_tracker_imports is not None and r.applies_to(module)]
        assert len(layers) == 1, (module, [r.name for r in layers])


def test_a_layer_may_import_only_its_allowed_packages() -> None:
    assert _violations("tracker.formats.fake", "from tracker.records.results import Labels\n") == []
    source = "from tracker.analyze.run import x\n"
    assert _found("tracker.stats.fake", source) == [(1, "imports tracker.analyze.run")]
    assert any(
        rule.startswith("layer tracker.stats imports only")
        for rule in _rules_broken("tracker.stats.fake", source)
    )
    allowed = "from tracker.store.facade import Store\nfrom tracker.analyze.run import analyse\n"
    assert _violations("tracker.report.publish", allowed) == []
    assert _rules_broken("tracker.report.pages.fake", allowed)


def test_a_use_case_never_imports_a_parser() -> None:
    source = "from tracker.formats.serving.parse import OUTPUT_TOKENS_PER_S\n"
    for module in ("tracker.analyze.run", "tracker.gate.decision", "tracker.ingest.run"):
        assert "use cases never import a parser: readers call them" in _rules_broken(module, source)
    assert _violations("tracker.formats.serving.read_fake", source) == []


def test_the_gate_may_link_into_the_report_but_not_render_it() -> None:
    assert _violations("tracker.gate.output", "from tracker.report.urls import slug\n") == []
    assert _violations("tracker.gate.output", "from tracker.report.common import slug\n")


def test_imports_for_type_checking_only_are_not_run_time_imports() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from tracker.stats import CostEstimate\n"
        "else:\n"
        "    import numpy\n"
    )
    (violation,) = _violations("tracker.records.results", source)
    assert (violation.line, violation.what) == (5, "imports numpy")
    typed = "import typing\nif typing.TYPE_CHECKING:\n    from tracker.store import Store\n"
    assert _violations("tracker.formats.fake", typed) == []


_LOADED = """
import importlib, json, sys
heavy = sys.argv[1].split(",")
loaded = {}
for name in sys.argv[2:]:
    importlib.import_module(name)
    loaded[name] = sorted(m for m in heavy if m in sys.modules)
print(json.dumps(loaded))
"""


def _loaded_after(modules: list[str], heavy: tuple[str, ...]) -> dict[str, list[str]]:
    """For each of ``modules``, imported in turn in a fresh interpreter, which of
    ``heavy`` are loaded by then."""
    command = [sys.executable, "-c", _LOADED, ",".join(heavy), *modules]
    done = subprocess.run(
        command, cwd=REPO_ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    loaded: dict[str, list[str]] = json.loads(done.stdout)
    return loaded


NETWORK_AND_DATABASE = ("sqlalchemy", "sqlmodel", "alembic", "httpx")


def test_the_formats_load_neither_the_database_nor_the_network() -> None:
    formats = sorted(m for m in MODULES if _inside(m, "tracker.formats"))
    loaded = _loaded_after(formats, NETWORK_AND_DATABASE)
    assert loaded == {m: [] for m in formats}


def test_the_report_loads_neither_the_database_nor_the_network() -> None:
    """Nor, until a page is rendered, the renderer's jinja2, numpy and scipy."""
    heavy = (*NETWORK_AND_DATABASE, "jinja2", "numpy", "scipy")
    loaded = _loaded_after(["tracker.report", "tracker.report.urls"], heavy)
    assert loaded == {"tracker.report": [], "tracker.report.urls": []}


def test_parsers_are_known_by_their_names() -> None:
    parsers = {m for m in MODULES if any(_inside(m, p) for p in PARSERS)}
    assert {"tracker.formats.parse_json", "tracker.formats.loadgen.parse"} <= parsers
    assert "tracker.formats.loadgen.read" not in parsers
    assert all(m.rsplit(".", 1)[1].startswith("parse") for m in parsers)


# ---------------------------------------------------------------- the whole package


def _runtime_imports(module: str) -> set[str]:
    """The modules of tracker that ``module`` imports when it runs (at any depth)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = _imports(
        tree, module, is_package=path.name == "__init__.py", known_modules=KNOWN_MODULES
    )
    return {i.module for i in found if i.module in KNOWN_MODULES and i.module != module}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_circles_are_found() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_module_takes_part_in_an_import_circle() -> None:
    """Lazy imports inside functions count: a circle is a circle, whenever it closes."""
    graph = {m: _runtime_imports(m) for m in MODULES}
    assert _circles(graph) == []


def _layer_of(name: str) -> str:
    """The innermost layer ``name`` (a module or package of tracker) belongs to."""
    return max((layer for layer in LAYERS if _inside(name, layer)), key=len)


def test_the_layers_form_an_order_no_import_runs_up() -> None:
    for position, layer in enumerate(LAYER_ORDER):
        allowed = LAYERS[layer]
        if allowed == ANYTHING:
            assert all(LAYERS[above] == ANYTHING for above in LAYER_ORDER[position:]), layer
            continue
        below = set(LAYER_ORDER[:position])
        for part in allowed:
            assert _layer_of(part) in below, f"{layer} may import {part}, a layer above it"


_ROW = re.compile(r"^\| `(?P<layer>tracker[\w.]*)` \|(?P<rest>.*)\|\s*$")


def _architecture_layers() -> dict[str, tuple[str, ...]]:
    """The layer table of ``docs/architecture.md``: layer → what it may import."""
    table: dict[str, tuple[str, ...]] = {}
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if match:
            may_import = match["rest"].split("|")[-1]
            table[match["layer"]] = tuple(re.findall(r"`(tracker[\w.]*)`", may_import))
    return table


def test_the_architecture_page_shows_the_layers_this_test_enforces() -> None:
    page = _architecture_layers()
    assert list(page) == list(LAYER_ORDER)
    assert {layer: set(allowed) for layer, allowed in page.items()} == {
        layer: set(allowed) for layer, allowed in LAYERS.items()
    }


MAX_MODULES = 120


def test_the_package_has_at_most_120_modules() -> None:
    assert len(MODULES) <= MAX_MODULES


def test_no_folder_has_more_than_three_modules_sharing_a_name_prefix() -> None:
    """A prefix shared by many files (``mlperf_*``) is a folder trying to get out."""
    crowded = {}
    for folder in sorted({p.parent for p in MODULES.values()}):
        names = [p.stem for p in folder.glob("*.py") if p.stem != "__init__"]
        prefixes = Counter(name.split("_")[0] for name in names)
        crowded.update({f"{folder.name}/{k}_*": n for k, n in prefixes.items() if n > 3})
    assert crowded == {}


MAX_FUNCTION_LINES = 60
LONG_FUNCTIONS = {
    "tracker.analyze.run.analyse": 66,
    "tracker.report.site._render": 80,
}
"""Functions allowed over :data:`MAX_FUNCTION_LINES`, each at most as long as it is now."""


def _function_lengths() -> dict[str, int]:
    lengths = {}
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lengths[f"{module}.{node.name}"] = node.end_lineno - node.lineno + 1
    return lengths


def test_functions_are_short_but_for_a_named_few() -> None:
    lengths = _function_lengths()
    too_long = {
        name: n for name, n in lengths.items() if n > LONG_FUNCTIONS.get(name, MAX_FUNCTION_LINES)
    }
    assert too_long == {}
    assert {name for name in LONG_FUNCTIONS if lengths.get(name, 0) <= MAX_FUNCTION_LINES} == set()


def test_the_cli_reaches_the_store_only_through_its_face() -> None:
    face = "from tracker.store import DatabaseTarget, Store\n"
    assert _violations("tracker.cli.fake", face) == []
    behind = "from tracker.store.engine import create_store_engine\n"
    assert _found("tracker.cli.fake", behind) == [(1, "imports tracker.store.engine")]


def _public_names() -> dict[str, list[str]]:
    """Every public class and function a module defines at its top level → the modules."""
    defined: dict[str, list[str]] = {}
    for module, path in MODULES.items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            kinds = ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
            if isinstance(node, kinds) and not node.name.startswith("_"):
                defined.setdefault(node.name, []).append(module)
    return defined


def test_no_two_modules_define_a_public_name_alike() -> None:
    """One name, one thing: a reader who meets ``SystemDescription`` or ``has_source``
    knows which it is without looking at the import."""
    twice = {name: modules for name, modules in _public_names().items() if len(modules) > 1}
    assert twice == {}
