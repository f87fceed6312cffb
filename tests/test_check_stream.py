"""``check`` and ``replay`` stream through the index: the same bytes as reading the trace whole.

The reference below is ``check`` as it was when it read the whole file with
:func:`~tracetui.trace.reader.read_trace` (and held every record). The streaming
``check`` must print exactly the same, on the sample traces and on damaged ones.
"""
from __future__ import annotations

import os

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
    from tracetui.trace.checking import _InOrder

    n = data.draw(st.integers(0, 60))
    undecided = data.draw(st.sets(st.integers(0, max(0, n - 1)), max_size=n)) if n else set()
    order = data.draw(st.permutations([r for r in range(n) if r not in undecided]))
    out: list = []
    in_order = _InOrder(out.append)
    in_order.MAX_WAITING = data.draw(st.integers(0, 8))
    for r in order:
        in_order.decided(r, ("summary", r))
    in_order.finish(n, lambda r: ("events", r))
    assert [r for _, r in out] == list(range(n))
    assert [kind for kind, r in out] == ["events" if r in undecided else "summary" for r in range(n)]


def _parallel_check_file(tmp_path, monkeypatch, request):
    """A damaged file of many ranges, checked with a worker process allowed (whatever the machine's load)
    and waited for (however fast the file is checked without it)."""
    from tracetui.trace import checking

    path = tmp_path / "big.jsonl"
    lines = b"".join(SAMPLES[i].read_bytes() for i in range(len(SAMPLES)))
    path.write_bytes(b"\xef\xbb\xbf" + lines * 3 + b"not json\n" + lines[:-40])
    want = streamed_check(str(path), False)
    monkeypatch.setattr(checking, "CHUNK_BYTES", 4096)
    return path, want, request.getfixturevalue("forced_worker")


def test_check_prepared_by_a_worker_process_prints_the_same(tmp_path, monkeypatch, request):
    path, want, split = _parallel_check_file(tmp_path, monkeypatch, request)
    assert streamed_check(str(path), False) == want
    assert split["worker"] > 0  # the worker did prepare ranges
    assert split["here"] + split["worker"] == -(-path.stat().st_size // 4096)  # each range once


#: a stand-in worker, started as the real one is: says it is ready, then fails every range it is asked
#: for, dies at the first, or stops answering (a stopped process)
_FAILING_WORKER = """
import os, pickle, struct, sys, time
from multiprocessing.connection import Connection
asks, answers = Connection(int(sys.argv[1]), writable=False), int(sys.argv[2])
def answer(message):
    data = pickle.dumps(message)
    os.write(answers, struct.pack("<Q", len(data)) + data)
how = asks.recv()["how"]
answer("ready")
while (k := asks.recv()) is not None:
    if how == "dies":
        os._exit(9)
    if how == "stalls":
        time.sleep(3600)
    if how == "stalls sending":  # the start of an answer, then nothing: stopped mid-write
        os.write(answers, struct.pack("<Q", 1000) + b"x" * 10)
        time.sleep(3600)
    if how == "sends junk":
        os.write(answers, struct.pack("<Q", 5) + b"junk!")
        continue
    answer("range %d: disk on fire" % k)
"""


@pytest.mark.parametrize("how", ["fails", "dies", "stalls", "stalls sending", "sends junk", "never starts"])
def test_check_prepares_the_ranges_of_a_worker_that_fails(tmp_path, monkeypatch, request, how):
    """A worker that cannot prepare its ranges (an error, it dies, it stalls) leaves them to the checking
    process: the same output, and a stalled worker costs at most a few waits."""
    import sys
    import time

    from tracetui.trace.index import parallel

    path, want, split = _parallel_check_file(tmp_path, monkeypatch, request)
    code = "import sys; sys.exit(3)" if how == "never starts" else _FAILING_WORKER
    monkeypatch.setattr(parallel, "_worker_command", lambda asks, answers: [sys.executable, "-c", code, str(asks),
                                                                             str(answers)])
    real_worker = parallel._Worker.__init__

    def configured(self, lines, chunk_bytes, strict):
        real_worker(self, lines, chunk_bytes, strict)
        self._send({"how": how})  # after the real configuration, which the stand-in reads first
    monkeypatch.setattr(parallel._Worker, "__init__", configured)
    started = time.monotonic()
    assert streamed_check(str(path), False) == want
    assert split["worker"] == 0 and split["here"] == -(-path.stat().st_size // 4096)
    assert time.monotonic() - started < 20


def test_a_worker_is_isolated_from_the_current_directory(tmp_path, monkeypatch, request):
    """A numpy.py (or tracetui/) where tracetui is run must not be imported by its worker."""
    import sys

    path, want, split = _parallel_check_file(tmp_path, monkeypatch, request)
    trap = tmp_path / "trap"
    trap.mkdir()
    for module in ("numpy", "tempfile", "struct"):  # tracetui's, and the standard library's the worker starts with
        (trap / f"{module}.py").write_text("open(__file__ + '.ran', 'w').close()\nraise ImportError('trap')\n")
    (trap / "tracetui").mkdir()
    (trap / "tracetui" / "__init__.py").write_text("open(__file__ + '.ran', 'w').close()\n")
    monkeypatch.chdir(trap)
    monkeypatch.setenv("PYTHONPATH", str(trap))
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".")])
    assert streamed_check(str(path), False) == want
    assert split["worker"] > 0
    assert not list(trap.rglob("*.ran"))


