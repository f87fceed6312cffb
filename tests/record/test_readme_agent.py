"""The README's "Your own agent" example is a real run: its commands, run again, print what it shows.

Only what differs between two real runs is set aside: the scripted model's port and explain's seconds per
re-run. The trace is written to a temporary folder (and named as in the README in what is compared).
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from model_script import API_KEYS, ScriptedServer, _Again, script

ROOT = Path(__file__).resolve().parents[2]
SECTION = (ROOT / "README.md").read_text().split("## Your own agent", 1)[-1].split("\n## ", 1)[0]
BLOCK = re.search(r"```\n(\$ python tests/record/model_script\.py .*?)```", SECTION, re.S)


def _steps(block: str) -> list[tuple[str, str]]:
    """The ``$ tracetui …`` commands of the example and the output shown under each."""
    steps, current = [], None
    for line in block.splitlines():
        if line.startswith("$ "):
            current = [line[2:], []]
            steps.append(current)
        elif current is not None:
            current[1].append(line)
    return [(cmd, "\n".join(out).strip()) for cmd, out in steps if cmd.startswith("tracetui ")]


def _same(text: str) -> str:
    text = re.sub(r"http://127\.0\.0\.1:\d+", "http://127.0.0.1:PORT", text)
    return re.sub(r"\d+\.\d\d s each", "N s each", text).strip()


def test_the_readme_shows_a_recorded_agent_replayed_and_explained():
    assert BLOCK, "README has no 'Your own agent' example block"
    verbs = [shlex.split(cmd)[1] for cmd, _ in _steps(BLOCK.group(1))]
    assert verbs == ["record", "replay", "explain"]


def test_each_command_of_the_example_prints_what_the_readme_shows(tmp_path):
    first = BLOCK.group(1).splitlines()[0][2:].split(" &")[0]
    provider, scenario = shlex.split(first)[2:4]
    bindir = os.path.dirname(sys.executable)  # `python` and `tracetui` are this environment's
    env = {**{k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}, **API_KEYS,
           "PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "OPENAI_API_KEY": "sk-test-readme"}
    trace = tmp_path / "agent.jsonl"
    with ScriptedServer([]) as model:
        model.replies = _Again(lambda: script(provider, scenario))
        for command, shown in _steps(BLOCK.group(1)):
            argv = [str(trace) if a == "agent.jsonl" else a for a in shlex.split(command)]
            argv = [model.url if a.startswith("http://127.0.0.1:") else a for a in argv]
            done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
            # as a terminal shows them: record's agent writes to the terminal, then record says its verdict;
            # replay sends the agent's output to standard error, before its comparison
            printed = {"record": done.stdout + done.stderr, "replay": done.stderr + done.stdout}.get(argv[1], done.stdout)
            printed = printed.replace(str(trace), "agent.jsonl")
            assert _same(printed) == _same(shown), command
