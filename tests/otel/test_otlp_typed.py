"""A line decoded by the OTLP schema reads exactly as the tolerant reader reads it, or is left to it."""
from __future__ import annotations

import json

import orjson
from hypothesis import given, settings, strategies as st

from tracetui.otel.otlp_read import _parse, line_spans, spans_of
from tracetui.otel.otlp_typed import spans_of_line
from tracetui.otel.spans import MAX_VALUE_DEPTH

_json = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
                     | st.text(max_size=8),
                     lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children,
                                                                                        max_size=3), max_leaves=10)


def _mostly(good, odd=_json):
    """Well typed seven times in eight, anything JSON holds otherwise (the fields a hostile file spoils)."""
    return st.sampled_from(range(8)).flatmap(lambda n: odd if n == 3 else good)


_number = st.integers(-2**66, 2**66) | st.floats(allow_nan=False) | st.sampled_from(["12", "x", "", "1e3", "-5"])
_odd_id = st.sampled_from(["", "zz", "00000000000000000000000000000000", "0AF7651916CD43DD8448EB211C80319C",
                           "0af7 651916cd43dd8448eb211c80319", "AAAAAAAAAAE=", "AAAAAAAAAAAAAAAAAAAAAQ==",
                           "0000000000000000", "B7AD6B7169203331"]) | st.integers(0, 2**65) | st.none()
_trace_id = _mostly(st.sampled_from(["0af7651916cd43dd8448eb211c80319c", "4bf92f3577b34da6a3ce929d0e0e4736"]), _odd_id)
_span_id = _mostly(st.sampled_from(["b7ad6b7169203331", "a000000000000001", "00f067aa0ba902b7"]), _odd_id)
_scalar = {"stringValue": _mostly(st.text(max_size=12), _number), "string_value": st.text(max_size=4),
           "boolValue": _mostly(st.booleans(), st.none() | _number), "bool_value": st.booleans(),
           "intValue": _mostly(st.integers(-2**63, 2**63 - 1) | st.from_regex(r"-?[0-9]{1,20}", fullmatch=True),
                               _number | st.none()),
           "int_value": _number, "doubleValue": _mostly(st.floats(allow_nan=False), _number | st.none()),
           "double_value": _number, "bytesValue": st.text(max_size=4), "bytes_value": st.text(max_size=4)}


def _one_of_scalars(n: int = 1):
    """An AnyValue with one field, as writers write it (sometimes more: the first in the reader's order wins)."""
    keys = sorted(_scalar)
    return st.lists(st.sampled_from(keys), min_size=1, max_size=n, unique=True).flatmap(
        lambda chosen: st.fixed_dictionaries({k: _scalar[k] for k in chosen}))


def _any_value(children):
    nested = {"arrayValue": st.fixed_dictionaries({}, optional={"values": _mostly(st.lists(children, max_size=3))}),
              "kvlistValue": st.fixed_dictionaries({}, optional={"values": _mostly(st.lists(st.fixed_dictionaries(
                  {"key": st.sampled_from(["a", "b"])}, optional={"value": children}), max_size=3))}),
              "array_value": st.just({"values": []})}
    return st.one_of(st.fixed_dictionaries({}, optional=nested), _one_of_scalars(2), _json)


_value = st.recursive(_one_of_scalars(), _any_value, max_leaves=6)
_attrs = _mostly(st.lists(st.fixed_dictionaries({"key": _mostly(st.sampled_from(
    ["gen_ai.operation.name", "gen_ai.output.messages", "gen_ai.usage.input_tokens", "a", "a", "service.name"]))},
    optional={"value": _mostly(_value)}), max_size=5))
_times = {"startTimeUnixNano": _mostly(st.from_regex(r"[0-9]{1,19}", fullmatch=True), _number),
          "start_time_unix_nano": _number, "endTimeUnixNano": _mostly(st.integers(0, 2**63 - 1), _number)}
_span = st.fixed_dictionaries({"traceId": _trace_id, "spanId": _span_id}, optional={
    "trace_id": _trace_id, "span_id": _span_id, "parentSpanId": _span_id, "parent_span_id": _span_id, "name": _mostly(st.text(max_size=6)),
    "kind": _mostly(st.integers(0, 5) | st.sampled_from(["SPAN_KIND_CLIENT", "3"])),
    **_times, "attributes": _attrs, "flags": _json, "droppedAttributesCount": _number,
    "events": _mostly(st.lists(st.fixed_dictionaries({}, optional={
        "name": _mostly(st.text(max_size=6)), "timeUnixNano": _number, "attributes": _attrs}), max_size=2)),
    "status": _mostly(st.fixed_dictionaries({}, optional={
        "code": _mostly(st.sampled_from(["STATUS_CODE_ERROR", 2, 0, "1"])), "message": _json}))})
