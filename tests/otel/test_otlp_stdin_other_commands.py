"""``replay -``, ``check --group -`` and ``check --baseline`` with OTLP/JSON on standard input read it as ``check -``
and ``open -`` do, as a stream (never whole: bounded memory), and say what they say of the file; ``replay`` and
``check --group`` of an OTLP file stream it too."""
from __future__ import annotations

import pytest
from click.testing import CliRunner
from otlp_open_files import otlp_file

from tracetui.cli import main
from tracetui.otel import otlp_read


@pytest.fixture
def spans_file(tmp_path):
    return otlp_file(tmp_path / "spans.jsonl")


@pytest.fixture
def never_whole(monkeypatch):
    """Reading OTLP whole (a file's spans, or standard input's) is what bounded memory rules out."""
    def whole(*args, **kwargs):
        raise AssertionError("OTLP/JSON was read whole")

    monkeypatch.setattr(otlp_read, "read_spans_fd", whole)
    monkeypatch.setattr(otlp_read, "read_spans", whole)


def _said(args, data=None):
    result = CliRunner().invoke(main, args, input=data)
    assert not isinstance(result.exception, AssertionError), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("args, said", [
    (["replay", "{}"], "33 runs in {}; choose one with --run ID"),  # several runs and no --run: their names
    (["replay", "{}", "--run", "orders-4bf92f3577b34da6b000"], "imported from OpenTelemetry"),  # not re-run
    (["replay", "{}", "--run", "no-such-run"], "no run 'no-such-run' in {}"),
    (["check", "--group", "{}"], "e.g. orders-4bf92f3577b34da6b000"),
    (["check", "--group", "--json", "{}"], '"orders-4bf92f3577b34da6b000"'),
])
def test_piped_otlp_says_what_the_file_says_without_being_read_whole(spans_file, never_whole, args, said):
    code, out, err = _said([a.format(spans_file) for a in args])
    assert code in (1, 2) and said.format(spans_file) in out + err
    label = "-"
    piped = _said([a.format("-") for a in args], spans_file.read_bytes())
    assert piped == (code, out.replace(str(spans_file), label), err.replace(str(spans_file), label))


def test_a_piped_otlp_trace_is_compared_with_a_baseline_without_being_read_whole(spans_file, never_whole):
    data = spans_file.read_bytes()
    same = _said(["check", "--baseline", str(spans_file), str(spans_file)])
    assert same[0] == 0 and "33 run(s) matched: 0 newly failing, 21 still failing" in same[2]
    assert _said(["check", "--baseline", str(spans_file), "-"], data) == same
    assert _said(["check", "--baseline", "-", str(spans_file)], data) == same
