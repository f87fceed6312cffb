"""The page skeleton: one self-contained HTML file, offline, that fetches nothing and runs no script.

Inline CSS only; a Content-Security-Policy that allows nothing else (no script, image, font,
frame or connection, no ``<base>``, no form) is belt and braces over the escaping of
:mod:`tracetui.share.escape`: even a mistake there could not load or run anything. The
collapsible parts are ``<details>``, which need no script.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from tracetui import __version__
from tracetui.explain import explain
from tracetui.share.budget import PageBudget
from tracetui.share.escape import text
from tracetui.share.index import grouped_runs, index_block
from tracetui.share.run import run_section
from tracetui.trace.reader import RunData

CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

CSS = """
body{font:14px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;margin:0 auto;max-width:1400px;
padding:1em 1.5em;background:#1b1d23;color:#d7dae0}
h1{font-size:1.3em;margin:.2em 0}h2{font-size:1.15em;margin:1.2em 0 .4em}h3{font-size:1em;margin:1em 0 .3em}
h4{font-size:.9em;margin:.6em 0 .2em;color:#8b93a1}
a{color:#7fb8ff}.dim{color:#8b93a1}pre{white-space:pre-wrap;word-break:break-all;margin:.2em 0;
background:#22252c;padding:.5em;border-radius:4px;max-height:40em;overflow:auto}
section.run{border-top:2px solid #3a3f4b;margin-top:1.5em}
.banner{padding:.6em .9em;border-radius:6px;margin:.4em 0;background:#2a2d35;border-left:6px solid #5fb35f}
.banner.failed{border-left-color:#e05555}.banner.warn{border-left-color:#e0a030}
.banner .verdict{font-weight:bold}.banner.failed .verdict{color:#ff8787}.banner.ready .verdict{color:#87d787}
.banner .reason{margin-top:.3em;white-space:pre-wrap;word-break:break-word}
.resp{font-weight:bold}.resp.model{color:#ff8787}.resp.harness{color:#ffaf00}.resp.environment{color:#87afff}
.resp.guard{color:#87d787}
.lanes-scroll{overflow-x:auto;padding-bottom:.3em}
table.lanes{border-collapse:separate;border-spacing:2px;white-space:nowrap}
table.lanes th,table.lanes td{padding:.15em .5em;text-align:left}
table.lanes th.step{color:#8b93a1;font-weight:normal}table.lanes th.ff-step{color:#ff6b6b}
th.lane-name{position:sticky;left:0;background:#1b1d23;min-width:9em}th.ff-lane{color:#ff6b6b}
td.off{color:#4a4f5a;text-align:center}td.ok{background:#213427}td.ok a{color:#8fd18f}
td.recovered{background:#3a3120}td.recovered a{color:#ffaf00}td.failed{background:#3d2222}td.failed a{color:#ff8787}
td.gave-up{outline:1px solid #ff6b6b}
td.deciding{background:#d63c3c;outline:2px solid #fff}td.deciding a{color:#fff;font-weight:bold}
td.tail{color:#ff6b6b}td.tail.dim{color:#5d6370}
td a{text-decoration:none}
details.event{border:1px solid #30343d;border-radius:4px;margin:.25em 0;padding:.2em .5em}
details.event.failed{border-color:#6b3030}details.deciding-event{border:2px solid #e05555}
details.event>summary{cursor:pointer}.field{margin-right:.9em}
.summary-text{margin:.1em 0 0 1.4em;white-space:pre-wrap;word-break:break-word}
.icon.ok{color:#5fb35f}.icon.failed{color:#ff6b6b}.icon.recovered{color:#ffaf00}
.ff-badge{color:#ff6b6b;font-weight:bold}
.proposal{margin:.6em 0}.kind{font-weight:bold;color:#87d787}.what_if .kind{color:#87afff}
.partial .kind{color:#ffaf00}.why-not{color:#c0a060}.command{color:#e6e6e6;border-left:3px solid #5fb35f}
.headline{color:#87d787}nav.index li{margin:.15em 0}footer{margin-top:2em;color:#8b93a1;
border-top:1px solid #30343d;padding-top:.5em}
"""


def skipped_note(file: str, problems: Sequence[Any]) -> str:
    """The lines of ``file`` the reader skipped (not records: malformed, too long): a run on the page may miss
    events they held, and the page says so rather than show less without a word."""
    if not problems:
        return ""
    n = len(problems)
    first = "; ".join(f"line {p.line}: {p.message}" for p in problems[:3])
    return (f'<p class="banner warn">{n:,} line{"s" if n != 1 else ""} of {text(file)} '
            f'{"were" if n != 1 else "was"} skipped, not being records: a run here may lack what '
            f'{"they" if n != 1 else "it"} held ({text(first)}{" …" if n > 3 else ""})</p>')


def share_page(runs: Sequence[RunData], file: str, command: str, grouped: bool = False,
               prove: Callable[[RunData], Any] = explain, problems: Sequence[Any] = ()) -> str:
    """The whole page for ``runs`` of ``file``; ``command`` is what made it (shown at its foot).

    ``grouped``: an index by failure signature (``--all-failed``); several runs otherwise get a plain
    index. ``prove`` finds a failed run's fixes (explain; a test may pass its own). ``problems``: the
    lines of ``file`` the reader skipped (:class:`~tracetui.trace.reader.Problem`), said at the top."""
    groups = grouped_runs(runs) if grouped else None
    ordered = [run for _, members in groups for run in members] if groups is not None else list(runs)
    sections = [(f"r{i}", run) for i, run in enumerate(ordered, 1)]
    title = f"run {ordered[0].run_id}" if len(ordered) == 1 else f"{len(ordered)} runs"
    body = [f"<h1>tracetui · {text(title)}</h1>", f'<div class="dim">from {text(file)}</div>',
            skipped_note(file, problems)]
    if len(sections) > 1 or grouped:
        body.append(index_block(sections, groups))
    budget = PageBudget()
    body += [run_section(prefix, run, file, prove, budget) for prefix, run in sections]
    body.append(f"<footer>made by tracetui {text(__version__)}: <code>{text(command)}</code></footer>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="referrer" content="no-referrer">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>tracetui · {text(title)}</title><style>{CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")
