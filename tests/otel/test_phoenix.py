"""A real backend: export the sample runs to Arize Phoenix over OTLP/HTTP and read them back with its client.

The test starts Phoenix itself (127.0.0.1, a free port, its database in a
temporary directory, telemetry off), waits a bounded time for it, and stops it.
"""
from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from tracetui.cli import main
from tracetui.trace.reader import read_trace

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_traces"
EXPORTED = ("scenarios.jsonl", "retries-then-ok.jsonl")
STARTUP_S, INGEST_S = 120, 60  # generous bounds on a shared 2-core machine; both end early when ready


def phoenix_python() -> str:
    """The interpreter that has the Phoenix server: TRACETUI_PHOENIX_PYTHON, the venv .ci/run makes, or this one.

    Phoenix pins dependencies (the anthropic SDK) below the versions the wire is proven
    against, so it lives in an environment of its own; without one the test says how to make it.
    """
    named = os.environ.get("TRACETUI_PHOENIX_PYTHON")
    if named:
        return named
    venv = ROOT / ".venv-phoenix" / "bin" / "python"
    if venv.exists():
        return str(venv)
    if importlib.util.find_spec("phoenix") is not None and importlib.util.find_spec("phoenix.server") is not None:
        return sys.executable
    pytest.skip("no Phoenix server environment: python3 -m venv .venv-phoenix && "
                ".venv-phoenix/bin/pip install '.[phoenix-server]' (.ci/run does this)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    work = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(_free_port()), "PHOENIX_TELEMETRY_ENABLED": "false",
           "PHOENIX_SQL_DATABASE_URL": f"sqlite:///{work / 'phoenix.db'}"}
    env.pop("PHOENIX_COLLECTOR_ENDPOINT", None)
    log = open(work / "server.log", "wb")
    proc = subprocess.Popen([phoenix_python(), str(Path(__file__).with_name("phoenix_server.py"))], env=env,
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"Phoenix exited with {proc.returncode}:\n{(work / 'server.log').read_text()[-3000:]}")
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"Phoenix did not start in {STARTUP_S} s:\n{(work / 'server.log').read_text()[-3000:]}")
            time.sleep(0.5)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()


def _spans(client, expected: set[tuple[str, str]]) -> list:
    """Every span Phoenix holds, once every exported span has arrived (it ingests in the background, in order)."""
    deadline = time.monotonic() + INGEST_S
    while True:
        spans = client.spans.get_spans(project_identifier="default", limit=5000, timeout=30)
        if expected <= {(s["context"]["trace_id"], s["context"]["span_id"]) for s in spans}:
            return spans
        if time.monotonic() > deadline:
            pytest.fail(f"Phoenix holds {len(spans)} of {len(expected)} spans after {INGEST_S} s")
        time.sleep(0.5)


def test_phoenix_receives_and_returns_the_runs(phoenix):
    from phoenix.client import Client

    runs = {name: run for f in EXPORTED for name, run in read_trace(SAMPLES / f).runs.items()}
    runner = CliRunner()
    # the first file twice (the same ids: the backend keeps one copy), then the second, which arrives last
    for f in (EXPORTED[0], *EXPORTED):
        result = runner.invoke(main, ["export", str(SAMPLES / f), "--endpoint", phoenix])
        assert result.exit_code == 0, result.output
        assert "sent" in result.output
    expected = _expected_spans(runs)
    client = Client(base_url=phoenix)
    spans = _spans(client, expected)
    assert len(spans) == len(expected)  # the second copy of the first file added nothing
    roots = {s["attributes"]["tracetui.run.id"]: s for s in spans if s.get("parent_id") is None}
    assert set(roots) == set(runs)
    for name, run in runs.items():
        root, verdict = roots[name], run.verdict()
        assert root["name"] == "invoke_agent tracetui"
        failure = verdict["first_failure"]
        if failure is None:
            assert root["status_code"] != "ERROR", name
        else:
            assert root["status_code"] == "ERROR", name
            attrs = root["attributes"]
            assert attrs["error.type"] == failure["code"]
            assert (attrs["tracetui.failure.lane"], attrs["tracetui.failure.seq"]) == (failure["lane"], failure["seq"])
            assert attrs["tracetui.failure.reason"] == failure["reason"]
    names = {s["name"] for s in spans}
    assert {"invoke_agent tracetui", "chat fake-model", "POST", "execute_tool read_order"} <= names
    tool_ids = {(s["context"]["trace_id"], s["attributes"]["gen_ai.tool.call.id"])
                for s in spans if s["name"].startswith("execute_tool")}
    trace_of = {name: roots[name]["context"]["trace_id"] for name in runs}
    assert (trace_of["cross_tenant"], "call-1") in tool_ids and (trace_of["parallel"], "call-2") in tool_ids
    denied = next(s for s in spans if s["context"]["trace_id"] == trace_of["cross_tenant"]
                  and s["name"] == "execute_tool read_order")
    assert denied["status_code"] == "ERROR"
    assert [e["name"] for e in denied["events"]] == ["arguments.validate", "authorization.check"]


def _expected_spans(runs) -> set[tuple[str, str]]:
    from tracetui.otel.export_map import run_spans

    return {(s.trace_id, s.span_id) for run in runs.values() for s in run_spans(run)}
