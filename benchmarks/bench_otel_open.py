"""Peak RSS of ``tracetui open``'s source scan of a realistic OTLP/JSON file, beside the index of a trace file.

What the explorer runs after its first frame, headless: the source ``open FILE`` gets is scanned to the end
in a process of its own (nothing drawn). The reference, measured in the same run, is the same scan of a
realistic tracetui trace of the same size (``benchmarks/realistic.py``: an ``IndexedSource``); the OTLP file
is ``benchmarks/realistic_otlp.py``'s (foreign GenAI traces as a collector's file exporter writes them).
Peak RSS grows with the file when the source holds its converted runs; it stays flat when they are
spooled to disk and loaded one at a time (``tracetui/otel/run_spool.py``). Prints figures; asserts nothing.

And ``check -`` of the same OTLP file on standard input beside ``check FILE`` (``--stdin-mb``, default 64).

    python benchmarks/bench_otel_open.py [--repeat N] [--size-mb 64 --size-mb 256] [--stdin-mb 64]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402
from measure import row  # noqa: E402

#: a headless ``open``: the source the command line gets, scanned to its end as the explorer's worker does
OPEN_SCAN = ("import sys\nfrom tracetui.otel.detect import open_any\nsource = open_any([sys.argv[1]])\n"
             "for _ in source.scan():\n    pass\nprint(len(source.runs()))\nsource.close()\n")


def open_scan(path: Path, repeat: int) -> list[measure.Sample]:
    samples = [measure.run([sys.executable, "-c", OPEN_SCAN, str(path)], capture=True) for _ in range(max(3, repeat))]
    for s in samples:
        if s.code:
            raise SystemExit(f"open scan of {path} failed: {s.extra['stderr'][-2000:]}")
    return samples


def open_memory(size_mb: float, repeat: int) -> None:
    """The figures for one size (a function of its own: ``bench_otel.py`` may call it)."""
    from realistic import trace_file
    from realistic_otlp import realistic_otlp

    path = realistic_otlp(size_mb)
    native, _ = trace_file(max(1, round(size_mb)))
    measure.header(f"bench_otel_open: open's source scan of {path.name} ({path.stat().st_size / 2**20:,.0f} MiB), "
                   f"headless, beside the index of {native.name} ({native.stat().st_size / 2**20:,.0f} MiB)")
    measure.columns()
    ours, reference = open_scan(path, repeat), open_scan(native, repeat)
    runs = ours[0].extra["stdout"].strip()
    row("open OTLP FILE: peak RSS", [s.rss_mb for s in ours], [s.rss_mb for s in reference],
        "a trace file's index", unit="MB", note=f"({runs} runs)")
    row("open OTLP FILE: CPU (user+sys)", [s.cpu for s in ours], [s.cpu for s in reference], "a trace file's index")


def stdin_memory(size_mb: float, repeat: int) -> None:
    """``cat FILE | tracetui check -`` beside ``tracetui check FILE``: standard input streamed as the file is."""
    from realistic_otlp import realistic_otlp

    path = realistic_otlp(size_mb)
    measure.header(f"bench_otel_open: check of {path.name} ({path.stat().st_size / 2**20:,.0f} MiB) on standard "
                   f"input, beside check of the file")
    measure.columns()
    piped = [measure.run(measure.TRACETUI + ["check", "-"], stdin=path) for _ in range(max(3, repeat))]
    named = [measure.run(measure.TRACETUI + ["check", str(path)]) for _ in range(max(3, repeat))]
    row("check - (standard input): peak RSS", [s.rss_mb for s in piped], [s.rss_mb for s in named],
        "check FILE", unit="MB")
    row("check - (standard input): CPU (user+sys)", [s.cpu for s in piped], [s.cpu for s in named], "check FILE")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--size-mb", type=float, action="append")
    parser.add_argument("--stdin-mb", type=float, default=64, help="size of the standard-input figures (0: none)")
    args = parser.parse_args()
    for size in args.size_mb or [64, 256]:
        open_memory(size, args.repeat)
    if args.stdin_mb:
        stdin_memory(args.stdin_mb, args.repeat)