_scope_spans = st.fixed_dictionaries({}, optional={
    "spans": _mostly(st.lists(_span, max_size=4)), "scope": _mostly(st.fixed_dictionaries(
        {}, optional={"name": _mostly(st.text(max_size=5)), "version": st.text(max_size=3)})),
    "instrumentationLibrary": _json, "schemaUrl": _json})
_resource_spans = st.fixed_dictionaries({}, optional={
    "scopeSpans": _mostly(st.lists(_scope_spans, max_size=2)), "scope_spans": st.lists(_scope_spans, max_size=1),
    "instrumentationLibrarySpans": st.lists(_scope_spans, max_size=1),
    "resource": _mostly(st.fixed_dictionaries({}, optional={"attributes": _attrs}))})
_doc = _mostly(st.fixed_dictionaries({}, optional={"resourceSpans": _mostly(st.lists(_resource_spans, max_size=2)),
                                                   "resource_spans": st.lists(_resource_spans, max_size=1)}))
#: a line as an exporter writes it: the spans are where the odd spots are
_line = st.lists(_span, min_size=1, max_size=3).map(lambda spans: {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})


@settings(max_examples=300, deadline=None)
@given(values=st.lists(_value, min_size=1, max_size=3))
def test_an_attribute_value_reads_as_the_tolerant_reader_reads_it(values):
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331",
            "attributes": [{"key": f"k{n % 2}", "value": v} for n, v in enumerate(values)]}
    raw = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()
    fast = spans_of_line(raw, 7)
    if fast is not None:
        assert fast == _tolerant(raw)[0]


def test_values_nested_past_the_limit_are_dropped_as_the_tolerant_reader_drops_them():
    value: dict = {"stringValue": "innermost"}
    for n in range(MAX_VALUE_DEPTH + 2):
        value = {"arrayValue": {"values": [value]}} if n % 2 else {"kvlistValue": {"values": [{"key": "k",
                                                                                             "value": value}]}}
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331",
            "attributes": [{"key": "deep", "value": value}]}
    raw = orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    fast = spans_of_line(raw, 7)
    assert fast is not None and fast == _tolerant(raw)[0]
    assert "innermost" not in orjson.dumps(fast[0].attributes).decode()


def _tolerant(raw: bytes):
    problems: list = []
    ok, doc = _parse(raw, 7, "f", problems)
    return (spans_of(doc, 7, "f", problems) if ok else None), problems


@settings(max_examples=400, deadline=None)
@given(doc=_line | _doc, ascii_only=st.booleans())
def test_a_decoded_line_reads_as_the_tolerant_reader_reads_it(doc, ascii_only):
    raw = json.dumps(doc, ensure_ascii=ascii_only).encode()  # (integers past 64 bits too)
    fast = spans_of_line(raw, 7)
    spans, problems = _tolerant(raw)
    if fast is not None:  # decoded: the same spans, and nothing the tolerant reader would have said
        assert repr(fast) == repr(spans)  # (not ==: 1 == 1.0 == True)
        assert problems == []
    problems2: list = []
    assert line_spans(raw, 7, "f", problems2) == spans and problems2 == problems


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=30), big=st.integers(2**63, 2**70), spot=st.sampled_from(
    [b"\\ud83d", b"\\udc00", b"\xff", b"\xed\xa0\xbd", b"1e400"]))
def test_what_orjson_refuses_or_reads_otherwise_is_left_to_the_tolerant_reader(text, big, spot):
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": text}
    line = orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    decoded = spans_of_line(line, 7)
    assert decoded is not None and decoded == _tolerant(line)[0]  # well formed: decoded
    as_big = line.replace(b'"name"', b'"kind":%d,"name"' % big)  # orjson reads a float there
    assert spans_of_line(as_big, 7) is None
    assert spans_of_line(line.replace(b'"name"', b'"nam":1,"name"'), 7) is None  # a field OTLP does not define
    assert spans_of_line(line.replace(b'"name"', b'"n\xffme":1,"name"'), 7) is None  # nor one not in UTF-8
    spoiled = line.replace(b'"name"', b'"flags":"' + spot + b'","name"') if spot != b"1e400" else \
        line.replace(b'"name"', b'"flags":1e400,"name"')  # in a field no reader looks at, still checked
    assert spans_of_line(spoiled, 7) is None
    assert line_spans(spoiled, 7, "f", []) == _tolerant(spoiled)[0]


# -- written as bytes: what json.dumps cannot write (duplicate keys, numbers past a double, bad escapes) ---------
_KEYS = ["traceId", "trace_id", "spanId", "span_id", "parentSpanId", "parent_span_id", "name", "kind", "attributes",
         "events", "status", "code", "message", "flags", "links", "traceState", "droppedAttributesCount",
         "startTimeUnixNano", "endTimeUnixNano", "scope", "instrumentationLibrary", "resource", "scopeSpans",
         "scope_spans", "spans", "key", "value", "stringValue", "intValue", "doubleValue", "boolValue", "arrayValue",
         "kvlistValue", "values", "version", "schemaUrl", "entityRefs", "idKeys", "type", "unknownField"]
