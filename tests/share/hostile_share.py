"""A failing run whose id, tool arguments and texts carry what a hostile page author would plant: markup that runs
script (``<script>``, an ``onerror=`` handler, a ``javascript:`` link), a live-looking API key, and the terminal's
own hostile fixtures (control sequences, bidi overrides). A page must show every one of them as text."""
from __future__ import annotations

from pathlib import Path

import orjson

from tracetui.loop.runner import run_scenario
from tracetui.trace.writer import write_trace

from test_terminal_output import HOSTILE, SECRET

SCRIPT = "<script>window.pwned = 1; alert('script')</script>"
ONERROR = "<img src=x onerror=\"window.pwned = 2; alert('onerror')\">"
JS_URL = "<a href=\"javascript:window.pwned=3\">click</a> javascript:alert(1)"
#: a run id that tries to close an attribute, open a tag and run a handler
HOSTILE_RUN_ID = "o'\"><svg onload=alert(1)>" + SCRIPT
ARGUMENT = f"{SCRIPT} {ONERROR} {JS_URL} key {SECRET} {HOSTILE}"


def hostile_records(run_id: str = HOSTILE_RUN_ID) -> list[dict]:
    """cross_tenant with hostile text in its run id, its tool call's arguments, summaries and reason."""
    records = orjson.loads(orjson.dumps(run_scenario("cross_tenant").records))
    for record in records:
        record["run_id"] = run_id
        if record["rec"] == "event":
            record["summary"] = f"{record['summary']} {SCRIPT}"
            data = record["data"]
            if record["lane"] == "arguments":
                data["arguments"] = {"order_id": ARGUMENT}
            for call in data.get("calls") or ():
                call["arguments"] = orjson.dumps({"order_id": ARGUMENT}).decode()
        if record["rec"] == "summary":
            record["first_failure"]["reason"] += f" {ONERROR} {HOSTILE}"
    return records


def hostile_trace(folder: Path, run_id: str = HOSTILE_RUN_ID) -> Path:
    """The hostile run, written raw (as another tool might have: the secret not redacted in the file)."""
    path = folder / "hostile.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in hostile_records(run_id)))
    return path


def clean_trace(folder: Path) -> Path:
    path = folder / "cross.jsonl"
    write_trace(path, run_scenario("cross_tenant").records)
    return path
