"""Rendering the static site: the Jinja environment, pages and assets, written into a
temporary folder beside the site and moved into place at the end.

The output is self-contained (relative links, no CDN: ``templates/static/``,
with the vendored plotly.js basic bundle :data:`CHART_JS`, is copied into
``static/``) and deterministic: the
same contexts give the same bytes, because the time of generation is part of
the contexts and never read from the clock. Pages in a sub-folder
(``benchmark/``, ``system/``, ``compare/``) get ``root = "../"``.
:class:`PageWriter` writes one page at a time, so the site is never held whole,
into the temporary folder of a render (the staging below moves it
into place).

Whose folder ``--out`` is: the tracker's only when the tracker made it.

A site the tracker wrote holds :data:`MANIFEST`, its marker: the sha256 and the
path of every file the render wrote. A render writes into ``--out`` when it does
not exist, when it is an empty folder, or when it holds that marker
(:func:`check_output_folder`); any other folder is refused with an error naming it,
unless ``force`` (``--force``) takes it over. Taken over or not, a render never
replaces nor removes a file it did not write: a file is the tracker's only when its
bytes are still those the marker lists for its path (a regular file reached through
real folders inside ``--out``); anything else where the render puts a file (the
user's own ``index.html``, a link, a device, a file changed since) stops the render
before anything is moved, naming it. A forged or edited marker can therefore only
ever make the render remove a file whose bytes are exactly those it lists.

Where a render writes: a temporary folder beside the site, moved into place at the end.

A render never writes into ``--out`` while it renders. It writes into a new
folder beside it, ``.<name>.tmp-<random>`` in the same parent folder (the same
file system, so every move is a rename), marked by a :data:`STAGE_MARKER` file
holding the process id and the folder's own device and inode numbers. Then:

* when ``--out`` does not exist yet, the whole folder is renamed into place
  (one atomic rename);
* when it exists, each file of the render is moved into place with
  :func:`os.replace` (each page is swapped whole, ``index.html`` last); the files
  the earlier render listed in :data:`MANIFEST`, which this one did not write and
  which are still as that render wrote them, are removed, and the new list is
  written. Nothing else in the folder is touched: the user's own files survive.

A render that fails (an error, a full disk, a file that is not the tracker's)
removes its temporary folder and raises :class:`RenderError`: the previous site
is left byte for byte as it was. A render that is killed leaves its temporary
folder behind; the next render into the same ``--out`` removes it, recognised by
its name and marker (which must name that very folder: a folder planted with a
marker copied or made up is left alone), and only when the process that wrote it
is gone.

Nothing outside ``--out`` is written or removed, whatever the folder holds:
``--out`` itself must not be a symbolic link; the list of an earlier render is
trusted only for plain relative paths (no ``..``, no ``.``, not absolute) that
lead through real folders (no symbolic link) to a regular file inside ``--out``.
A file where the render puts a folder (or a folder where it puts a file) stops
the render before anything is moved.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from tracker.errors import ConfigError, TrackerError
from tracker.paths import lstat_mode, templates_dir
from tracker.report.filters import FILTERS

__all__ = [
    "CHART_JS",
    "CHART_JS_SHA256",
    "CHART_JS_VERSION",
    "MANIFEST",
    "MANIFEST_HEADER",
    "PageWriter",
    "RenderError",
    "STAGE_MARKER",
    "Stage",
    "build_environment",
    "chart_js_path",
    "check_output_folder",
    "regular_file_sha256",
    "listed_files",
    "manifest_text",
    "render_page",
    "staged_site",
]


MANIFEST = ".report-files"
"""The tracker's marker in a site: the sha256 and path of each file the last render wrote."""
MANIFEST_HEADER = "# tracker report: the sha256 and path of each file it wrote here"
"""The first line of :data:`MANIFEST`: a list without it (or a forged one) marks nothing."""
STAGE_MARKER = ".tracker-render"
"""Marks a render's temporary folder; holds the process id and the folder's identity."""
_LAST = ("report.json", "index.html")
"""Moved into place after every other file: the entry page flips last."""
_NAMED = 5
"""How many files an error names (then a count of the others)."""


class RenderError(TrackerError):
    """Raised when the report could not be written; the message says what became of the site."""


def _stage_prefix(out: Path) -> str:
    return f".{out.name}.tmp-"


