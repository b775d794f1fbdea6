"""Rendering the static site: the Jinja environment, pages and assets.

The output is self-contained (relative links, no CDN: plotly.js is copied out
of the installed ``plotly`` package into ``static/``) and deterministic: the
same contexts give the same bytes, because the time of generation is part of
the contexts and never read from the clock. Pages in a sub-folder
(``benchmark/``, ``system/``, ``compare/``) get ``root = "../"``.
:class:`PageWriter` writes one page at a time, so the site is never held whole,
into the temporary folder of a render (:mod:`tracker.report.staging` moves it
into place).
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from tracker.errors import ConfigError
from tracker.paths import templates_dir
from tracker.report.filters import FILTERS
from tracker.report.staging import MANIFEST

__all__ = [
    "MANIFEST",
    "PLOTLY_JS",
    "PageWriter",
    "build_environment",
    "plotly_js_path",
    "render_page",
]

PLOTLY_JS = "plotly.min.js"
_PIECES_PER_WRITE = 4096


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


def _copy_assets(out_dir: Path) -> None:
    static = out_dir / "static"
    shutil.copytree(templates_dir() / "static", static, dirs_exist_ok=True)
    shutil.copyfile(plotly_js_path(), static / PLOTLY_JS)


class PageWriter:
    """Writes pages (and other files) under one (new, empty) folder, creating it and ``static/``."""

    def __init__(self, out_dir: Path, on_page: Callable[[int, str], None] | None = None) -> None:
        self.out_dir = out_dir
        self.environment = build_environment()
        self.pages = 0
        self._on_page = on_page
        out_dir.mkdir(parents=True, exist_ok=True)
        _copy_assets(out_dir)
        self._folders: set[Path] = {out_dir}

    def path(self, relative: str) -> Path:
        """``relative`` (a path from the site root) as a file path, its folder created."""
        path = self.out_dir / relative
        if path.parent not in self._folders:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._folders.add(path.parent)
        return path

    def page(self, relative: str, template: str, page: Any) -> None:
        """Render ``template`` with ``page`` into ``relative`` (links lead back to the root)."""
        root = "../" * relative.count("/")
        pieces = self.environment.get_template(template).generate(page=page, root=root)
        # Streamed in batches: a page of thousands of rows is never one string,
        # nor the list of its hundreds of thousands of pieces.
        with self.path(relative).open("w", encoding="utf-8", newline="\n") as handle:
            batch: list[str] = []
            for piece in pieces:
                batch.append(piece)
                if len(batch) >= _PIECES_PER_WRITE:
                    handle.write("".join(batch))
                    batch.clear()
            handle.write("".join(batch))
        self.pages += 1
        if self._on_page is not None:
            self._on_page(self.pages, relative)

    def text(self, relative: str, text: str) -> None:
        """Write ``text`` (UTF-8, ``\\n`` line ends) into ``relative``."""
        self.path(relative).write_text(text, encoding="utf-8", newline="\n")
