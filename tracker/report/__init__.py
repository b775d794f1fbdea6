"""The static report: page contexts, formatting filters and rendering.

:func:`render_site` turns a :class:`ReportInput` (records and analysis results,
gathered by :mod:`tracker.report.publish`) into the site: HTML pages, assets,
``report.json`` and CSV files, written page by page (:mod:`tracker.report.site`).

The names below are loaded on first use, so importing a light submodule such as
:mod:`tracker.report.urls` does not load the renderer (jinja2, numpy, scipy).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tracker.report.context import IndexPage, build_index_page
    from tracker.report.inputs import PairRun, PointOrder, ReportInput, SystemInfo
    from tracker.report.site import render_site

__all__ = [
    "IndexPage",
    "PairRun",
    "PointOrder",
    "ReportInput",
    "SystemInfo",
    "build_index_page",
    "render_site",
]

_HOMES = {
    "IndexPage": "tracker.report.context",
    "build_index_page": "tracker.report.context",
    "PairRun": "tracker.report.inputs",
    "PointOrder": "tracker.report.inputs",
    "ReportInput": "tracker.report.inputs",
    "SystemInfo": "tracker.report.inputs",
    "render_site": "tracker.report.site",
}


def __getattr__(name: str) -> Any:
    """Load ``name`` from its submodule on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value
