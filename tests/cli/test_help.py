"""Every command documents itself with an example."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from tracker.cli import cli


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix]
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found += _commands(command, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


@pytest.mark.parametrize("path", _commands(cli), ids=lambda p: " ".join(p) or "tracker")
def test_every_command_has_help_with_an_example(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example:" in result.output
    example = result.output.split("Example:", 1)[1].split("Options:", 1)[0]
    assert any(line.strip().startswith("tracker ") for line in example.splitlines())


def test_the_contract_commands_exist() -> None:
    paths = {" ".join(p) for p in _commands(cli)}
    expected = {"db upgrade", "db current", "ingest", "pull", "analyze"}
    expected |= {"findings", "report", "export", "demo"}
    assert expected <= paths


def test_unknown_option_is_a_usage_error_with_exit_code_2() -> None:
    result = CliRunner().invoke(cli, ["ingest", "--no-such-option"])
    assert result.exit_code == 2


def test_db_current_reports_an_empty_database(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"
    result = CliRunner().invoke(cli, ["--database-url", url, "db", "current"])
    assert result.exit_code == 2 and "no database at" in result.stderr  # and none created
    assert not (tmp_path / "x.db").exists()
    (tmp_path / "x.db").touch()
    result = CliRunner().invoke(cli, ["--database-url", url, "db", "current"])
    assert result.exit_code == 0
    assert "empty (no schema yet" in result.stdout
    result = CliRunner().invoke(cli, ["--database-url", url, "db", "upgrade"])
    assert result.exit_code == 0 and "(head)" in result.stdout
    result = CliRunner().invoke(cli, ["--database-url", url, "db", "current"])
    assert "(head)" in result.stdout


def test_unreachable_database_is_a_clear_error(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'missing-dir' / 'x.db'}"
    result = CliRunner().invoke(cli, ["--database-url", url, "db", "upgrade"])
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: cannot open the database")
