"""``check --junit FILE``: the verdicts as a JUnit XML report, the format every CI renders.

One testcase per run (named by the run as ``check`` lists it). A failed run carries a ``<failure>``
(message: the failing lane, step and reason; type: the failure's code); an incomplete run (it stopped
without a summary: nothing decided it) an ``<error>``, as a test that crashed is told from one that
failed. With a baseline, only a newly failing run is a failure or an error, so the report is red exactly
when ``check`` exits 1; a run failing in the baseline too, or absent from it, is ``<skipped>`` with its
reason, visible but not counted. Each run that did not pass has the ``replay`` and ``explain`` commands
in its ``<system-out>``.

Trace text is untrusted: every string is redacted and its control characters made visible escapes
(:func:`~tracetui.trace.safe_text.printable`), and what XML 1.0 cannot hold at all (lone surrogates,
U+FFFE, U+FFFF) is escaped too, so a hostile reason cannot break the document; xml.sax.saxutils and
xml.etree escape the rest.

Testcases are written as they come to an unnamed temporary file (memory stays flat however many runs
there are); the report is written whole at the end, atomically, never over an input trace.
"""
from __future__ import annotations

import os
import re
import shlex
from functools import lru_cache
import stat
import tempfile
import xml.etree.ElementTree as ET  # (the report's fixed parts; testcases: saxutils)
from typing import Any, BinaryIO, Iterable
from xml.sax.saxutils import escape, quoteattr

from tracetui.triage.baseline import FIXED, NEWLY_FAILING, STILL_FAILING, Unmatched
from tracetui.trace.verdict import INCOMPLETE, READY

#: what XML 1.0 cannot hold and printable() leaves alone
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")
#: problem lines listed in the report (the rest are counted)
PROBLEMS_LISTED = 100


def xml_text(text: Any, keep_newlines: bool = False) -> str:
    """``text`` safe in an XML 1.0 document: redacted, and every control or non-XML character an escape."""
    from tracetui.trace.safe_text import printable

    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", printable(str(text), keep_newlines))


#: :func:`xml_text` of what repeats across runs (reasons, codes, the file name): redaction reads every
#: character, and made afresh for each of 20,000 runs it cost four times the scan
_cached_text = lru_cache(maxsize=4096)(xml_text)
#: texts longer than this are made safe afresh, never remembered: 4096 long distinct reasons held in the
#: cache would grow memory with the runs (a 1 MB reason a run: gigabytes)
CACHED_LENGTH = 2048
#: characters of a reason kept in a failure's ``message`` (CI shows it on one line; the text holds it all)
MESSAGE_LENGTH = 500


def _repeated_text(text: str, keep_newlines: bool = False) -> str:
    """:func:`xml_text`, remembered when ``text`` is short."""
    if len(text) > CACHED_LENGTH:
        return xml_text(text, keep_newlines)
    return _cached_text(text, keep_newlines)


def _one_line_message(text: str) -> str:
    """``text`` cut to :data:`MESSAGE_LENGTH` characters, saying how much the failure's text holds beyond."""
    if len(text) <= MESSAGE_LENGTH:
        return text
    return f"{text[:MESSAGE_LENGTH]}… ({len(text) - MESSAGE_LENGTH} characters more in the failure's text)"


def failure_message(verdict: dict[str, Any]) -> str:
    """The failing lane, its step and the reason: ``receipt@5: read_order failed …``."""
    ff = verdict.get("first_failure")
    if ff:
        return f"{ff.get('lane')}@{ff.get('seq')}: {ff.get('reason')}"
    if verdict.get("outcome") == INCOMPLETE:
        return "incomplete: the run stopped without a summary and without a failed event"
    return f"{verdict.get('status')}: no event shows where it failed"


def failure_type(verdict: dict[str, Any]) -> str:
    ff = verdict.get("first_failure")
    code = ff.get("code") if ff else None
    return str(code or verdict.get("status") or verdict.get("outcome"))


def output_problem(path: str, inputs: Iterable[str]) -> str | None:
    """Why the report cannot be written to ``path`` (a folder, a pipe or device in its place, a folder that
    cannot be reached or written, an input trace), in words; None when it can."""
    from tracetui.trace.output_path import output_target, writes_over

    try:
        target = output_target(path)
    except OSError as exc:
        return str(exc.strerror or exc)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        return str(exc.strerror or exc)
    if mode is not None and not stat.S_ISREG(mode):
        return "it is not a regular file (a folder, a pipe or a device)"
    if not os.access(target.parent, os.W_OK | os.X_OK):  # the atomic write makes its file in that folder
        return f"its folder {target.parent} is not writable"
    for trace in inputs:
        if trace != "-" and writes_over(path, trace):
            return f"it is the trace {trace}; an input is never written over"
    return None


