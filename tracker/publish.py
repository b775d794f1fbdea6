"""Publish the static report: read what the report needs from the store, then render.

The report package never queries the database; this module is the bridge.
"""

from __future__ import annotations

from pathlib import Path

from tracker.report import build_index_page, render_site
from tracker.store import Store
from tracker.versions import order_versions

__all__ = ["publish_report"]


def publish_report(store: Store, out_dir: Path, *, generated_at: str) -> Path:
    """Render the report of everything in ``store`` into ``out_dir``; return the index page."""
    versions = store.list_versions()
    ordered = [
        version
        for software in sorted({v.software for v in versions})
        for version in order_versions(v for v in versions if v.software == software)
    ]
    page = build_index_page(store.iter_series_points(), ordered, generated_at=generated_at)
    return render_site(page, out_dir)
