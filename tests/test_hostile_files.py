"""Hostile files (issue 10, "Files"): writes that never clobber, inputs that never hang or blow up memory,
one nesting limit for reading and writing, newer trace versions and a BOM."""
from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from tracetui.cli import main
from tracetui.replay.save import save_records
from tracetui.trace import limits, reader
from tracetui.trace.index import IndexedSource
from tracetui.trace.reader import read_trace
from tracetui.trace.writer import AtomicWriter, NothingToWrite, write_trace

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_traces" / "scenarios.jsonl"


def records_of(run_id: str = "single") -> list[dict]:
    return [r for r in (orjson.loads(line) for line in SAMPLE.read_bytes().splitlines()) if r["run_id"] == run_id]


# -- writes ---------------------------------------------------------------------------------------------
def test_a_symlink_planted_at_the_new_name_is_never_written_through(tmp_path):
    original = tmp_path / "t.jsonl"
    original.write_bytes(SAMPLE.read_bytes())
    outside = tmp_path / "outside" / "stolen.jsonl"
    (tmp_path / "t.single.edited.jsonl").symlink_to(outside)  # dangling: its target does not exist yet
    written = save_records(records_of(), str(original), "single")
    assert written == tmp_path / "t.single.edited-2.jsonl"
    assert not outside.exists() and (tmp_path / "t.single.edited.jsonl").is_symlink()
    assert written.read_bytes().count(b"\n") == len(records_of())


def test_a_name_taken_between_the_check_and_the_write_is_never_overwritten(tmp_path, monkeypatch):
    original = tmp_path / "t.jsonl"
    original.write_bytes(b"")
    taken = tmp_path / "t.single.edited.jsonl"
    taken.write_bytes(b"someone else's file\n")
    monkeypatch.setattr(Path, "exists", lambda self: False)  # every check says the name is free
    written = save_records(records_of(), str(original), "single")
    assert taken.read_bytes() == b"someone else's file\n"
    assert written.name == "t.single.edited-2.jsonl"


def test_a_run_read_from_standard_input_is_written_under_a_name_a_shell_can_pass(tmp_path, monkeypatch):
    """``w`` after ``open -`` wrote '-.single.jsonl', which every command then took for an option."""
    monkeypatch.chdir(tmp_path)
    written = save_records(records_of(), "-", "single", edited=False)
    assert written.name == "stdin.single.jsonl" and (tmp_path / "stdin.single.jsonl").exists()
    res = CliRunner().invoke(main, ["check", written.name])
    assert "single  answer_ready" in res.output, res.output


def test_exclusive_writes_refuse_any_existing_name(tmp_path):
    existing = tmp_path / "x.jsonl"
    existing.write_bytes(b"keep\n")
    with pytest.raises(FileExistsError):
        write_trace(existing, records_of(), exclusive=True)
    assert existing.read_bytes() == b"keep\n"


def test_a_replaced_file_never_keeps_a_setuid_or_setgid_bit(tmp_path):
    out = tmp_path / "t.jsonl"
    out.write_bytes(b"old\n")
    out.chmod(0o6755)
    assert CliRunner().invoke(main, ["generate", "-o", str(out)]).exit_code == 0
    mode = stat.S_IMODE(out.stat().st_mode)
    assert mode == 0o755 and not mode & (stat.S_ISUID | stat.S_ISGID)


def test_the_temporary_file_has_no_name_while_it_is_written(tmp_path):
    out = tmp_path / "t.jsonl"
    with AtomicWriter(out) as f:
        f.write(b"x\n" * 1000)
        f.flush()
        assert list(tmp_path.iterdir()) == []  # nothing to leave behind, whatever ends the process
    assert out.read_bytes() == b"x\n" * 1000


