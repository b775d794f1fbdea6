"""Every command in the README's ```sh blocks runs (or, for network ones, is checked).

The blocks are run in order, as one shell script, in a temporary folder holding
copies of ``ingest/`` and ``docs/`` (so ``ingest/demo.toml`` finds ``demo/data``
there), with the tracker of this interpreter on ``PATH``. A command must exit 0
(the README writes ``|| true`` or ``|| echo`` where a gate's non-zero exit is the
point). Commands marked ``(network)`` are checked with their subcommand's
``--help``; ``make`` targets must exist in the Makefile; ``. .venv/bin/activate``
is the set-up step the PATH stands in for.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
WORKFLOW = REPO / "docs" / "github-actions-gate.yml"
_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _logical_lines(block: str) -> list[str]:
    lines: list[str] = []
    pending = ""
    for raw in block.splitlines():
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        lines.append(pending + raw)
        pending = ""
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


def readme_commands() -> list[str]:
    return [
        line
        for block in _BLOCK.findall(README.read_text("utf-8"))
        for line in _logical_lines(block)
    ]


def _without_comment(line: str) -> str:
    return re.split(r"\s+#\s", line, maxsplit=1)[0].strip()


def _shell_line(line: str, makefile: str) -> str:
    command = _without_comment(line)
    words = shlex.split(command)
    if words[0] == "make":
        assert re.search(rf"^{words[1]}:", makefile, re.MULTILINE), f"no make target: {line}"
        return ""
    if words[:2] == [".", ".venv/bin/activate"]:
        return ""
    if "(network)" in line:
        assert words[0] == "tracker", line
        return f"tracker {words[1]} --help > /dev/null"
    return command


def _failed(line: str) -> str:
    return shlex.quote(f"FAILED: {line}")


def test_the_readme_shows_commands_for_each_job() -> None:
    commands = " ".join(readme_commands())
    for expected in ("make demo", "make test", "tracker gate", "tracker report", "tracker pull"):
        assert expected in commands


def test_every_readme_command_runs(tmp_path: Path) -> None:
    makefile = (REPO / "Makefile").read_text("utf-8")
    shutil.copytree(REPO / "ingest", tmp_path / "ingest")
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    script = ["set -u -o pipefail"]
    for line in readme_commands():
        command = _shell_line(line, makefile)
        if command:
            script.append(
                command
                if command.startswith("export ")
                else f"( {command} ) > /dev/null || {{ echo {_failed(line)} >&2; exit 1; }}"
            )
    env = {key: value for key, value in os.environ.items() if not key.startswith("TRACKER_")} | {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    }
    env["TRACKER_CACHE_DIR"] = str(tmp_path / "cache")
    env.pop("GITHUB_STEP_SUMMARY", None)
    done = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "demo" / "site" / "index.html").exists()
    assert (tmp_path / "site" / "index.html").exists()


def test_the_github_actions_workflow_is_valid_and_ingests_gates_and_uploads() -> None:
    doc = yaml.safe_load(WORKFLOW.read_text("utf-8"))
    steps = doc["jobs"]["gate"]["steps"]
    runs = " ".join(str(step.get("run", "")) for step in steps)
    uses = [str(step.get("uses", "")) for step in steps]
    assert "tracker ingest" in runs and "tracker gate" in runs and "tracker report" in runs
    assert "--format markdown" in runs
    assert any(u.startswith("actions/upload-artifact") for u in uses)
    assert (doc.get("on") or doc.get(True))["workflow_dispatch"]
