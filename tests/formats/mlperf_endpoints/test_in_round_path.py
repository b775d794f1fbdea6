"""``--kind mlperf-endpoints`` on one result folder of a round tree (issue #13 item 1).

The folder is read as ingesting the whole round reads it: round, division,
submitter, system (and its ``systems/*.json``), benchmark and scenario from the
path, the round's table for the cross-check. A standalone Endpoints folder
outside a round is read as before (labels from the command line).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.support.cli_rows import Row, tracker
from tests.support.cli_rows import export as exported

SYSTEM = "VR-NVL72_VR-288GB_aarch64x72_TRT"
VR = f"closed/NVIDIA/results/{SYSTEM}/deepseek-r1"
SCENARIOS = ("Interactive", "Offline", "Server")
WHERE_READ = ("source_kind", "source_location", "artifact_path")
"""What says where a result was read from: the only fields that may differ."""


def without_source(row: Row) -> Row:
    return {key: value for key, value in row.items() if key not in WHERE_READ}


def copy_round(shared_data: Path, tmp_path: Path) -> Path:
    round_dir = tmp_path / "v6.1"
    source = shared_data / "mlperf-inference/v6.1"
    shutil.copytree(source / "closed", round_dir / "closed")
    shutil.copy(source / "summary.json", round_dir / "summary.json")
    return round_dir


def test_a_folder_inside_the_round_gives_the_rows_of_the_whole_round(
    database_url: str, shared_data: Path, tmp_path: Path
) -> None:
    round_dir = shared_data / "mlperf-inference/v6.1"
    whole_db = f"sqlite:///{tmp_path / 'whole.db'}"
    result = tracker(whole_db, tmp_path / "c1", "ingest", str(round_dir))
    assert result.exit_code == 0, result.output
    whole = {r["location"]: r for r in exported(whole_db, tmp_path / "c1")}
    folders = [str(round_dir / VR / scenario) for scenario in SCENARIOS]
    cache = tmp_path / "c2"
    result = tracker(database_url, cache, "ingest", "--kind", "mlperf-endpoints", *folders)
    assert result.exit_code == 0, result.output
    for folder in folders:
        assert f"{folder}: 1 run (mlperf-endpoints), 1 result stored\n" in result.stdout
    assert "no logs here" not in result.stdout
    alone = {r["location"]: r for r in exported(database_url, cache)}
    assert sorted(alone) == sorted(whole) == [f"{VR}/{s}" for s in SCENARIOS]
    for location, row in alone.items():
        assert without_source(row) == without_source(whole[location])
        assert row["source_kind"] == "mlperf-endpoints"
        assert row["artifact_path"] == "performance/result_summary.json"
        same_file = round_dir / whole[location]["artifact_path"]
        assert Path(row["source_location"]) / row["artifact_path"] == same_file
    server = alone[f"{VR}/Server"]
    assert (server["round"], server["division"], server["submitter"]) == (
        "v6.1",
        "closed",
        "NVIDIA",
    )
    assert (server["system"], server["accelerators_total"], server["nodes"]) == (SYSTEM, 72, 18)
    assert (server["benchmark"], server["scenario"]) == ("deepseek-r1", "Server")
    assert round(server["value"]) == 1_175_890  # the official figure, not 981,183
    assert server["extra"]["official_unit"] == "Tokens/s"


def test_the_whole_round_after_its_folder_stores_that_result_once(
    database_url: str, shared_data: Path, tmp_path: Path
) -> None:
    round_dir = shared_data / "mlperf-inference/v6.1"
    cache = tmp_path / "cache"
    folder = str(round_dir / VR / "Offline")  # recognised without --kind
    assert tracker(database_url, cache, "ingest", folder).exit_code == 0
    result = tracker(database_url, cache, "ingest", str(round_dir))
    assert result.exit_code == 0, result.output
    assert "differ" not in result.stdout
    assert sorted(r["location"] for r in exported(database_url, cache)) == [
        f"{VR}/{s}" for s in SCENARIOS
    ]


def test_a_changed_system_description_is_read_again(
    database_url: str, shared_data: Path, tmp_path: Path
) -> None:
    round_dir = copy_round(shared_data, tmp_path)
    cache, folder = tmp_path / "cache", str(round_dir / VR / "Server")
    args = ("ingest", "--kind", "mlperf-endpoints", folder)
    assert tracker(database_url, cache, *args).exit_code == 0
    assert "unchanged, already stored" in tracker(database_url, cache, *args).stdout
    system = round_dir / f"closed/NVIDIA/systems/{SYSTEM}.json"
    system.write_text(system.read_text().replace('"Ubuntu 24.04"', '"Ubuntu 26.04"'))
    again = tracker(database_url, cache, *args)
    assert again.exit_code == 0, again.output
    assert "unchanged" not in again.stdout
    systems = {r["extra"]["operating_system"] for r in exported(database_url, cache)}
    assert systems == {"Ubuntu 24.04"}  # the stored result is kept; the change is its system's


def test_a_result_folder_without_its_system_description_is_refused_as_in_the_round(
    database_url: str, shared_data: Path, tmp_path: Path
) -> None:
    round_dir = copy_round(shared_data, tmp_path)
    (round_dir / f"closed/NVIDIA/systems/{SYSTEM}.json").unlink()
    folder = round_dir / VR / "Interactive"
    result = tracker(
        database_url, tmp_path / "cache", "ingest", "--kind", "mlperf-endpoints", str(folder)
    )
    assert result.exit_code != 0
    assert f"{folder}: no systems/{SYSTEM}.json describes this result's system" in result.output


def test_a_standalone_endpoints_folder_keeps_its_command_line_labels(
    database_url: str, shared_data: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "Server"
    shutil.copytree(shared_data / "mlperf-inference/v6.1" / VR / "Server", folder)
    cache = tmp_path / "cache"
    args = ("ingest", "--kind", "mlperf-endpoints", str(folder))
    refused = tracker(database_url, cache, *args)
    assert refused.exit_code == 2
    assert "do not name a software version; pass --software-version" in refused.output
    labels = ("--software-version", "1.0", "--system", "vr", "--benchmark", "dsr1")
    result = tracker(database_url, cache, *args, *labels)
    assert result.exit_code == 0, result.output
    (row,) = exported(database_url, cache)
    assert (row["software_version"], row["system"], row["benchmark"]) == ("1.0", "vr", "dsr1")
    assert (row["round"], row["submitter"], row["location"]) == (None, None, None)


def test_disagreements_with_the_table_and_within_the_file_are_listed(
    database_url: str, shared_data: Path, tmp_path: Path
) -> None:
    round_dir = copy_round(shared_data, tmp_path)
    table = round_dir / "summary.json"
    rows = json.loads(table.read_text())
    rows["326"]["Result"] = 1_000_000.0  # the Server row
    table.write_text(json.dumps(rows))
    summary = round_dir / VR / "Server/performance/result_summary.json"
    doc = json.loads(summary.read_text())
    doc["tps"] = 1_100_000.0  # not its output tokens over the legacy window (1,175,890)
    summary.write_text(json.dumps(doc))
    server = f"{VR}/Server"
    within = (
        f"  note: result file disagrees with itself: {server}: its 'tps' 1.1e+06 and its totals "
        "over the legacy LoadGen window (1.17589e+06) disagree\n"
    )
    against = (
        f"  note: results table disagrees: {server}: the Endpoints result gives "
        "1.1e+06 tokens/s, the results table 1e+06 Tokens/s\n"
    )
    for i, source in enumerate((round_dir, round_dir / server)):
        args = ("ingest", "--kind", "mlperf-endpoints") if i else ("ingest",)
        result = tracker(database_url, tmp_path / f"cache{i}", *args, str(source))
        assert result.exit_code == 0, result.output
        assert within in result.stdout and against in result.stdout


def test_a_file_that_disagrees_with_itself_is_listed_in_a_round_without_a_table(
    shared_data: Path, tmp_path: Path
) -> None:
    round_dir = copy_round(shared_data, tmp_path)
    (round_dir / "summary.json").unlink()
    summary = round_dir / VR / "Server/performance/result_summary.json"
    doc = json.loads(summary.read_text())
    doc["tps"] = 1_100_000.0
    summary.write_text(json.dumps(doc))
    url = f"sqlite:///{tmp_path / 't.db'}"
    result = tracker(url, tmp_path / "cache", "ingest", str(round_dir))
    assert result.exit_code == 0, result.output
    assert (
        f"  note: result file disagrees with itself: {VR}/Server: its 'tps' 1.1e+06 and its "
        "totals over the legacy LoadGen window (1.17589e+06) disagree\n"
    ) in result.stdout
    assert "results table disagrees" not in result.stdout
