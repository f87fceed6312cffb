"""Reading runs back from Arize Phoenix itself: ``phoenix+http://HOST:PORT/PROJECT`` as FILE of open, check, export.

A real Phoenix on 127.0.0.1 (the fixture of test_phoenix.py) gets the samples with ``tracetui export
--endpoint`` (and, as a foreign producer's trace, the same spans with every ``tracetui.*`` attribute
stripped); ``check --json`` of the source must give every verdict ``check --json`` of the exported
OTLP file gives. The bounds (an unreachable server, a redirect elsewhere, a refused key) are proven
against httpx mock transports or a closed port, without Phoenix.
"""
from __future__ import annotations

import hashlib
import json
import socket
import time

import httpx
import orjson
import pytest
from click.testing import CliRunner
from test_phoenix import SAMPLES, phoenix  # noqa: F401  (the fixture: a Phoenix server of this module's own)

from tracetui.cli import main
from tracetui.otel import phoenix_source
from tracetui.otel.backend import Query, parse_since
from tracetui.otel.export_json import traces_line
from tracetui.otel.export_map import run_spans
from tracetui.otel.phoenix_source import PhoenixError, read_phoenix
from tracetui.otel.spans import SpanEvent
from tracetui.trace.reader import read_trace

INGEST_S = 60  # a bound on Phoenix's background ingest; the wait ends as soon as every run is there
LATER = "2026-01-01T00:00:00Z"  # retries-then-ok is sent as if run then: --since tells the two files apart
FOREIGN = "foreign"


def _json(result) -> dict:
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _verdicts(document: dict) -> dict[str, tuple]:
    """run id → (status, outcome, first failing lane, code, seq, reason): what a verdict is made of."""
    out = {}
    for v in document["runs"]:
        failure = v["first_failure"] or {}
        out[v["run_id"]] = (v["status"], v["outcome"], failure.get("lane"), failure.get("code"),
                            failure.get("seq"), failure.get("reason"), v.get("trace_id"))
    return out


def _foreign(spans):
    """The spans as another producer's: no ``tracetui.*`` attribute, and ids of their own (Phoenix keeps one
    copy of a span id across projects)."""
    def new(value: str, size: int) -> str:
        return hashlib.sha256(b"foreign:" + value.encode()).hexdigest()[:size]

    for span in spans:
        span.trace_id, span.span_id = new(span.trace_id, 32), new(span.span_id, 16)
        span.parent_span_id = new(span.parent_span_id, 16) if span.parent_span_id else ""
        span.attributes = {k: v for k, v in span.attributes.items() if not k.startswith("tracetui.")}
        span.events = [SpanEvent(e.name, e.time_ns, {k: v for k, v in e.attributes.items()
                                                     if not k.startswith("tracetui.")}) for e in span.events]
    return spans


def _send_to_project(base: str, spans, project: str) -> None:
    """OTLP/HTTP to Phoenix with the resource attribute that names its project (tracetui export names none)."""
    from opentelemetry.proto.common.v1 import common_pb2

    from tracetui.otel.export_proto import export_request

    request = export_request(spans)
    request.resource_spans[0].resource.attributes.add(key="openinference.project.name",
                                                      value=common_pb2.AnyValue(string_value=project))
    answer = httpx.post(f"{base}/v1/traces", content=request.SerializeToString(),
                        headers={"Content-Type": "application/x-protobuf"}, timeout=30)
    assert answer.status_code == 200, answer.text


@pytest.fixture(scope="module")
def loaded(phoenix, tmp_path_factory):  # noqa: F811
    """Phoenix holding scenarios.jsonl (2025) and retries-then-ok.jsonl (2026) in ``default`` and the
    scenarios as a foreign trace in ``foreign``; the OTLP files that were sent, to compare with."""
    work = tmp_path_factory.mktemp("sent")
    runner = CliRunner()
    files = {}
    for name, start in (("scenarios.jsonl", None), ("retries-then-ok.jsonl", LATER)):
        at = ["--start", start] if start else []
        sent = runner.invoke(main, ["export", str(SAMPLES / name), "--endpoint", phoenix, *at])
        assert sent.exit_code == 0, sent.output
        files[name] = work / f"sent-{name}"
        written = runner.invoke(main, ["export", str(SAMPLES / name), "-o", str(files[name]), *at])
        assert written.exit_code == 0, written.output
    foreign = [_foreign(run_spans(run, content=True)) for run in read_trace(SAMPLES / "scenarios.jsonl").runs.values()]
    files[FOREIGN] = work / "foreign.jsonl"
    files[FOREIGN].write_bytes(b"".join(traces_line(spans) for spans in foreign))
    _send_to_project(phoenix, [s for spans in foreign for s in spans], FOREIGN)
    expected = {"default": sum(len(read_trace(SAMPLES / n).runs) for n in ("scenarios.jsonl", "retries-then-ok.jsonl")),
                FOREIGN: len(foreign)}
    _await_ingest(phoenix, expected)
    return phoenix, files


