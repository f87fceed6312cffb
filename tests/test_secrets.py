"""Every secret shape, every form it travels in, never survives redaction; ordinary text is left alone.

The corpora live in ``secret_corpus.py``. Paths covered here: the trace writer,
terminal text (``printable``), stream events a secret is split across, text
shown while it streams, and a key known in advance in any encoding. The command
line and the explorer have their own tests (test_terminal_output.py, ui/).
"""
from __future__ import annotations

import base64
import io
from urllib.parse import quote, quote_plus

import orjson
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from tracetui.loop.inputs import build_inputs
from tracetui.loop.runner import run_inputs
from tracetui.replay.edit import edited_inputs
from tracetui.replay.replay import replay
from tracetui.trace.reader import read_trace
from tracetui.trace.known_secret import KnownSecret
from tracetui.trace.redact import is_credential_key, redact_line, redact_text, redact_value
from tracetui.trace.stream_redact import StreamRedactor, redact_events
from tracetui.trace.safe_text import printable, printable_json
from tracetui.trace.writer import encode_record, encode_records, write_trace

from secret_corpus import BENIGN, SECRETS, instances, pieces

CORPUS = instances()
IDS = [name for name, _, _ in CORPUS]


def survivors(blob: str | bytes, secret: str) -> list[str]:
    text = blob.decode() if isinstance(blob, bytes) else blob
    return [p for p in pieces(secret) if p in text or orjson.dumps(p).decode()[1:-1] in text]


def event_with(text: str) -> dict:
    """A trace event carrying ``text`` as prose, as a nested value and inside tool arguments (JSON in a string)."""
    arguments = orjson.dumps({"note": text, "deep": orjson.dumps({"q": text}).decode()}).decode()
    return {"rec": "event", "run_id": "r", "seq": 1, "lane": "http", "summary": f"server said: {text} (HTTP 401)",
            "data": {"response": {"body": {"error": {"message": text}}}, "arguments": arguments}}


# -- every shape, every path -----------------------------------------------------------------------

@pytest.mark.parametrize("name, text, secret", CORPUS, ids=IDS)
def test_every_shape_is_redacted_in_the_trace_file(name, text, secret):
    line = encode_record(event_with(text))
    assert not survivors(line, secret), line
    assert orjson.loads(line)["rec"] == "event"  # still one valid JSON line
    assert b"<redacted>" in line


@pytest.mark.parametrize("name, text, secret", CORPUS, ids=IDS)
def test_every_shape_is_redacted_on_the_terminal(name, text, secret):
    for shown in (printable(text), printable(text, keep_newlines=True), printable(f"error: {text}!"),
                  printable_json({"runs": [{"reason": text}]})):
        assert not survivors(shown, secret), shown
    assert orjson.loads(printable_json({"reason": text}))["reason"] != text


@pytest.mark.parametrize("name, text, secret", CORPUS, ids=IDS)
def test_every_shape_is_redacted_when_split_across_stream_events(name, text, secret):
    for cut in range(1, len(text)):
        events = [{"type": "response.output_text.delta", "delta": part} for part in (text[:cut], text[cut:])]
        written = orjson.loads(encode_record({"rec": "event", "run_id": "r", "data": {"events": redact_events(events)}}))
        joined = "".join(e["delta"] for e in written["data"]["events"])
        assert not survivors(joined, secret), (cut, joined)


@pytest.mark.parametrize("name, text, secret", CORPUS, ids=IDS)
def test_every_shape_is_redacted_while_it_streams(name, text, secret):
    whole = f"Here it is: {text} — keep it safe."
    for size in (1, 2, 3, 5, 8, 13):
        redactor = StreamRedactor()
        shown = "".join(redactor.feed(whole[i:i + size]) for i in range(0, len(whole), size)) + redactor.close()
        assert not survivors(shown, secret), (size, shown)
        assert shown.startswith("Here it is: ")
        assert shown.endswith(" — keep it safe.") == redact_text(whole).endswith(" — keep it safe.")  # a Cookie runs on


@pytest.mark.parametrize("text", BENIGN)
def test_benign_text_stays_byte_identical(text):
    assert redact_text(text) == text
    assert printable(text, keep_newlines=True) == text.replace("\t", "    ")
    record = event_with(text)
    assert encode_record(record) == orjson.dumps(record) + b"\n"
    redactor = StreamRedactor()
    assert "".join(redactor.feed(c) for c in text) + redactor.close() == text


