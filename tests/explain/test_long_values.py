"""A fix with a huge value: explain prints a short command that reads the value from a file, and it works.

The run is the sample refusal re-run with a 5,000-character tool description: the fix that
supplies the next exchange carries the tools, so its value is over 6,000 characters. The
commands run in a child process whose temporary folder is this test's own, and the printed
command is run as pasted, through a POSIX shell.
"""
from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracetui.cli import main
from tracetui.explain.candidate import Edit
from tracetui.explain.command import LONG_VALUE, set_text
from tracetui.trace.reader import read_trace

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_traces" / "scenarios.jsonl"
DESCRIPTION = "Read the status of an order. " + "x" * 5000
BIN = str(Path(sys.executable).parent)  # where the tracetui command of this environment is


@pytest.fixture
def long_run(tmp_path) -> Path:
    out = tmp_path / "long.jsonl"
    made = CliRunner().invoke(main, ["replay", str(SAMPLE), "--run", "refusal", "--set",
                                     f"/inputs/tools/0/description={DESCRIPTION}", "-o", str(out)])
    assert out.exists(), made.output
    return out


def _env(tmp_path: Path) -> dict[str, str]:
    temp = tmp_path / "temp"
    temp.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(temp), "PATH": BIN + os.pathsep + os.environ.get("PATH", ""),
            "TRACETUI_WORKER": "off"}


def _explain(trace: Path, tmp_path: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-m", "tracetui", "explain", trace.name, "--run", "refusal"],
                          cwd=trace.parent, env=_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.skipif(shutil.which("tracetui", path=BIN) is None or os.name != "posix",
                    reason="runs the printed command as pasted into a POSIX shell")
def test_the_command_for_a_huge_value_is_short_reads_a_file_and_works(long_run, tmp_path):
    lines = _explain(long_run, tmp_path)
    commands = [line.strip() for line in lines if line.strip().startswith("tracetui replay ")]
    assert commands and max(len(line) for line in lines) < 400, max(len(line) for line in lines)
    folder = tmp_path / "temp" / f"tracetui-{os.getuid()}"
    reading = [c for c in commands if f"=@{folder}/" in c]
    assert reading, commands
    assert any(f"explain wrote in {folder}/" in line for line in lines)  # the output says where the values are
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    written = sorted(folder.iterdir())
    assert written and all(len(p.read_text()) > LONG_VALUE for p in written)
    for command in reading:
        pasted = subprocess.run(["sh", "-c", command], cwd=long_run.parent, env=_env(tmp_path),
                                capture_output=True, text=True, timeout=120)
        assert pasted.returncode == 0, pasted.stderr
        assert "after   ✓ refusal  answer_ready" in pasted.stdout
    assert _explain(long_run, tmp_path) == lines and sorted(folder.iterdir()) == written  # named by content


def test_a_value_is_read_from_a_file_exactly(tmp_path):
    value = tmp_path / "prompt.txt"
    value.write_text("What is the status of order o-1?\n")
    result = CliRunner().invoke(main, ["replay", str(SAMPLE), "--run", "single", "--json",
                                       "--set", f"/inputs/user_input=@{value}"])
    assert '"value": "What is the status of order o-1?\\n"' in result.stdout, result.output


def test_a_text_that_begins_with_at_is_typed_as_json(tmp_path):
    result = CliRunner().invoke(main, ["replay", str(SAMPLE), "--run", "single", "--json",
                                       "--set", '/inputs/user_input="@support o-1?"'])
    assert '"value": "@support o-1?"' in result.stdout, result.output
    run = read_trace(SAMPLE).runs["single"]
    assert set_text(run, Edit("/inputs/user_input", "@support o-1?")) == '"@support o-1?"'
    assert set_text(run, Edit("/inputs/user_input", "support o-1?")) == "support o-1?"


@pytest.mark.parametrize("make, words", [
    (lambda d: d / "missing.json", "cannot read the value from"),
    (lambda d: (d / "latin1.txt", (d / "latin1.txt").write_bytes(b"caf\xe9"))[0], "is not UTF-8 text (byte 4"),
])
def test_a_value_file_that_cannot_be_read_is_refused_in_words(tmp_path, make, words):
    path = make(tmp_path)
    result = CliRunner().invoke(main, ["replay", str(SAMPLE), "--run", "single",
                                       "--set", f"/inputs/user_input=@{path}"])
    assert result.exit_code == 2 and words in result.stderr and "Traceback" not in result.output


def test_at_alone_names_no_file():
    result = CliRunner().invoke(main, ["replay", str(SAMPLE), "--run", "single", "--set", "/inputs/user_input=@"])
    assert result.exit_code == 2 and "@ must be followed by the file" in result.stderr


def test_a_short_value_stays_in_the_command(tmp_path):
    lines = _explain_sample("truncated", tmp_path)
    commands = [line for line in lines if "tracetui replay " in line]
    assert commands and all("=@" not in c for c in commands)
    assert any("--set /inputs/budgets/max_output_tokens=" in c for c in commands)
    assert not (tmp_path / "temp" / f"tracetui-{os.getuid()}").exists()


def _explain_sample(run: str, tmp_path: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-m", "tracetui", "explain", str(SAMPLE), "--run", run, "--limit", "1"],
                          env=_env(tmp_path), capture_output=True, text=True, timeout=120)
    return done.stdout.splitlines()


def test_the_pasted_command_quotes_the_file_name(tmp_path):
    """A temporary folder with a space still gives a command a shell reads as one argument."""
    spaced = tmp_path / "my temp"
    spaced.mkdir()
    env = {"TMPDIR": str(spaced)}
    code = ("import sys, tempfile; from tracetui.explain.command import replay_command; "
            "from tracetui.explain.candidate import Edit; from tracetui.trace.reader import read_trace; "
            f"run = read_trace({str(SAMPLE)!r}).runs['single']; "
            "print(replay_command('t.jsonl', 'single', run, [Edit('/inputs/user_input', 'y' * 300)]))")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=60)
    words = shlex.split(done.stdout)
    assert words[-2] == "--set" and words[-1].startswith(f"/inputs/user_input=@{spaced}/tracetui-")
    assert Path(words[-1].split("=@", 1)[1]).read_text() == "y" * 300
