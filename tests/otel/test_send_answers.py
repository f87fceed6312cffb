"""What a collector's answer proves: which runs arrived, a 200 that is not a collector's, a compressed bomb.

Every test runs a loopback collector (tests/otel/otlp_collector.py) and `tracetui export
--endpoint` (or :func:`send`) against it.
"""
from __future__ import annotations

import tracemalloc
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracetui.cli import main
from tracetui.otel import send as send_module
from tracetui.otel.export_map import run_spans
from tracetui.otel.send import MAX_ANSWER_BYTES, SendError, send
from tracetui.trace.reader import read_trace

from otlp_collector import Answer, Collector, success

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = str(ROOT / "sample_traces" / "scenarios.jsonl")
RUNS = ["single", "cross_tenant", "refusal", "truncated"]
MIB = 1 << 20


def export(url: str, *runs: str):
    args = ["export", SAMPLE, "--endpoint", url, "--timeout", "5"]
    for run in runs:
        args += ["--run", run]
    return CliRunner().invoke(main, args)


@pytest.fixture
def one_run_per_request(monkeypatch):
    monkeypatch.setattr(send_module, "BATCH_SPANS", 1)  # a run never splits: each goes alone


def test_a_refused_second_request_says_which_runs_arrived(one_run_per_request):
    """Batch 1 accepted, batch 2 refused: the runs of batch 1 arrived, those of 2 did not, 3 and 4 were not sent."""
    with Collector([success(), Answer(413, "text/plain", b"request too large")]) as collector:
        result = export(collector.url, *RUNS)
    assert len(collector.requests) == 2 and collector.run_ids(0) == ["single"]
    assert collector.run_ids(1) == ["cross_tenant"]
    assert result.exit_code == 2
    err = result.stderr
    assert "the collector answered 413: request too large" in err
    assert "delivered: 1 of 4 run(s) in 1 request(s)" in err and err.count(": single") == 1
    assert "not delivered: request 2 was refused: 1 run(s): cross_tenant" in err
    assert "not sent: 2 run(s) after it: refusal, truncated" in err
    assert "sent 4 run(s)" not in err


def test_a_refusal_of_the_first_request_lists_nothing_as_delivered(one_run_per_request):
    with Collector([Answer(400, "text/plain", b"bad request")]) as collector:
        result = export(collector.url, *RUNS)
    assert result.exit_code == 2 and "answered 400" in result.stderr and "delivered" not in result.stderr


def test_every_request_accepted_is_sent(one_run_per_request):
    answers = [success(), success(rejected=2, message="too old"), Answer(200, "application/json", b"{}"),
               Answer(200, None, b"")]  # JSON, and an empty answer without a type (as Phoenix answers)
    with Collector(answers) as collector:
        result = export(collector.url, *RUNS)
    assert len(collector.requests) == 4
    assert result.exit_code == 1 and "sent 4 run(s)" in result.stderr  # 1: the collector rejected 2 spans
    assert "the collector rejected 2" in result.stderr and "collector: too old" in result.stderr


def test_a_json_partial_success_is_read():
    body = b'{"partialSuccess": {"rejectedSpans": "3", "errorMessage": "quota"}}'  # int64 as a string, as OTLP/JSON
    with Collector([Answer(200, "application/json; charset=utf-8", body)]) as collector:
        result = export(collector.url, "single")
    assert result.exit_code == 1 and "rejected 3" in result.stderr and "collector: quota" in result.stderr


@pytest.mark.parametrize("answer", [
    Answer(200, "text/html; charset=utf-8", b"<!DOCTYPE html><html><title>Sign in</title><body>Log in</body></html>"),
    Answer(200, "text/html", b""),
    Answer(200, "application/json", b'["not", "a", "response"]'),
    Answer(200, "application/x-protobuf", b"\xff\xff\xff"),
], ids=["login page", "empty html", "json list", "broken protobuf"])
def test_a_200_that_is_not_an_otlp_answer_is_not_sent(answer):
    """A proxy's or a login wall's page says 200 and delivers nothing: the export must not say "sent"."""
    with Collector([answer]) as collector:
        result = export(collector.url, "single")
    assert len(collector.requests) == 1
    assert result.exit_code == 2, result.stderr
    assert "sent 1 run(s)" not in result.stderr and "not known to have arrived" in result.stderr
    if answer.content_type.startswith("text/html"):
        assert "with text/html, not with an OTLP ExportTraceServiceResponse" in result.stderr


def _gzip_bomb(decoded_mib: int) -> bytes:
    """Gzip of ``decoded_mib`` MiB of zeros, about 1 KiB per MiB (a full flush lets one block repeat)."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = deflate.compress(b"\0" * MIB) + deflate.flush(zlib.Z_FULL_FLUSH)
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + block * decoded_mib + deflate.flush()


def test_a_gzip_bomb_is_inflated_only_up_to_the_cap():
    """200 KB of gzip inflating to 200 MiB: reading stops at the cap, and no more than about the cap is ever
    held (tracemalloc counts zlib's output: httpx inflated each 64 KiB read whole, 64 MiB at a time)."""
    bomb = _gzip_bomb(200)
    raw = (b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-encoding: gzip\r\n"
           b"content-length: %d\r\nconnection: close\r\n\r\n" % len(bomb)) + bomb
    runs = [run_spans(read_trace(SAMPLE).runs["single"])]
    with Collector([Answer(raw=raw)]) as collector:
        tracemalloc.start()
        try:
            with pytest.raises(SendError) as refused:
                send(collector.url, runs, timeout_s=5)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 4 * MAX_ANSWER_BYTES + 2 * len(bomb), f"peak {peak:,} bytes"
    assert f"over {MAX_ANSWER_BYTES:,} bytes once inflated; not read further" in str(refused.value)
    assert collector.requests[0]["headers"]["accept-encoding"] == "gzip, deflate"  # only what is inflated here


def test_a_compressed_answer_within_the_cap_is_read():
    import gzip

    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

    response = trace_service_pb2.ExportTraceServiceResponse()
    response.partial_success.rejected_spans = 1
    response.partial_success.error_message = "late"
    body = gzip.compress(response.SerializeToString())
    runs = [run_spans(read_trace(SAMPLE).runs["single"])]
    with Collector([Answer(200, "application/x-protobuf", body, headers={"content-encoding": "gzip"})]) as collector:
        report = send(collector.url, runs, timeout_s=5)
    assert (report.rejected, report.messages, report.runs) == (1, ("late",), 1)
