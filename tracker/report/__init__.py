"""The static report: page contexts, formatting filters and rendering.

:func:`render_site` turns a :class:`ReportInput` (records and analysis results,
gathered by :mod:`tracker.report.publish`) into the site: HTML pages, assets,
``report.json`` and CSV files, written page by page (:mod:`tracker.report.site`).
"""

from __future__ import annotations

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
