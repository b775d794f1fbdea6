"""`tracker report --out site` touches nothing outside ``site`` and never leaves half a site.

Through the command line, on a small database (one real LoadGen run stored
under two versions, one of them an HTML link): planted symbolic links stop the
render (they are not the tracker's) and a forged ``.report-files`` list is
trusted only for files whose bytes it lists, leaving every file outside the site
byte for byte as it was; the user's own files in the site survive a render; a render that
fails (an error, a full disk) or is killed (SIGKILL) leaves the previous site
byte for byte as it was, and the next render removes what the killed one left.
Chart text (item 13 of issue #21): a version that is a link is drawn as text.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.support.files import snapshot_tree
from tracker.cli import cli
from tracker.report.render import MANIFEST, STAGE_MARKER

LINK_VERSION = '<a href="https://example.com/x">1.0</a>'
REPO_ROOT = Path(__file__).resolve().parents[2]


def _tracker(database: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", f"sqlite:///{database}", *args])


@pytest.fixture(scope="module")
def database(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("safety") / "tracker.db"
    for version in (LINK_VERSION, "2.0"):
        result = _tracker(
            path,
            "ingest",
            str(shared_data / "loadgen-local" / "Offline"),
            "--kind",
            "loadgen",
            "--software",
            "stack",
            "--software-version",
            version,
            "--system",
            "node",
            "--benchmark",
            "resnet50",
        )
        assert result.exit_code == 0, result.output
    return path


def _report(database: Path, out: Path) -> Result:
    return _tracker(database, "report", "--out", str(out))


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    (outside / "keys").mkdir(parents=True)
    (outside / "keys" / "authorized_keys").write_text("ssh-ed25519 AAAA me\n")
    (outside / "precious.txt").write_text("precious\n")
    (outside / "list").write_text("keys/authorized_keys\n")
    return outside


def _listed_paths(site: Path) -> set[str]:
    return {line.partition("  ")[2] for line in (site / MANIFEST).read_text().splitlines()[1:]}


def test_planted_links_stop_the_render_and_touch_nothing(database: Path, tmp_path: Path) -> None:
    site, outside = tmp_path / "site", _outside(tmp_path)
    assert _report(database, site).exit_code == 0
    before = snapshot_tree(outside)
    (site / "index.html").unlink()
    (site / "index.html").symlink_to(outside / "precious.txt")
    (site / "report.json").unlink()
    (site / "report.json").symlink_to(outside / "keys" / "authorized_keys")
    planted = snapshot_tree(site)

    result = _report(database, site)

    assert result.exit_code == 2, result.output
    assert (
        f"{site / 'index.html'}" in result.output and "not written by the tracker" in result.output
    )
    assert snapshot_tree(outside) == before
    assert snapshot_tree(site) == planted  # links that are not the tracker's are left alone


def test_a_forged_list_touches_nothing_outside(database: Path, tmp_path: Path) -> None:
    site, outside = tmp_path / "site", _outside(tmp_path)
    assert _report(database, site).exit_code == 0
    before = snapshot_tree(outside)
    (site / "evil").symlink_to(outside / "keys")
    listed = _listed_paths(site)
    forged = ["evil/authorized_keys", "../outside/precious.txt", str(outside / "precious.txt")]
    forged += ["system/precious.txt", "./evil/authorized_keys", "evil//authorized_keys"]
    digest = hashlib.sha256(b"precious\n").hexdigest()
    with (site / MANIFEST).open("a") as listing:
        listing.write("".join(f"{digest}  {line}\n" for line in forged))

    result = _report(database, site)

    assert result.exit_code == 0, result.output
    assert snapshot_tree(outside) == before
    assert (site / "evil").is_symlink()  # not the report's: left alone, never followed
    assert _listed_paths(site) == listed


def test_a_list_that_is_a_link_is_neither_trusted_nor_written_through(
    database: Path, tmp_path: Path
) -> None:
    site, outside = tmp_path / "site", _outside(tmp_path)
    assert _report(database, site).exit_code == 0
    (site / "evil").symlink_to(outside / "keys")
    (site / MANIFEST).unlink()
    (site / MANIFEST).symlink_to(outside / "list")
    before = snapshot_tree(tmp_path)
    for force in ([], ["--force"]):
        result = _tracker(database, "report", "--out", str(site), *force)
        assert result.exit_code == 2, result.output
        assert snapshot_tree(tmp_path) == before
    assert (site / MANIFEST).is_symlink()


def test_an_out_folder_that_is_a_link_is_refused(database: Path, tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    before = snapshot_tree(outside)
    (tmp_path / "site").symlink_to(outside)
    result = _report(database, tmp_path / "site")
    assert result.exit_code == 2
    assert "symbolic link" in result.output and "give the folder it leads to" in result.output
    assert snapshot_tree(outside) == before


def test_the_users_own_files_survive_and_stale_pages_go(database: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    assert _report(database, site).exit_code == 0
    fresh = snapshot_tree(site)
    (site / "notes.txt").write_text("mine\n")
    (site / "drafts").mkdir()
    (site / "drafts" / "plan.md").write_text("plan\n")
    (site / "system" / "gone.html").write_text("stale")
    stale = f"{hashlib.sha256(b'stale').hexdigest()}  system/gone.html\n"
    (site / MANIFEST).write_text((site / MANIFEST).read_text() + stale)
    assert _report(database, site).exit_code == 0
    after = snapshot_tree(site)
    assert after.keys() == fresh.keys() | {"notes.txt", "drafts/plan.md"}
    assert after["notes.txt"] == b"mine\n" and after["drafts/plan.md"] == b"plan\n"
    assert not list(tmp_path.glob(".site.tmp-*"))


def test_a_failed_render_leaves_the_previous_site_byte_identical(
    database: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    assert _report(database, site).exit_code == 0
    (site / "notes.txt").write_text("mine\n")
    before = snapshot_tree(site)

    def disk_full(*_args: Any, **_kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("tracker.report.site.build_serving_page", disk_full)
    result = _report(database, site)
    assert result.exit_code == 2
    assert "the report was not written" in result.output
    assert "No space left on device" in result.output
    assert f"{site} was left as it was" in result.output
    assert snapshot_tree(site) == before
    assert not list(tmp_path.glob(".site.tmp-*"))


_KILLED_RENDER = """
import os, signal, sys
from pathlib import Path
from tracker.report.publish import publish_report
from tracker.store.facade import Store