def _write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary name beside it."""
    temporary = path.with_name(path.name + ".part")
    temporary.write_text(text, encoding="utf-8", newline="\n")
    os.replace(temporary, path)


def regular_file_sha256(path: Path) -> str:
    """The sha256 of the file at ``path`` (read through no link: a link is refused)."""
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as stream:
        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            raise OSError(f"{path} is not a regular file")
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def manifest_text(hashes: Mapping[str, Iterable[str]]) -> str:
    """:data:`MANIFEST` for ``hashes`` (relative path → the sha256 each may have)."""
    lines = [MANIFEST_HEADER]
    lines += [f"{h}  {relative}" for relative in sorted(hashes) for h in sorted(hashes[relative])]
    return "".join(f"{line}\n" for line in lines)


def listed_files(out: Path) -> dict[str, set[str]] | None:
    """What the marker of ``out`` lists (plain relative path → sha256s); ``None`` when
    ``out`` holds no marker (none, a link, not a regular file, no header line)."""
    text = _regular_text(out / MANIFEST)
    lines = [] if text is None else text.splitlines()
    if not lines or lines[0] != MANIFEST_HEADER:
        return None
    found: dict[str, set[str]] = {}
    for line in lines[1:]:
        digest, _gap, relative = line.partition("  ")
        if len(digest) == 64 and plain_relative(relative):
            if relative not in (MANIFEST, STAGE_MARKER):
                found.setdefault(relative, set()).add(digest.lower())
    return found


def check_output_folder(out_dir: Path, *, force: bool = False) -> None:
    """Refuse ``out_dir`` unless it is missing, an empty folder, a folder with the tracker's
    marker, or ``force`` takes it over (a :class:`RenderError` naming it)."""
    out = _checked_out(out_dir)
    if force or lstat_mode(out) is None or listed_files(out) is not None:
        return
    with os.scandir(out) as entries:
        if next(entries, None) is None:
            return
    raise RenderError(
        f"{out_dir} is not a folder the tracker made (it has no {MANIFEST} marker) and is "
        "not empty: give a new or empty folder with --out, or add --force to write the "
        "report into it (your files there are kept; a file of yours where the report "
        "writes one stops it)"
    )


class Stage:
    """A render's temporary folder (:attr:`folder`) and the site it will replace (:attr:`out`)."""

    def __init__(self, out: Path, *, force: bool = False) -> None:
        self.out = out
        self.force = force
        while True:
            folder = out.parent / f"{_stage_prefix(out)}{secrets.token_hex(6)}"
            try:
                folder.mkdir()
            except FileExistsError:
                continue
            break
        self.folder = folder
        _write(folder / STAGE_MARKER, _stage_identity(folder))

    def files(self) -> list[str]:
        """Every file the render wrote, as relative POSIX paths, ``index.html`` last."""
        found: list[str] = []
        for top, _folders, names in os.walk(self.folder):
            base = PurePosixPath(Path(top).relative_to(self.folder).as_posix())
            found.extend(str(base / name) for name in names)
        written = set(found) - {STAGE_MARKER}
        return sorted(written - set(_LAST)) + [name for name in _LAST if name in written]

    def commit(self) -> int:
        """Move the render into :attr:`out`; return how many stale files were removed."""
        files = self.files()
        hashes = {relative: {regular_file_sha256(self.folder / relative)} for relative in files}
        if not _exists(self.out):
            try:
                _write(self.folder / MANIFEST, manifest_text(hashes))
                (self.folder / STAGE_MARKER).unlink()
                os.rename(self.folder, self.out)
            except OSError as error:
                message = f"the report could not be moved to {self.out} ({error}); render again"
                raise RenderError(message) from error
            return 0
        check_output_folder(self.out, force=self.force)
        earlier = listed_files(self.out) or {}
        _check_places(self.out, [*files, MANIFEST])
        _refuse_others(self.out, [*files, MANIFEST], earlier)
        try:
            return self._replace(files, earlier, hashes)
        except OSError as error:
            message = f"the report was only partly moved into {self.out} ({error}); render again"
            raise RenderError(message) from error

    def _replace(
        self, files: list[str], earlier: dict[str, set[str]], hashes: dict[str, set[str]]
    ) -> int:
        # Listed first (old and new): a render killed while moving leaves nothing unlisted.
        both = {r: earlier.get(r, set()) | hashes.get(r, set()) for r in {*earlier, *hashes}}
        self._place_list(manifest_text(both))
        for relative in files:
            _make_folders(self.out, PurePosixPath(relative).parts[:-1])
            os.replace(self.folder / relative, self.out / relative)
        kept = set(files)
        stale = ((r, h) for r, h in sorted(earlier.items()) if r not in kept)
        removed = sum(remove_listed(self.out, r, h) for r, h in stale)
        self._place_list(manifest_text(hashes))
        shutil.rmtree(self.folder, ignore_errors=True)
        return removed

    def _place_list(self, listing: str) -> None:
        _write(self.folder / MANIFEST, listing)
        os.replace(self.folder / MANIFEST, self.out / MANIFEST)

    def discard(self) -> None:
        """Remove the temporary folder (a failed render)."""
        shutil.rmtree(self.folder, ignore_errors=True)


