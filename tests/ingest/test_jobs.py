"""Ingest jobs: parsing TOML job files and resolving their source locations."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from tracker.errors import ConfigError
from tracker.ingest.jobs import Job, parse_job
from tracker.ingest.run import read_job

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_JOB = REPO_ROOT / "jobs" / "demo.toml"

MINIMAL_SOURCE = '[[source]]\nlocation = "runs/a"\nsoftware_version = "1.0"\n'


def parse(text: str, path: str = "jobs/nightly.toml") -> Job:
    return parse_job(text.encode("utf-8"), path=path)


def write_job(directory: Path, text: str, name: str = "nightly.toml") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_demo_job_parses() -> None:
    job = parse_job(DEMO_JOB.read_bytes(), path=str(DEMO_JOB))
    assert job.name == "demo"
    assert job.is_example is True
    assert job.root == "../demo/data"
    assert len(job.sources) == 9 + 6 + 2  # LoadGen runs, AIPerf sweeps, MLPerf rounds
    assert {spec.kind for spec in job.sources} == {"loadgen", "aiperf", "mlperf-inference"}
    versions = {spec.labels.software_version for spec in job.sources}
    assert versions == {"1.0.0", "1.1.0", "1.2.0", "v5.1", "v6.0"}
    assert all(spec.labels.is_example is True for spec in job.sources)
    for spec in job.sources:
        if spec.kind == "mlperf-inference":
            continue
        assert spec.labels.software == "example-serving-stack"
        assert "(example data)" in (spec.labels.system or "")
        assert spec.labels.accelerators == (8 if spec.kind == "loadgen" else 4)
        assert isinstance(spec.labels.release_date, date)
        assert spec.labels.benchmark in {"resnet50", "llama2-70b-99", "example-llm-70b"}
        assert f"{spec.labels.software_version}/" in spec.location


def test_source_keys_win_over_defaults() -> None:
    job = parse(
        '[defaults]\nsystem = "node-a"\nbenchmark = "resnet50"\n'
        '[[source]]\nlocation = "a"\nsoftware_version = "1.0"\n'
        '[[source]]\nlocation = "b"\nsoftware_version = "1.1"\nsystem = "node-b"\n'
    )
    assert [s.labels.system for s in job.sources] == ["node-a", "node-b"]
    assert [s.labels.benchmark for s in job.sources] == ["resnet50", "resnet50"]


def test_job_without_header_gets_defaults() -> None:
    job = parse(MINIMAL_SOURCE, path="jobs/nightly.toml")
    assert job.name == "jobs/nightly.toml"
    assert job.description == ""
    assert job.is_example is False
    assert job.root is None
    (spec,) = job.sources
    assert spec.kind == "auto"
    assert spec.labels.release_date is None
    assert spec.labels.is_example is False


@pytest.mark.parametrize(
    ("text", "key", "where"),
    [
        ('[job]\nnmae = "x"\n' + MINIMAL_SOURCE, "nmae", "[job]"),
        ('[defaults]\nsytem = "x"\n' + MINIMAL_SOURCE, "sytem", "[defaults]"),
        (MINIMAL_SOURCE + 'benchmrak = "resnet50"\n', "benchmrak", "source 1"),
        (MINIMAL_SOURCE + MINIMAL_SOURCE + "locaton = 'b'\n", "locaton", "source 2"),
        ("[sources]\nx = 1\n" + MINIMAL_SOURCE, "sources", "the top level"),
        ('[defaults]\nlocation = "x"\n' + MINIMAL_SOURCE, "location", "[defaults]"),
    ],
)
def test_unknown_key_names_the_file_the_entry_and_the_key(text: str, key: str, where: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse(text, path="jobs/typo.toml")
    message = str(raised.value)
    assert message.startswith("jobs/typo.toml: ")
    assert repr(key) in message
    assert where in message


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ('[[source]]\nlocation = "a"\nsoftware_version = 2.0\n', "2.0"),
        ('[[source]]\nlocation = "a"\nsoftware_version = 2\n', "2"),
        ('[defaults]\nsoftware_version = 1.5\n[[source]]\nlocation = "a"\n', "1.5"),
    ],
)
def test_numeric_software_version_is_refused_with_a_hint_to_quote_it(
    text: str, written: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        parse(text, path="jobs/numeric.toml")
    message = str(raised.value)
    assert message.startswith("jobs/numeric.toml: source 1")
    assert "must be a string" in message
    assert f'software_version = "{written}"' in message


@pytest.mark.parametrize(
    "text",
    [
        '[job]\nname = "empty"\n',
        "",
        "source = []\n",
        '[defaults]\nsystem = "node-a"\n',
    ],
)
def test_job_without_sources_is_refused(text: str) -> None:
    with pytest.raises(ConfigError, match=r"^jobs/empty\.toml: no \[\[source\]\] entries"):
        parse(text, path="jobs/empty.toml")


@pytest.mark.parametrize(
    "data",
    [
        b'[[source]\nlocation = "a"\n',
        b'[job]\nname = "a"\nname = "b"\n',
        b"location = \n",
        b'[job]\nname = "caf\xe9"\n',
    ],
    ids=["unclosed-table", "duplicate-key", "missing-value", "not-utf8"],
)
def test_invalid_toml_is_refused_with_the_path(data: bytes) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_job(data, path="jobs/broken.toml")
    assert str(raised.value).startswith("jobs/broken.toml: not a valid TOML ingest job")


def test_source_without_location_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"^jobs/a\.toml: source 1 has no 'location'"):
        parse('[[source]]\nsoftware_version = "1.0"\n', path="jobs/a.toml")


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ('accelerators = "8"', "accelerators"),
        ("accelerators = true", "accelerators"),
        ('release_date = "2026-10-01"', "release_date"),
        ("system = 3", "system"),
        ("release_date = 2026-10-01T12:00:00", "release_date"),
        ("release_date = 12:00:00", "release_date"),
    ],
)
def test_mistyped_label_is_refused(line: str, key: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse(MINIMAL_SOURCE + line + "\n", path="jobs/a.toml")
    assert str(raised.value).startswith(f"jobs/a.toml: source 1: {key!r} must be a ")


def test_example_flag_must_be_a_boolean() -> None:
    with pytest.raises(ConfigError, match=r"\[job\]: 'example' must be a bool"):
        parse('[job]\nexample = "yes"\n' + MINIMAL_SOURCE)


def test_read_job_resolves_locations_against_the_job_root(tmp_path: Path) -> None:
    path = write_job(tmp_path / "jobs", '[job]\nroot = "../runs"\n' + MINIMAL_SOURCE)
    job, specs = read_job(path)
    assert job.root == "../runs"
    (spec,) = specs
    assert Path(spec.location).resolve() == (tmp_path / "runs" / "runs" / "a").resolve()
    assert spec.labels.software_version == "1.0"


def test_read_job_resolves_locations_against_the_job_folder_without_a_root(
    tmp_path: Path,
) -> None:
    path = write_job(tmp_path / "jobs", MINIMAL_SOURCE)
    _, (spec,) = read_job(path)
    assert Path(spec.location).resolve() == (tmp_path / "jobs" / "runs" / "a").resolve()


def test_read_job_prefers_an_explicit_root_over_the_job_root(tmp_path: Path) -> None:
    path = write_job(tmp_path / "jobs", '[job]\nroot = "../runs"\n' + MINIMAL_SOURCE)
    elsewhere = tmp_path / "elsewhere"
    _, (spec,) = read_job(path, root=elsewhere)
    assert Path(spec.location) == elsewhere / "runs" / "a"


def test_read_job_keeps_absolute_locations(tmp_path: Path) -> None:
    absolute = tmp_path / "absolute" / "run"
    path = write_job(tmp_path / "jobs", f'[[source]]\nlocation = "{absolute.as_posix()}"\n')
    _, (spec,) = read_job(path, root=tmp_path / "ignored")
    assert Path(spec.location) == absolute


def test_read_job_of_the_shipped_demo_points_at_the_demo_data() -> None:
    job, specs = read_job(DEMO_JOB)
    assert len(specs) == len(job.sources) == 17
    data = (REPO_ROOT / "demo" / "data").resolve()
    for spec, source in zip(specs, job.sources, strict=True):
        assert Path(spec.location).resolve() == data / source.location
        assert spec.labels == source.labels
        assert spec.kind == source.kind


def test_read_job_of_a_missing_file_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError, match="cannot read the ingest job") as raised:
        read_job(missing)
    assert str(raised.value).startswith(f"{missing}: ")


def test_read_job_reports_errors_with_the_job_path(tmp_path: Path) -> None:
    path = write_job(tmp_path, "[[source]\n")
    with pytest.raises(ConfigError) as raised:
        read_job(path)
    assert str(raised.value).startswith(f"{path}: not a valid TOML ingest job")
