"""The ``tracetui`` click group: what every subcommand shares at its start and its end (signals, Ctrl-C)."""
from __future__ import annotations

import importlib
import signal
import sys
from typing import Any

import click

from tracetui import __version__


def exit_on_signals() -> None:
    """SIGTERM and SIGHUP end tracetui as an error does: ``finally`` blocks run (a named temporary
    file is removed, see tracetui.trace.writer). The explorer closes itself instead (ui.app)."""
    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    for name in ("SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            try:
                signal.signal(number, stop)
            except ValueError:  # not the main thread (embedded): leave signals alone
                return


#: each subcommand's module, imported when that command is asked for: ``check`` does not pay for importing the
#: built-in loop, the explorer's helpers or the MCP server (about a third of the start-up it shares with them)
COMMAND_MODULES = {"check": "check", "diff": "diff", "explain": "explain", "export": "export", "generate": "generate",
                   "mcp": "mcp", "open": "open", "record": "record", "replay": "replay", "run": "run",
                   "samples": "generate", "scenarios": "generate", "schema": "generate", "share": "share"}


def load_all_commands() -> None:
    """Import every subcommand's module (each registers its commands on :data:`main`); a command line
    imports only the one it runs."""
    for module in sorted(set(COMMAND_MODULES.values())):
        importlib.import_module(f"tracetui.cli.{module}")


class _Commands(click.Group):
    """Subcommands registered as their modules are imported, each module only when it is needed
    (:data:`COMMAND_MODULES`). Ctrl-C ends any command with status 130, as a shell reports a program
    stopped by it (click's own handling says "Aborted!" and exits 1, which a script cannot tell from a
    failed check)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMAND_MODULES))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        module = COMMAND_MODULES.get(name)
        if module is not None and name not in self.commands:
            importlib.import_module(f"tracetui.cli.{module}")  # (its decorators register it on this group)
        return super().get_command(ctx, name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        name = args[0] if args else None
        if isinstance(name, str) and name not in COMMAND_MODULES and name not in self.commands:
            load_all_commands()  # a mistyped command: every one is suggested
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            child = sys.modules.get("tracetui.record.child")
            if child is not None:  # a re-run of your agent still going (explain's second one): stopped too
                child.stop_live_agents()
            click.echo("interrupted", err=True)
            sys.exit(130)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tracetui")
def main() -> None:
    """Find where an LLM tool-calling loop went wrong.

    \b
    tracetui generate --all -o runs.jsonl     write traces of the built-in scenarios
    tracetui check runs.jsonl                  verdict per run, headless
    tracetui open runs.jsonl                   explore them (no file: a built-in demo)
    """
    exit_on_signals()

