"""An OTLP/JSON file whose ``check`` output is several times what a pipe holds, made in a moment."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPIES = 5
#: run ids this long make 150 runs print about 300 KB, in text and in JSON: five pipes full
PAD = b"x" * 2000


def long_named_otlp(path: Path) -> Path:
    """The OTLP sample, :data:`COPIES` times over, each run's id made long."""
    lines = (ROOT / "sample_traces" / "otel-scenarios.jsonl").read_bytes().splitlines()
    named = re.compile(rb'("key":"(?:tracetui\.run\.id|gen_ai\.conversation\.id)","value":\{"stringValue":")([^"]*)"')
    out = []
    for k in range(COPIES):
        for line in lines:
            line = named.sub(lambda m: m[1] + m[2] + b"-%d-" % k + PAD + b'"', line)
            out.append(re.sub(rb'"traceId":"[0-9a-f]{8}', b'"traceId":"%08x' % k, line))
    path.write_bytes(b"\n".join(out) + b"\n")
    return path
