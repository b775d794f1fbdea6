"""Rendering the static site: HTML pages, assets, ``report.json`` and CSV files.

The output is self-contained (relative links, no CDN: plotly.js is copied out
of the installed ``plotly`` package into ``static/``) and deterministic: the same
:class:`~tracker.report.site.Site` gives the same bytes, because the time of
generation is part of the contexts and never read from the clock. Pages in a
sub-folder (``benchmark/``, ``system/``, ``compare/``) get ``root = "../"``.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from tracker.errors import ConfigError
from tracker.paths import templates_dir
from tracker.report.filters import FILTERS
from tracker.report.site import Site, comparisons_csv, findings_csv, report_json, results_csv

__all__ = ["PLOTLY_JS", "build_environment", "plotly_js_path", "render_page", "render_site"]

PLOTLY_JS = "plotly.min.js"


def build_environment() -> Environment:
    """The Jinja environment for the report templates, with the report filters.

    Everything is escaped and a missing variable raises instead of rendering empty.
    """
    environment = Environment(
        loader=FileSystemLoader(templates_dir()),
        autoescape=True,
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(FILTERS)
    return environment


def plotly_js_path() -> Path:
    """The plotly.js bundle inside the installed ``plotly`` package (found, not imported)."""
    spec = importlib.util.find_spec("plotly")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / "package_data" / PLOTLY_JS
        if path.is_file():
            return path
    raise ConfigError("plotly.js was not found: install the `plotly` package (pip install plotly)")


def render_page(environment: Environment, template: str, page: Any, *, root: str = "") -> str:
    """The HTML of one page; ``root`` leads from the page back to the site root."""
    return environment.get_template(template).render(page=page, root=root)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")


def _copy_assets(out_dir: Path) -> None:
    static = out_dir / "static"
    shutil.copytree(templates_dir() / "static", static, dirs_exist_ok=True)
    source, target = plotly_js_path(), static / PLOTLY_JS
    if not target.is_file() or target.stat().st_size != source.stat().st_size:
        shutil.copyfile(source, target)


def render_site(site: Site, out_dir: Path) -> Path:
    """Write every page, ``static/``, ``report.json`` and the CSV files; return ``index.html``."""
    env = build_environment()
    out_dir.mkdir(parents=True, exist_ok=True)
    _copy_assets(out_dir)
    index = out_dir / "index.html"
    _write(index, render_page(env, "index.html", site.overview))
    singles: tuple[tuple[str, str, Any], ...] = (
        ("scaling.html", "scaling.html", site.scaling),
        ("serving.html", "serving.html", site.serving),
        ("findings.html", "findings.html", site.findings),
    )
    for name, template, page in singles:
        _write(out_dir / name, render_page(env, template, page))
    many: tuple[tuple[Mapping[str, Any], str], ...] = (
        (site.benchmarks, "benchmark.html"),
        (site.systems, "system.html"),
        (site.comparisons, "compare.html"),
    )
    for pages, template in many:
        for path, page in pages.items():
            _write(out_dir / path, render_page(env, template, page, root="../"))
    _write(out_dir / "report.json", report_json(site))
    _write(out_dir / "results.csv", results_csv(site))
    _write(out_dir / "findings.csv", findings_csv(site))
    _write(out_dir / "comparisons.csv", comparisons_csv(site))
    return index