def _await_ingest(base: str, expected: dict[str, int]) -> None:
    """Until Phoenix lists every span sent (it ingests in the background, in order of arrival)."""
    deadline = time.monotonic() + INGEST_S
    for project, runs in expected.items():
        while True:
            try:
                got = read_phoenix(f"phoenix+{base}/{project}", Query())
                if len(got.runs) >= runs and all(r.summary is not None for r in got.runs.values()):
                    break
            except PhoenixError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"Phoenix did not hold the {runs} runs of {project!r} after {INGEST_S} s")
            time.sleep(0.5)


def _check(*args: str) -> dict:
    return _json(CliRunner().invoke(main, ["check", "--json", *args]))


def test_every_verdict_read_back_from_phoenix_is_the_exported_files(loaded, monkeypatch):
    base, files = loaded
    monkeypatch.setattr(phoenix_source, "TRACES_PAGE", 7)  # pages of both kinds, read through their cursors
    monkeypatch.setattr(phoenix_source, "SPANS_PAGE", 11)
    back = _verdicts(_check(f"phoenix+{base}/default"))
    sent = {name: verdict for f in ("scenarios.jsonl", "retries-then-ok.jsonl")
            for name, verdict in _verdicts(_check(str(files[f]))).items()}
    assert back == sent
    assert len(sent) > 30 and any(v[2] for v in sent.values()) and any(not v[2] for v in sent.values())


def test_a_foreign_trace_reads_back_as_its_file_does(loaded):
    """No tracetui.* attribute: the generic rules decide, and Phoenix's loss of the span kind is made good
    (an HTTP client span that broke is the http lane's, as in the file)."""
    base, files = loaded
    back, sent = _verdicts(_check(f"phoenix+{base}/{FOREIGN}")), _verdicts(_check(str(files[FOREIGN])))
    assert back == sent
    assert "http" in {v[2] for v in sent.values()}


def test_status_error_gives_only_the_failing_runs_and_ok_the_ready_ones(loaded):
    base, files = loaded
    every = _verdicts(_check(f"phoenix+{base}/default"))
    failing = _verdicts(_check(f"phoenix+{base}/default", "--status", "error"))
    ready = _verdicts(_check(f"phoenix+{base}/default", "--status", "ok"))
    assert failing == {k: v for k, v in every.items() if v[1] != "ready"} and failing
    assert ready == {k: v for k, v in every.items() if v[1] == "ready"} and ready


def test_limit_and_since_choose_the_newest_runs(loaded):
    base, files = loaded
    later = set(_verdicts(_check(str(files["retries-then-ok.jsonl"]))))
    assert len(_check(f"phoenix+{base}/default", "--limit", "4")["runs"]) == 4
    assert set(_verdicts(_check(f"phoenix+{base}/default", "--limit", str(len(later))))) == later  # newest first
    assert set(_verdicts(_check(f"phoenix+{base}/default", "--since", "2025-06-01"))) == later
    failing = _check(f"phoenix+{base}/default", "--status", "error", "--limit", "2")["runs"]
    assert len(failing) == 2 and all(not v["ready"] for v in failing)
    none = CliRunner().invoke(main, ["check", f"phoenix+{base}/default", "--since", "2099-01-01"])
    assert none.exit_code == 0 and "0 run(s)" in none.stderr


def test_export_and_open_read_the_same_source(loaded, tmp_path):
    from tracetui.ui.app import open_paths

    base, files = loaded
    out = tmp_path / "failing.jsonl"
    exported = CliRunner().invoke(main, ["export", f"phoenix+{base}/default", "--status", "error", "-o", str(out)])
    assert exported.exit_code == 0, exported.output
    failing = _verdicts(_check(f"phoenix+{base}/default", "--status", "error"))
    assert {k: v[:6] for k, v in _verdicts(_check(str(out))).items()} == {k: v[:6] for k, v in failing.items()}
    source = open_paths([f"phoenix+{base}/default"], query=Query(status="error"))
    assert {entry.run_id for entry in source.runs()} == set(failing)


