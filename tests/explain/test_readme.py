"""The README's explain examples are real output: running the commands it shows prints exactly that."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracetui.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = re.findall(r"```\n\$ (tracetui (?:explain|check) [^\n]*)\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def test_the_readme_shows_explain_and_check_explain():
    assert [shlex.split(c)[1] for c, _ in EXAMPLES] == ["explain", "check"]


@pytest.mark.parametrize("command,shown", EXAMPLES)
def test_each_readme_example_is_what_the_command_prints(command, shown, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = CliRunner().invoke(main, shlex.split(command)[1:])
    printed = out.stdout if hasattr(out, "stdout") else out.output
    assert printed.strip() == shown.strip()
