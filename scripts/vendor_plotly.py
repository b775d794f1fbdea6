"""Fetch the pinned plotly.js basic bundle from the npm registry into ``templates/static/``.

The report draws its charts (scatter, lines, bars, shapes) with
``plotly.js-basic-dist-min`` (about 1.2 MB) instead of the full plotly.js
(4.8 MB, once copied out of the 60 MB ``plotly`` Python wheel). The bundle is
vendored: one file, ``templates/static/plotly-basic.min.js``, with its licence
beside it, ``templates/static/plotly-basic.LICENSE.txt``; both ship in the
wheel (``templates/`` is force-included) and are copied into every site.

This script downloads the registry tarball of :data:`VERSION`, checks it
against the registry's published integrity (:data:`TARBALL_SHA512`), takes the
two files out of it and checks the bundle against :data:`BUNDLE_SHA256`, which
``tracker.report.render.CHART_JS_SHA256`` and a test repeat. To move to
another version, change the three pins here and in ``tracker/report/render.py``
(``npm view plotly.js-basic-dist-min@VERSION dist.integrity`` prints the
tarball's), run the script, and run ``tests/report/test_chart_bundle.py``.

Usage: ``python scripts/vendor_plotly.py`` (from anywhere; needs the network).
"""

from __future__ import annotations

import base64
import hashlib
import io
import sys
import tarfile
import urllib.request
from pathlib import Path

PACKAGE = "plotly.js-basic-dist-min"
VERSION = "4.1.1"
TARBALL_URL = f"https://registry.npmjs.org/{PACKAGE}/-/{PACKAGE}-{VERSION}.tgz"
TARBALL_SHA512 = (
    "sha512-1oNF8PeQx2hv/y7tqEVWKD3JGwn/MGEMQ8mL9HUwsaqG9FGy/"
    "OU5FHUHvzqbqxN4mnwZGI9abTiE775C4kkjMQ=="
)
BUNDLE_SHA256 = "99784e3abfb07b142a15e521a439e6d9addceadb3f79553fd24c72774f0649ba"

STATIC_DIR = Path(__file__).resolve().parent.parent / "templates" / "static"
BUNDLE = "plotly-basic.min.js"
LICENSE = "plotly-basic.LICENSE.txt"
# Member of the tarball -> file written under templates/static/.
MEMBERS = {f"package/{BUNDLE}": BUNDLE, "package/LICENSE": LICENSE}


def _integrity(data: bytes) -> str:
    """The npm ``dist.integrity`` string of ``data`` (SRI, sha512)."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


def fetch_tarball(url: str = TARBALL_URL) -> bytes:
    """The registry tarball, checked against :data:`TARBALL_SHA512`."""
    with urllib.request.urlopen(url, timeout=60) as response:
        data: bytes = response.read()
    if _integrity(data) != TARBALL_SHA512:
        raise SystemExit(f"{url}: integrity {_integrity(data)} is not the pinned {TARBALL_SHA512}")
    return data


def extract(tarball: bytes) -> dict[str, bytes]:
    """The bundle and its licence, read (never extracted to disk) from ``tarball``."""
    found: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        for member in archive.getmembers():
            if member.name in MEMBERS and member.isfile():
                handle = archive.extractfile(member)
                if handle is not None:
                    found[MEMBERS[member.name]] = handle.read()
    missing = sorted(set(MEMBERS.values()) - set(found))
    if missing:
        raise SystemExit(f"{TARBALL_URL}: {missing} not in the tarball")
    digest = hashlib.sha256(found[BUNDLE]).hexdigest()
    if digest != BUNDLE_SHA256:
        raise SystemExit(f"{BUNDLE}: sha256 {digest} is not the pinned {BUNDLE_SHA256}")
    return found


def main() -> int:
    files = extract(fetch_tarball())
    STATIC_DIR.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (STATIC_DIR / name).write_bytes(data)
        sys.stdout.write(f"wrote templates/static/{name} ({len(data)} bytes)\n")
    sys.stdout.write(f"{PACKAGE}@{VERSION}, sha256 {BUNDLE_SHA256}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
