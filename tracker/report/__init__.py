"""The static report: page contexts, formatting filters and rendering."""

from __future__ import annotations

from tracker.report.context import IndexPage, build_index_page
from tracker.report.render import render_site

__all__ = ["IndexPage", "build_index_page", "render_site"]
