"""Spans → runs: each trace (or each top-level agent subtree of it) becomes a tracetui run.

A run imported from OpenTelemetry is an ordinary :class:`~tracetui.trace.reader.RunData`:
a run line without ``inputs`` (nothing to re-run) carrying ``"source": "otel"`` and
where it came from, its events on the six lanes, and a summary whose verdict is the
shared rule's (:meth:`RunData.verdict` over those events). A trace whose root span
is missing (not yet ended, or not exported) gets no summary: it is listed as
incomplete, as a native run whose writer crashed.

Traces that tracetui exported (their root carries ``tracetui.run.id``) are rebuilt
event for event from the ``tracetui.*`` attributes; any other trace goes through
the lane rules of :mod:`tracetui.otel.lanes`.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Iterable


from tracetui.otel import dialects as d, semconv as sc
from tracetui.otel.clean import Cleaner
from tracetui.otel.lanes import foreign_events
from tracetui.otel.naming import Planned, root_suffixes, run_names
from tracetui.otel.spans import Span
from tracetui.trace.format import ANSWER_READY, FAILED, LANES, OUTCOMES, RECOVERED, TRACE_VERSION
from tracetui.trace.reader import RunData
from tracetui.trace.redact import redact_text
from tracetui.trace.verdict import first_failure

SOURCE = "otel"
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def _slug(text: str) -> str:
    """A name made of a span's or agent's name: redacted before it is cut (a secret cut short no longer looks
    like one, and would be printed as part of every line that names the run)."""
    return _SLUG.sub("_", redact_text(text)).strip("_")[:40] or "run"


def _units(spans: list[Span]) -> list[tuple[Span | None, list[Span], bool]]:
    """(run root, its spans, whether its root is there) for each run of one trace.

    Each tree of the trace is read apart: spans under a root that is in the file, or under the same
    missing parent (an instrumentation that leaked its context, a root never exported). A tree whose
    root is missing is a run of its own, listed as incomplete: no span is dropped."""
    by_id = {s.span_id: s for s in spans}
    trees: dict[str, list[Span]] = {}
    tree_of = _trees(spans, by_id)
    for span in spans:
        trees.setdefault(tree_of[span.span_id], []).append(span)
    if len(trees) == 1:
        return _tree_units(spans, by_id)
    units = []
    for members in trees.values():
        units.extend(_tree_units(members, {s.span_id: s for s in members}))
    return sorted(units, key=lambda u: min((s.start_ns, s.span_id) for s in u[1]))


def _trees(spans: list[Span], by_id: dict[str, Span]) -> dict[str, str]:
    """Span id → its tree: its top ancestor in the file, or the missing parent above it. Each span is walked
    once (remembered: a deep chain walked from every span was quadratic); a parent cycle in a hostile file
    is one tree, named after its smallest span id."""
    tree: dict[str, str] = {}
    for span in spans:
        chain: list[Span] = []
        position: dict[str, int] = {}
        node = span
        while node.span_id not in tree:
            if node.span_id in position:  # a cycle: the chain from its first visit goes round it
                key = "cycle:" + min(n.span_id for n in chain[position[node.span_id]:])
                break
            position[node.span_id] = len(chain)
            chain.append(node)
            parent = by_id.get(node.parent_span_id) if node.parent_span_id else None
            if parent is None:
                key = "missing:" + node.parent_span_id if node.parent_span_id else node.span_id
                break
            node = parent
        else:
            key = tree[node.span_id]
        for member in chain:
            tree[member.span_id] = key
    return tree


def _tree_units(spans: list[Span], by_id: dict[str, Span]) -> list[tuple[Span | None, list[Span], bool]]:
    """The runs of one tree (or of the whole trace): one per top-level agent, and one for what lies outside them."""
    children: dict[str, list[Span]] = {}
    for span in spans:
        children.setdefault(span.parent_span_id, []).append(span)
    complete = any(not s.parent_span_id for s in spans)
    roots = sorted((s for s in spans if s.parent_span_id not in by_id), key=lambda s: (s.start_ns, s.span_id))

    agents = {s.span_id for s in by_id.values() if d.role(s) == d.AGENT}
    above = _AgentAbove(by_id, agents)

    def has_agent_ancestor(span: Span) -> bool:
        parent = by_id.get(span.parent_span_id) if span.parent_span_id else None
        return parent is not None and (parent.span_id in agents or above(parent))

    top = [s for s in spans if d.role(s) == d.AGENT and not has_agent_ancestor(s)]
    if len(top) <= 1:
        root = top[0] if top and top[0] in roots else (roots[0] if roots else None)
        return [(root, spans, complete)]
    units = []
    for agent in sorted(top, key=lambda s: (s.start_ns, s.span_id)):
        members, stack, seen = [], [agent], set()
        while stack:
            span = stack.pop()
            if span.span_id in seen:
                continue
            seen.add(span.span_id)
            members.append(span)
            stack.extend(children.get(span.span_id, []))
        units.append((agent, members, complete))
    covered = {s.span_id for _, members, _ in units for s in members}
    ancestors = {p.span_id for p in _ancestors(top, by_id)}
    # outside every agent: a run of its own unless it is only the agents' parents, ended well
    outside = [s for s in spans if s.span_id not in covered]
    if any(s.span_id not in ancestors or s.failed for s in outside):
        root = roots[0] if roots and roots[0].span_id not in covered else None
        units.append((root, outside, complete and root is not None and not root.parent_span_id))
    return units


def _ancestors(spans: list[Span], by_id: dict[str, Span]) -> list[Span]:
    out, seen = [], set()
    for span in spans:
        node = by_id.get(span.parent_span_id) if span.parent_span_id else None
        while node is not None and node.span_id not in seen:
            seen.add(node.span_id)
            out.append(node)
            node = by_id.get(node.parent_span_id) if node.parent_span_id else None
    return out


class _AgentAbove:
    """Whether an agent span is among a span's ancestors, each span walked once (remembered): asking it
    for every agent under a long chain walked the whole chain each time (quadratic). A parent cycle in a
    hostile file ends a walk; a span on the cycle has the cycle's spans as its ancestors.
    """

    def __init__(self, by_id: dict[str, Span], agents: set[str]):
        self.by_id, self.agents = by_id, agents
        self.memo: dict[str, bool] = {}
        self.walked = 0  #: steps taken up the tree, all asks together (the tests prove the work linear with it)

    def __call__(self, start: Span) -> bool:
        """For a span of ``by_id``."""
        by_id, agents, memo = self.by_id, self.agents, self.memo
        chain: list[Span] = []
        position: dict[str, int] = {}
        node = start
        while True:
            self.walked += 1
            if node.span_id in memo:  # known: everything walked so far is below it
                tail = len(chain)
                break
            if node.span_id in position:  # a cycle: chain[tail:] goes round it
                tail = position[node.span_id]
                on_cycle = any(n.span_id in agents for n in chain[tail:])
                for member in chain[tail:]:
                    memo[member.span_id] = on_cycle
                break
            position[node.span_id] = len(chain)
            chain.append(node)
            parent = by_id.get(node.parent_span_id) if node.parent_span_id else None
            if parent is None:  # a root (or its parent is not in the file)
                memo[node.span_id] = False
                tail = len(chain) - 1
                break
            node = parent
        for member in reversed(chain[:tail]):  # each one's parent is decided by now
            parent = by_id[member.parent_span_id]
            memo[member.span_id] = parent.span_id in agents or memo[parent.span_id]
        return memo[start.span_id]


def _meta(span: Span) -> dict[str, Any]:
    status = {0: "unset", 1: "ok", 2: "error"}.get(span.status_code, str(span.status_code))
    return {"name": span.name, "trace_id": span.trace_id, "span_id": span.span_id,
            "parent_span_id": span.parent_span_id or None, "kind": span.kind, "status": status,
            "status_message": span.status_message or None}


def _own_event(attrs: dict[str, Any], span: Span) -> dict[str, Any] | None:
    """A tracetui event carried by ``tracetui.*`` attributes (of a span event, or of an HTTP attempt's span)."""
    lane, outcome = attrs.get(sc.EV_LANE), attrs.get(sc.EV_OUTCOME)
    if lane not in LANES or outcome not in OUTCOMES or type(attrs.get(sc.EV_SEQ)) is not int:
        return None
    others = {k: v for k, v in span.attributes.items() if not k.startswith(sc.TT)}
    return {"seq": attrs[sc.EV_SEQ], "lane": lane, "kind": str(attrs.get(sc.EV_KIND) or lane), "outcome": outcome,
            "turn": attrs.get(sc.EV_TURN) if type(attrs.get(sc.EV_TURN)) is int else 0,
            "t_ms": attrs.get(sc.EV_T_MS) if type(attrs.get(sc.EV_T_MS)) is int else 0,
            "call_id": attrs.get(sc.EV_CALL_ID) if isinstance(attrs.get(sc.EV_CALL_ID), str) else None,
            "code": attrs.get(sc.EV_CODE) if isinstance(attrs.get(sc.EV_CODE), str) else None,
            "summary": str(attrs.get(sc.EV_SUMMARY) or ""),
            "data": {"span": _meta(span), "attributes": others}}


def _tracetui_events(spans: list[Span]) -> list[dict[str, Any]]:
    events = []
    for span in spans:
        own = _own_event(span.attributes, span)
        if own is not None:
            events.append(own)
        for event in span.events:
            own = _own_event(event.attributes, span)
            if own is not None:
                events.append(own)
    events.sort(key=lambda e: e["seq"])
    return events


def _foreign_metrics(spans: list[Span], events: list[dict[str, Any]]) -> dict[str, int]:
    chats = sum(1 for s in spans if d.role(s) == d.CHAT)
    return {"iterations": chats, "model_calls": chats,
            "http_attempts": sum(1 for e in events if e["kind"] == "http.attempt"),
            "tool_calls": sum(1 for s in spans if d.role(s) == d.TOOL),
            "events": len(events), "recovered": sum(1 for e in events if e["outcome"] == RECOVERED)}


def unit_run(root: Span | None, spans: list[Span], complete: bool, name: str,
             cleaner: Cleaner | None = None, verdict_only: bool = False) -> RunData:
    """One run from its spans; its records redacted as the writer would (secrets never reach the screen),
    by ``cleaner`` (one per import: it remembers the long strings it redacted). ``verdict_only``: only what its
    verdict and where it came from are read from (:func:`_verdict_data`), as ``check`` needs."""
    cleaner = cleaner or Cleaner()
    first = root or min(spans, key=_at)
    own = root is not None and isinstance(root.attributes.get(sc.RUN_ID), str)
    start = min(s.start_ns for s in spans)
    if own:
        events = _tracetui_events(spans)
        complete = complete and root.attributes.get(sc.COMPLETE) is not False
    else:
        events = foreign_events(spans, root, start, with_data=not verdict_only)
        for seq, event in enumerate(events, 1):
            event["seq"] = seq
    if verdict_only:
        return _verdict_data(name, first, events, complete, cleaner)
    _clean = cleaner.record
    if own:
        metrics = {k[len(sc.METRICS_PREFIX):]: v for k, v in root.attributes.items()
                   if k.startswith(sc.METRICS_PREFIX) and type(v) is int}
        producer = root.attributes.get(sc.PRODUCER) or "tracetui"
    else:
        metrics = _foreign_metrics(spans, events)
        service = first.resource.get(sc.SERVICE_NAME)
        producer = " · ".join(str(p) for p in (service, first.scope) if p) or "OpenTelemetry"
    otel = {"trace_id": first.trace_id, "root_span_id": root.span_id if root else None,
            "root_span": root.name if root else None, "spans": len(spans)}
    if isinstance(first.resource.get(sc.SERVICE_NAME), str):
        otel["service_name"] = first.resource[sc.SERVICE_NAME]  # with the trace id: where to find the run again
    agent = next((d.agent_name(s) for s in sorted(spans, key=_at) if d.agent_name(s)), None)
    if agent:
        otel["agent"] = agent
    data = RunData(name, first_line=first.line)
    data.add(_clean({"rec": "run", "run_id": name, "trace_version": TRACE_VERSION, "producer": str(producer),
                     "source": SOURCE, "otel": otel}))
    for event in events:
        problem = data.add(_clean({"rec": "event", "run_id": name, **event}))
        if problem:  # a repeated seq in a hand-made file: the first is kept, as the reader does
            continue
    if complete:
        verdict = data.verdict()  # no summary yet: the shared rule decides from the events
        failure = verdict["first_failure"]
        data.add(_clean({"rec": "summary", "run_id": name, "status": failure["code"] if failure else ANSWER_READY,
                         "ready": failure is None, "metrics": {**metrics, "events": len(data.events)},
                         "first_failure": failure}))
    return data


#: what a verdict reads of a failed event (:func:`tracetui.trace.verdict.first_failure`)
_DECIDING = ("lane", "outcome", "code", "summary")


def _verdict_data(name: str, first: Span, events: list[dict[str, Any]], complete: bool, cleaner: Cleaner) -> RunData:
    """The run as its verdict and its origin read it: the trace id and service of its run line, its events'
    outcomes (and, of a failed one, what :data:`_DECIDING` names), the status and first failure of its summary,
    each redacted as in the whole records (the cleaner redacts a record field by field: these come out the same).
    Nothing else of a run reaches ``check``'s output, so nothing else is redacted: most of the import's time."""
    otel = {"trace_id": first.trace_id}
    if isinstance(first.resource.get(sc.SERVICE_NAME), str):
        otel["service_name"] = first.resource[sc.SERVICE_NAME]
    data = RunData(name, first_line=first.line)
    data.add({"rec": "run", "run_id": name, "source": SOURCE, **cleaner.record({"otel": otel})})
    for event in events:
        kept = {"rec": "event", "run_id": name, "seq": event["seq"], "outcome": event["outcome"]}
        if event["outcome"] == FAILED:
            kept.update(cleaner.record({k: event[k] for k in _DECIDING if k in event}))
        data.add(kept)  # (a repeated seq, of a hand-made file: the first is kept)
    if complete:
        failure = first_failure(data.events)
        data.add({"rec": "summary", "run_id": name, "ready": failure is None, **cleaner.record(
            {"status": failure["code"] if failure else ANSWER_READY, "first_failure": failure})})
    return data


def run_label(root: Span | None, spans: list[Span]) -> str:
    """A run's name before its trace id is added: its own id (a trace tracetui exported), or its agent's or
    root's name."""
    if root is not None and isinstance(root.attributes.get(sc.RUN_ID), str):
        return root.attributes[sc.RUN_ID]
    agent = next((d.agent_name(s) for s in sorted(spans, key=_at) if d.agent_name(s)), None)
    return _slug(agent or (root or min(spans, key=_at)).name)


def _at(span: Span) -> tuple[int, str]:
    """Where a span comes in a run, ties broken by span id: never by its place in the file."""
    return span.start_ns, span.span_id


def plan_trace(trace_spans: list[Span]) -> list[Planned]:
    """The runs of one trace, before naming: (root, members, complete, label, suffix); suffix None for a
    run tracetui exported (it keeps its own id)."""
    units = _units(trace_spans)
    planned: list[Planned] = []
    for i, (root, members, complete) in enumerate(units):
        label = run_label(root, members)
        if root is not None and sc.RUN_ID in root.attributes:
            planned.append((root, members, complete, label, None))
            continue
        suffix = ("root:" + root.span_id if root else f"-{i}") if len(units) > 1 else ""
        planned.append((root, members, complete, label, suffix))
    return root_suffixes(planned)


def runs_from_spans(spans: Iterable[Span], taken: Callable[[str], bool] | None = None) -> list[RunData]:
    """Runs from spans of any number of traces, in order of each trace's first span.

    A foreign run is named ``{agent}-{trace id prefix}`` (``-{root span id prefix}`` added when its trace holds
    several runs): 8 hex digits of the trace id, more where two traces share them, so a name stays the same
    whatever else is in the file and in whichever order. A run tracetui exported keeps its own id."""
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    planned = [unit for trace_spans in traces.values() for unit in plan_trace(trace_spans)]
    names = run_names([(label, suffix, members[0].trace_id) for _, members, _, label, suffix in planned], taken)
    cleaner = Cleaner()
    return [unit_run(root, members, complete, name, cleaner)
            for (root, members, complete, _, _), name in zip(planned, names)]