def test_benign_corpus_in_one_run_is_written_unchanged():
    records = [{"rec": "event", "run_id": "run-1", "seq": n, "summary": text, "data": {"text": text}}
               for n, text in enumerate(BENIGN)]
    assert encode_records(records) == b"".join(orjson.dumps(r) + b"\n" for r in records)


# -- credential keys, escaped JSON, edits, whole tokens ----------------------------------------------

@pytest.mark.parametrize("key", ["private_key", "privateKey", "passphrase", "pass", "db_pass", "password",
                                 "client_secret", "x-api-key", "Authorization", "session_token", "pin", "card_pin",
                                 "otp", "user-otp", "cvv", "cvc", "passcode"])
@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_credential_keys_are_redacted_inside_json_strings_at_any_depth(key, depth):
    secret = "hunter2-Qx7"  # no shape of its own: only its key gives it away
    value = {key: secret, "order_id": "o-1"}
    for _ in range(depth):
        value = {"arguments": orjson.dumps(value, option=orjson.OPT_INDENT_2 if depth % 2 else 0).decode()}
    line = encode_record({"rec": "event", "run_id": "r", "data": value})
    assert secret.encode() not in line
    inner = orjson.loads(line)["data"]
    for _ in range(depth):
        inner = orjson.loads(inner["arguments"])
    assert inner == {key: "<redacted>", "order_id": "o-1"}


@pytest.mark.parametrize("key", ["spin", "pinned", "shipping", "opinion", "checkpoint", "otp_enabled", "pin_count"])
def test_words_that_only_end_like_a_code_key_are_not_credentials(key):
    value = {key: "hunter2-Qx7"}  # (no shape of its own: kept unless its key names a credential)
    assert orjson.loads(encode_record({"rec": "event", "run_id": "r", "data": value}))["data"] == value


@pytest.mark.parametrize("container", [{"value": "hunter2-Qx7"}, ["hunter2-Qx7"], {"a": [{"b": "hunter2-Qx7"}]}])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_objects_under_credential_keys_are_redacted_inside_json_strings(container, depth):
    """Tool arguments arrive as a JSON string: an object or list under a credential key in it goes, whole."""
    value = {"password": container, "order_id": "o-1"}
    for _ in range(depth):
        value = {"arguments": orjson.dumps(value, option=orjson.OPT_INDENT_2 if depth % 2 else 0).decode()}
    line = encode_record({"rec": "event", "run_id": "r", "data": value})
    assert b"hunter2" not in line
    inner = orjson.loads(line)["data"]
    for _ in range(depth):
        inner = orjson.loads(inner["arguments"])
    assert inner == {"password": "<redacted>", "order_id": "o-1"}


@pytest.mark.parametrize("arguments", [
    '{"password" : {"v":"hunter2"}}',  # space before the colon
    '{"p\\u0061ssword": {"v":"hunter2"}}',  # the key's letters escaped
    '{"api\\/key": {"v":"hunter2"}}',  # an escaped slash
    '{"password ": {"v":"hunter2"}}',  # a space in the key
    '\ufeff {"password": ["hunter2"]}',  # a byte order mark first
    '{"password": {"v":"hunter2"}, "id": 123456789012345678901234567890, "x": NaN, "n": "\\ud800"}',
    '{"users":[{"name":"a","credentials":{"password":{"v":"hunter2"}}}]}',
    orjson.dumps(orjson.dumps({"password": {"v": "hunter2"}}).decode()).decode(),  # encoded twice
])
def test_credential_objects_in_json_texts_go_however_the_text_is_written(arguments):
    """Only the credential's value changes: the rest of the text (numbers, spacing, what JSON parsers
    disagree on) stays as written."""
    line = encode_record({"rec": "event", "run_id": "r", "data": {"arguments": arguments}})
    assert b"hunter2" not in line
    written = orjson.loads(line)["data"]["arguments"]
    if "123456789012345678901234567890" in arguments:
        assert ', "id": 123456789012345678901234567890, "x": NaN, "n": "\\ud800"}' in written


def test_json_strings_without_credentials_are_kept_as_written():
    arguments = '{\n  "order_id": "o-1",  "items": [1, 2]\n}'
    record = {"rec": "event", "run_id": "r", "data": {"arguments": arguments, "note": "[not json"}}
    assert encode_record(record) == orjson.dumps(record) + b"\n"


