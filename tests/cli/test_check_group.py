"""``tracetui check FILE --group``: one line per failure signature, streamed, exit codes as check's (issue 24)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracetui.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_traces"
LINE = re.compile(r"^\s*(\d[\d,]*) × (\S+)\s+(\S+)\s+e\.g\. (\S+)\s+(.*)$")


def run(*args: str, input: bytes | None = None):
    return CliRunner().invoke(main, ["check", *args], input=input)


def run_lines(run_id: str) -> list[bytes]:
    return [line + b"\n" for line in (SAMPLES / "scenarios.jsonl").read_bytes().splitlines()
            if f'"run_id":"{run_id}"'.encode() in line]


def tenants_trace(tmp_path: Path, n: int) -> Path:
    """``n`` cross-tenant denials, each run its own order, tenant and user, then as many ready runs."""
    denied, ready = b"".join(run_lines("cross_tenant")), b"".join(run_lines("single"))
    out = []
    for k in range(n):
        out.append(denied.replace(b'"cross_tenant"', b'"denied-%d"' % k).replace(b"shop-b", b"acme-%d" % k)
                   .replace(b"o-2", b"o-%d" % (k + 100)).replace(b"u-2", b"u-%d" % (k + 7)))
        out.append(ready.replace(b'"run_id":"single"', b'"run_id":"ok-%d"' % k))
    path = tmp_path / "tenants.jsonl"
    path.write_bytes(b"".join(out))
    return path


def test_runs_denied_alike_across_tenants_orders_and_users_are_one_line(tmp_path):
    r = run(str(tenants_trace(tmp_path, 25)), "--group")
    assert r.exit_code == 1, r.output
    lines = [line for line in r.stdout.splitlines() if line]
    assert len(lines) == 1
    count, lane, code, example, reason = LINE.match(lines[0]).groups()
    assert (count, lane, code, example) == ("25", "authorization", "permission_denied", "denied-0")
    assert reason.startswith("permission denied: o-# belongs to tenant #, user #") and "acme" not in reason
    assert "50 run(s): 25 ready, 25 failed, 0 incomplete; 1 failure group(s); 0 problem line(s)" in r.stderr


def test_the_samples_group_biggest_first_and_json_says_the_same(tmp_path):
    text = run(str(SAMPLES / "scenarios.jsonl"), "--group")
    data = run(str(SAMPLES / "scenarios.jsonl"), "--group", "--json")
    assert text.exit_code == data.exit_code == 1
    doc = json.loads(data.stdout)
    groups = doc["groups"]
    assert doc["runs"] == 30 and doc["outcomes"] == {"ready": 10, "failed": 20, "incomplete": 0}
    assert doc["problems"] == [] and sum(g["count"] for g in groups) == 20
    assert [g["count"] for g in groups] == sorted((g["count"] for g in groups), reverse=True)
    assert groups[0] == {"count": 2, "lane": "generation", "code": "incomplete", "example_run_id": "truncated",
                         "reason": "response incomplete: max_output_tokens; # partial tool call(s) not executed"}
    parsed = [LINE.match(line).groups() for line in text.stdout.splitlines()]
    assert [(int(c), lane, code, ex, reason) for c, lane, code, ex, reason in parsed] == [
        (g["count"], g["lane"], g["code"], g["example_run_id"], g["reason"]) for g in groups]


def test_a_trace_where_every_run_is_ready_has_no_group_and_exits_0():
    r = run(str(SAMPLES / "recorded-normal.jsonl"), "--group")
    assert r.exit_code == 0 and r.stdout == ""
    assert "no run failed" in r.stderr


def test_it_streams_never_reading_the_file_whole(tmp_path, monkeypatch):
    """The streaming check's path: the whole-file reader is never called (a huge file stays in the file)."""
    from tracetui.otel import detect
    from tracetui.trace import reader

    def whole(*args, **kwargs):
        raise AssertionError("read whole")
    for module in (reader, detect):
        monkeypatch.setattr(module, "read_trace", whole)
    r = run(str(tenants_trace(tmp_path, 3)), "--group", "--json")
    assert r.exit_code == 1 and json.loads(r.stdout)["groups"][0]["count"] == 3


def test_standard_input_and_otlp_group_too():
    piped = run("-", "--group", input=(SAMPLES / "scenarios.jsonl").read_bytes())
    named = run(str(SAMPLES / "scenarios.jsonl"), "--group")
    assert piped.exit_code == 1 and piped.stdout == named.stdout
    otlp = run(str(SAMPLES / "otel-scenarios.jsonl"), "--group", "--json")
    otlp_piped = run("-", "--group", "--json", input=(SAMPLES / "otel-scenarios.jsonl").read_bytes())
    groups = json.loads(otlp.stdout)["groups"]
    assert otlp.exit_code == otlp_piped.exit_code == 1 and groups == json.loads(otlp_piped.stdout)["groups"]
    assert {"count": 1, "lane": "authorization", "code": "permission_denied"}.items() <= next(
        g for g in groups if g["code"] == "permission_denied").items()


def test_bad_lines_are_listed_and_an_unreadable_file_exits_2(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(run_lines("single")) + b"{not json\n")
    r = run(str(path), "--group")
    assert r.exit_code == 1 and r.stdout == "" and "line 8" not in r.stdout and "problem line(s)" in r.stderr
    assert re.search(r"^line \d+: ", r.stderr, re.M)
    missing = run(str(tmp_path / "nope.jsonl"), "--group")
    assert missing.exit_code == 2 and "nope.jsonl" in missing.stderr
    assert run(str(path), "--group", "--explain").exit_code == 2  # a usage error: one report at a time


def test_hostile_ids_and_reasons_are_printed_as_text(tmp_path):
    lines = b"".join(run_lines("cross_tenant")).replace(b'"cross_tenant"', b'"evil\\u001b[2Jrun"')
    lines = lines.replace(b"permission denied: ", b"permission denied\\u001b]52;c;AAAA\\u0007: ")
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(lines)
    r = run(str(path), "--group")
    assert r.exit_code == 1 and "\x1b" not in r.stdout and "\x07" not in r.stdout
    assert "e.g. evil" in r.stdout and "[2Jrun" in r.stdout


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts the open descriptors in /proc")
@pytest.mark.parametrize("content", [None, b"not json\n"])
def test_check_group_leaves_no_file_open(tmp_path, content):
    """The trace is closed when check --group ends, read whole or not: its scan is a reference cycle, so
    without a close it stayed open until a full collection."""
    import gc

    path = tmp_path / "t.jsonl"
    path.write_bytes((SAMPLES / "scenarios.jsonl").read_bytes() if content is None else content)
    gc.collect()
    gc.disable()
    try:
        before = len(list(Path("/proc/self/fd").iterdir()))
        r = run(str(path), "--group")
        after = len(list(Path("/proc/self/fd").iterdir()))
    finally:
        gc.enable()
    assert r.exit_code in (1, 2), r.output
    assert after == before
