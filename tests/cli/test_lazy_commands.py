"""Subcommands are imported when they run: every one is still listed and found, and ``check`` does not import the
built-in loop, the explorer or the MCP server (the start-up it would otherwise pay for)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from tracetui.cli import load_all_commands, main
from tracetui.cli.group import COMMAND_MODULES

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"


def test_every_registered_command_is_in_the_lazy_map_and_the_other_way_round():
    load_all_commands()
    assert set(main.commands) == set(COMMAND_MODULES)
    for name, module in COMMAND_MODULES.items():
        assert main.commands[name].callback.__module__ == f"tracetui.cli.{module}"


def test_help_lists_every_command_in_a_fresh_process():
    out = subprocess.run([sys.executable, "-m", "tracetui", "--help"], capture_output=True, text=True, check=True).stdout
    listed = {line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.strip()}
    assert listed == set(COMMAND_MODULES)


def test_a_mistyped_command_is_refused_with_the_commands_it_may_mean():
    for typed, meant in (["chek", "'check'"], ["Check", "'check'"], ["expor", "'export'"], ["mpc", "'mcp'"]):
        result = CliRunner().invoke(main, [typed, "x.jsonl"])
        assert result.exit_code == 2
        assert f"No such command '{typed}'" in result.output and "Did you mean" in result.output, result.output
        assert meant in result.output.split("Did you mean")[1]  # (suggested from every command, imported or not)


def test_check_imports_neither_the_loop_nor_the_explorer_nor_the_mcp_server():
    probe = ("import sys\nfrom tracetui.cli import main\n"
             f"try:\n    main.main(['check', {str(SAMPLES / 'scenarios.jsonl')!r}], standalone_mode=False)\n"
             "except SystemExit:\n    pass\n"
             "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('tracetui.') and m.count('.') >= 1}))\n"
             "print('textual' in sys.modules, 'tracetui.cli.generate' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.splitlines()
    packages = out[-2]
    for heavy in ("loop", "ui", "mcp", "explain", "record", "share", "triage"):
        assert f"'{heavy}'" not in packages, (heavy, packages)
    assert out[-1] == "False False"
    assert "'trace'" in packages  # (the probe did run check)