def test_python_style_tool_arguments_are_redacted():
    arguments = '{"username": "ann", "password": "hunter2", "remember": true}'
    line = encode_record({"rec": "event", "run_id": "r", "data": {"arguments": arguments}})
    assert orjson.loads(orjson.loads(line)["data"]["arguments"]) == {"username": "ann", "password": "<redacted>",
                                                                      "remember": True}


@pytest.mark.parametrize("key", ["passed", "passenger", "compass", "bypass", "passes", "tokens_used", "author",
                                 "max_output_tokens", "token_usage", "input_token_details", "token_count",
                                 "prompt_token_counts", "tokenizer"])
def test_words_that_contain_a_credential_name_are_not_credential_keys(key):
    assert not is_credential_key(key)
    record = {"rec": "event", "run_id": "r", "data": {key: "value-1", "args": orjson.dumps({key: "v"}).decode()}}
    assert encode_record(record) == orjson.dumps(record) + b"\n"


def test_usage_objects_named_after_tokens_are_kept():
    """A usage count is no secret: objects under token_usage / input_token_details stay as they are."""
    usage = {"token_usage": {"input": 12, "output": 20}, "input_token_details": {"cached_tokens": 3},
             "token_count": 32, "access_token": "hunter2-Qx7", "token": {"v": "x"}}
    line = encode_record({"rec": "event", "run_id": "r", "data": {"usage": usage}})
    assert orjson.loads(line)["data"]["usage"] == {**usage, "access_token": "<redacted>", "token": "<redacted>"}


def test_an_edit_of_a_token_count_keeps_its_value():
    edits = [{"path": "/inputs/budgets/max_output_tokens", "value": 500}, {"path": "/inputs/x/api_key", "value": 7}]
    line = encode_record({"rec": "run", "run_id": "r", "inputs": {"edits": edits}})
    assert orjson.loads(line)["inputs"]["edits"] == edits  # numbers are never credentials, as under any key


@pytest.mark.parametrize("path", ["/inputs/principal/api_key", "/inputs/headers/X-Api-Key", "/inputs/db/password",
                                  "/responses/0/headers/authorization", "/inputs/tool_data/private_key"])
@pytest.mark.parametrize("value", ["hunter2-Qx7", {"v": "hunter2-Qx7"}, ["hunter2-Qx7"]])
def test_the_value_of_an_edit_to_a_credential_field_is_redacted(path, value):
    inputs = {"user_input": "hi", "edits": [{"path": "/inputs/user_input", "value": "kept"},
                                            {"path": path, "value": value}]}
    line = encode_record({"rec": "run", "run_id": "r", "inputs": inputs})
    assert b"hunter2-Qx7" not in line
    assert orjson.loads(line)["inputs"]["edits"] == [{"path": "/inputs/user_input", "value": "kept"},
                                                     {"path": path, "value": "<redacted>"}]


def test_an_edited_run_written_by_replay_keeps_the_edited_credential_out(tmp_path):
    original = run_inputs("r", build_inputs("single"))
    path = tmp_path / "t.jsonl"
    write_trace(path, original.records)
    run = read_trace(path).runs["r"]
    outcome = replay(run, [("/inputs/principal/api_key", "sk-live-but-no-shape")])
    assert edited_inputs(run, "/inputs/principal/api_key", "x")["edits"][-1]["value"] == "x"  # in memory: as typed
    out = tmp_path / "edited.jsonl"
    write_trace(out, outcome.records)
    assert b"sk-live-but-no-shape" not in out.read_bytes()


@pytest.mark.parametrize("text, kept", [
    ("Authorization: Bearer abcdefgh!Q7x~zz9 then", "Authorization: <redacted> then"),
    ("key=sk-proj-Q7xT2mV9pL4kR8wZ1nB6!x#y%z, more", "key=<redacted>, more"),
    ("the key sk-ant-api03-Q7xT2mV9pL4kR8wZ1nB6$tail.", "the key <redacted>."),
    ("password=hunter2!Q7x&next=1", "password=<redacted>&next=1"),
    ("ghp_Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3bk/extra:more", "<redacted>"),
])
def test_the_marker_replaces_the_whole_token(text, kept):
    assert redact_text(text) == kept


