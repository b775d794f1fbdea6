"""Plain records of results: what sources hold, what the store keeps, and what storing did.

Plain records passed between the layers.

Parsers return :class:`ParsedResult`; the ingest layer adds the labels the
files do not carry and hands :class:`ResultRecord` objects to the store; the
store answers queries with :class:`ExportRow` and :class:`SeriesPoint`. No
record holds a database object, so nothing above the store sees the ORM.

What storing a source did: plain records, importable without the database libraries
(the ingest use case names them whether or not it opens the database).
"""

from __future__ import annotations

import hashlib
import json
import math
import unicodedata
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field, replace
from datetime import date
from typing import Any, Final

from tracker.records.keys import SeriesKey

__all__ = [
    "AnalysisSample",
    "ArtifactRecord",
    "Configuration",
    "Correction",
    "ExportRow",
    "ExtraValue",
    "INFERENCE_SOFTWARE",
    "LABEL_MAX",
    "LabelError",
    "Labels",
    "MetricRecord",
    "OUTPUT_TOKENS_PER_S",
    "ParsedResult",
    "ResultRecord",
    "RUN_TIME_TO_TRAIN",
    "SaveOutcome",
    "SeriesPoint",
    "SoftwareRecord",
    "SourceRecord",
    "SourceSpec",
    "SweepSample",
    "SystemFacts",
    "SystemRecord",
    "TIME_TO_TRAIN",
    "TRAINING_SOFTWARE",
    "VersionInfo",
    "checked_label",
    "finite_value",
    "numeric_value",
]


ExtraValue = float | int | str | bool
"""A secondary metric or attribute kept beside a result (JSON scalar)."""


def finite_value(value: float | None) -> float | None:
    """``value`` when it is a finite number; ``None`` for ``None``, infinity and NaN (JSON
    and the report's tables have neither)."""
    return value if value is not None and math.isfinite(value) else None


def numeric_value(value: object) -> float | None:
    """``value`` as a float when it is a number; ``None`` otherwise, a bool included
    (JSON's ``true`` is no count).

    >>> numeric_value(3), numeric_value("3"), numeric_value(True)
    (3.0, None, None)
    """
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class MetricRecord:
    """A metric: its name (unit in the name), unit label and direction."""

    name: str
    unit: str
    higher_is_better: bool


OUTPUT_TOKENS_PER_S = MetricRecord("output_tokens_per_s", "tokens/s", True)
"""A serving run's output token throughput: what sweeps are read and analysed by."""
INFERENCE_SOFTWARE = "mlperf-inference"
"""The software name of every stored MLPerf Inference result (its version is the round)."""
TRAINING_SOFTWARE = "mlperf-training"
"""The software name of every stored MLPerf Training result (its version is the round)."""
TIME_TO_TRAIN = MetricRecord("time_to_train_minutes", "minutes", False)
"""A Training result folder's official score (the olympic mean of its runs, scaled)."""
RUN_TIME_TO_TRAIN = MetricRecord("run_time_to_train_minutes", "minutes", False)
"""One Training run's time to train: the runs behind a score."""


