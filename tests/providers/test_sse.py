"""The SSE parser against the spec's line rules, and against httpx-sse's decoder on random streams."""
from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from httpx_sse._decoders import SSEDecoder, SSELineDecoder

from tracetui.providers.sse import SSEParser, to_event


def parse(raw: bytes, size: int) -> list[dict]:
    parser = SSEParser()
    events = []
    for i in range(0, len(raw), size):
        events += parser.feed(raw[i:i + size])
    return events + parser.close()


def test_a_lone_cr_ends_a_line_as_the_spec_allows():
    raw = b'data: {"n": 1}\r\rdata: {"n": 2}\r\r: comment\rdata: [DONE]\r\r'
    for size in (1, 2, 3, len(raw)):
        assert parse(raw, size) == [{"n": 1}, {"n": 2}, {"data": "[DONE]"}]


def test_a_crlf_split_across_chunks_ends_one_line_not_two():
    raw = b'data: {"a":\r\ndata: 1}\r\n\r\n'
    cut = raw.index(b"\n")  # the CR ends one chunk, its LF opens the next
    parser = SSEParser()
    events = parser.feed(raw[:cut]) + parser.feed(raw[cut:]) + parser.close()
    assert events == [{"a": 1}]


def test_a_crlf_split_by_a_chunk_that_decodes_to_nothing_still_ends_one_line():
    """A gzip stream can hand over a chunk that inflates to no bytes (a flush block) between the CR and the LF."""
    raw = b'data: {"a":\r\ndata: 1}\r\n\r\n'
    cut = raw.index(b"\n")
    parser = SSEParser()
    events = parser.feed(raw[:cut]) + parser.feed(b"") + parser.feed(raw[cut:]) + parser.close()
    assert events == [{"a": 1}]


def test_a_leading_byte_order_mark_is_dropped():
    assert parse("\ufeffdata: {\"x\": 1}\n\n".encode(), 1) == [{"x": 1}]


def test_an_event_the_stream_never_ended_is_discarded():
    assert parse(b'data: {"x": 1}\n\ndata: {"y": 2}\n', 4) == [{"x": 1}]
    assert parse(b'data: {"x": 1}\n\ndata: {"y": 2}', 4) == [{"x": 1}]


def test_field_forms_the_spec_names():
    raw = b'data\n\ndata:\n\ndata:no-space\n\nevent: x\nid: 7\nretry: 10\n\ndata:  two\n\n'
    assert parse(raw, 5) == [{"data": ""}, {"data": ""}, {"data": "no-space"}, {"data": " two"}]


def test_a_line_split_over_thousands_of_chunks_is_joined_whole():
    text = "é" * 50_000  # two bytes each: chunks also split characters
    raw = b"data: " + orjson.dumps({"t": text}) + b"\n\n"
    assert parse(raw, 7) == [{"t": text}]


def reference(raw: bytes, size: int) -> list[dict]:
    """httpx-sse's decoders on the same bytes: events with data, as tracetui records them."""
    lines, decoder, events = SSELineDecoder(), SSEDecoder(), []
    text = raw.decode("utf-8", errors="replace")
    batches = [lines.decode(text[i:i + size]) for i in range(0, len(text), size)] + [lines.flush()]
    for batch in batches:
        for one in batch:
            sse = decoder.decode(one)
            if sse is not None and sse.data:
                events.append(to_event(sse.data))
    return events


LINE = st.one_of(
    st.builds(lambda v: f"data: {v}", st.sampled_from(['{"a": 1}', "[DONE]", '{"t": "x\\ny"}', "plain text", "é"])),
    st.sampled_from(["", ": ping", "event: delta", "id: 3", "retry: 5", "data:{\"b\":2}"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(LINE, max_size=30), st.sampled_from(["\n", "\r", "\r\n"]), st.integers(1, 17))
def test_the_same_events_as_httpx_sse_on_random_streams(lines, end, size):
    raw = (end.join(lines) + end + end).encode()
    assert parse(raw, size) == reference(raw, size)