def on_page(pages: int, _relative: str) -> None:
    if pages == 3:
        os.kill(os.getpid(), signal.SIGKILL)

with Store.open(sys.argv[1]) as store:
    publish_report(store, Path(sys.argv[2]), generated_at="later", on_page=on_page)
"""


def test_a_killed_render_leaves_the_previous_site_and_the_next_one_cleans_up(
    database: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    assert _report(database, site).exit_code == 0
    before = snapshot_tree(site)
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_RENDER, f"sqlite:///{database}", str(site)],
        cwd=REPO_ROOT,
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert snapshot_tree(site) == before
    [left] = tmp_path.glob(".site.tmp-*")
    assert (left / STAGE_MARKER).is_file() and list(left.rglob("*.html"))

    assert _report(database, site).exit_code == 0
    assert not left.exists()
    assert snapshot_tree(site).keys() == before.keys()


class _Figures(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.specs: list[Any] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "data-figure" and value:
                self.specs.append(json.loads(value))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_a_version_that_is_a_link_reaches_the_charts_as_text(
    database: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    assert _report(database, site).exit_code == 0
    figures = _Figures()
    for page in sorted(site.rglob("*.html")):
        figures.feed(page.read_text(encoding="utf-8"))
    texts = [s for spec in figures.specs for s in _strings(spec)]
    assert figures.specs and texts
    assert not [t for t in texts if "<a" in t or 'href="' in t and "&lt;" not in t]
    assert '&lt;a href="https://example.com/x"&gt;1.0&lt;/a&gt;' in texts


CHROMIUM = Path("/usr/bin/chromium")


def test_a_version_that_is_a_link_is_no_link_in_the_browser(database: Path, tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (.ci/run does)")
        pytest.skip(f"{CHROMIUM} is missing")
    from playwright.sync_api import sync_playwright

    site = tmp_path / "site"
    assert _report(database, site).exit_code == 0
    [page_path] = sorted((site / "benchmark").glob("*.html"))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page()
            page.goto(page_path.as_uri(), wait_until="load")
            page.wait_for_selector(".chart svg.main-svg")
            links = page.eval_on_selector_all(".chart a", "els => els.length")
            ticks = page.eval_on_selector_all(
                ".chart .xtick text", "els => els.map(e => e.textContent)"
            )
        finally:
            browser.close()
    assert links == 0
    assert LINK_VERSION in ticks