@dataclass(frozen=True, slots=True)
class ParsedResult:
    """One value a parser read from one run, before labels are applied.

    ``artifact_path`` is the file the value came from, relative to the run
    folder the parser was given; ``line`` is 1-based when known. ``benchmark``
    is ``None`` when the file does not name one (LoadGen logs name only the SUT).
    """

    scenario: str
    metric: MetricRecord
    value: float
    is_valid: bool
    artifact_path: str
    line: int | None = None
    benchmark: str | None = None
    workload: str = ""
    concurrency: float | None = None
    extra: Mapping[str, ExtraValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemFacts:
    """What a round's description states of a system (``None``: not stated): the fields a
    :class:`Configuration` and a :class:`SystemRecord` share.

    From an MLPerf system description (``systems/<system>.json``) and the results
    table's row and notes. ``accelerators_total`` is the checker's count (nodes x
    accelerators per node); ``accelerators_stated`` the count the description's
    accelerator text states where it says another (``(x94)`` on 12 x 8 nodes).
    ``power_mode`` is ``MaxQ`` or ``power cap N W`` (``None``: performance, nothing
    said), ``tgp_w`` the TGP the notes state.
    """

    accelerator: str | None = None
    accelerators_total: int | None = None
    nodes: int | None = None
    accelerators_per_node: int | None = None
    accelerators_stated: int | None = None
    host_cpu: str | None = None
    host_cpus_per_node: int | None = None
    host_cores: int | None = None
    """Cores per host CPU (MLPerf's ``host_processor_core_count``)."""
    host_memory: str | None = None
    interconnect: str | None = None
    framework: str | None = None
    software: str | None = None
    """The rest of the software stack (MLPerf's ``other_software_stack``)."""
    driver: str | None = None
    power_mode: str | None = None
    tgp_w: float | None = None
    availability: str | None = None
    division: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Configuration(SystemFacts):
    """What a result ran on, as its round describes it (``None``: not stated). Which part
    of it makes a comparison a software change is :mod:`tracker.analyze.groupings`' rule.
    """

    cpu_only: bool = False
    notes: str | None = None


@dataclass(frozen=True, slots=True)
class SystemRecord(SystemFacts):
    """A system under test, named (``key`` identifies it across sources) and described
    (its :class:`SystemFacts`). ``cpu_only`` is ``True`` or ``None``, never ``False``, so
    a later source that knows fills it in. Only the name may be given by position.
    """

    name: str
    _: KW_ONLY
    submitter: str | None = None
    raw_json: str | None = None
    cpu_only: bool | None = None
    notes: str | None = None

    @property
    def key(self) -> str:
        """Submitter and name (what a result's sample key names)."""
        return f"{self.submitter or ''}/{self.name}"

    @property
    def platform_key(self) -> str:
        """The system's identity in the store: submitter and name, and the division
        unless it is closed (an open system is not the closed one of the same name)."""
        division = (self.division or "").strip()
        if division and division.casefold() != "closed":
            return f"{self.key} [{division}]"
        return self.key


@dataclass(frozen=True, slots=True)
class SoftwareRecord:
    """A software name and one of its version labels."""

    software: str
    version: str
    release_date: date | None = None
    stack: str | None = None


@dataclass(frozen=True, slots=True)
class ArtifactRecord:
    """One file read from a source: its path inside the source and its hash."""

    path: str
    sha256: str
    size_bytes: int


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """What was ingested: kind, location as given, content hash and labels.

    ``identity_sha256`` hashes the content together with the labels, so the same
    bytes ingested twice with the same labels are recognised and skipped.
    """

    kind: str
    location: str
    """The path or URL as given to the ingest."""
    content_sha256: str
    identity_sha256: str
    is_example: bool = False
    artifacts: tuple[ArtifactRecord, ...] = ()


@dataclass(frozen=True, slots=True)
class ResultRecord:
    """One stored value: a sample of one metric of one series at one version."""

    system: SystemRecord
    software: SoftwareRecord
    benchmark: str
    scenario: str
    metric: MetricRecord
    value: float
    """In the metric's unit."""
    is_valid: bool
    artifact_path: str
    """The file the value was read from, inside its source."""
    artifact_sha256: str
    line: int | None = None
    """The line of the file the value stands on (``None``: a whole-file value)."""
    workload: str = ""
    concurrency: float | None = None
    location: str | None = None
    round: str | None = None
    run_label: str = ""
    sweep_key: str | None = None
    software_stack: str | None = None
    extra: Mapping[str, ExtraValue] = field(default_factory=dict)
    sample_id: str | None = None
    """Names the sample where its file should not: a published MLPerf result is
    one sample per round and location, whether read from its logs or its table."""

    @property
    def sample_key(self) -> str:
        """Hash of everything that makes this sample distinct from another.

        The same file (by content) under the same labels gives the same key
        wherever it was found, so the store keeps one row; two repeats of a run
        are different files (or lines of one file, as vLLM's ``--append-result``
        writes them) and are kept as separate samples. ``sample_id``, when set,
        stands in for the file's hash and line.
        """
        payload = json.dumps(
            [
                self.system.key,
                self.software.software,
                self.software.version,
                self.benchmark,
                self.scenario,
                self.workload,
                self.concurrency,
                self.metric.name,
                *((self.sample_id,) if self.sample_id else (self.artifact_sha256, self.line)),
            ],
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class VersionInfo:
    """A software version as the store knows it, with its sort key."""

    software: str
    version: str
    sort_key: str
    release_date: date | None = None


@dataclass(frozen=True, slots=True)
class SeriesPoint:
    """The samples of one series at one version (for reports and analysis)."""

    software: str
    version: str
    system: str
    benchmark: str
    scenario: str
    workload: str
    metric: str
    unit: str
    higher_is_better: bool
    values: tuple[float, ...]
    valid_count: int
    is_example: bool
    system_key: str = ""
    """The system's identity (``submitter/name``); empty: the name alone identifies it."""

    @property
    def series_key(self) -> SeriesKey:
        system = self.system_key or self.system
        return SeriesKey(
            self.software, system, self.benchmark, self.scenario, self.workload, self.metric
        )


@dataclass(frozen=True, slots=True)
class ExportRow:
    """One stored result with its keys and labels (``None`` where not applicable)."""

    source_kind: str
    round: str | None
    division: str | None
    submitter: str | None
    system: str
    location: str | None
    benchmark: str
    scenario: str
    metric: str
    value: float
    unit: str
    higher_is_better: bool
    valid: bool
    accelerator: str | None
    nodes: int | None
    accelerators_total: int | None
    software: str
    software_version: str
    concurrency: float | None
    workload: str
    sweep_key: str | None
    software_stack: str | None
    run_label: str
    is_example: bool
    source_location: str
    artifact_path: str
    line: int | None
    extra: Mapping[str, ExtraValue]


LABEL_MAX: Final[Mapping[str, int]] = {
    "software": 200,
    "software_version": 150,  # its sort key (at most 2.5 times as long + 7) fits 400
    "system": 300,
    "benchmark": 200,
}
"""The most characters of each text label of :class:`Labels`: what its column holds."""
_LIMITS = {**LABEL_MAX, "submitter": 200, "scenario": 60, "workload": 200}
"""With the labels results carry from their files."""

_NOT_TEXT = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode categories refused in labels: control and format characters (NUL, terminal
escapes, bidirectional overrides), undecodable bytes, line and paragraph separators."""


class LabelError(ValueError):
    """A label that breaks the rules; ``field`` is its :class:`Labels` field."""

    def __init__(self, field_name: str, problem: str) -> None:
        self.field = field_name
        rule = f"at most {_LIMITS[field_name]} characters, no control characters"
        super().__init__(f"{problem} ({rule})")


def checked_label(field_name: str, value: str) -> str:
    """``value`` without surrounding whitespace, if a valid ``field_name`` label (the
    same rules on every database: see :class:`LabelError`), else a :class:`LabelError`."""
    label = value.strip()
    if not label:
        raise LabelError(field_name, "empty")
    for index, character in enumerate(label, start=1):
        category = unicodedata.category(character)
        if category in _NOT_TEXT:
            what = "a byte that is not UTF-8" if category == "Cs" else "a control character"
            where = f"(U+{ord(character):04X}) at character {index}"
            raise LabelError(field_name, f"has {what} {where}")
    if len(label) > _LIMITS[field_name]:
        raise LabelError(field_name, f"too long: {len(label)} characters")
    return label


@dataclass(frozen=True, slots=True)
class Labels:
    """What the command line or the ingest job says about a source."""

    software: str | None = None
    software_version: str | None = None
    system: str | None = None
    accelerators: int | None = None
    benchmark: str | None = None
    release_date: date | None = None
    is_example: bool = False

    def checked(self) -> Labels:
        """These labels without surrounding whitespace (:func:`checked_label`); the
        first text label that breaks the rules raises a :class:`LabelError`."""
        given = ((k, getattr(self, k)) for k in LABEL_MAX)
        checked: dict[str, Any] = {k: checked_label(k, v) for k, v in given if v is not None}
        return replace(self, **checked)

    def as_json(self) -> str:
        """A canonical text of the labels, part of a source's identity."""
        fields = {
            "software": self.software,
            "software_version": self.software_version,
            "system": self.system,
            "accelerators": self.accelerators,
            "benchmark": self.benchmark,
            "release_date": self.release_date.isoformat() if self.release_date else None,
            "is_example": self.is_example,
        }
        return json.dumps(fields, sort_keys=True)


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """One source to ingest: where it is, its kind and its labels.

    ``commit`` pins a repository URL, ``sha256`` the hash of a download or archive;
    ``job_labels``: (label, "source" | "defaults") for those an ingest job gave.
    """

    location: str
    kind: str = "auto"
    labels: Labels = field(default_factory=Labels)
    commit: str | None = None
    sha256: str | None = None
    job_labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class AnalysisSample:
    """One stored result as the analysis reads it: labels, value, validity (one per sample)."""

    software: str
    version: str
    system_key: str
    system: str
    submitter: str | None
    division: str | None
    accelerator: str | None
    nodes: int | None
    accelerators_total: int | None
    host_cpu: str | None
    benchmark: str
    scenario: str
    workload: str
    metric: str
    unit: str
    higher_is_better: bool
    value: float
    is_valid: bool
    software_stack: str | None
    sweep_key: str | None
    precision: str | None = None
    """The precision class the round states (MLPerf's ``weight_data_types``), if any."""
    configuration: Configuration | None = None
    """What it ran on, as its round describes the system (one record per system and
    round, shared by its samples); ``None``: not described."""

    @property
    def series_key(self) -> SeriesKey:
        labels = (self.benchmark, self.scenario, self.workload, self.metric)
        return SeriesKey(self.software, self.system_key, *labels)


@dataclass(frozen=True, slots=True)
class SweepSample:
    """One point of a sweep (its ``output_tokens_per_s`` result) with its tokens/s/user."""

    sweep_key: str
    software: str
    version: str
    system_key: str
    benchmark: str
    scenario: str
    curve_workload: str
    accelerator: str | None
    accelerators_total: int | None
    concurrency: float | None
    output_tokens_per_s: float
    tokens_per_s_per_user: float | None
    tokens_per_s_per_user_statistic: str | None
    is_valid: bool
    workload: str = ""
    """The point's workload (``<curve>/c<N>`` or ``/r<rate>``): one point of the sweep."""
    input_tokens_per_s: float | None = None  # the tool's, else output × ISL/OSL; None: unknown


@dataclass(frozen=True, slots=True)
class Correction:
    """A stored result whose value or validity a source disagrees with."""

    location: str
    """The result's location in the source (or its file's path)."""
    stored_value: float
    stored_valid: bool
    value: float
    valid: bool


@dataclass(frozen=True, slots=True)
class SaveOutcome:
    """What one :meth:`Store.save_source` call did."""

    source_was_known: bool
    results_stored: int
    results_already_stored: int
    retries: int = 0
    """Times the transaction was rolled back and run again after a conflict with a
    concurrent writer (a deadlock, a serialization failure, a row another process
    inserted first, a SQLite lock held too long)."""
    differing: tuple[Correction, ...] = ()
    """Stored results whose value or validity this source disagrees with, kept as stored."""
    replaced: tuple[Correction, ...] = ()
    """Stored results that took this source's value (``replace=True``)."""