def test_a_named_temporary_file_is_removed_when_sigterm_ends_a_write(tmp_path):
    """Where O_TMPFILE is missing, a named temporary file is used; SIGTERM still removes it."""
    code = textwrap.dedent(f"""
        import os, signal
        from tracetui import cli
        from tracetui.trace import writer
        del os.O_TMPFILE
        cli.exit_on_signals()
        with writer.AtomicWriter({str(tmp_path / "t.jsonl")!r}) as f:
            f.write(b"partial")
            f.flush()
            print(sorted(os.listdir({str(tmp_path)!r})), flush=True)
            os.kill(os.getpid(), signal.SIGTERM)
            f.write(b"never")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 128 + signal.SIGTERM, out.stderr
    assert out.stdout.startswith("['.t.jsonl.") and os.listdir(tmp_path) == []


def test_nothing_is_written_for_a_run_without_records(tmp_path):
    with pytest.raises(NothingToWrite, match="no records"):
        save_records([], str(tmp_path / "t.jsonl"), "single")
    assert list(tmp_path.iterdir()) == []


# -- inputs that are not regular files, and lines without end ------------------------------------------
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_check_refuses_a_fifo_instead_of_waiting_forever(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    out = subprocess.run([sys.executable, "-m", "tracetui", "check", str(fifo)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2
    assert "is a FIFO, not a regular file" in out.stderr and "standard input" in out.stderr


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_check_refuses_a_device():
    out = subprocess.run([sys.executable, "-m", "tracetui", "check", "/dev/zero"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2 and "is a character device, not a regular file" in out.stderr
    assert "Traceback" not in out.stderr


def _sys_file() -> str | None:
    """A readable sysfs attribute (they say they are 4096 bytes, whatever they hold)."""
    for path in ("/sys/kernel/mm/transparent_hugepage/enabled", "/sys/kernel/uevent_seqnum", "/sys/power/state",
                 "/sys/devices/system/cpu/online", "/sys/kernel/profiling"):
        if os.access(path, os.R_OK):
            return path
    return None


@pytest.mark.parametrize("path", [
    pytest.param("/proc/self/status", marks=pytest.mark.skipif(not os.path.exists("/proc/self/status"),
                                                                 reason="needs Linux's /proc")),
    pytest.param(_sys_file(), marks=pytest.mark.skipif(_sys_file() is None, reason="needs a readable /sys file"))],
    ids=["proc", "sys"])
@pytest.mark.parametrize("command", [["check"], ["check", "--json"], ["replay", "--run", "x"], ["export", "-o", "-"]])
def test_a_file_the_kernel_makes_is_refused_saying_why(path, command):
    """/proc and /sys files say they are 0 or 4096 bytes whatever they hold: not "empty", not "truncated"."""
    result = CliRunner().invoke(main, [command[0], path, *command[1:]])
    assert result.exit_code == 2, result.output
    assert "the kernel makes as it is read" in result.output and "pipe it to standard input" in result.output
    assert "empty" not in result.output and "truncated" not in result.output and "Traceback" not in result.output


def test_a_file_the_kernel_makes_can_be_piped_in():
    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs Linux's /proc")
    with open("/proc/self/status", "rb") as fh:
        result = CliRunner().invoke(main, ["check", "-"], input=fh.read())
    assert result.exit_code == 2 and "no line is a trace record" in result.output


def test_the_line_limit_holds_while_a_line_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(reader, "READ_BLOCK", 256)
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"y" * 100_000 + b"\r\n" + b"\n".join(line for line in SAMPLE.read_bytes().splitlines()
                                                           if len(line) < 1000) + b"\n")
    (number, first), *rest = reader.iter_lines(path)
    assert number == 1 and len(first) == 1001 and first.length == 100_000  # never held whole
    assert reader.parse_line(first)[1] == "line is 100000 bytes, over the 1000-byte limit"
    src = IndexedSource([str(path)]).scan_all(4096)
    assert [(p.line, p.message) for p in src.problems()][:1] == [(1, "line is 100000 bytes, over the 1000-byte limit")]


# -- one nesting limit ------------------------------------------------------------------------------------
def test_a_line_nested_deeper_than_the_writer_can_write_is_a_problem_and_the_rest_writes(tmp_path):
    records = records_of("single")
    deep = orjson.dumps(dict(records[1], seq=99, data="DEEP")).replace(b'"DEEP"', b"[" * 300 + b"]" * 300)
    path = tmp_path / "deep.jsonl"  # a line the writer could never write back
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records[:-1]) + deep + b"\n"
                     + orjson.dumps(records[-1]) + b"\n")
    result = CliRunner().invoke(main, ["check", str(path)])
    assert f"line {len(records)}: line nests deeper than {limits.MAX_DEPTH} levels" in result.stderr
    assert result.exit_code == 1
    run = read_trace(path).runs["single"]
    assert 99 not in [e["seq"] for e in run.events]
    written = save_records([run.run, *run.events, run.summary], str(path), "single")  # w
    assert written.exists()
    out = tmp_path / "replayed.jsonl"
    assert CliRunner().invoke(main, ["replay", str(path), "--run", "single", "-o", str(out)]).exit_code == 0
    src = IndexedSource([str(path)]).scan_all()
    src.load(src.runs()[0])
    assert any("nests deeper" in p.message for p in src.problems())


# -- versions and byte order marks ------------------------------------------------------------------------
@pytest.mark.parametrize("version, words", [(999, "trace_version 999 is newer than 1"),
                                            ("2.0", "trace_version '2.0' is not a version this tracetui reads")])
def test_a_newer_trace_version_is_said_clearly(tmp_path, version, words):
    records = records_of("single")
    records[0]["trace_version"] = version
    path = tmp_path / "new.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    result = CliRunner().invoke(main, ["check", str(path)])
    assert f"line 1: {words}" in result.stderr and result.exit_code == 1
    assert "✓ single  answer_ready" in result.stdout  # the run still reads
    src = IndexedSource([str(path)]).scan_all()
    assert [p.line for p in src.problems()] == [1] and words in src.problems()[0].message
    assert len(src.runs()) == 1


def test_a_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + SAMPLE.read_bytes())
    result = CliRunner().invoke(main, ["check", str(path)])
    assert "line 1" not in result.stderr and result.stdout == CliRunner().invoke(main, ["check", str(SAMPLE)]).stdout
    assert read_trace(path).problems == []
    src = IndexedSource([str(path)]).scan_all()
    assert src.problems() == [] and len(src.runs()) == 30
    assert src.load(src.runs()[0]).first_line == 1
