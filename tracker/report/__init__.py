"""The static report: page contexts, formatting filters and rendering.

:func:`build_site` turns a :class:`ReportInput` (records and analysis results,
gathered by :mod:`tracker.publish`) into page contexts; :func:`render_site`
writes the HTML, assets, ``report.json`` and CSV files.
"""

from __future__ import annotations

from tracker.report.context import IndexPage, build_index_page
from tracker.report.inputs import PairRun, ReportInput, SystemInfo
from tracker.report.render import render_site
from tracker.report.site import Site, build_site

__all__ = [
    "IndexPage",
    "PairRun",
    "ReportInput",
    "Site",
    "SystemInfo",
    "build_index_page",
    "build_site",
    "render_site",
]
