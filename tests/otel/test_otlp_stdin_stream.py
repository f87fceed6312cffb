"""OTLP/JSON on standard input read as a stream (issue 22 item 3): ``cat f | tracetui check -`` and
``tracetui open -`` release each trace once the input is past it, never read it whole, and give what the
file gives: the same verdicts, names and problems (with the file's line numbers)."""
from __future__ import annotations

import gc
import os
import threading

import orjson
import pytest
from click.testing import CliRunner
from otel_builders import span, traces_data
from otlp_open_files import otlp_file

from tracetui.cli import main
from tracetui.otel import otlp_read
from tracetui.otel.detect import open_any
from tracetui.trace.reader import RunData
from tracetui.ui.app import open_paths

SAFETY_S = 30


@pytest.fixture
def never_whole(monkeypatch):
    """Reading standard input whole is what bounded memory rules out."""
    def whole(*args, **kwargs):
        raise AssertionError("standard input was read whole")

    monkeypatch.setattr(otlp_read, "read_spans_fd", whole)


def test_check_of_piped_otlp_gives_the_file_verdicts_without_reading_it_whole(tmp_path, never_whole):
    path = otlp_file(tmp_path / "spans.jsonl")
    data = path.read_bytes()
    from_file = CliRunner().invoke(main, ["check", str(path)])
    piped = CliRunner().invoke(main, ["check", "-"], input=data)
    assert piped.exit_code == from_file.exit_code == 1
    assert piped.stdout == from_file.stdout and "orders-4bf92f3577b34da6b000" in piped.stdout
    assert piped.stderr == from_file.stderr and "line 13: malformed JSON" in piped.stderr
    as_file = orjson.loads(CliRunner().invoke(main, ["check", "--json", str(path)]).stdout)
    as_piped = orjson.loads(CliRunner().invoke(main, ["check", "--json", "-"], input=data).stdout)
    assert as_piped["runs"] == as_file["runs"] and as_piped["problems"] == as_file["problems"]


def test_a_piped_pretty_printed_document_is_still_read_as_the_file_is(tmp_path):
    spans = [s for line in otlp_file(tmp_path / "a.jsonl").read_bytes().splitlines()[:12]
             for s in orjson.loads(line)["resourceSpans"]]
    doc = tmp_path / "doc.json"
    doc.write_bytes(orjson.dumps({"resourceSpans": spans}, option=orjson.OPT_INDENT_2))
    from_file = CliRunner().invoke(main, ["check", str(doc)])
    piped = CliRunner().invoke(main, ["check", "-"], input=doc.read_bytes())
    assert piped.exit_code == from_file.exit_code and piped.stdout == from_file.stdout != ""


def _trace_line(n: int) -> bytes:
    trace = f"{n + 1:032x}"
    root = span("invoke_agent shop", f"{n + 1:016x}", "", 0, 9, trace=trace, gen_ai__operation__name="invoke_agent",
                gen_ai__agent__name="shop")
    chat = span("chat m", f"{n + 100:016x}", root["spanId"], 1, 5, trace=trace, gen_ai__operation__name="chat")
    return orjson.dumps(traces_data(chat, root)) + b"\n"


def test_piped_traces_are_released_while_standard_input_is_still_open():
    """A writer still writing: the first traces are read into runs before it ends (not waited for)."""
    from tracetui.otel.arriving import Arriving
    from tracetui.otel.stream import WINDOW_LINES, traces_of
    from tracetui.trace.spool import Spool

    read_fd, write_fd = os.pipe()
    spool = Spool(read_fd)
    released = threading.Event()
    got: list = []

    def read() -> None:
        for trace in traces_of(Arriving(spool), []):
            got.append(trace)
            released.set()

    try:
        os.write(write_fd, b"".join(_trace_line(n) for n in range(WINDOW_LINES + 2)))
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        assert released.wait(SAFETY_S), "nothing was released before standard input ended"
        os.write(write_fd, _trace_line(99))
        os.close(write_fd)
        reader.join(SAFETY_S)
        assert not reader.is_alive() and len(got) == WINDOW_LINES + 3
    finally:
        spool.close()


def _piped_source(data: bytes):
    read_fd, write_fd = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(write_fd, data), os.close(write_fd)), daemon=True)
    writer.start()
    source = open_paths(["-"], stdin=read_fd)
    writer.join(SAFETY_S)
    return source


def test_open_of_piped_otlp_lists_the_file_runs_in_bounded_memory(tmp_path, never_whole):
    path = otlp_file(tmp_path / "spans.jsonl")
    from_file = open_any([str(path)])
    for _ in from_file.scan():
        pass
    gc.collect()
    before = sum(1 for o in gc.get_objects() if type(o) is RunData)
    source = _piped_source(path.read_bytes())
    try:
        assert hasattr(source, "scan"), "standard input was read before the explorer opened"
        for _ in source.scan():
            pass
        gc.collect()
        assert sum(1 for o in gc.get_objects() if type(o) is RunData) == before  # rows, not runs
        assert list(source.runs()) == list(from_file.runs())
        assert [(p.line, p.message) for p in source.problems()] == [(p.line, p.message) for p in from_file.problems()]
        last = source.runs()[-1]
        assert source.load(last).events == from_file.load(last).events
    finally:
        source.close()
        from_file.close()


def test_open_of_piped_otlp_lists_runs_while_the_writer_is_still_writing_and_quits_meanwhile():
    """The first runs show before standard input ends; a quiet writer leaves the scan yielding (so the
    explorer's worker can end), and closing the source stops its reading."""
    from tracetui.otel.stream import WINDOW_LINES

    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"".join(_trace_line(n) for n in range(WINDOW_LINES + 2)))
    opened: list = []
    opener = threading.Thread(target=lambda: opened.append(open_paths(["-"], stdin=read_fd)), daemon=True)
    opener.start()
    opener.join(SAFETY_S)
    try:
        assert opened, "open - waited for standard input to end"
        source = opened[0]
        caught_up = False
        for progress in source.scan():
            if progress.caught_up:
                caught_up = True
                break
        assert caught_up and len(source.runs()) >= 1
        source.close()
        reader = next((t for t in threading.enumerate() if t.name == "tracetui-otlp-stdin"), None)
        if reader is not None:
            reader.join(SAFETY_S)
            assert not reader.is_alive(), "closing the source left its reading going"
    finally:
        os.close(write_fd)
