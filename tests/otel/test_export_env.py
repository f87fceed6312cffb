"""``tracetui export`` configured as every OpenTelemetry exporter is: OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT,
_PROTOCOL, _TIMEOUT and _COMPRESSION, the per-signal variables over the general ones and flags over both;
proven against a capture collector on 127.0.0.1."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from otlp_collector import Collector, success

from tracetui.cli import main
from tracetui.otel.exporter_env import SettingError, settings

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = str(ROOT / "sample_traces" / "fault-429.jsonl")
CLEAN = {name: None for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                                 "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
                                 "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
                                 "OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
                                 "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS")}


def _export(args, **env):
    return CliRunner().invoke(main, ["export", SAMPLE, *args], env={**CLEAN, **env})


def _root_names(request) -> list[str]:
    return [s.name for r in request.resource_spans for sc in r.scope_spans for s in sc.spans if not s.parent_span_id]


def test_the_general_endpoint_gets_v1_traces_appended_and_protobuf_by_default():
    with Collector([success()]) as collector:
        result = _export([], OTEL_EXPORTER_OTLP_ENDPOINT=collector.url + "/base/")
    assert result.exit_code == 0, result.output
    [request] = collector.requests
    assert request["path"] == "/base/v1/traces"
    assert request["headers"]["content-type"] == "application/x-protobuf"
    assert "content-encoding" not in request["headers"]
    assert _root_names(request["request"]) == ["invoke_agent tracetui"]


def test_the_traces_endpoint_is_taken_as_it_is_and_wins_over_the_general_one():
    with Collector([success()]) as collector:
        result = _export([], OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=collector.url,
                         OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9/never")
    assert result.exit_code == 0, result.output
    assert collector.requests[0]["path"] == "/"


def test_json_and_gzip_from_the_variables_and_the_collector_decodes_them():
    with Collector([success()]) as collector:
        result = _export([], OTEL_EXPORTER_OTLP_ENDPOINT=collector.url, OTEL_EXPORTER_OTLP_PROTOCOL="http/json",
                         OTEL_EXPORTER_OTLP_COMPRESSION="gzip")
    assert result.exit_code == 0, result.output
    [request] = collector.requests
    assert request["headers"]["content-type"] == "application/json"
    assert request["headers"]["content-encoding"] == "gzip" and request["raw"][:2] == b"\x1f\x8b"
    assert _root_names(request["request"]) == ["invoke_agent tracetui"]


def test_flags_win_over_the_variables():
    with Collector([success()]) as collector, Collector([success()]) as elsewhere:
        result = _export(["--endpoint", collector.url, "--protocol", "http/protobuf", "--compression", "none"],
                         OTEL_EXPORTER_OTLP_ENDPOINT=elsewhere.url, OTEL_EXPORTER_OTLP_PROTOCOL="http/json",
                         OTEL_EXPORTER_OTLP_COMPRESSION="gzip")
    assert result.exit_code == 0, result.output
    assert not elsewhere.requests
    [request] = collector.requests
    assert request["path"] == "/v1/traces" and request["headers"]["content-type"] == "application/x-protobuf"
    assert "content-encoding" not in request["headers"]


def test_a_file_is_written_whatever_the_variables_say(tmp_path):
    result = _export(["-o", str(tmp_path / "spans.jsonl")], OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9")
    assert result.exit_code == 0 and (tmp_path / "spans.jsonl").read_bytes().startswith(b'{"resourceSpans"')


def test_timeout_and_precedence_of_the_per_signal_variables():
    env = {"OTEL_EXPORTER_OTLP_TIMEOUT": "2500", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "1500",
           "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
           "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none"}
    got = settings(environ=env)
    assert (got.timeout_s, got.protocol, got.compression, got.endpoint) == (1.5, "http/protobuf", None, None)
    assert settings(timeout_s=4.0, environ=env).timeout_s == 4.0  # the flag, in seconds, wins
    assert settings(environ={}).timeout_s == 10.0


@pytest.mark.parametrize("env, said", [
    ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: tracetui sends OTLP over HTTP"),
    ({"OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}, "OTEL_EXPORTER_OTLP_TIMEOUT=soon: expected milliseconds"),
    ({"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "zstd"}, "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=zstd: expected gzip"),
])
def test_a_variable_no_exporter_could_use_is_refused_in_words(env, said):
    with pytest.raises(SettingError, match=said):
        settings(environ=env)
    result = _export([], OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9", **env)
    assert result.exit_code == 2 and said in result.output


@pytest.mark.parametrize("endpoint", ["http://alice:s3cret@[::1", "htp//alice:s3cret@collector.example",
                                      "file:///etc/alice:s3cret", "ftp://alice:s3cret@collector.example"])
@pytest.mark.parametrize("where", ["variable", "flag"])
def test_an_endpoint_that_is_no_http_url_is_refused_in_words_without_repeating_it(endpoint, where):
    result = (_export([], OTEL_EXPORTER_OTLP_ENDPOINT=endpoint) if where == "variable"
              else _export(["--endpoint", endpoint]))
    assert result.exit_code == 2, result.output  # words, no traceback
    assert "error:" in result.output and "http(s) URL" in result.output, result.output
    assert "s3cret" not in result.output and "alice" not in result.output
    if where == "variable":
        assert "OTEL_EXPORTER_OTLP_ENDPOINT" in result.output


def test_the_general_endpoint_keeps_its_query_after_the_path():
    got = settings(environ={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318/base?tenant=a"})
    assert got.endpoint == "http://127.0.0.1:4318/base/v1/traces?tenant=a"


def test_a_header_written_with_a_colon_never_shows_its_token():
    # "Name: value" instead of "Name=value"; a base64 token's "=" padding makes the rest look like a name
    result = _export([], OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9",
                     OTEL_EXPORTER_OTLP_HEADERS="x-honeycomb-team: hcaik01hgsecretvalue=")
    assert result.exit_code == 2 and "not a header name" in result.output, result.output
    assert "hcaik01hgsecretvalue" not in result.output
    assert "x-honeycomb-team" in result.output  # which header it is, said