_HUGE = b"1" + b"0" * 400  # past a double: orjson refuses the line, msgspec's Any would read it
_ODD = [_HUGE, b"-" + _HUGE, b"1e400", b"-0", b"-0.0", b"1.0", b"2.5e3", b"9223372036854775808",
        b"18446744073709551616", b"-9223372036854775809", b"null", b"true", b"{}", b"[]", b'"\\ud800"', b'"\xff"',
        b'"\xed\xa0\x80"', b'"\\ud83d\\ude00"', b'""', b'"x"', b'"0af7651916cd43dd8448eb211c80319c"',
        b'"AAAAAAAAAAE="', b'"B7AD6B7169203331"', b'"b7ad6b71692033"', b'{"name":"s"}', b'{"stringValue":"v"}',
        b'[{"key":"a","value":{"intValue":"1"}}]', b'[{"traceId":"x","flags":' + _HUGE + b"}]",
        b"[" * 1100 + b"]" * 1100, b'{"values":[{"key":"k","value":{"kvlistValue":{"values":[]}}}]}']


def _obj(pairs) -> bytes:
    return b"{" + b",".join(b'"%s":%s' % (k.encode(), v) for k, v in pairs) + b"}"


@st.composite
def _spoiled(draw, pairs) -> bytes:
    """An object written with extra members (a key of OTLP's or not, maybe a repeat) holding odd values."""
    pairs = list(pairs)
    for _ in range(draw(st.integers(0, 2))):
        pairs.insert(draw(st.integers(0, len(pairs))), (draw(st.sampled_from(_KEYS)), draw(st.sampled_from(_ODD))))
    return _obj(pairs)


@st.composite
def _written_line(draw) -> bytes:
    value = draw(_spoiled([("stringValue", b'"v"')]))
    attrs = b"[" + draw(_spoiled([("key", b'"gen_ai.operation.name"'), ("value", value)])) + b"]"
    status = draw(_spoiled([("code", b"2"), ("message", b'"boom"')]))
    event = draw(_spoiled([("name", b'"exception"'), ("timeUnixNano", b'"1"'), ("attributes", attrs)]))
    spans = [draw(_spoiled([("traceId", b'"0af7651916cd43dd8448eb211c80319c"'), ("spanId", b'"b7ad6b7169203331"'),
                            ("name", b'"chat"'), ("kind", b"3"), ("startTimeUnixNano", b'"5"'), ("attributes", attrs),
                            ("status", status), ("events", b"[" + event + b"]")]))]
    if draw(st.booleans()):
        spans.append(draw(_spoiled([("traceId", b'"0af7651916cd43dd8448eb211c80319c"'),
                                    ("spanId", b'"a000000000000001"'), ("parentSpanId", b'"b7ad6b7169203331"'),
                                    ("links", b"[]")])))
    scope_spans = draw(_spoiled([("scope", draw(_spoiled([("name", b'"lib"')]))),
                                 ("spans", b"[" + b",".join(spans) + b"]")]))
    resource = draw(_spoiled([("attributes", b'[{"key":"service.name","value":{"stringValue":"svc"}}]')]))
    resource_spans = draw(_spoiled([("resource", resource), ("scopeSpans", b"[" + scope_spans + b"]")]))
    return draw(_spoiled([("resourceSpans", b"[" + resource_spans + b"]")]))


@settings(max_examples=1500, deadline=None)
@given(raw=_written_line())
def test_a_line_written_adversarially_reads_as_the_tolerant_reader_reads_it(raw):
    fast = spans_of_line(raw, 7)
    spans, problems = _tolerant(raw)
    if fast is not None:  # decoded: orjson reads the line, and the tolerant reader the same spans without a word
        assert spans is not None and repr(fast) == repr(spans) and problems == []  # (repr: 1, 1.0 and True differ)
    problems2: list = []
    assert line_spans(raw, 7, "f", problems2) == spans and problems2 == problems


def test_an_integer_past_a_double_in_a_field_no_reader_looks_at_is_still_refused_as_orjson_refuses_it():
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "parentSpanId": "PARENT",
            "status": {"message": "MESSAGE"}, "links": [{"flags": "LINK"}]}
    line = orjson.dumps({"resourceSpans": [{"scopeSpans": [{"scope": {"version": "SCOPE"}, "spans": [span]}]}]})
    assert spans_of_line(line, 7) is not None
    for field in (b'"PARENT"', b'"MESSAGE"', b'"LINK"', b'"SCOPE"'):
        huge = line.replace(field, _HUGE)
        assert _tolerant(huge)[0] is None  # malformed JSON: orjson reads no number past a double
        assert spans_of_line(huge, 7) is None, field
