"""Rendering the static site: the Jinja environment, pages and assets.

The output is self-contained (relative links, no CDN: ``templates/static/``,
with the vendored plotly.js basic bundle :data:`CHART_JS`, is copied into
``static/``) and deterministic: the
same contexts give the same bytes, because the time of generation is part of
the contexts and never read from the clock. Pages in a sub-folder
(``benchmark/``, ``system/``, ``compare/``) get ``root = "../"``.
:class:`PageWriter` writes one page at a time, so the site is never held whole,
into the temporary folder of a render (:mod:`tracker.report.staging` moves it
into place).
"""

from __future__ import annotations

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
    "CHART_JS",
    "CHART_JS_SHA256",
    "CHART_JS_VERSION",
    "MANIFEST",
    "PageWriter",
    "build_environment",
    "chart_js_path",
    "render_page",
]

CHART_JS = "plotly-basic.min.js"
"""The chart bundle, vendored in ``templates/static/`` by ``scripts/vendor_plotly.py``."""
CHART_JS_VERSION = "4.1.1"
"""The version of ``plotly.js-basic-dist-min`` vendored (the npm package)."""
CHART_JS_SHA256 = "99784e3abfb07b142a15e521a439e6d9addceadb3f79553fd24c72774f0649ba"
"""The sha256 of :data:`CHART_JS` (checked by ``tests/report/test_chart_bundle.py``)."""
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


def chart_js_path() -> Path:
    """The vendored chart bundle (``templates/static/plotly-basic.min.js``)."""
    path = templates_dir() / "static" / CHART_JS
    if not path.is_file():
        raise ConfigError(
            f"the chart bundle {CHART_JS} is missing from the templates: reinstall the tracker"
            " (in a checkout: python scripts/vendor_plotly.py)"
        )
    return path


def render_page(environment: Environment, template: str, page: Any, *, root: str = "") -> str:
    """The HTML of one page; ``root`` leads from the page back to the site root."""
    return environment.get_template(template).render(page=page, root=root)


def _copy_assets(out_dir: Path) -> None:
    chart_js_path()  # a clear error, not a site whose charts never draw
    shutil.copytree(templates_dir() / "static", out_dir / "static", dirs_exist_ok=True)


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
