"""``tracker pull mlperf-inference|mlperf-training``: where published rounds live; pulling one.

Each MLPerf Inference round is the GitHub repository
``mlcommons/inference_results_vX.Y``, each Training round
``mlcommons/training_results_vX.Y``; a pull downloads the ``.tar.gz`` archive
of one commit (``--ref``) or of the default branch, through the download cache
(:mod:`tracker.sources.fetch`: a second pull of an unchanged round transfers nothing),
and ingests it as a source of that kind whose location is the archive URL, so
every result can be traced to the commit it came from.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from tracker.errors import ConfigError
from tracker.ingest.run import SourceOutcome, ingest_source
from tracker.readers.base import ProgressCallback
from tracker.readers.mlperf_results import normalize_round
from tracker.records import Labels, SourceSpec
from tracker.sources.remote import GITHUB, resolve_url
from tracker.store.facade import Store

__all__ = ["PULLABLE", "ROUND_REPOSITORIES", "pull_round", "round_repository"]

ROUND_REPOSITORIES = {
    "mlperf-inference": "inference_results",
    "mlperf-training": "training_results",
}
"""Per kind, the name of its rounds' repositories (``mlcommons/<name>_vX.Y``)."""
PULLABLE = tuple(ROUND_REPOSITORIES)
"""What ``tracker pull`` knows how to find."""


def round_repository(
    round_label: str, *, base_url: str = GITHUB, kind: str = "mlperf-inference"
) -> str:
    """The repository of a round: ``v5.1`` → ``<base>/mlcommons/inference_results_v5.1``."""
    label = normalize_round(round_label)
    if not re.fullmatch(r"v\d+\.\d+", label):
        raise ConfigError(f"--round {round_label!r} is not a round; write it as vX.Y, e.g. v5.1")
    if kind not in ROUND_REPOSITORIES:
        raise ConfigError(f"cannot pull {kind!r}; pullable: {', '.join(PULLABLE)}")
    return f"{base_url.rstrip('/')}/mlcommons/{ROUND_REPOSITORIES[kind]}_{label}"


def pull_round(
    store: Store,
    round_label: str,
    *,
    ref: str | None = None,
    base_url: str = GITHUB,
    strict: bool = False,
    cache_dir: Path | None = None,
    progress: ProgressCallback | None = None,
    download_progress: Callable[[int, int | None], None] | None = None,
    kind: str = "mlperf-inference",
    replace_differing: bool = False,
    download_retry: Callable[[str], None] | None = None,
) -> SourceOutcome:
    """Download a round's archive (pinned to ``ref`` when given) and ingest it as ``kind``.

    ``replace_differing``: stored results the round now disagrees with (an upstream
    correction) take its values; see :func:`tracker.ingest.run.ingest_source`.
    """
    url = resolve_url(round_repository(round_label, base_url=base_url, kind=kind), ref)
    spec = SourceSpec(
        location=url,
        kind=kind,
        labels=Labels(software_version=normalize_round(round_label)),
    )
    return ingest_source(
        store,
        spec,
        strict=strict,
        progress=progress,
        cache_dir=cache_dir,
        download_progress=download_progress,
        replace_differing=replace_differing,
        download_retry=download_retry,
    )