def test_redact_value_and_line_agree():
    value = {"headers": {"Cookie": "a=b"}, "note": "sk-proj-Q7xT2mV9pL4kR8wZ1nB6cY3h"}
    assert redact_value(value) == orjson.loads(redact_line(orjson.dumps(value)))
    assert redact_value(value) == {"headers": {"Cookie": "<redacted>"}, "note": "<redacted>"}


# -- a key known in advance ---------------------------------------------------------------------------

KEY = "sk-test-Q7xT2mV9pL4kR8wZ1nB6/c+Y3h"


@pytest.mark.parametrize("form", [
    KEY, KEY.lower(), KEY.upper(), quote(KEY, safe=""), quote_plus(KEY), quote(KEY, safe="").lower(),
    base64.b64encode(KEY.encode()).decode(), base64.urlsafe_b64encode(KEY.encode()).decode().rstrip("="),
    base64.b64encode(b"user:" + KEY.encode()).decode(), base64.b64encode(b"ab:" + KEY.encode() + b"!").decode(),
    KEY.encode().hex(), KEY.replace("/", "\\/"),
])
def test_a_known_secret_is_caught_in_every_form(form):
    known = KnownSecret(KEY)
    value = {"error": {"message": f"bad key {form} given", form: 1, "list": [f"x{form}y"]}}
    scrubbed = orjson.dumps(known.scrub(value)).decode()
    assert form not in scrubbed and "<redacted>" in scrubbed
    assert not known.spans("an ordinary answer about order o-1")


def test_a_known_secret_split_across_events_and_fields_is_caught():
    known = KnownSecret(KEY)
    events = [{"type": "delta", "delta": "your key is " + KEY[:7]}, {"type": "delta", "delta": KEY[7:20]},
              {"type": "delta", "delta": KEY[20:] + " ok"}]
    scrubbed = redact_events(events, known)
    joined = "".join(e["delta"] for e in scrubbed)
    assert joined == "your key is <redacted> ok"
    assert events[0]["delta"].endswith(KEY[:7])  # the input is not modified


@settings(max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(1, len(KEY) - 1), max_size=4, unique=True), size=st.integers(1, 9),
       form=st.sampled_from([KEY, KEY.lower(), KEY.upper(), base64.b64encode(KEY.encode()).decode()]))
def test_a_known_secret_never_reaches_the_display(cuts, size, form):
    text = f"echo: {form}; done"
    redactor = StreamRedactor(KnownSecret(KEY))
    shown = "".join(redactor.feed(text[i:i + size]) for i in range(0, len(text), size)) + redactor.close()
    assert form not in shown and shown.startswith("echo: ") and shown.endswith("; done")
    events = [{"delta": part} for part in _split(form, cuts)]
    assert form not in "".join(e["delta"] for e in redact_events(events, KnownSecret(KEY)))


def _split(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted(c for c in cuts if c < len(text)), len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


# -- properties -----------------------------------------------------------------------------------------

_FILLER = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40)
_ENTRIES = st.sampled_from(CORPUS)


def _escaped(text: str) -> str:
    """The text as the \\uXXXX-escaped JSON a server might quote: its first character written as an escape."""
    return f"\\u{ord(text[0]):04x}{text[1:]}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entry=_ENTRIES, before=_FILLER, after=_FILLER, form=st.sampled_from(["plain", "json", "json2", "escaped"]))
def test_corpus_secrets_in_random_text_never_survive(entry, before, after, form):
    _, text, secret = entry
    assume(form != "escaped" or not text.startswith("\\"))  # an escape of an escape is not decoded twice
    text = {"plain": text, "escaped": _escaped(text), "json": orjson.dumps({"v": text}).decode(),
            "json2": orjson.dumps(orjson.dumps([text]).decode()).decode()}[form]
    whole = f"{before} {text} {after}"
    assert not survivors(redact_text(whole), secret)
    assert not survivors(printable(whole), secret)
    assert not survivors(encode_record({"rec": "event", "run_id": before, "summary": whole}), secret)


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | _FILLER,
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_FILLER, inner, max_size=3),
                     max_leaves=8)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entry=_ENTRIES, doc=_JSON, where=st.integers(0, 50))
