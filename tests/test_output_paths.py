"""``-o`` never replaces the input, however its path reaches it: ``..`` past a missing folder, symlinks, hard links.

The writer and the "is this the input" check both find the output file as the kernel
does (:mod:`tracetui.trace.output_path`); ``os.path.realpath`` read
``nosuchdir/../runs.jsonl`` as ``runs.jsonl`` by text, and a 196 KB trace was replaced
by one re-run of it.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracetui.cli import main
from tracetui.replay.save import save_records
from tracetui.trace.output_path import output_target, writes_over
from tracetui.trace.reader import read_trace
from tracetui.trace.writer import write_trace

ROOT = Path(__file__).resolve().parent.parent
RESPONSES = ROOT / "sample_traces" / "responses" / "normal.json"


def _cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def trace(tmp_path) -> Path:
    path = tmp_path / "runs.jsonl"
    shutil.copyfile(ROOT / "sample_traces" / "scenarios.jsonl", path)
    return path


def _commands(trace: Path, responses: Path):
    """Every command that writes ``-o``, with the file it must never replace."""
    return {
        "replay": (["replay", trace, "--run", "single"], trace),
        "export": (["export", trace], trace),
        "run": (["run", "--responses", responses], responses),
        "generate": (["generate", "--scenario", "single"], trace),  # no input: the file beside must stay
    }


COMMANDS = ["replay", "export", "run", "generate"]
#: ways that reach the file for the kernel too (the rest cannot be opened at all)
LINKS = {"a symlink", "a hard link", "dotdot past a symlinked folder"}


def _ways_to(target: Path) -> dict[str, Path]:
    """Output paths that lead (as text, or through links) to ``target``."""
    folder = target.parent
    dangling = folder / "via-missing-folder.jsonl"
    dangling.symlink_to(Path("nosuchdir") / ".." / target.name)  # dangling for the kernel, not for realpath
    link = folder / "link.jsonl"
    link.symlink_to(target.name)
    hard = folder / "hard.jsonl"
    os.link(target, hard)
    (folder / "real").mkdir()
    (folder / "real" / "deeper").mkdir()
    (folder / "elsewhere").symlink_to(folder / "real" / "deeper", target_is_directory=True)
    return {"dotdot past a missing folder": folder / "nosuchdir" / ".." / target.name,
            "dotdot past a file": folder / target.name / ".." / target.name,
            "a symlink whose target goes through a missing folder": dangling,
            "a symlink": link, "a hard link": hard,
            "dotdot past a symlinked folder": folder / "elsewhere" / ".." / ".." / target.name}


@pytest.mark.parametrize("command", COMMANDS)
def test_no_output_path_replaces_the_input(tmp_path, trace, command):
    responses = tmp_path / "normal.json"
    shutil.copyfile(RESPONSES, responses)
    args, protected = _commands(trace, responses)[command]
    before = protected.read_bytes()
    for how, output in _ways_to(protected).items():
        if command == "generate" and how in LINKS:
            continue  # without an input, writing through a link to a file is what was asked
        result = _cli(*args, "-o", output)
        assert protected.read_bytes() == before, f"{command} -o {how} ({output}) replaced {protected.name}"
        assert result.exit_code != 0, f"{command} -o {how}: {result.output}"
        assert "Traceback" not in result.output


def test_a_missing_folder_is_refused_in_words(trace):
    result = _cli("replay", trace, "--run", "single", "-o", trace.parent / "nosuchdir" / ".." / "out.jsonl")
    assert result.exit_code == 1
    assert "nosuchdir/.. does not exist" in result.output
    assert not (trace.parent / "out.jsonl").exists()  # written nowhere, not beside the missing folder


def test_writing_through_a_symlink_to_another_file_still_works(tmp_path, trace):
    other = tmp_path / "other.jsonl"
    other.write_bytes(b"old\n")
    (tmp_path / "to-other.jsonl").symlink_to("other.jsonl")
    result = _cli("replay", trace, "--run", "single", "-o", tmp_path / "to-other.jsonl")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "to-other.jsonl").is_symlink()
    assert next(iter(read_trace(other).runs)) == "single"


def test_output_target_follows_what_the_kernel_follows(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "up").symlink_to(tmp_path / "a" / "b", target_is_directory=True)
    assert output_target(tmp_path / "up" / ".." / "x") == tmp_path.resolve() / "a" / "x"
    (tmp_path / "loop").symlink_to("loop")
    with pytest.raises(OSError):
        output_target(tmp_path / "loop")
    with pytest.raises(FileNotFoundError):
        output_target(tmp_path / "nosuchdir" / ".." / "x")
    with pytest.raises(IsADirectoryError):
        output_target(tmp_path / "a" / "..")


def test_standard_input_is_the_input_when_it_is_that_file(tmp_path, trace):
    with open(trace, "rb") as stdin:
        saved = os.dup(0)
        os.dup2(stdin.fileno(), 0)
        try:
            assert writes_over(trace.parent / "nosuchdir" / ".." / trace.name, "-") is False  # cannot be written
            assert writes_over(trace, "-") and not writes_over(tmp_path / "new.jsonl", "-")
        finally:
            os.dup2(saved, 0)
            os.close(saved)


def test_the_explorers_save_never_writes_over_the_original(tmp_path, trace):
    """``w`` creates a new name exclusively: a link planted at a name it tries is passed over."""
    records = [r for run in read_trace(trace).runs.values() if run.run_id == "single"
               for r in (run.run, *run.events, run.summary)]
    before = trace.read_bytes()
    (tmp_path / "runs.single.jsonl").symlink_to(Path("nosuchdir") / ".." / trace.name)
    os.link(trace, tmp_path / "runs.single-2.jsonl")
    (tmp_path / "runs.single-3.jsonl").symlink_to(trace.name)
    written = save_records(records, str(trace), "single", edited=False)
    assert written.name == "runs.single-4.jsonl"
    assert trace.read_bytes() == before
    write_trace(tmp_path / "fresh.jsonl", records)  # (the writer itself still writes a plain new file)
    assert (tmp_path / "fresh.jsonl").read_bytes() == written.read_bytes()
