"""A printed replay command is safe to paste: trace content never leaves its quotes, and a command that
cannot be printed as it is says why instead.

The commands are run through ``bash -c`` with a stand-in ``tracetui`` first on PATH that records the
arguments it was given: running the line must start that program only, with exactly the arguments the
line spells, and must create nothing else.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from tracetui.cli import main
from tracetui.explain.candidate import Edit
from tracetui.explain.command import printed_command, replay_command, set_text
from tracetui.explain.report import as_text, proof_data
from tracetui.explain.search import explain
from tracetui.replay.value_file import value_text
from tracetui.trace.reader import read_trace
from tracetui.trace.redact import redact_text
from tracetui.trace.safe_text import printable

ROOT = Path(__file__).resolve().parent.parent.parent
SCENARIOS = ROOT / "sample_traces" / "scenarios.jsonl"
#: a model's argument that ends a secret with a quote: redacting the quoted command line ate that quote
EVIL_REASON = "api_key=\"sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD'$(touch pwned)' #"


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def _swap(value, old: str, new: str):
    if isinstance(value, dict):
        return {k: _swap(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_swap(v, old, new) for v in value]
    return value.replace(old, new) if isinstance(value, str) else value


@pytest.fixture(scope="module")
def evil_trace(tmp_path_factory) -> Path:
    """repair_exhausted with the model's ``reason`` argument set to :data:`EVIL_REASON` in every copy."""
    folder = tmp_path_factory.mktemp("evil")
    plain = folder / "plain.jsonl"
    assert invoke("generate", "--scenario", "repair_exhausted", "-o", str(plain)).exit_code == 0
    old, new = '"reason":"damaged"', '"reason":' + json.dumps(EVIL_REASON)
    original = [orjson.loads(line) for line in plain.read_bytes().splitlines()]
    records = [_swap(r, old, new) for r in original]
    assert records != original
    path = folder / "evil.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


@pytest.fixture(scope="module")
def fake_tracetui(tmp_path_factory) -> Path:
    """A folder whose ``tracetui`` writes the arguments it got to ``argv.json`` in the current folder."""
    folder = tmp_path_factory.mktemp("bin")
    program = folder / "tracetui"
    program.write_text(f"#!{sys.executable}\nimport json, sys\n"
                       "open('argv.json', 'w').write(json.dumps(sys.argv[1:]))\n")
    program.chmod(0o755)
    return folder


def _pasted(command: str, fake_tracetui: Path, tmp_path: Path) -> list[str]:
    """Run ``command`` as a pasted line in an empty folder: the arguments tracetui got, and nothing else made."""
    here = tmp_path / "paste"
    here.mkdir(parents=True)
    env = {**os.environ, "PATH": f"{fake_tracetui}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run(["bash", "-c", command], cwd=here, env=env, timeout=60, check=False)
    made = sorted(p.name for p in here.iterdir())
    assert made == ["argv.json"], f"pasting {command!r} made {made}"
    return json.loads((here / "argv.json").read_text())


def _commands(evil_trace: Path) -> dict[str, str]:
    """The command each surface prints for the evil run's fix."""
    out = {}
    text = invoke("explain", str(evil_trace), "--run", "repair_exhausted")
    out["explain"] = next(line.strip() for line in text.output.splitlines() if line.strip().startswith("tracetui replay"))
    data = json.loads(invoke("explain", str(evil_trace), "--run", "repair_exhausted", "--json").output)
    out["explain --json"] = data["fixes"][0]["command"]
    text = invoke("check", str(evil_trace), "--explain")
    out["check --explain"] = next(line.strip() for line in text.output.splitlines()
                                  if line.strip().startswith("tracetui replay"))
    data = json.loads(invoke("check", str(evil_trace), "--explain", "--json").output)
    out["check --explain --json"] = data["runs"][0]["fix"]["command"]
    run = read_trace(evil_trace).runs["repair_exhausted"]
    best = explain(run).best
    out["explorer (y)"] = replay_command(str(evil_trace), "repair_exhausted", run, best.edits)
    return out


def test_every_printed_command_runs_tracetui_replay_only(evil_trace, fake_tracetui, tmp_path):
    for surface, command in _commands(evil_trace).items():
        assert command, surface
        argv = _pasted(command, fake_tracetui, tmp_path / surface.replace(" ", "_"))
        assert argv == shlex.split(command)[1:], surface
        assert argv[:4] == ["replay", str(evil_trace), "--run", "repair_exhausted"], surface
        assert argv[4] == "--set" and argv[5].startswith("/responses/0/body/output/0/arguments="), surface
        assert "sk-abcdefghijklmnopqrstuvwxyz" not in command  # the secret is still never printed


def test_a_command_that_sets_a_redacted_value_says_so(evil_trace):
    lines = invoke("explain", str(evil_trace), "--run", "repair_exhausted").output.splitlines()
    at = next(n for n, line in enumerate(lines) if line.strip().startswith("tracetui replay"))
    assert lines[at + 1].startswith("    (a value held what looks like a secret, shown as <redacted>; the command")


RUN = read_trace(SCENARIOS).runs["cross_tenant"]
PREFIX = ["tracetui", "replay", "f.jsonl", "--run", "cross_tenant", "--set"]


@pytest.fixture(scope="module", autouse=True)
def own_temporary_folder(tmp_path_factory):
    """Value files (long or multi-line values) go to a folder of this module's, not the user's."""
    folder = tmp_path_factory.mktemp("values")  # (pytest's own folder is settled before the swap)
    before = tempfile.tempdir
    tempfile.tempdir = str(folder)
    try:
        yield
    finally:
        tempfile.tempdir = before


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_any_text_value_splits_back_into_exactly_the_argv_meant(value):
    edit = Edit("/inputs/user_input", value)
    command = printed_command("f.jsonl", "cross_tenant", RUN, [edit])
    if command.text is None:
        assert command.why_not
        return
    assert printable(command.text) == command.text  # printing it leaves it as it is
    argv = shlex.split(command.text)
    assert argv[:6] == PREFIX and len(argv) == 7
    path, _, text = argv[6].partition("=")
    assert path == "/inputs/user_input"
    assert value_text(text) == redact_text(set_text(RUN, edit))  # read from its file when it is in one


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(codec="ascii", exclude_categories=["Cc"]), max_size=60))
def test_plain_text_always_gets_a_command(value):
    """Only what needs it is refused: a printable ASCII value that holds nothing like a secret gets its command."""
    line = f"tracetui replay f.jsonl --run cross_tenant --set /inputs/user_input={value}"
    if redact_text(value) != value or redact_text(line) != line:
        return  # looks like a secret: may be refused
    assert printed_command("f.jsonl", "cross_tenant", RUN, [Edit("/inputs/user_input", value)]).text


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=80))
def test_any_file_name_splits_back_or_is_refused(name):
    command = printed_command(name, "cross_tenant", RUN, [Edit("/inputs/budgets/max_turns", 3)])
    if command.text is None:
        assert command.why_not
        return
    assert printable(command.text) == command.text  # a control character in a name is refused, not printed
    argv = shlex.split(command.text)
    assert argv[2] == (f"./{name}" if name.startswith("-") else name)
    assert argv[:2] == ["tracetui", "replay"] and argv[3:] == ["--run", "cross_tenant", "--set",
                                                              "/inputs/budgets/max_turns=3"]