def test_corpus_secrets_placed_in_random_json_never_survive(entry, doc, where):
    _, text, secret = entry
    placed = _place(doc, text, where)
    out = io.BytesIO()
    line = encode_records([{"rec": "run", "run_id": "r", "inputs": placed},
                           {"rec": "event", "run_id": "r", "seq": 1, "data": {"arguments": orjson.dumps(placed).decode()}}])
    out.write(line)
    assert not survivors(out.getvalue(), secret)
    for record in map(orjson.loads, out.getvalue().splitlines()):
        assert record["run_id"] == "r"


def _place(doc, text: str, where: int):
    """``doc`` with ``text`` put in as a value (a new key or list item, or a string's tail)."""
    if isinstance(doc, dict):
        if doc and where % 3 == 0:
            key = list(doc)[where % len(doc)]
            return {**doc, key: _place(doc[key], text, where // 3)}
        return {**doc, "note": text}
    if isinstance(doc, list):
        if doc and where % 2 == 0:
            i = where % len(doc)
            return [*doc[:i], _place(doc[i], text, where // 2), *doc[i + 1:]]
        return [*doc, text]
    if isinstance(doc, str):
        return f"{doc} {text}"
    return {"value": doc, "note": text}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entry=_ENTRIES, before=_FILLER, cuts=st.lists(st.integers(1, 400), min_size=1, max_size=5, unique=True),
       shape=st.sampled_from(["responses", "chat", "anthropic"]))
def test_corpus_secrets_split_across_stream_events_never_survive(entry, before, cuts, shape):
    _, text, secret = entry
    whole = f"{before} {text} ok"
    # every cut falls inside the text (filtering cuts past its end made Hypothesis give up: a flaky health check)
    parts = _split(whole, [1 + c % (len(whole) - 1) for c in cuts])
    assert len(parts) > 1
    wrap = {"responses": lambda p: {"type": "response.output_text.delta", "output_index": 0, "delta": p},
            "chat": lambda p: {"choices": [{"index": 0, "delta": {"content": p}}]},
            "anthropic": lambda p: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}}
    events = [wrap[shape](p) for p in parts]
    line = encode_record({"rec": "event", "run_id": "r", "data": {"response": {"events": redact_events(events)}}})
    assert not survivors(_joined_text(orjson.loads(line)["data"]["response"]["events"]), secret)
    redactor = StreamRedactor()
    assert not survivors("".join(map(redactor.feed, parts)) + redactor.close(), secret)


def _joined_text(events) -> str:
    out = []
    for e in events:
        out.append(e.get("delta") if isinstance(e.get("delta"), str) else
                   e["delta"]["text"] if "delta" in e else e["choices"][0]["delta"]["content"])
    return "".join(out)


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("abcdefghijklmnop qrstuvwxyz,.-_:=/0123456789\n\"'"), max_size=80),
       cuts=st.lists(st.integers(1, 80), max_size=6, unique=True))
def test_streamed_text_is_shown_whole_and_in_order(text, cuts):
    """What the display shows is what the file would hold: redacted the same, nothing lost, nothing added."""
    redactor = StreamRedactor()
    shown = "".join(map(redactor.feed, _split(text, cuts))) + redactor.close()
    if "<redacted>" not in shown:
        assert shown == text
    assert (shown == text) == (redact_text(text) == text)


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(SECRETS), benign=st.sampled_from(BENIGN), cut=st.integers(0, 400),
       pad=st.sampled_from(["  ", " ", "\t", ""]), data=st.data())
def test_printing_a_line_in_two_parts_shows_what_printing_it_whole_shows(case, benign, cut, pad, data):
    """printable_joined (check's verdict lines: a run id, then the rest) equals printable of the whole line,
    wherever a secret sits: in either part or across the cut."""
    from tracetui.trace.safe_text import printable, printable_joined

    _, template, secret = case
    line = data.draw(st.sampled_from([f"{benign} {template.format(secret)} end", f"✗ run-{template.format(secret)}",
                                      f"✓ {benign}"]))
    cut = min(cut, len(line))
    first, second = line[:cut], pad + line[cut:]
    assert printable_joined(first, second) == printable(first + second)
    assert printable_joined(first, second) == printable_joined(first, second)  # remembered, still the same


@settings(max_examples=500, deadline=None)
@given(first=st.text(max_size=40), rest=st.text(max_size=80))
def test_printing_any_text_in_two_parts_shows_what_printing_it_whole_shows(first, rest):
    from tracetui.trace.safe_text import printable, printable_joined

    assert printable_joined(first, "  " + rest) == printable(first + "  " + rest)
