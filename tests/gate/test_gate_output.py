"""Output that fits (issue 16, item 3): 100 columns or ``COLUMNS``, a verdict and a check
column, absolute report links with ``--report-url``."""

from __future__ import annotations

from tests.gate.test_gate import Gate, gate, regressed  # noqa: F401  (fixtures)


def test_text_fits_100_columns_or_columns_without_a_terminal(regressed: str, gate: Gate) -> None:  # noqa: F811
    for env, width in (
        ({"COLUMNS": None}, 100),
        ({"COLUMNS": "80"}, 80),
        ({"COLUMNS": "160"}, 160),
    ):
        done = gate(regressed, "--candidate", "2.0.13", env=env)
        assert done.exit_code == 1
        lines = done.stdout.splitlines()
        assert max(len(line) for line in lines) <= width, env
        assert "…" not in done.stdout  # wrapped, never cut
    header = gate(regressed, "--candidate", "2.0.13", env={"COLUMNS": None}).stdout.splitlines()[1]
    assert header.split() == ["verdict", "check", "change", "issue"]
    row = gate(regressed, "--candidate", "2.0.13", env={"COLUMNS": None}).stdout.splitlines()[3]
    assert row.split()[:4] == ["failing", "measured,", "-8.0%", "(worse)"]


def test_report_url_makes_the_links_absolute(regressed: str, gate: Gate) -> None:  # noqa: F811
    url = "https://ci.example/run/42/site/"
    md = gate(regressed, "--candidate", "2.0.13", "--format", "markdown", "--report-url", url)
    assert md.exit_code == 1
    assert "](https://ci.example/run/42/site/compare/stack-2-0-12-2-0-13-" in md.stdout
    bad = gate(regressed, "--candidate", "2.0.13", "--report-url", "site")
    assert bad.exit_code == 2
    assert bad.stderr.startswith("Error: --report-url 'site' is not a URL")
