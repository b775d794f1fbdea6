"""Every command in the README's ```sh blocks runs (or, for network ones, is checked).

The blocks are run in order, in one temporary folder holding copies of
``ingest/`` and ``docs/`` (so ``jobs/demo.toml`` finds ``demo/data`` there),
with ``TRACKER_*`` variables cleared and the README's ``export``s applied. Each
``tracker`` command runs in this process through the command group behind the
console script (``tracker.cli:cli``), with one exception: the first line that shows an
exit code (``|| echo "exit $?"``) runs as written, in bash, with the real
``tracker`` console script of this interpreter on ``PATH``, and must print the
exit code its comment promises. A command must exit 0 unless the README writes
``|| true`` or ``|| echo`` (a gate's non-zero exit is the point there; a crash
still fails). Commands marked ``(network)`` are checked with their subcommand's
``--help``; ``make`` targets must exist in the Makefile; ``. .venv/bin/activate``
is the set-up step that running in this interpreter stands in for.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import Result

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


def _shell_words(command: str) -> list[str]:
    """Words, with the shell's operators (``||``, ``>``, ``;``...) as words of their own."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def _is_operator(word: str) -> bool:
    return bool(word) and all(char in "();<>|&" for char in word)


def _failed(line: str) -> str:
    return f"FAILED: {line}"


def _run_in_bash(line: str, cwd: Path, env: dict[str, str | None]) -> str:
    """``line`` as written, in bash, with this interpreter's ``tracker`` console script."""
    scripts = Path(sys.executable).parent
    assert (scripts / "tracker").is_file(), f"no tracker console script in {scripts}"
    outer = {key: value for key, value in os.environ.items() if not key.startswith("TRACKER_")}
    done = subprocess.run(
        ["bash", "-c", f"set -u -o pipefail\n{line}"],
        cwd=cwd,
        env={
            **outer,
            **{key: value for key, value in env.items() if value is not None},
            "PATH": f"{scripts}{os.pathsep}{os.environ['PATH']}",
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{_failed(line)}\n{done.stdout}{done.stderr[-4000:]}"
    return done.stdout


def test_the_readme_shows_commands_for_each_job() -> None:
    commands = " ".join(readme_commands())
    for expected in ("make demo", "make test", "tracker gate", "tracker report", "tracker pull"):
        assert expected in commands


def test_every_readme_command_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_tracker: Callable[..., Result]
) -> None:
    makefile = (REPO / "Makefile").read_text("utf-8")
    shutil.copytree(REPO / "jobs", tmp_path / "jobs")
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    monkeypatch.chdir(tmp_path)
    env: dict[str, str | None] = {key: None for key in os.environ if key.startswith("TRACKER_")}
    env["TRACKER_CACHE_DIR"] = str(tmp_path / "cache")
    in_bash = 0
    for line in readme_commands():
        command = _without_comment(line)
        words = _shell_words(command)
        if words[0] == "make":
            assert re.search(rf"^{words[1]}:", makefile, re.MULTILINE), f"no make target: {line}"
            continue
        if words[:2] == [".", ".venv/bin/activate"]:
            continue
        if words[0] == "export":
            key, _, value = words[1].partition("=")
            env[key] = value
            continue
        assert words[0] == "tracker", f"not a tracker command: {line}"
        if "(network)" in line:
            done = run_tracker([words[1], "--help"], env=env)
            assert done.exit_code == 0, f"{_failed(line)}\n{done.output[-4000:]}"
            continue
        if "|| echo" in command and not in_bash:
            promised = re.search(r"#\s*(exit \d+)", line)
            assert promised, f"say which exit code the README expects: {line}"
            assert _run_in_bash(command, tmp_path, env).splitlines()[-1] == promised[1]
            in_bash += 1
            continue
        # the shell this runner understands: CMD, CMD > FILE, CMD || <anything>
        words, may_fail = (words[: words.index("||")], True) if "||" in words else (words, False)
        words, out = (words[:-2], words[-1]) if words[-2:-1] == [">"] else (words, None)
        unsupported = [w for w in words if _is_operator(w) or "$" in w or "`" in w]
        assert not unsupported, f"teach this test the shell of: {line}"
        done = run_tracker(words[1:], env=env)
        if not may_fail:
            assert done.exit_code == 0, f"{_failed(line)}\n{done.output[-4000:]}"
        if out is not None:
            (tmp_path / out).write_text(done.stdout, "utf-8")
    assert in_bash == 1, "no README line shows an exit code (|| echo) to run in bash"
    assert (tmp_path / "demo" / "site" / "index.html").exists()
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "results.json").stat().st_size > 0


def test_the_github_actions_workflow_is_valid_and_ingests_gates_and_uploads() -> None:
    doc = yaml.safe_load(WORKFLOW.read_text("utf-8"))
    steps = doc["jobs"]["gate"]["steps"]
    runs = " ".join(str(step.get("run", "")) for step in steps)
    uses = [str(step.get("uses", "")) for step in steps]
    assert "tracker ingest" in runs and "tracker gate" in runs and "tracker report" in runs
    assert "--format markdown" in runs
    assert any(u.startswith("actions/upload-artifact") for u in uses)
    assert (doc.get("on") or doc.get(True))["workflow_dispatch"]