class JUnitReport:
    """A JUnit document built run by run; :meth:`write` puts it at its path."""

    def __init__(self, trace_file: str, baseline: str | None = None):
        self.trace_file = trace_file
        self.baseline = baseline
        stem = os.path.basename(trace_file) if trace_file != "-" else "stdin"
        self.classname = xml_text(stem.split(".")[0] or stem)
        self.tests = self.failures = self.errors = self.skipped = 0
        self._cases: BinaryIO = tempfile.TemporaryFile()
        from tracetui.trace.verdict_lines import PrintableVerdicts

        self._ids = PrintableVerdicts()  # tells a plain run id (nothing to redact or escape) at a glance

    def _commands(self, name: str) -> str:
        """How to look at the run again: its replay and explain commands, quoted for a POSIX shell, made safe
        piece by piece (the file's part remembered: it repeats in every testcase)."""
        # the id is made safe before it is quoted (a redacted id must not read ``--run <redacted>``, a redirect)
        shown = name if self._ids.plain(name) else xml_text(name)
        where = "FILE" if self.trace_file == "-" else _repeated_text(shlex.quote(self.trace_file))
        first = "read from standard input: save the trace to a file, then\n" if self.trace_file == "-" else ""
        if shown != name or (self.trace_file != "-" and where != shlex.quote(self.trace_file)):
            first = "the run id or the file name is shown redacted or escaped here: copy it from the trace\n" + first
        run = shlex.quote(shown)
        return f"{first}tracetui replay {where} --run {run}\ntracetui explain {where} --run {run}\n"

    def close(self) -> None:
        self._cases.close()

    def add(self, verdict: dict[str, Any], judgement: str | None = None) -> None:
        """One run's testcase; ``judgement`` (:mod:`.baseline`) when a baseline decides what counts.

        Written as text with xml.sax.saxutils' escaping (an ElementTree per run cost more than the scan);
        every string in it went through :func:`xml_text` first."""
        name = str(verdict["run_id"])
        parts = [f"<testcase name={quoteattr(name if self._ids.plain(name) else xml_text(name))} "
                 f"classname={quoteattr(self.classname)}"]
        self.tests += 1
        if verdict["outcome"] != READY:
            message = _one_line_message(_repeated_text(failure_message(verdict)))
            if judgement in (None, NEWLY_FAILING):
                body = f"{verdict.get('status')}: {failure_message(verdict)}"
                if verdict.get("responsibility"):
                    body += f"  [{verdict['responsibility']}]"
                if judgement == NEWLY_FAILING:
                    body += f"\nanswer-ready in the baseline {self.baseline}"
                tag = "error" if verdict["outcome"] == INCOMPLETE else "failure"
                if tag == "error":
                    self.errors += 1
                else:
                    self.failures += 1
                parts.append(f"><{tag} message={quoteattr(message)} "
                             f"type={quoteattr(_repeated_text(failure_type(verdict)))}>"
                             f"{escape(_repeated_text(body, keep_newlines=True))}</{tag}>")
            else:
                why = "failing in the baseline too" if judgement == STILL_FAILING else "not in the baseline"
                self.skipped += 1
                parts.append(f"><skipped message={quoteattr(f'{why}: {message}')} />")
            parts.append(f"<system-out>{escape(self._commands(name))}</system-out></testcase>\n")
        elif judgement == FIXED:
            fixed = _repeated_text(f"fixed: it failed in the baseline {self.baseline}\n", keep_newlines=True)
            parts.append(f"><system-out>{escape(fixed)}</system-out></testcase>\n")
        else:
            parts.append(" />\n")
        self._cases.write("".join(parts).encode("utf-8"))

    def write(self, path: str, problems: Iterable[Any] = (), problem_count: int = 0,
              only_in_old: Unmatched | None = None) -> None:
        """The whole report, atomically, at ``path`` (see :func:`output_problem` first). Without a baseline,
        lines that are not trace records fail the check, so they are one more testcase, an error."""
        from tracetui.trace.writer import AtomicWriter

        listed = [f"line {p.line}: {p.message}" for p, _ in zip(problems, range(PROBLEMS_LISTED))]
        more = problem_count - len(listed)
        lines_case = None
        if problem_count and self.baseline is None:
            lines_case = ET.Element("testcase", {"name": "trace lines", "classname": self.classname})
            ET.SubElement(lines_case, "error", {"message": xml_text(
                f"{problem_count} line(s) are not trace records; the first: {listed[0]}"), "type": "unreadable_line"})
        tests, errors = self.tests + (lines_case is not None), self.errors + (lines_case is not None)
        suite = {"name": xml_text(self.trace_file), "tests": str(tests), "failures": str(self.failures),
                 "errors": str(errors), "skipped": str(self.skipped)}
        with AtomicWriter(path) as out:
            out.write(b'<?xml version="1.0" encoding="UTF-8"?>\n')
            out.write(f'<testsuites name="tracetui check" tests="{tests}" failures="{self.failures}" '
                      f'errors="{errors}">\n'.encode())
            out.write(b"<testsuite " + " ".join(f"{k}={quoteattr(v)}" for k, v in suite.items()).encode() + b">\n")
            props = ET.Element("properties")
            if self.baseline is not None:
                ET.SubElement(props, "property", {"name": "baseline", "value": xml_text(self.baseline)})
            if only_in_old is not None:
                ET.SubElement(props, "property", {"name": "only_in_baseline", "value": str(only_in_old.count)})
            if len(props):
                out.write(ET.tostring(props, encoding="utf-8") + b"\n")
            self._cases.seek(0)
            while True:
                block = self._cases.read(1 << 20)
                if not block:
                    break
                out.write(block)
            if lines_case is not None:
                out.write(ET.tostring(lines_case, encoding="utf-8") + b"\n")
            if listed:
                err = ET.Element("system-err")
                err.text = xml_text("\n".join(listed) + (f"\n… and {more} more problem line(s)" if more > 0 else "")
                                    + "\n", keep_newlines=True)
                out.write(ET.tostring(err, encoding="utf-8") + b"\n")
            out.write(b"</testsuite>\n</testsuites>\n")


__all__ = ["JUnitReport", "output_problem", "xml_text", "failure_message", "failure_type"]