def test_a_multi_line_value_is_read_from_a_file_that_holds_it_exactly():
    value = "line one\nline two\twith a tab"
    command = printed_command("f.jsonl", "cross_tenant", RUN, [Edit("/inputs/user_input", value)])
    text = shlex.split(command.text)[6].partition("=")[2]
    assert text.startswith("@") and value_text(text) == value


def test_a_control_character_in_a_value_never_reaches_the_command():
    command = printed_command("f.jsonl", "cross_tenant", RUN, [Edit("/inputs/user_input", "a\x1b[201~b")])
    assert command.text is None or "\x1b" not in command.text
    if command.text:
        assert value_text(shlex.split(command.text)[6].partition("=")[2]) == "a\x1b[201~b"


# -- a path that holds "=" (replay --set cuts PATH=VALUE at the first "=") ---------------------------------

@pytest.fixture(scope="module")
def odd_order_run(tmp_path_factory):
    """business_rule with its order named ``a=@x``, and the what-if that edits what that order was paid."""
    folder = tmp_path_factory.mktemp("odd")
    plain = folder / "br.jsonl"
    assert invoke("generate", "--scenario", "business_rule", "-o", str(plain)).exit_code == 0
    odd = folder / "odd.jsonl"
    odd.write_text(plain.read_text().replace("o-1", "a=@x"))
    proof = next(p for p in explain(read_trace(plain).runs["business_rule"]).what_ifs
                 if p.edits[0].path == "/inputs/tool_data/orders/o-1/paid")
    run = read_trace(odd).runs["business_rule"]
    edit = Edit("/inputs/tool_data/orders/a=@x/paid", proof.edits[0].value)
    odd_proof = dataclasses.replace(proof, candidate=dataclasses.replace(proof.candidate, edits=(edit,)),
                                    outcome=dataclasses.replace(proof.outcome, original=run))
    return run, edit, odd_proof


def test_an_edit_whose_path_holds_an_equals_sign_gets_no_command_and_says_why(odd_order_run):
    run, edit, proof = odd_order_run
    assert set_text(run, edit) == "80.0"  # the edit itself is fine: only the command line cannot carry it
    command = printed_command("f.jsonl", "business_rule", run, [edit])
    assert command.text is None
    assert command.why_not == ("the edited path /inputs/tool_data/orders/a=@x/paid holds '=', which replay --set "
                               "would read as the end of the path; no command can set it")
    data = proof_data(proof, "f.jsonl", 1, "business_rule")
    assert data["command"] is None and data["command_why_not"] == command.why_not
    assert data["edits"][0]["set"] is None  # no --set argument sets it either


def test_the_report_says_why_a_fix_has_no_command(odd_order_run):
    run, edit, proof = odd_order_run
    result = dataclasses.replace(explain(run), what_ifs=[proof], fixes=[], partials=[])
    lines = as_text(result, "f.jsonl", 5)
    assert ("    no command: the edited path /inputs/tool_data/orders/a=@x/paid holds '=', which replay --set "
            "would read as the end of the path; no command can set it") in lines
    assert not any(line.strip().startswith("tracetui replay") for line in lines)
