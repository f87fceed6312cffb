"""A run imported from OTel is named after its agent or root span, cut to a width: a secret in that name is
redacted before it is cut, else the cut piece no longer looks like a secret and is printed (``check``,
``--group``, JUnit's commands all name runs)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner
from otel_builders import span, traces_data, write

from tracetui.cli import main

KEY = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXyz0123456789abcd"


@pytest.mark.parametrize("where", ["agent", "root"])
@pytest.mark.parametrize("args", [["check"], ["check", "--json"], ["check", "--group"]])
def test_a_secret_in_the_name_a_run_is_given_is_never_printed_even_in_part(tmp_path, where, args):
    name = f"billing agent {KEY}"  # (slugged, the space became "_": a key after "_" reads as a word)
    root = span(name if where == "root" else "invoke_agent", "00000000000000a1", "", 0, 10,
                gen_ai__operation__name="invoke_agent", **({"gen_ai__agent__name": name} if where == "agent" else {}))
    chat = span("chat m", "00000000000000a2", root["spanId"], 1, 5, gen_ai__operation__name="chat", status=2,
                message="upstream failed")
    path = write(tmp_path / "spans.jsonl", traces_data(root, chat))
    result = CliRunner().invoke(main, [*args, path])
    out = result.output
    assert "billing_agent" in out, out
    for cut in range(12, len(KEY)):  # no piece of the key long enough to be worth anything
        assert KEY[:cut][-12:] not in out, (cut, out)