def test_a_dead_worker_pipe_is_never_read_again(tmp_path):
    """A worker that died is stopped and its pipe closed; its number may be given to the next file opened
    (a thread of the explorer may open one meanwhile), which must never be read as the worker's answers."""
    import signal

    from tracetui.trace.index import parallel
    from tracetui.trace.index.lines import FileLines

    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"rec":"event","run_id":"a","seq":1}\n' * 1000)
    lines = FileLines(0, str(path), path.stat().st_size, fd=os.open(path, os.O_RDONLY), by_name=False)
    opened: list[int] = []
    try:
        worker = parallel._Worker(lines, 4096, False)
        assert worker.has_started(wait=True)
        pipe = worker.inbox.fd
        worker.process.send_signal(signal.SIGKILL)
        worker.process.wait()
        assert worker.ready() is False and not worker.alive  # end of file: stopped
        while pipe not in opened and len(opened) < 64:
            opened.append(os.open(path, os.O_RDONLY))
        assert pipe in opened  # the number is another file's now
        assert worker.ready(0.05) is False
        assert all(os.lseek(other, 0, os.SEEK_CUR) == 0 for other in opened)  # nothing read from it
    finally:
        for other in opened:
            os.close(other)
        lines.close()


def test_a_worker_is_heard_whatever_its_pipe_number(tmp_path, monkeypatch, request):
    """A process with a thousand files open (the explorer's, a test run's) gets pipe numbers from 1024 on,
    which select(2) refuses: the check stopped with 'filedescriptor out of range in select()'."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
        request.addfinalizer(lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard)))
    path, want, split = _parallel_check_file(tmp_path, monkeypatch, request)
    held = []
    try:
        while not held or held[-1] < 1100:
            held.append(os.open(path, os.O_RDONLY))
        assert streamed_check(str(path), False) == want
    finally:
        for fd in held:
            os.close(fd)
    assert split["worker"] > 0


@pytest.mark.parametrize("sent", ["classification", "items"])
def test_a_range_the_file_changed_under_is_prepared_again(tmp_path, sent):
    """A step the worker prepared is taken as it is only while the file is as the worker saw it (its
    state right after the read, checksums of a few windows of its bytes); else its bytes are read here
    and its line ends must be where the worker found them, or the range is prepared again here."""
    from tracetui.trace.index import parallel
    from tracetui.trace.index.lines import FileLines
    from tracetui.trace.index.steps import prepare

    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"rec":"event","run_id":"a","seq":1}\n' * 100)
    fd = os.open(path, os.O_RDONLY)
    try:
        lines = FileLines(0, str(path), path.stat().st_size, fd=fd, by_name=False)

        def as_sent() -> object:
            prepared = prepare(lines, False, 0, lines.size, 1 << 20, final=True)
            prepared.worker_read = parallel._worker_read(prepared, parallel._file_state(fd))
            if sent == "items":
                prepared.chunk = None
            prepared.buf = b""  # (pickled without it)
            return prepared

        prepared = as_sent()
        assert parallel._same_bytes(lines, prepared) and prepared.buf == b""  # not read again
        original = path.read_bytes()
        path.write_bytes(original[:1000] + b'{"rec":"event","run_id":"ab","seq":2}\n' + original[1038:])
        assert path.stat().st_size == lines.size  # the same size, a line end moved in the middle
        assert not parallel._same_bytes(lines, prepared)

        path.write_bytes(original)
        prepared = as_sent()
        path.write_bytes(original.replace(b'"a"', b'"b"'))  # new bytes, the same line ends
        prepared.worker_read.seen = parallel._file_state(fd)  # as if written within one tick of the clock
        assert parallel._same_bytes(lines, prepared) and prepared.buf  # the windows told: read, lines checked
    finally:
        os.close(fd)


def test_a_worker_is_started_only_beside_an_idle_core(monkeypatch):
    from tracetui.trace.index import parallel

    def sampled(all_idle: tuple[tuple[int, int], tuple[int, int]], own: tuple[float, float]) -> bool:
        ticks, mine = iter(all_idle), iter(own)
        monkeypatch.setattr(parallel, "_cpu_times", lambda cpus: next(ticks))
        monkeypatch.setattr(parallel, "_own_ticks", lambda: next(mine))
        return parallel.IdleSample({0, 1}).spare()

    # 10 ticks of two cores, 5 idle: one core busy elsewhere
    assert sampled(((1000, 400), (1010, 405)), (0.0, 0.0)) is False
    # both idle while this process slept
    assert sampled(((1000, 400), (1010, 410)), (0.0, 0.0)) is True
    # one core busy in this very process (the explorer drawing its first frame): the other is free
    assert sampled(((1000, 400), (1010, 405)), (7.0, 12.0)) is True


@pytest.mark.parametrize("spare", [False, True])
def test_the_worker_starts_after_the_first_ranges_only_beside_an_idle_core(tmp_path, monkeypatch, spare):
    """The processors are sampled while this process prepares the first ranges itself; then a worker is
    started, or (a busy machine) never, and the output is the same either way."""
    from tracetui.trace import checking
    from tracetui.trace.index import parallel

    path = tmp_path / "big.jsonl"
    path.write_bytes(b"".join(sample.read_bytes() for sample in SAMPLES) * 3)
    want = streamed_check(str(path), False)
    monkeypatch.setattr(checking, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_CHUNKS", 2)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "usable_cpus", lambda: {0, 1})
    split: dict[str, int] = {}
    monkeypatch.setattr(parallel.IdleSample, "over", lambda self: split["here"] >= 3)  # the moment: 3 ranges
    monkeypatch.setattr(parallel.IdleSample, "spare", lambda self: spare)
    steps = parallel._parallel_steps
    started_after: list[int] = []  # ranges prepared here when the worker was started
    real_worker = parallel._Worker.__init__

    def counted(self, *args):
        started_after.append(split["here"])
        real_worker(self, *args)
    monkeypatch.setattr(parallel._Worker, "__init__", counted)
    monkeypatch.setattr(parallel, "_parallel_steps", lambda *args, **kwargs: steps(
        *args, **kwargs, split=split, wait_for_start=True))
    assert streamed_check(str(path), False) == want
    assert started_after == ([3] if spare else [])
    assert (split["worker"] > 0) is spare and split["here"] >= 3


def test_only_the_processors_this_process_may_use_count(monkeypatch):
    from tracetui.trace.index import parallel

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3})
    assert parallel.usable_cpus() == {3}
    assert parallel._cpu_times({3})[0] >= 0  # /proc/stat read for cpu3 alone (absent here: nothing counted)
    monkeypatch.setenv(parallel.SWITCH, "off")
    from tracetui.trace.index.lines import FileLines
    from tracetui.trace.index.runs import RunTable
    from tracetui.trace.index.scanner import Scanner

    lines = FileLines(0, "x", 1 << 40, fd=0, by_name=False)
    assert parallel.in_parallel(Scanner(lines, RunTable(), None), 1 << 20) is None  # switched off


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
