"""Output that fits (issue 16, item 3): 100 columns or ``COLUMNS``, a verdict and a check
column, absolute report links with ``--report-url``."""

from __future__ import annotations

from tests.gate.test_gate import Gate, gate, regressed  # noqa: F401  (fixtures)


def test_text_is_one_line_per_issue_whatever_the_width(regressed: str, gate: Gate) -> None:  # noqa: F811
    outputs = set()
    for env in ({"COLUMNS": None}, {"COLUMNS": "80"}, {"COLUMNS": "160"}):
        done = gate(regressed, "--candidate", "2.0.13", env=env)
        assert done.exit_code == 1
        assert all(line == line.rstrip() for line in done.stdout.splitlines())
        assert "\x1b[" not in done.stdout  # no colour without a terminal
        outputs.add(done.stdout)
    assert len(outputs) == 1  # never wrapped: one physical line per issue
    row = done.stdout.splitlines()[1]
    assert row.split()[:3] == ["failing", "measured,", "at"]
    assert "-8.0% (worse; CI [" in row


def test_report_url_makes_the_links_absolute(regressed: str, gate: Gate) -> None:  # noqa: F811
    url = "https://ci.example/run/42/site/"
    md = gate(regressed, "--candidate", "2.0.13", "--format", "markdown", "--report-url", url)
    assert md.exit_code == 1
    assert "](https://ci.example/run/42/site/compare/stack-2-0-12-2-0-13-" in md.stdout
    bad = gate(regressed, "--candidate", "2.0.13", "--report-url", "site")
    assert bad.exit_code == 2
    assert bad.stderr.startswith("Error: --report-url 'site' is not a URL")