def _stage_identity(folder: Path) -> str:
    """What :data:`STAGE_MARKER` holds: this process and the folder's device and inode."""
    found = os.lstat(folder)
    return f"{os.getpid()} {found.st_dev} {found.st_ino}\n"


@contextmanager
def staged_site(out_dir: Path, *, force: bool = False) -> Iterator[Stage]:
    """A :class:`Stage` for ``out_dir``; a failure inside removes it and raises
    :class:`RenderError` (the site in ``out_dir`` is left as it was)."""
    check_output_folder(out_dir, force=force)
    out = _checked_out(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(out)
    stage = Stage(out, force=force)
    try:
        yield stage
    except BaseException as error:
        stage.discard()
        if isinstance(error, Exception) and not isinstance(error, RenderError):
            message = f"the report was not written ({error}); {out_dir} was left as it was"
            raise RenderError(message) from error
        raise


def _checked_out(out_dir: Path) -> Path:
    out = Path(os.path.abspath(out_dir))
    if not out.name:
        raise RenderError(f"{out_dir} is not a folder the report can be written to")
    try:
        mode = os.lstat(out).st_mode
    except FileNotFoundError:
        return out
    if stat.S_ISLNK(mode):
        raise RenderError(
            f"{out_dir} is a symbolic link: give the folder it leads to instead "
            "(the report never writes through a link)"
        )
    if not stat.S_ISDIR(mode):
        raise RenderError(f"{out_dir} exists and is not a folder: give another folder")
    return out


def _exists(path: Path) -> bool:
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    return True


def _regular_text(path: Path) -> str | None:
    """The UTF-8 text of ``path``; ``None`` unless it is a regular file (not a link) that
    reads as UTF-8."""
    mode = lstat_mode(path)
    if mode is None or not stat.S_ISREG(mode):
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _check_places(out: Path, files: Iterable[str]) -> None:
    """Refuse (before anything moves) when a file is where a folder goes, or the reverse."""
    seen: set[PurePosixPath] = set()
    for relative in files:
        path = PurePosixPath(relative)
        for folder in list(reversed(path.parents))[1:]:
            if folder in seen:
                continue
            seen.add(folder)
            mode = lstat_mode(out / folder)
            if mode is not None and not stat.S_ISDIR(mode):
                raise RenderError(
                    f"{out / folder} is not a folder where the report puts one: move it "
                    f"away; {out} was left as it was"
                )
        mode = lstat_mode(out / path)
        if mode is not None and stat.S_ISDIR(mode):
            raise RenderError(
                f"{out / path} is a folder where the report writes a file: move it away; "
                f"{out} was left as it was"
            )


def _refuse_others(out: Path, files: Iterable[str], earlier: Mapping[str, set[str]]) -> None:
    """Refuse (before anything moves) when a file the tracker did not write, or changed
    since, is where the render writes one."""
    others = [
        relative
        for relative in files
        if _exists(out / relative)
        and not (relative == MANIFEST and listed_files(out) is not None)
        and not _is_ours(out, relative, earlier.get(relative, set()))
    ]
    if not others:
        return
    named = ", ".join(str(out / relative) for relative in others[:_NAMED])
    more = f" and {len(others) - _NAMED} more" if len(others) > _NAMED else ""
    raise RenderError(
        f"{named}{more}: not written by the tracker (or changed since), where the report "
        f"writes its own: move them away (the report never replaces a file it did not "
        f"write); {out} was left as it was"
    )


def _is_ours(out: Path, relative: str, hashes: set[str]) -> bool:
    """Whether ``out / relative`` is a regular file, reached through real folders inside
    ``out``, whose bytes are those of one of ``hashes``."""
    if not hashes or not plain_relative(relative):
        return False
    path = PurePosixPath(relative)
    for folder in list(reversed(path.parents))[1:]:
        mode = lstat_mode(out / folder)
        if mode is None or not stat.S_ISDIR(mode):
            return False
    target = out / relative
    mode = lstat_mode(target)
    if mode is None or not stat.S_ISREG(mode):
        return False
    try:
        return regular_file_sha256(target) in hashes
    except OSError:
        return False


def _make_folders(out: Path, parts: Iterable[str]) -> None:
    """Create the folders ``parts`` below ``out`` (anything else there was refused before)."""
    folder = out
    for part in parts:
        folder = folder / part
        mode = lstat_mode(folder)
        if mode is not None and stat.S_ISDIR(mode):
            continue
        folder.mkdir()


def plain_relative(relative: str) -> bool:
    """Whether ``relative`` is a plain relative POSIX path (no ``..``, ``.``, ``\\``, ``//``)."""
    if not relative or "\\" in relative or "\0" in relative:
        return False
    path = PurePosixPath(relative)
    return (
        not path.is_absolute()
        and str(path) == relative
        and all(part not in ("", ".", "..") for part in path.parts)
    )


def remove_listed(out: Path, relative: str, hashes: set[str]) -> int:
    """Remove ``out / relative`` when it is still the file the tracker wrote there (see
    :func:`_is_ours`); return 1 when removed, else 0."""
    if not _is_ours(out, relative, hashes):
        return 0
    target = out / relative
    if not target.resolve().is_relative_to(out.resolve()):
        return 0
    target.unlink()
    return 1


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (POSIX; elsewhere every leftover counts as dead)."""
    if os.name != "posix" or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _leftovers(out: Path) -> Iterator[Path]:
    prefix = _stage_prefix(out)
    with os.scandir(out.parent) as entries:
        for entry in entries:
            if entry.name.startswith(prefix) and entry.is_dir(follow_symlinks=False):
                yield Path(entry.path)


def _leftover_pid(folder: Path) -> int | None:
    """The process id in the marker of a render's temporary folder; ``None`` unless the
    marker is a regular file naming this very folder (device and inode)."""
    text = _regular_text(folder / STAGE_MARKER)
    try:
        found = os.lstat(folder)
    except OSError:
        return None
    fields = [] if text is None else text.split()
    if len(fields) != 3 or not all(field.isdigit() for field in fields):
        return None
    pid, device, inode = (int(field) for field in fields)
    return pid if (device, inode) == (found.st_dev, found.st_ino) else None


def remove_leftovers(out: Path) -> int:
    """Remove the temporary folders of killed renders into ``out``; return how many."""
    removed = 0
    for folder in _leftovers(out):
        pid = _leftover_pid(folder)
        if pid is None:
            continue  # not a render's (a marker made up or copied): never removed
        if pid != os.getpid() and _alive(pid):
            continue  # another render into the same folder is running
        shutil.rmtree(folder, ignore_errors=True)
        removed += 1
    return removed


CHART_JS = "plotly-basic.min.js"
"""The chart bundle, vendored in ``templates/static/`` by ``scripts/vendor_plotly.py``."""
CHART_JS_VERSION = "4.1.1"
"""The version of ``plotly.js-basic-dist-min`` vendored (the npm package)."""
CHART_JS_SHA256 = "99784e3abfb07b142a15e521a439e6d9addceadb3f79553fd24c72774f0649ba"
"""The sha256 of :data:`CHART_JS` (checked by ``tests/report/test_chart_bundle.py``)."""
_PIECES_PER_WRITE = 4096


NAV: tuple[tuple[str, str], ...] = (
    ("Overview", "index.html"),
    ("Benchmarks", "index.html#benchmarks"),
    ("Systems", "index.html#systems"),
    ("Comparisons", "index.html#comparisons"),
    ("Findings", "findings.html"),
    ("Scaling", "scaling.html"),
    ("Serving", "serving.html"),
    ("Platforms", "index.html#platforms"),
    ("Training", "training.html"),
)
"""The navigation of every page, (text, path from the site root); a site leaves out the
kinds of data it does not have (:func:`tracker.report.site.site_nav`)."""


def build_environment(nav: Sequence[tuple[str, str]] = NAV) -> Environment:
    """The Jinja environment for the report templates, with the report filters and the
    navigation ``nav`` (text, path from the site root) of every page.

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
    environment.globals["nav"] = tuple(nav)
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
