"""Screenshots of every kind of report page at 1400 × 900 and 390 × 844, for review.

``make screenshots`` (not run in CI) builds two sites with the ``tracker`` command of
the virtual environment: the demo's (``tracker demo``) and one of the shared MLPerf
Inference rounds (v5.1, v6.0 and v6.1 with the v6.0 and v6.1 results tables, analysed),
then opens one page of each kind of each site in Debian's headless Chromium (Playwright,
never a downloaded browser) and writes a full-page PNG per page and width:
``<out>/<site>-<kind>-<width>.png``. The shared rounds are read from
``$TRACKER_SHARED_DATA`` (default ``../shared/data``); without them only the demo is shot.

Usage: ``python scripts/screenshots.py [--out screenshots]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
VIEWPORTS = ((1400, 900), (390, 844))
ROUNDS = ("tables/v6.0", "v5.1", "v6.0", "v6.1", "v6.1/summary.json")
KINDS = {
    "overview": "index.html",
    "round": "round/*.html",
    "platforms": "platforms/*.html",
    "benchmark": "benchmark/*.html",
    "system": "system/*.html",
    "compare": "compare/*.html",
    "findings": "findings.html",
    "scaling": "scaling.html",
    "serving": "serving.html",
    "training": "training.html",
}
"""Each kind of page and where its pages are (the largest page of a pattern is shot)."""


def _tracker(*args: str) -> None:
    tracker = Path(sys.executable).parent / "tracker"
    subprocess.run([str(tracker), *args], check=True, stdout=subprocess.DEVNULL)


def build_sites(work: Path) -> dict[str, Path]:
    """The demo's site and, where the shared data is, the shared rounds' site."""
    _tracker("demo", "--out", str(work / "demo"))
    sites = {"demo": work / "demo" / "site"}
    shared = Path(os.environ.get("TRACKER_SHARED_DATA", REPO.parent / "shared" / "data"))
    rounds = shared / "mlperf-inference"
    if rounds.is_dir():
        url = f"sqlite:///{work / 'rounds.db'}"
        _tracker("--database-url", url, "ingest", *(str(rounds / r) for r in ROUNDS))
        _tracker("--database-url", url, "analyze")
        _tracker("--database-url", url, "report", "--out", str(work / "rounds"))
        sites["rounds"] = work / "rounds"
    return sites


def chosen_pages(site: Path) -> dict[str, Path]:
    """One page per kind that the site has (and links): the largest of its pattern."""
    found = {}
    index = (site / "index.html").read_text(encoding="utf-8")
    for kind, pattern in KINDS.items():
        if "*" not in pattern and f'href="{pattern}"' not in index:
            continue  # a kind of data the site lacks: its page is not linked
        pages = sorted(site.glob(pattern), key=lambda p: (-p.stat().st_size, p))
        if pages:
            found[kind] = pages[0]
    return found


def shoot(sites: dict[str, Path], out: Path) -> list[Path]:
    """Write the screenshots; return their paths."""
    from playwright.sync_api import sync_playwright

    written = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        for width, height in VIEWPORTS:
            page = browser.new_page(viewport={"width": width, "height": height})
            for name, site in sites.items():
                for kind, path in chosen_pages(site).items():
                    page.goto(path.as_uri(), wait_until="load")
                    if page.locator(".chart").count():
                        page.wait_for_selector("html[data-charts=drawn]", timeout=30_000)
                    target = out / f"{name}-{kind}-{width}.png"
                    partial = target.with_name(f".{target.name}.partial.png")
                    page.screenshot(path=str(partial), full_page=True)
                    partial.replace(target)
                    written.append(target)
            page.close()
        browser.close()
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "screenshots")
    parser.add_argument("--keep", type=Path, help="build the sites here and keep them")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        written = shoot(build_sites(work), args.out)
    for path in written:
        sys.stdout.write(f"{path}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
