"""``check`` and ``replay`` stream through the index: the same bytes as reading the trace whole.

The reference below is ``check`` as it was when it read the whole file with
:func:`~tracetui.trace.reader.read_trace` (and held every record). The streaming
``check`` must print exactly the same, on the sample traces and on damaged ones.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracetui.cli import main
from tracetui.trace.reader import TraceReadError, read_trace
from tracetui.trace.safe_text import printable, printable_json
from tracetui.trace.verdict import OUTCOMES, verdict_line

from test_index import damaged_traces

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted(p for p in (ROOT / "sample_traces").glob("*.jsonl") if not p.name.startswith("otel-"))  # OTLP: read whole


def reference_check(path: str, as_json: bool) -> tuple[str, str, int]:
    """(stdout, stderr, exit code) of ``check`` reading the trace whole."""
    try:
        trace = read_trace(path)
    except TraceReadError as exc:  # (the first lines that are not records say why)
        shown = "".join(f"line {p.line}: {printable(p.message)}\n" for p in exc.problems[:5])
        more = len(exc.problems) - 5
        return "", shown + (f"… and {more} more problem line(s)\n" if more > 0 else "") + f"error: {exc}\n", 2
    verdicts = [run.verdict() for run in trace.runs.values()]
    code = 0 if all(v["ready"] for v in verdicts) and not trace.problems else 1
    if as_json:
        payload = {"file": path, "runs": verdicts,
                   "problems": [{"line": p.line, "message": p.message} for p in trace.problems]}
        return printable_json(payload) + "\n", "", code
    out = "".join(printable(verdict_line(v["run_id"], v)) + "\n" for v in verdicts)
    err = "".join(f"line {p.line}: {printable(p.message)}\n" for p in trace.problems)
    err += f"{len(verdicts)} run(s): " + ", ".join(
        f"{sum(1 for v in verdicts if v['outcome'] == outcome)} {outcome}" for outcome in OUTCOMES) \
        + f"; {len(trace.problems)} problem line(s)\n"
    return out, err, code


def streamed_check(path: str, as_json: bool) -> tuple[str, str, int]:
    result = CliRunner().invoke(main, ["check", path] + (["--json"] if as_json else []))
    return result.stdout, result.stderr, result.exit_code


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("as_json", [False, True])
def test_check_prints_what_it_printed_on_every_sample(sample, as_json):
    assert streamed_check(str(sample), as_json) == reference_check(str(sample), as_json)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                   HealthCheck.function_scoped_fixture])
@given(data=damaged_traces())
def test_check_prints_what_it_printed_on_damaged_traces(tmp_path, data):
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(data)
    for as_json in (False, True):
        got, want = streamed_check(str(path), as_json), reference_check(str(path), as_json)
        if want[2] == 2:
            assert got[2] == 2 and got[1] == want[1]
        else:
            assert got == want


def _event(run_id: str, seq: object, extra: str = "") -> bytes:
    return (b'{"rec":"event","run_id":"%s","seq":%s,"lane":"http","kind":"http.attempt","outcome":"ok"%s}\n'
            % (run_id.encode(), str(seq).encode(), extra.encode()))


HOSTILE = [
    _event("a", 1, ',"x":1e999'),  # orjson refuses an overflowing float
    _event("a", 2, ',"x":123456789012345678901234567890'),  # a huge integer, read as a float
    _event("a", "99999999999999999999999"),  # a seq orjson reads as a float: not an integer seq
    _event("a", "true"),  # a bool seq: an int to the reader
    _event("a", 3, ',"x":"\xff"').replace(b"\\xff", b"\xff"),
    _event("a", 4, ',"x":"\\ud800"'),
    _event("a", 5, ',"lane":"bogus"'),  # a later key wins
    _event("a", 6, ',"rec":"summary"'),
    _event("a", 7, ',"run_id":"b"'),  # its run is the later id
    _event("a", 7),  # a repeated seq
    _event("a", 8, ',"deep":' + "[" * 300 + "]" * 300),  # nests deeper than the limit
    _event("a", 9, ',"deep":' + "[" * 150 + "]" * 150),
    b'\x0c\n',
    b' {"rec":"event","run_id":"a","seq":10,"lane":"http","outcome":"ok"}\n',
    b'{"rec":"summary","run_id":"a","status":"answer_ready","metrics":{"model_calls":1},"first_failure":null}\n',
]


@pytest.mark.parametrize("bom", [False, True])
def test_check_reads_hostile_lines_as_the_reader_does(tmp_path, bom):
    run = b'{"rec":"run","run_id":"a","trace_version":1,"producer":"x","inputs":{"source":"scenario"}}\n'
    path = tmp_path / "hostile.jsonl"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + run + b"".join(HOSTILE))
    for as_json in (False, True):
        got, want = streamed_check(str(path), as_json), reference_check(str(path), as_json)
        assert got == want
    assert "line 1" not in got[1]  # a BOM is not a problem
    assert "nests deeper than 200 levels" in want[0]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_verdicts_are_handed_on_in_run_order_however_they_are_decided(data):
    """Decided out of order, some never (no summary), spilled to disk past a limit: still in run order."""
    from tracetui.trace.in_order import InOrder

    n = data.draw(st.integers(0, 60))
    undecided = data.draw(st.sets(st.integers(0, max(0, n - 1)), max_size=n)) if n else set()
    order = data.draw(st.permutations([r for r in range(n) if r not in undecided]))
    out: list = []
    in_order = InOrder(out.append)
    in_order.MAX_WAITING = data.draw(st.integers(0, 8))
    at = 0
    while at < len(order):  # one at a time, or a chunk's runs together
        size = data.draw(st.integers(1, 5))
        batch = order[at:at + size]
        if size == 1:
            in_order.decided(batch[0], ("summary", batch[0]))
        else:
            in_order.decided_all(batch, [("summary", r) for r in batch])
        at += size
    in_order.finish(n, lambda r: ("events", r))
    assert [r for _, r in out] == list(range(n))
    assert [kind for kind, r in out] == ["events" if r in undecided else "summary" for r in range(n)]


def test_check_of_a_damaged_file_in_many_small_steps_prints_the_same(tmp_path, monkeypatch):
    """Steps of 4 KiB: lines, runs and damage cut at every step's edge, a BOM at the start, a last line cut
    short: the same verdicts and problems as the whole-file reader."""
    from tracetui.trace import checking

    path = tmp_path / "big.jsonl"
    lines = b"".join(SAMPLES[i].read_bytes() for i in range(len(SAMPLES)))
    path.write_bytes(b"\xef\xbb\xbf" + lines * 3 + b"not json\n" + lines[:-40])
    monkeypatch.setattr(checking, "CHUNK_BYTES", 4096)
    for as_json in (False, True):
        assert streamed_check(str(path), as_json) == reference_check(str(path), as_json)


def test_check_prints_the_whole_line_path_for_any_run_id(tmp_path):
    """The remembered verdict lines equal printable(verdict_line(...)) for plain ids, ids numbered alike,
    ids holding a secret's beginning, control characters or markup."""
    from tracetui.trace.verdict import verdict_line
    from tracetui.trace.verdict_lines import PrintableVerdicts

    failure = {"lane": "http", "seq": 1, "code": "x", "reason": "HTTP 503; token=abc123456789", "decided_at": 1}
    lines = PrintableVerdicts()
    for run_id in ["run-1", "run-2", "run-3", "sk-proj-Q7xT2mV9pL4kR8wZ1nB6cY3hJ5", "a\x1b[2Jb", "[/]", "key-9",
                   "x" * 300, "ghp_Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3bk"]:
        for v in ({"run_id": run_id, "status": "x", "outcome": "failed", "ready": False, "complete": True,
                   "first_failure": failure},
                  {"run_id": run_id, "status": "answer_ready", "outcome": "ready", "ready": True, "complete": True,
                   "first_failure": None}):
            assert lines(v) == printable(verdict_line(run_id, v)), run_id


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts the open descriptors in /proc")
@pytest.mark.parametrize("content", [b"", b"not json\n", None])
def test_check_leaves_no_file_open(tmp_path, content):
    """The checked file is closed when check ends, however it ends: its scan is a reference cycle, so it
    stayed open until a full collection (hundreds open in a test run: select() refused the next one)."""
    import gc

    path = tmp_path / "t.jsonl"
    path.write_bytes(SAMPLES[0].read_bytes() if content is None else content)
    gc.collect()
    gc.disable()
    try:
        before = len(list(Path("/proc/self/fd").iterdir()))
        streamed_check(str(path), False)
        after = len(list(Path("/proc/self/fd").iterdir()))
    finally:
        gc.enable()
    assert after == before


