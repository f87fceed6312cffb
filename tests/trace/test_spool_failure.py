"""Standard input is copied to a temporary file as it arrives: when that copy fails (a full disk, here a file
size limit, which fails the same writes), the command says so and fails, instead of checking the cut copy as
if it were the whole input (its last line reported malformed, the runs after it never counted)."""
from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 256 * 1024  # bytes any file of the process may hold


def _small_files_only() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def _check(args: list[str], data: bytes) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tracetui", "check", *args, "-"], input=data, capture_output=True,
                          preexec_fn=_small_files_only, timeout=120)


@pytest.mark.skipif(sys.platform == "win32", reason="a file size limit is POSIX")
@pytest.mark.parametrize("args", [[], ["--json"], ["--group"]])
@pytest.mark.parametrize("sample", ["ablations.jsonl", "otel-scenarios.jsonl"])
def test_a_copy_of_standard_input_that_cannot_be_written_fails_the_check(sample, args):
    data = (ROOT / "sample_traces" / sample).read_bytes()
    data *= 4 * LIMIT // len(data) + 1
    done = _check(args, data)
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "copying standard input to a temporary file" in err and "File too large" in err and "TMPDIR" in err
    assert "malformed" not in err  # the cut line is not blamed on the input


def test_the_same_input_within_the_limit_checks_as_ever():
    data = (ROOT / "sample_traces" / "ablations.jsonl").read_bytes()
    assert len(data) < LIMIT
    done = _check([], data)
    assert done.returncode in (0, 1) and b"run(s):" in done.stderr and b"copying" not in done.stderr


def test_the_runs_that_arrived_whole_are_checked_as_a_file_cut_there_would_be(tmp_path):
    """Whatever the timing, a copy cut at LIMIT bytes gives the verdicts of the input's whole lines before it."""
    data = (ROOT / "sample_traces" / "ablations.jsonl").read_bytes()
    data *= 4 * LIMIT // len(data) + 1
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(data[:data.rindex(b"\n", 0, LIMIT) + 1])
    expected = subprocess.run([sys.executable, "-m", "tracetui", "check", str(cut)], capture_output=True, timeout=120)
    done = _check([], data)
    assert done.returncode == 2 and done.stdout == expected.stdout and expected.stdout.count(b"\n") > 10


@pytest.mark.skipif(sys.platform == "win32", reason="a file size limit is POSIX")
def test_the_json_of_a_check_cut_short_says_why_in_the_document_itself():
    """A JSON consumer reads standard output only: a document of the runs so far must not look like a whole check."""
    import orjson

    sample = ROOT / "sample_traces" / "ablations.jsonl"
    data = sample.read_bytes()
    data *= 4 * LIMIT // len(data) + 1
    done = _check(["--json"], data)
    assert done.returncode == 2, done.stderr
    document = orjson.loads(done.stdout)
    assert document["runs"] and "copying standard input to a temporary file" in document["error"]
    assert document["problems"] == []
    assert "File too large" in document["error"]


def _failing_input():
    """Standard input whose reading fails at once: a directory read as a pipe (EISDIR), a real failure."""
    import os

    from tracetui.trace.spool import Spool

    fd = os.open(ROOT, os.O_RDONLY)
    spool = Spool(fd)
    spool.wait(30)
    os.close(fd)
    return spool


@pytest.mark.parametrize("follow", [False, True])
def test_a_failed_standard_input_beside_a_file_is_that_inputs_problem_and_the_file_is_read(follow):
    from tracetui.trace.index.source import IndexedSource

    spool = _failing_input()
    source = IndexedSource([spool, str(ROOT / "sample_traces" / "ablations.jsonl")], follow=follow)
    try:
        for progress in source.scan(poll=0.01):
            if progress.done or progress.caught_up:  # (a followed file is followed on: caught up is its end)
                break
        first, second = source._files
        assert first.done, "a copy that failed is not followed: it will not grow again"
        assert second.done != follow and len(source.runs()) > 5
        said = [p.message for p in source.problems()]
        assert any("reading standard input failed" in m for m in said), said
    finally:
        source.close()
        spool.close()
