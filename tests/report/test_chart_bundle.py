"""The chart bundle: one pinned, vendored plotly.js basic file, no ``plotly`` Python package.

``templates/static/plotly-basic.min.js`` is ``plotly.js-basic-dist-min`` at the
version pinned in ``tracker/report/render.py`` and ``scripts/vendor_plotly.py``
(which fetches it from the npm registry), with its MIT licence beside it. Its
sha256 is checked here against both pins; the tracker neither depends on nor
imports ``plotly``; every site carries the bundle byte for byte and no longer
the 4.8 MB ``plotly.min.js``, and the demo's site is at least 3 MB lighter
than with it. That the charts still draw is checked in a browser by
``test_report_browser.py`` and ``test_report_layout.py``.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import re
import shutil
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner

from tracker.cli import cli
from tracker.paths import templates_dir
from tracker.report import render
from tracker.report.render import MANIFEST

REPO_ROOT = Path(__file__).resolve().parents[2]
STATIC = REPO_ROOT / "templates" / "static"
BUNDLE = STATIC / "plotly-basic.min.js"
LICENSE = STATIC / "plotly-basic.LICENSE.txt"

# The site of `tracker demo` before the basic bundle, with plotly.min.js (4,815,814
# bytes): 5,161,735 bytes in all.
DEMO_SITE_BYTES_WITH_FULL_PLOTLY = 5_161_735


def _script() -> ModuleType:
    path = REPO_ROOT / "scripts" / "vendor_plotly.py"
    spec = importlib.util.spec_from_file_location("vendor_plotly", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_vendored_bundle_matches_its_pinned_sha256() -> None:
    digest = hashlib.sha256(BUNDLE.read_bytes()).hexdigest()
    assert digest == render.CHART_JS_SHA256
    script = _script()
    assert script.BUNDLE_SHA256 == render.CHART_JS_SHA256
    assert script.VERSION == render.CHART_JS_VERSION
    assert script.PACKAGE == "plotly.js-basic-dist-min"
    assert script.TARBALL_URL.startswith("https://registry.npmjs.org/plotly.js-basic-dist-min/")
    assert script.TARBALL_URL.endswith(f"-{render.CHART_JS_VERSION}.tgz")
    assert script.TARBALL_SHA512.startswith("sha512-")


def test_the_bundle_is_the_basic_build_of_the_pinned_version() -> None:
    head = BUNDLE.read_bytes()[:200].decode("ascii")
    assert f"plotly.js (basic - minified) v{render.CHART_JS_VERSION}" in head
    assert 1_000_000 < BUNDLE.stat().st_size < 1_500_000
    assert render.chart_js_path() == templates_dir() / "static" / render.CHART_JS
    assert render.CHART_JS == BUNDLE.name


def test_the_licence_ships_beside_the_bundle() -> None:
    text = LICENSE.read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "Plotly" in text
    assert "Permission is hereby granted, free of charge" in text


def test_the_vendor_script_checks_what_it_fetched() -> None:
    script = _script()
    with pytest.raises(SystemExit, match="not in the tarball"):
        script.extract(_tarball({"package/README.md": b"no bundle"}))
    with pytest.raises(SystemExit, match="is not the pinned"):
        script.extract(
            _tarball({"package/plotly-basic.min.js": b"tampered", "package/LICENSE": b"MIT"})
        )
    files = script.extract(
        _tarball({"package/plotly-basic.min.js": BUNDLE.read_bytes(), "package/LICENSE": b"MIT"})
    )
    assert files == {"plotly-basic.min.js": BUNDLE.read_bytes(), "plotly-basic.LICENSE.txt": b"MIT"}


def _tarball(members: dict[str, bytes]) -> bytes:
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_the_tracker_neither_depends_on_nor_imports_plotly() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    names = [re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0].lower() for d in _requirements(project)]
    assert "plotly" not in names
    assert "narwhals" not in names
    offenders = []
    for path in sorted((REPO_ROOT / "tracker").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            modules: list[str] = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module]
            elif isinstance(node, ast.Constant) and node.value == "plotly":
                modules = ["plotly"]  # find_spec("plotly"), import_module("plotly")
            if any(m == "plotly" or m.startswith("plotly.") for m in modules):
                offenders.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}")  # type: ignore[attr-defined]
    assert not offenders


def _requirements(project: dict[str, object]) -> list[str]:
    table = project["project"]
    assert isinstance(table, dict)
    found = list(table["dependencies"])
    for extra in table.get("optional-dependencies", {}).values():
        found.extend(extra)
    return [str(d) for d in found]


def test_every_site_carries_the_bundle_and_not_the_full_plotly(demo_site: Path) -> None:
    static = demo_site / "static"
    assert (static / render.CHART_JS).read_bytes() == BUNDLE.read_bytes()
    assert (static / LICENSE.name).read_bytes() == LICENSE.read_bytes()
    assert not (static / "plotly.min.js").exists()
    index = (demo_site / "index.html").read_text(encoding="utf-8")
    assert f'src="static/{render.CHART_JS}"' in index
    lines = (demo_site / MANIFEST).read_text(encoding="utf-8").splitlines()
    listed = {line.partition("  ")[2]: line.partition("  ")[0] for line in lines[1:]}
    assert listed[f"static/{render.CHART_JS}"] == render.CHART_JS_SHA256


def test_the_demo_site_is_at_least_3_mb_lighter(demo_site: Path) -> None:
    total = sum(p.stat().st_size for p in demo_site.rglob("*") if p.is_file())
    assert total <= DEMO_SITE_BYTES_WITH_FULL_PLOTLY - 3_000_000, total


def test_a_new_render_removes_the_old_full_plotly(demo_site: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(demo_site, site)
    (site / "static" / "plotly.min.js").write_text("/* plotly.js v4.1.1 */", encoding="utf-8")
    old_bundle = hashlib.sha256(b"/* plotly.js v4.1.1 */").hexdigest()
    with (site / MANIFEST).open("a", encoding="utf-8") as listing:  # an earlier render's
        listing.write(f"{old_bundle}  static/plotly.min.js\n")
    url = f"sqlite:///{demo_site.parent / 'demo.db'}"
    result = CliRunner().invoke(cli, ["--database-url", url, "report", "--out", str(site)])
    assert result.exit_code == 0, result.output
    assert not (site / "static" / "plotly.min.js").exists()
    assert (site / "static" / render.CHART_JS).is_file()
