"""Rendering the static report: HTML pages, their stylesheet and ``report.json``.

The output is self-contained (relative links, no CDN, no JavaScript) and
deterministic: the same page context gives the same bytes, because the time of
generation is part of the context and never read from the clock.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from tracker.paths import templates_dir
from tracker.report.context import IndexPage
from tracker.report.filters import FILTERS

__all__ = ["build_environment", "render_index", "render_report_json", "render_site"]


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


def render_index(page: IndexPage, environment: Environment | None = None) -> str:
    """The HTML of ``index.html`` for ``page``."""
    env = environment if environment is not None else build_environment()
    return env.get_template("index.html").render(page=page)


def render_report_json(page: IndexPage) -> str:
    """The page context as JSON (sorted keys, indent 2, final newline)."""
    return json.dumps(asdict(page), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def render_site(page: IndexPage, out_dir: Path) -> Path:
    """Write ``index.html``, ``static/`` and ``report.json`` into ``out_dir``.

    Returns the path of ``index.html``.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    index_path = out_dir / "index.html"
    index_path.write_text(render_index(page), encoding="utf-8", newline="\n")
    shutil.copytree(templates_dir() / "static", out_dir / "static", dirs_exist_ok=True)
    (out_dir / "report.json").write_text(render_report_json(page), encoding="utf-8", newline="\n")
    return index_path