def _open_files() -> int:
    return len(list(Path("/proc/self/fd").iterdir()))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts the open descriptors in /proc")
@pytest.mark.parametrize("ends", ["whole", "interrupted while handing on"])
def test_a_checker_closes_its_files_however_its_run_ends_without_being_told(tmp_path, monkeypatch, ends):
    """Every caller of Checker.run (check --group, --baseline, the MCP server) gets its file and the spilled
    verdicts' file closed, even one that never calls close: else both stay open until a full collection."""
    import gc

    from tracetui.trace.checking import Checker
    from tracetui.trace.in_order import InOrder

    monkeypatch.setattr(InOrder, "MAX_WAITING", 2)  # the verdicts behind run a are spilled to a file
    run = b'{"rec":"run","run_id":"%s","trace_version":1,"producer":"x","inputs":{"source":"scenario"}}\n'
    summary = b'{"rec":"summary","run_id":"%s","status":"answer_ready","metrics":{"model_calls":1},"first_failure":null}\n'
    path = tmp_path / "t.jsonl"
    path.write_bytes(run % b"a" + b"".join(run % b"b%d" % k + summary % b"b%d" % k for k in range(10)))
    handed: list = []

    def on_verdict(verdict) -> None:
        if ends != "whole":
            raise KeyboardInterrupt
        handed.append(verdict["run_id"])

    gc.collect()
    gc.disable()
    try:
        before = _open_files()
        checker = Checker(str(path), on_verdict, lambda problem: None)
        try:
            checker.run()
        except KeyboardInterrupt:
            assert ends != "whole"
        spilled = checker._order.spilled
        after = _open_files()
    finally:
        gc.enable()
    assert spilled is not None and spilled.closed
    assert after == before
    assert handed == ([] if ends != "whole" else ["a", *(f"b{k}" for k in range(10))])