def test_a_missing_project_is_named_with_the_projects_there(loaded):
    base, _ = loaded
    result = CliRunner().invoke(main, ["check", f"phoenix+{base}/nope"])
    assert result.exit_code == 2
    assert "has no project 'nope'" in result.stderr and "'default'" in result.stderr


# -- without Phoenix --------------------------------------------------------------------------------------
def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_server_is_exit_2_with_a_sentence():
    result = CliRunner().invoke(main, ["check", "--json", f"phoenix+http://127.0.0.1:{_closed_port()}/default"])
    assert result.exit_code == 2
    assert "cannot be reached" in result.stderr and "is it running" in result.stderr
    assert "Traceback" not in result.output


def test_the_filters_are_refused_for_a_file():
    for command in (["check"], ["export", "-o", "-"], ["open"]):
        result = CliRunner().invoke(main, [*command, str(SAMPLES / "scenarios.jsonl"), "--status", "error"])
        assert result.exit_code == 2 and "backend source" in result.output, command


def test_since_reads_iso_times_and_times_back_from_now():
    from datetime import datetime, timezone

    now = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
    assert parse_since("2h", now) == datetime(2026, 3, 1, 10, tzinfo=timezone.utc)
    assert parse_since("2026-02-01T00:00:00Z") == datetime(2026, 2, 1, tzinfo=timezone.utc)
    assert parse_since("2026-02-01") == datetime(2026, 2, 1, tzinfo=timezone.utc)
    with pytest.raises(ValueError, match="neither an ISO 8601 time"):
        parse_since("yesterday")


def _one_trace_app(seen: list[httpx.Request], first_status: int = 200, location: str | None = None):
    """A Phoenix that holds one trace of one span (a run tracetui exported), behind an optional redirect."""
    run = next(iter(read_trace(SAMPLES / "scenarios.jsonl").runs.values()))
    line = orjson.loads(traces_line(run_spans(run)))
    spans = [{**s, "trace_id": s["traceId"], "span_id": s["spanId"],
              "parent_span_id": s.get("parentSpanId"), "start_time_unix_nano": s["startTimeUnixNano"]}
             for s in line["resourceSpans"][0]["scopeSpans"][0]["spans"]]

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if len(seen) == 1 and location:
            return httpx.Response(first_status, headers={"location": location})
        if first_status != 200 and not location:
            return httpx.Response(first_status, json={"detail": "nope"})
        if request.url.path.endswith("/traces"):
            return httpx.Response(200, json={"data": [{"trace_id": spans[0]["trace_id"]}], "next_cursor": None})
        return httpx.Response(200, json={"data": spans, "next_cursor": None})

    return httpx.MockTransport(handle), run


def test_the_api_key_is_sent_as_a_bearer_and_never_said(monkeypatch):
    monkeypatch.setenv("PHOENIX_API_KEY", "px-secret-123")
    seen: list[httpx.Request] = []
    transport, run = _one_trace_app(seen)
    trace = read_phoenix("phoenix+http://phoenix.test:6006/default", Query(), transport)
    assert list(trace.runs) == [run.run_id]
    assert {r.headers.get("authorization") for r in seen} == {"Bearer px-secret-123"}
    refused: list[httpx.Request] = []
    transport, _ = _one_trace_app(refused, first_status=401)
    with pytest.raises(PhoenixError) as error:
        read_phoenix("phoenix+http://phoenix.test:6006/default", Query(), transport)
    assert "refused access (401)" in str(error.value) and "px-secret-123" not in str(error.value)


def test_a_redirect_is_followed_on_the_same_host_only():
    seen: list[httpx.Request] = []
    transport, run = _one_trace_app(seen, 307, "/root/v1/projects/default/traces?limit=100")
    assert list(read_phoenix("phoenix+http://phoenix.test:6006/default", Query(), transport).runs) == [run.run_id]
    away: list[httpx.Request] = []
    transport, _ = _one_trace_app(away, 302, "http://elsewhere.test/v1/projects/default/traces")
    with pytest.raises(PhoenixError, match="another host: not followed"):
        read_phoenix("phoenix+http://phoenix.test:6006/default", Query(), transport)
    assert [r.url.host for r in away] == ["phoenix.test"]


def test_a_source_without_a_project_or_with_credentials_is_refused_in_words():
    with pytest.raises(PhoenixError, match="no project"):
        read_phoenix("phoenix+http://127.0.0.1:6006", Query())
    with pytest.raises(PhoenixError, match="PHOENIX_API_KEY"):
        read_phoenix("phoenix+http://user:pw@127.0.0.1:6006/default", Query())
