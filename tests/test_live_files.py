"""Files that change while they are read, files that grow, standard input, and reading in bounded memory (issue 12)."""
from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from tracetui.cli import main
from tracetui.trace import checking
from tracetui.trace.index import IndexedSource, TraceChanged
from tracetui.trace.index.lines import FileLines
from tracetui.trace.index.scanner import Scanner
from tracetui.trace.reader import TraceReadError
from tracetui.trace.spool import Spool

from test_index import _runs, all_lines

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_traces" / "scenarios.jsonl"


def write(tmp_path: Path, data: bytes, name: str = "t.jsonl") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def run_lines(run_id: str, k: int = 0) -> bytes:
    """One real run's lines under a new run id."""
    _, lines = _runs()[k]
    old = orjson.loads(lines[0])["run_id"]
    return b"".join(line.replace(orjson.dumps(old), orjson.dumps(run_id), 1) for line in lines)


# -- a file cut short, replaced or rewritten while it is read ----------------------------------------
def test_truncating_a_file_under_the_index_is_reported_never_a_crash(tmp_path):
    """Reads go through pread: no memory map to fault on (a SIGBUS would kill this child)."""
    path = write(tmp_path, all_lines() * 40)
    code = textwrap.dedent(f"""
        import os
        from tracetui.trace.index import IndexedSource, TraceChanged
        src = IndexedSource([{path!r}])
        steps = src.scan(4096)
        next(steps)
        os.truncate({path!r}, 100)
        try:
            for _ in steps:
                pass
        except TraceChanged as exc:
            print("changed:", exc.change.kind)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "changed: truncated"


def test_a_loaded_run_of_a_changed_file_is_refused_not_shown_empty(tmp_path):
    path = write(tmp_path, all_lines())
    src = IndexedSource([path]).scan_all()
    entry = src.runs()[3]
    assert src.load(entry).events
    os.truncate(path, 10)
    with pytest.raises(TraceChanged, match="truncated"):
        src.load(entry)
    assert [c.kind for c in src.changes()] == ["truncated"]


def test_replaced_rewritten_and_grown_files_are_told_apart(tmp_path):
    path = write(tmp_path, all_lines())
    src = IndexedSource([path]).scan_all()
    assert src.changes() == []
    with open(path, "ab") as f:
        f.write(run_lines("more"))
    assert [c.kind for c in src.changes()] == ["grew"]
    data = Path(path).read_bytes()
    with open(path, "r+b") as f:  # same size, other bytes at the start
        f.write(data[:100].replace(b"rec", b"REC"))
    assert [c.kind for c in src.changes()] == ["rewritten"]
    os.replace(write(tmp_path, all_lines(), "other.jsonl"), path)
    assert [c.kind for c in src.changes()] == ["replaced"]


def test_a_file_being_indexed_is_not_taken_for_one_that_grew(tmp_path):
    path = write(tmp_path, all_lines() * 10)
    src = IndexedSource([path])
    steps = src.scan(4096)
    next(steps)
    next(steps)
    assert src.changes() == []  # more to read is not more written
    with open(path, "ab") as f:
        f.write(run_lines("late"))
    assert [c.kind for c in src.changes()] == ["grew"]
    list(steps)  # appended while indexing: not read, and still said once the index is done
    assert "late" not in {e.run_id for e in src.runs()}
    assert [c.kind for c in src.changes()] == ["grew"]


def _check_changed_midway(tmp_path, monkeypatch, at_step: int, change) -> object:
    """``check`` of a file that ``change(path)`` alters just before step ``at_step`` is linked."""
    path = write(tmp_path, all_lines() * 20)
    apply = Scanner.apply
    calls = []

    def changing(self, prepared):
        calls.append(1)
        if len(calls) == at_step:
            change(path)
        return apply(self, prepared)
    monkeypatch.setattr(Scanner, "apply", changing)
    monkeypatch.setattr(checking, "CHUNK_BYTES", 8192)
    return CliRunner().invoke(main, ["check", path])


def test_check_says_so_when_the_file_is_truncated_while_it_is_checked(tmp_path, monkeypatch):
    result = _check_changed_midway(tmp_path, monkeypatch, 2, lambda path: os.truncate(path, 200))
    assert result.exit_code == 2
    assert "truncated" in result.stderr and "check it again" in result.stderr


def test_check_says_so_when_the_file_is_replaced_while_it_is_checked(tmp_path, monkeypatch):
    result = _check_changed_midway(tmp_path, monkeypatch, 2, lambda path: os.replace(
        write(tmp_path, all_lines(), "new.jsonl"), path))
    assert result.exit_code == 2 and "replaced" in result.stderr


def test_check_says_so_when_the_file_is_rewritten_in_place_while_it_is_checked(tmp_path, monkeypatch):
    """Same size, same file, every line moved: a later note of the file must not hide the rewrite."""
    def rewrite(path):
        data = open(path, "rb").read()
        with open(path, "r+b") as fh:
            fh.write(b'{"a":1}' + data[:-7])
    result = _check_changed_midway(tmp_path, monkeypatch, 3, rewrite)
    assert result.exit_code == 2, result.stderr
    assert "rewritten in place" in result.stderr and "check it again" in result.stderr
    assert "Traceback" not in result.stderr


# -- following a file a writer is still appending to --------------------------------------------------
def test_following_shows_appended_runs_and_waits_for_a_half_written_line(tmp_path):
    path = write(tmp_path, run_lines("first"))
    src = IndexedSource([path], follow=True)
    steps = src.scan(4096, poll=0.01)

    def until_caught_up():
        for progress in steps:
            if progress.caught_up:
                return progress
    until_caught_up()
    assert [e.run_id for e in src.runs()] == ["first"]
    second = run_lines("second", 2)
    cut = len(second) // 2 + 7
    with open(path, "ab") as f:
        f.write(second[:cut])  # mid-line: the writer is not done with it
    until_caught_up()
    assert src.problems() == []
    assert [e.run_id for e in src.runs()] == ["first", "second"]
    assert not src.runs()[1].complete  # listed as it is so far
    with open(path, "ab") as f:
        f.write(second[cut:])
    until_caught_up()
    assert [(e.run_id, e.complete) for e in src.runs()] == [("first", True), ("second", True)]
    assert src.problems() == []
    src.follow(False)
    assert list(steps)[-1].done
    reference = IndexedSource([path]).scan_all()
    assert list(src.runs()) == list(reference.runs())


def test_a_followed_file_that_is_truncated_is_reported(tmp_path):
    path = write(tmp_path, all_lines())
    src = IndexedSource([path], follow=True)
    steps = src.scan(4096, poll=0.01)
    for progress in steps:
        if progress.caught_up:
            break
    os.truncate(path, 50)
    with pytest.raises(TraceChanged, match="truncated"):
        for _ in steps:
            pass


# -- standard input ------------------------------------------------------------------------------------
def test_check_reads_standard_input_as_it_reads_the_file():
    data = SAMPLE.read_bytes()
    from_file = CliRunner().invoke(main, ["check", str(SAMPLE)])
    piped = CliRunner().invoke(main, ["check", "-"], input=data)
    assert piped.exit_code == from_file.exit_code == 1
    assert piped.stdout == from_file.stdout and piped.stdout.count("\n") == 30
    assert piped.stderr == from_file.stderr
    as_json = orjson.loads(CliRunner().invoke(main, ["check", "-", "--json"], input=data).stdout)
    assert as_json["file"] == "-" and len(as_json["runs"]) == 30


def test_replay_reads_standard_input():
    result = CliRunner().invoke(main, ["replay", "-", "--run", "cross_tenant"], input=SAMPLE.read_bytes())
    assert result.exit_code == 1 and "the re-run reproduces the original byte for byte" in result.stdout


def test_empty_standard_input_is_a_clear_error():
    result = CliRunner().invoke(main, ["check", "-"], input=b"")
    assert result.exit_code == 2 and "-: no runs found (it is empty)" in result.stderr


def test_standard_input_arriving_slowly_is_indexed_as_it_comes(tmp_path):
    read_fd, write_fd = os.pipe()
    spool = Spool(read_fd)
    src = IndexedSource([spool])
    first, second = run_lines("a"), run_lines("b", 1)
    os.write(write_fd, first + second[:40])
    steps = src.scan(4096, poll=0.01)
    for progress in steps:
        if progress.caught_up and len(src.runs()) == 1:
            break
    assert [e.run_id for e in src.runs()] == ["a"] and src.problems() == []
    os.write(write_fd, second[40:])
    os.close(write_fd)
    list(steps)
    assert [e.run_id for e in src.runs()] == ["a", "b"] and src.done
    spool.close()


def test_an_endless_line_on_standard_input_is_not_held(monkeypatch):
    from tracetui.trace import limits

    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 5000)
    data = b"x" * 50_000 + b"\r\n" + run_lines("after")
    spool = Spool(io.BytesIO(data))
    spool.wait()
    assert os.fstat(spool.fd).st_size < 5100 + len(run_lines("after"))  # the long line's end was not kept
    result = CliRunner().invoke(main, ["check", "-"], input=data)
    assert result.stderr.startswith("line 1: line is 50000 bytes, over the 5000-byte limit\n")
    assert "after" in result.stdout


# -- bounded memory: check and replay never read the trace whole ---------------------------------------
def test_check_and_replay_do_not_read_the_trace_whole(tmp_path, monkeypatch):
    """(A file of at most checking.SMALL_FILE_BYTES is read whole by replay, on purpose: here the sample counts
    as big. checking imports read_trace by name, so it is replaced there too.)"""
    import tracetui.trace.reader as reader

    def whole(*args, **kwargs):
        raise AssertionError("read_trace holds every record of the file")
    monkeypatch.setattr(reader, "read_trace", whole)
    monkeypatch.setattr(checking, "read_trace", whole)
    monkeypatch.setattr(checking, "SMALL_FILE_BYTES", 0)
    assert CliRunner().invoke(main, ["check", str(SAMPLE)]).exit_code == 1
    assert CliRunner().invoke(main, ["replay", str(SAMPLE), "--run", "single"]).exit_code == 0


def test_replay_stops_reading_once_its_run_has_ended(tmp_path, monkeypatch):
    path = write(tmp_path, run_lines("wanted") + all_lines() * 200)
    read = []
    original = FileLines.read

    def counting(self, start, length):
        read.append(length)
        return original(self, start, length)
    monkeypatch.setattr(FileLines, "read", counting)
    result = CliRunner().invoke(main, ["replay", path, "--run", "wanted"])
    assert result.exit_code == 0, result.output
    assert sum(read) < os.path.getsize(path) / 10


def test_an_unknown_run_names_the_first_runs_of_the_file(tmp_path):
    result = CliRunner().invoke(main, ["replay", str(SAMPLE), "--run", "nope"])
    assert result.exit_code == 2 and "runs: text, single, parallel" in result.stderr and "…" in result.stderr


# -- start-up --------------------------------------------------------------------------------------------
def test_opening_the_explorer_loads_neither_the_loop_nor_jsonschema():
    code = ("import sys; from tracetui.ui.app import TraceApp, open_paths; "
            f"TraceApp(open_paths([{str(SAMPLE)!r}])); "
            "print(sorted(m for m in sys.modules if m.startswith(('tracetui.loop', 'tracetui.replay.replay', "
            "'jsonschema', 'tracetui.providers'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_a_scan_in_a_thread_sees_a_file_that_grows_only_when_following(tmp_path):
    path = write(tmp_path, all_lines())
    src = IndexedSource([path])
    with open(path, "ab") as f:
        f.write(run_lines("late"))
    thread = threading.Thread(target=src.scan_all)
    thread.start()
    thread.join()
    assert "late" in {e.run_id for e in src.runs()}  # appended before the scan began: read
    with open(path, "ab") as f:
        f.write(run_lines("later"))
    assert "later" not in {e.run_id for e in src.runs()}
    assert [c.kind for c in src.changes()] == ["grew"]
    with pytest.raises(TraceReadError):
        IndexedSource([str(tmp_path / "missing.jsonl")])


def test_a_same_size_rewrite_of_the_middle_is_noticed(tmp_path):
    """Only the edges are compared byte for byte; a write that leaves size and edges alone still counts."""
    path = write(tmp_path, all_lines())
    src = IndexedSource([path]).scan_all()
    data = Path(path).read_bytes()
    middle = len(data) // 2
    assert len(data) > 3 * 4096
    with open(path, "r+b") as f:
        f.seek(middle)
        f.write(b"X" if data[middle:middle + 1] != b"X" else b"Y")
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # a clock that ticks
    assert [c.kind for c in src.changes()] == ["rewritten"]


def test_a_touch_while_checked_is_not_a_rewrite(tmp_path, monkeypatch):
    """Same size, same bytes, a new modification time: check ends as usual (exit 1 here), not with
    "rewritten" (a write that moved an edge is: see the test above)."""
    path = write(tmp_path, all_lines() * 20)
    want = CliRunner().invoke(main, ["check", path])
    apply = Scanner.apply
    calls = []

    def touching(self, prepared):
        calls.append(1)
        if len(calls) == 3:
            st = os.stat(path)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
        return apply(self, prepared)
    monkeypatch.setattr(Scanner, "apply", touching)
    monkeypatch.setattr(checking, "CHUNK_BYTES", 8192)
    result = CliRunner().invoke(main, ["check", path])
    assert (result.exit_code, result.stdout, result.stderr) == (want.exit_code, want.stdout, want.stderr)
