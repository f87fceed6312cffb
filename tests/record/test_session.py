"""record_command then replay_command with the same agent: the replay serves the recording, never the
network, and an unedited deterministic agent reproduces its run (same verdict, same requests)."""
from __future__ import annotations

import sys
import textwrap

from wire_helpers import KEY, Reply, ScriptedServer, chat_body
from wire_helpers import loopback_only  # noqa: F401  (autouse fixture)

from tracetui.record.session import default_run_id, record_command, replay_command
from tracetui.record.proxy import RecordingProxy
from tracetui.record.exchange import WireExchange

AGENT = """
import openai
client = openai.OpenAI(max_retries=0, timeout=20)
for question in ("one?", "two?"):
    client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": question}])
"""


def _exchanges(records) -> list[WireExchange]:
    attempts = [r["data"] for r in records if r.get("kind") == "http.attempt"]
    return [WireExchange(d["exchange"], d["request"]["provider"], d["request"], d["response"],
                         d["request"]["stream"]) for d in attempts]


def test_an_unedited_replay_reproduces_the_recorded_run(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    agent = tmp_path / "agent.py"
    agent.write_text(textwrap.dedent(AGENT))
    argv = [sys.executable, str(agent)]
    with ScriptedServer([Reply(body=chat_body("1")), Reply(body=chat_body("2"))]) as up:
        recorded = record_command(argv, {"openai": up.url}, None)
    exchanges = _exchanges(recorded)
    assert len(exchanges) == 2 and recorded[-1]["status"] == "answer_ready"
    # no upstream at all now: a request reaching the network would fail the loopback guard
    replayed = replay_command(exchanges, [ex.response for ex in exchanges], argv, "again",
                              command_hint=["python", "agent.py"])
    again = _exchanges(replayed)
    assert replayed[0]["inputs"]["source"] == "record" and replayed[0]["inputs"]["command_hint"] == ["python", "agent.py"]
    assert replayed[-1]["status"] == recorded[-1]["status"]
    assert [ex.request["body_sha256"] for ex in again] == [ex.request["body_sha256"] for ex in exchanges]
    assert not [r for r in replayed if r.get("kind") == "http.request_changed"]


def test_the_default_run_id_is_stable():
    assert default_run_id(["/usr/bin/python3", "agent.py"]) == "record-agent"
    assert default_run_id(["python3.11", "-u", "bots/shop_agent.py", "--stream"]) == "record-shop_agent"
    assert default_run_id(["python", "-m", "shop.bot"]) == "record-bot"
    assert default_run_id(["uv", "run", "agent.py"]) == "record-agent"
    assert default_run_id(["node", "dist/agent.js"]) == "record-agent"
    assert default_run_id(["./my-agent"]) == "record-my-agent"
    assert default_run_id(["python"]) == "record-python"
    assert default_run_id([]) == "record-agent"


def test_a_recording_proxy_is_never_started_by_a_replay(monkeypatch):
    started = []
    monkeypatch.setattr(RecordingProxy, "start", lambda self: started.append(self))
    replay_command([], [], [sys.executable, "-c", "pass"], "r")
    assert started == []


def test_the_agents_environment_keeps_the_endpoint_off_any_http_proxy():
    from tracetui.record.session import agent_env

    env = agent_env({"NO_PROXY": "corp.example", "HTTPS_PROXY": "http://proxy:3128", "KEEP": "1"},
                    {"OPENAI_BASE_URL": "http://127.0.0.1:5/v1"})
    assert env["NO_PROXY"] == "corp.example,127.0.0.1,localhost" and env["KEEP"] == "1"
    assert env["OPENAI_BASE_URL"] == "http://127.0.0.1:5/v1" and "no_proxy" not in env


def test_a_re_run_has_a_time_limit_which_the_environment_may_change(monkeypatch):
    from tracetui.record.session import REPLAY_TIMEOUT, replay_timeout

    monkeypatch.delenv("TRACETUI_REPLAY_TIMEOUT", raising=False)
    assert replay_timeout() == REPLAY_TIMEOUT == 300.0
    monkeypatch.setenv("TRACETUI_REPLAY_TIMEOUT", "12.5")
    assert replay_timeout() == 12.5
    for bad in ("0", "-3", "soon", "nan", "1e99"):
        monkeypatch.setenv("TRACETUI_REPLAY_TIMEOUT", bad)
        assert replay_timeout() == REPLAY_TIMEOUT


def test_a_re_run_that_hangs_is_stopped_at_its_time_limit(monkeypatch):
    import sys as _sys

    monkeypatch.setenv("TRACETUI_REPLAY_TIMEOUT", "0.5")
    records = replay_command([], [], [_sys.executable, "-c", "import time\nwhile True: time.sleep(1)"], "hung")
    last = [r for r in records if r["rec"] == "event"][-1]
    assert last["code"] == "agent_killed" and "time limit of 0.5 s" in last["summary"]
