"""Labels follow the same rules on every database, and are stored normalised.

Through ``tracker ingest`` (flags and ingest jobs) and ``tracker pull --round``,
on SQLite and PostgreSQL: a label that breaks the rules (empty, a control
character, longer than its column or than its sort key allows) is refused with
``Error: <flag or file and key>: ... (at most N characters, no control
characters)`` and exit 2 before anything is stored; one that follows them is
stored on both backends, without surrounding whitespace.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tracker.cli import cli
from tracker.records.results import LABEL_MAX
from tracker.store.facade import Store
from tracker.versions import SORT_KEY_MAX

RULE = "no control characters)"


def _tracker(database_url: str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--database-url", database_url, *args])


def _ingest(database_url: str, source: Path, *labels: str) -> Result:
    """Ingest one LoadGen run; ``labels`` (flags) are given after the defaults and win."""
    defaults = ["--software-version", "1.0", "--system", "ci-box", "--benchmark", "resnet50"]
    return _tracker(database_url, "ingest", str(source), "--kind", "loadgen", *defaults, *labels)


def _versions(database_url: str) -> dict[str, str]:
    with Store.open(database_url) as store:
        return {v.version: v.sort_key for v in store.list_versions()}


def _stored(database_url: str) -> dict[str, int]:
    with Store.open(database_url) as store:
        return store.count_rows()


@pytest.fixture
def seeded(database_url: str, loadgen_local: Path) -> str:
    """A database holding one run, so that "nothing stored" can be checked after a refusal."""
    done = _ingest(database_url, loadgen_local / "Offline", "--software-version", "1.0")
    assert done.exit_code == 0, done.output
    return database_url


def _refused(database_url: str, done: Result, expected: str, before: dict[str, int]) -> None:
    assert done.exit_code == 2, done.output
    assert f"Error: {expected}" in done.stderr, done.stderr
    assert RULE in done.stderr and "SQL" not in done.output and "Traceback" not in done.output
    assert _stored(database_url) == before


def test_a_nul_byte_in_a_version_is_refused(seeded: str, loadgen_local: Path) -> None:
    before = _stored(seeded)
    done = _ingest(seeded, loadgen_local / "Server", "--software-version", "1.0\x00evil")
    _refused(seeded, done, "--software-version: has a control character (U+0000)", before)
    assert "(at most 150 characters, no control characters)" in done.stderr


def test_a_300_character_version_is_refused(seeded: str, loadgen_local: Path) -> None:
    before = _stored(seeded)
    done = _ingest(seeded, loadgen_local / "Server", "--software-version", "1." * 150)
    _refused(seeded, done, "--software-version: too long: 300 characters", before)


def test_a_10000_character_system_name_is_refused(seeded: str, loadgen_local: Path) -> None:
    before = _stored(seeded)
    done = _ingest(seeded, loadgen_local / "Server", "--system", "n" * 10_000)
    _refused(seeded, done, "--system: too long: 10000 characters", before)
    assert "(at most 300 characters, no control characters)" in done.stderr


def test_a_terminal_escape_in_a_software_name_is_refused(seeded: str, loadgen_local: Path) -> None:
    before = _stored(seeded)
    done = _ingest(seeded, loadgen_local / "Server", "--software", "vllm\x1b[2J")
    _refused(seeded, done, "--software: has a control character (U+001B) at character 5", before)


def test_an_undecodable_byte_in_a_benchmark_is_refused(seeded: str, loadgen_local: Path) -> None:
    # A command-line byte that is not UTF-8 reaches Python as a lone surrogate.
    before = _stored(seeded)
    done = _ingest(seeded, loadgen_local / "Server", "--benchmark", "res\udcffnet")
    _refused(seeded, done, "--benchmark: has a byte that is not UTF-8 (U+DCFF)", before)


def test_an_empty_label_is_refused(seeded: str, loadgen_local: Path) -> None:
    before = _stored(seeded)
    done = _ingest(seeded, loadgen_local / "Server", "--software-version", "   ")
    _refused(seeded, done, "--software-version: empty", before)


def test_a_refused_label_creates_no_database(tmp_path: Path, loadgen_local: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    done = _ingest(url, loadgen_local / "Server", "--system", "a\x00b")
    assert done.exit_code == 2 and "Error: --system:" in done.stderr
    assert not (tmp_path / "new.db").exists()


@pytest.mark.parametrize("length", [79, LABEL_MAX["software_version"]])
def test_a_long_version_that_fits_the_rules_is_stored_with_its_sort_key(
    database_url: str, loadgen_local: Path, length: int
) -> None:
    version = ("1." * length)[: length - 1] + "9"  # the widest key: one-digit numbers
    assert len(version) == length
    done = _ingest(database_url, loadgen_local / "Offline", "--software-version", version)
    assert done.exit_code == 0, done.output
    stored = _versions(database_url)
    assert list(stored) == [version]
    assert len(stored[version]) <= SORT_KEY_MAX


def test_the_longest_labels_of_every_kind_are_stored(
    database_url: str, loadgen_local: Path
) -> None:
    labels = {name: "é" * limit for name, limit in LABEL_MAX.items()}
    flags = [
        part for name, value in labels.items() for part in (f"--{name.replace('_', '-')}", value)
    ]
    done = _ingest(database_url, loadgen_local / "Offline", *flags)
    assert done.exit_code == 0, done.output
    exported = _tracker(database_url, "export", "--format", "json")
    row = json.loads(exported.stdout)[0]
    assert (row["software"], row["software_version"], row["system"], row["benchmark"]) == (
        labels["software"],
        labels["software_version"],
        labels["system"],
        labels["benchmark"],
    )


def test_surrounding_whitespace_is_not_part_of_a_label_and_v_is(
    database_url: str, loadgen_local: Path
) -> None:
    for version, run in (("1.0", "Offline"), (" 1.0 ", "Server"), ("v1.0", "SingleStream")):
        done = _ingest(database_url, loadgen_local / run, "--software-version", version)
        assert done.exit_code == 0, done.output
    stored = _versions(database_url)
    assert sorted(stored) == ["1.0", "v1.0"]  # "1.0 " is "1.0"; "v1.0" is a version of its own
    assert stored["1.0"] != stored["v1.0"] and stored["1.0"] < stored["v1.0"]
    again = _ingest(database_url, loadgen_local / "Server", "--software-version", "1.0")
    assert "unchanged, already stored" in again.stdout  # the same source, the same labels


def _job(directory: Path, loadgen_local: Path, text: str) -> Path:
    path = directory / "job.toml"
    path.write_text(f'[job]\nroot = "{loadgen_local.as_posix()}"\n{text}', encoding="utf-8")
    return path


def test_a_job_with_a_bad_label_is_refused_naming_the_file_the_source_and_the_key(
    seeded: str, loadgen_local: Path, tmp_path: Path
) -> None:
    before = _stored(seeded)
    job = _job(
        tmp_path,
        loadgen_local,
        '[[source]]\nlocation = "Offline"\nkind = "loadgen"\nbenchmark = "resnet50"\n'
        'software_version = "2.0"\n'
        '[[source]]\nlocation = "Server"\nkind = "loadgen"\nbenchmark = "resnet50"\n'
        f'software_version = "{"9" * 151}"\n',
    )
    done = _tracker(seeded, "ingest", str(job))
    _refused(seeded, done, f"{job}: source 2: software_version: too long: 151 characters", before)


def test_a_job_with_a_control_character_in_its_defaults_is_refused(
    seeded: str, loadgen_local: Path, tmp_path: Path
) -> None:
    before = _stored(seeded)
    job = _job(
        tmp_path,
        loadgen_local,
        '[defaults]\nsystem = "node\\u0007a"\n'
        '[[source]]\nlocation = "Offline"\nkind = "loadgen"\nbenchmark = "resnet50"\n'
        'software_version = "2.0"\n',
    )
    done = _tracker(seeded, "ingest", str(job))
    _refused(seeded, done, f"{job}: [defaults]: system: has a control character (U+0007)", before)


def test_a_job_label_is_stored_without_surrounding_whitespace(
    database_url: str, loadgen_local: Path, tmp_path: Path
) -> None:
    job = _job(
        tmp_path,
        loadgen_local,
        '[[source]]\nlocation = "Offline"\nkind = "loadgen"\nbenchmark = "resnet50"\n'
        'software_version = " 2.0\\t"\nsystem = " node-a "\n',
    )
    done = _tracker(database_url, "ingest", str(job))
    assert done.exit_code == 0, done.output
    row = json.loads(_tracker(database_url, "export").stdout)[0]
    assert (row["software_version"], row["system"]) == ("2.0", "node-a")


def test_a_pulled_round_label_follows_the_rules(seeded: str) -> None:
    before = _stored(seeded)
    done = _tracker(seeded, "pull", "mlperf-inference", "--round", "v5.1\x1b]8;;x\x07")
    _refused(seeded, done, "--round: has a control character (U+001B)", before)
