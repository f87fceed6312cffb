"""Where ``tracetui record`` forwards: a base URL the agent's environment already sets is where its key is
meant to go, so it stays the upstream unless ``--upstream`` says otherwise (review 21b)."""
from __future__ import annotations

import sys

import orjson
import pytest
from click.testing import CliRunner

from wire_helpers import KEY, Reply, ScriptedServer, chat_body
from wire_helpers import loopback_only  # noqa: F401  (autouse fixture)

from tracetui.cli import main
from tracetui.record.routes import DEFAULT_UPSTREAMS, UpstreamError, parse_upstreams, public_root


def test_a_base_url_in_the_environment_is_the_upstream_of_its_vendor():
    env = {"OPENAI_BASE_URL": "https://openrouter.example/api/v1/", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"}
    assert parse_upstreams([], env) == {"openai": "https://openrouter.example/api", "anthropic": "http://127.0.0.1:9",
                                        "gemini": DEFAULT_UPSTREAMS["gemini"]}
    assert parse_upstreams(["openai=http://a"], env)["openai"] == "http://a"  # --upstream wins
    assert parse_upstreams(["http://all"], env) == dict.fromkeys(DEFAULT_UPSTREAMS, "http://all")
    assert parse_upstreams([]) == DEFAULT_UPSTREAMS  # no environment given: the public roots


@pytest.mark.parametrize("base", ["https://my.azure.example/openai/deployments/d", "localhost:8000/v1"])
def test_a_base_url_that_cannot_be_kept_is_refused_rather_than_sent_elsewhere(base):
    with pytest.raises(UpstreamError, match="--upstream openai="):
        parse_upstreams([], {"OPENAI_BASE_URL": base})
    assert parse_upstreams(["openai=http://ok"], {"OPENAI_BASE_URL": base})["openai"] == "http://ok"


def test_a_password_in_a_root_is_never_shown():
    assert public_root("https://user:pw@host:8/x") == "https://host:8/x"
    assert public_root("https://host") == "https://host"


def test_record_forwards_to_the_base_url_the_agent_already_had(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    agent = ("import openai; c = openai.OpenAI(max_retries=0, timeout=20); "
             "print(c.chat.completions.create(model='m', messages=[]).choices[0].message.content)")
    with ScriptedServer([Reply(body=chat_body("from my server"))]) as up:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{up.url}/v1")
        result = CliRunner().invoke(main, ["record", "-o", str(tmp_path / "r.jsonl"), "--", sys.executable, "-c",
                                           agent], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert "answer_ready" in result.stderr
    run = orjson.loads((tmp_path / "r.jsonl").read_bytes().splitlines()[0])
    assert run["inputs"]["upstream"]["openai"] == up.url
    assert up.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"  # the key went where it was meant to
