"""Runs read straight from Arize Phoenix: the spans of one project, through its REST API, page by page.

``phoenix+http://HOST:PORT/PROJECT`` (``phoenix+https://``; a path before the project is the
root Phoenix is served under). Phoenix lists a project's traces newest first
(``GET /v1/projects/{project}/traces``, cursor-paged, ``start_time`` for ``--since``) and
gives their spans in OTLP's shape (``GET /v1/projects/{project}/spans/otlpv1``, by
``trace_id``, cursor-paged). Those spans are read by the OTLP/JSON file reader
(:func:`~tracetui.otel.otlp_read.spans_of`), so a run comes out as it would from a file.

Phoenix keeps neither the resource (``service.name``), nor the instrumentation scope, nor
the span kind (it answers ``SPAN_KIND_INTERNAL`` for every span). The kind matters for one
thing, telling an HTTP client span: a span with an HTTP method and ``url.full`` (which the
HTTP conventions put on client spans only) is read as one again.

Bounded as the exporter is: every request has a timeout (headers included, however slowly
they drip), an answer is read within :data:`MAX_PAGE_BYTES`, a redirect is followed only
to the same scheme, host and port, and proxies are ignored for loopback. An API key
is taken from ``PHOENIX_API_KEY`` (``Authorization: Bearer``) and written nowhere.
"""
from __future__ import annotations

import os
import zlib
from dataclasses import dataclass
from typing import Any, Iterator
from urllib.parse import quote, unquote, urlsplit

import httpx
import orjson

from tracetui.otel import semconv as sc
from tracetui.otel.backend import Query
from tracetui.otel.spans import KIND_CLIENT, KIND_INTERNAL, Span
from tracetui.trace.reader import Problem, TraceFile, TraceReadError
from tracetui.trace.safe_text import redacted_prefix

TIMEOUT_S = 30.0
TRACES_PAGE = 100  # traces listed a page; their spans are asked for together
SPANS_PAGE = 1000  # Phoenix's most
MAX_PAGE_BYTES = 64 * 1024 * 1024
MAX_REDIRECTS = 3
MAX_PAGES = 1_000_000  # a server repeating its cursor for ever is cut here (and at a repeated cursor)
API_KEY = "PHOENIX_API_KEY"


class PhoenixError(TraceReadError):
    """Phoenix could not be read: unreachable, refused, no such project, or an answer that is not its API's."""


@dataclass(frozen=True)
class Project:
    base: str  # http(s)://host:port[/root]
    name: str
    label: str  # the source as given

    @property
    def origin(self) -> tuple[str, str, int]:
        parts = urlsplit(self.base)
        return _origin(parts.scheme, parts.hostname or "", parts.port)


def parse_source(source: str) -> Project:
    """``phoenix+http(s)://HOST[:PORT][/ROOT]/PROJECT`` → where Phoenix is and which project."""
    scheme, _, rest = source.partition("://")
    parts = urlsplit(f"{scheme.lower().removeprefix('phoenix+')}://{rest}")
    if parts.username is not None or parts.password is not None:
        raise PhoenixError(f"{source}: no credentials in the address: set {API_KEY} to the API key")
    if not parts.hostname:
        raise PhoenixError(f"{source}: no host: write phoenix+http://HOST:PORT/PROJECT")
    try:
        parts.port
    except ValueError:
        raise PhoenixError(f"{source}: the port is not a number from 0 to 65535") from None
    if parts.query or parts.fragment:
        raise PhoenixError(f"{source}: a Phoenix source has no ?query or #fragment: give filters as --since, "
                           f"--status and --limit")
    root, _, project = parts.path.rstrip("/").rpartition("/")
    project = unquote(project)
    if not project:
        raise PhoenixError(f"{source}: no project: write phoenix+http://HOST:PORT/PROJECT (Phoenix's first "
                           f"project is 'default')")
    return Project(f"{parts.scheme}://{parts.netloc}{root}", project, source)


def read_phoenix(source: str, query: Query, transport: httpx.BaseTransport | None = None) -> TraceFile:
    """The runs of a Phoenix project chosen by ``query``, newest first (see the module's docstring)."""
    from tracetui.otel.importer import runs_from_spans
    from tracetui.otel.otlp_read import parent_cycles, spans_of

    project = parse_source(source)
    problems: list[Problem] = []
    kept: list[Span] = []
    counted = 0
    with _Client(project, transport) as client:
        for ordinal, (_, raw_spans) in enumerate(client.traces(query), 1):
            doc = {"resource_spans": [{"scope_spans": [{"spans": raw_spans}]}]}
            spans = [_kind_restored(s) for s in spans_of(doc, ordinal, source, problems)]
            if not spans:
                continue
            if query.status or query.limit:  # read alone to count: a run's verdict is its trace's alone
                wanted = sum(1 for run in runs_from_spans(spans) if _wanted(run, query.status))
                if not wanted:
                    continue
                counted += wanted
            kept.extend(spans)
            if query.limit and counted >= query.limit:
                break
    problems.extend(parent_cycles(kept, source))
    runs = [r for r in runs_from_spans(kept) if _wanted(r, query.status)][:query.limit or None]
    if not runs and query == Query():
        raise PhoenixError(f"{source}: no runs found (project {project.name!r} holds no trace)", problems)
    return TraceFile(source, {r.run_id: r for r in runs}, problems)


def _wanted(run: Any, status: str | None) -> bool:
    if status is None:
        return True
    ready = run.verdict()["ready"]
    return not ready if status == "error" else ready


def _kind_restored(span: Span) -> Span:
    """An HTTP client span as the exporter wrote it: Phoenix keeps no span's kind (it answers INTERNAL for all)."""
    attrs = span.attributes
    if span.kind in (0, KIND_INTERNAL) and sc.URL_FULL in attrs and (sc.HTTP_METHOD in attrs
                                                                    or sc.HTTP_METHOD_OLD in attrs):
        span.kind = KIND_CLIENT
    return span


def _without_nulls(value: Any) -> Any:
    """Phoenix writes every field of a value, the unset ones as null; OTLP/JSON leaves them out."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


class _Client:
    """Phoenix's REST API, one GET at a time, each bounded; errors as :class:`PhoenixError` sentences."""

    def __init__(self, project: Project, transport: httpx.BaseTransport | None = None):
        from tracetui.providers.header_deadline import HeaderDeadline, bound_header_reads
        from tracetui.providers.http_transport import is_loopback

        self.project = project
        key = os.environ.get(API_KEY, "").strip()
        self.keyed = bool(key)
        headers = {"Accept": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
        self.http = httpx.Client(timeout=httpx.Timeout(TIMEOUT_S), follow_redirects=False, transport=transport,
                                 headers=headers, trust_env=not is_loopback(project.base))
        self.deadline = HeaderDeadline()
        bound_header_reads(self.http, self.deadline)

    def __enter__(self) -> "_Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.http.close()

    @property
    def _where(self) -> str:
        return f"{self.project.label}: Phoenix at {self.project.base}"

    def _path(self, tail: str) -> str:
        return f"{self.project.base}/v1/projects/{quote(self.project.name, safe='')}{tail}"

    def traces(self, query: Query) -> Iterator[tuple[str, list[Any]]]:
        """(trace id, its spans as OTLP/JSON objects) for each trace of the project, newest first."""
        params: dict[str, Any] = {"sort": "start_time", "order": "desc", "limit": TRACES_PAGE}
        if query.since is not None:
            params["start_time"] = query.since.isoformat()
        for page in self._pages(self._path("/traces"), params):
            ids = [t["trace_id"] for t in page if isinstance(t, dict) and isinstance(t.get("trace_id"), str)]
            if not ids:
                continue
            by_trace: dict[str, list[Any]] = {}
            for spans in self._pages(self._path("/spans/otlpv1"), {"trace_id": ids, "limit": SPANS_PAGE}):
                for span in spans:
                    if isinstance(span, dict):
                        by_trace.setdefault(str(span.get("trace_id")), []).append(_without_nulls(span))
            for trace_id in ids:
                if trace_id in by_trace:  # in start order, ties by id: the same spans, the same runs
                    yield trace_id, sorted(by_trace[trace_id], key=_start_and_id)

    def _pages(self, url: str, params: dict[str, Any]) -> Iterator[list[Any]]:
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            answer = self._get(url, {**params, **({"cursor": cursor} if cursor else {})})
            data = answer.get("data") if isinstance(answer, dict) else None
            if not isinstance(data, list):
                raise PhoenixError(f"{self._where} answered {url} with JSON that is not a page of its API "
                                   f"(no data list): is this Phoenix?")
            yield data
            cursor = answer.get("next_cursor")
            if not isinstance(cursor, str) or not cursor or not data or cursor in seen:
                return
            seen.add(cursor)

    def _get(self, url: str, params: dict[str, Any] | None) -> Any:
        for _ in range(MAX_REDIRECTS + 1):
            status, headers, body, final = self._fetch(url, params)
            if status in (301, 302, 303, 307, 308) and headers.get("location"):
                target = httpx.URL(final).join(headers["location"])
                if _origin(target.scheme, target.host, target.port) != self.project.origin:
                    raise PhoenixError(f"{self._where} redirected to {target.scheme}://{target.host}"
                                       f"{':' + str(target.port) if target.port else ''}, another host: not "
                                       f"followed (give that address, if it is Phoenix)")
                url, params = str(target), None
                continue
            return self._answer(status, headers, body, url)
        raise PhoenixError(f"{self._where} redirected more than {MAX_REDIRECTS} times")

    def _fetch(self, url: str, params: dict[str, Any] | None) -> tuple[int, httpx.Headers, bytes, str]:
        from tracetui.providers.response_caps import DecodedBody, TooLarge

        try:
            self.deadline.start(TIMEOUT_S)
            with self.http.stream("GET", url, params=params) as response:
                self.deadline.stop()
                decoded = DecodedBody(response.headers.get("content-encoding", ""), MAX_PAGE_BYTES,
                                      "Phoenix's answer")
                if response.is_stream_consumed:  # given whole (a mock transport): decoded already
                    if len(response.content) > MAX_PAGE_BYTES:
                        raise TooLarge(str(len(response.content)))
                    chunks = [response.content]
                else:
                    chunks = [decoded.feed(raw) for raw in response.iter_raw()]
                    chunks.append(decoded.finish())
                return response.status_code, response.headers, b"".join(chunks), str(response.url)
        except httpx.TimeoutException:
            raise PhoenixError(f"{self._where} did not answer within {TIMEOUT_S:g} s") from None
        except httpx.ConnectError as exc:
            raise PhoenixError(f"{self._where} cannot be reached ({_reason(exc)}): is it running, and is the "
                               f"address right?") from None
        except httpx.HTTPError as exc:
            raise PhoenixError(f"{self._where}: {exc.__class__.__name__}: {_reason(exc)}") from None
        except TooLarge:
            raise PhoenixError(f"{self._where} sent an answer over {MAX_PAGE_BYTES:,} bytes; not read "
                               f"further") from None
        except zlib.error as exc:
            raise PhoenixError(f"{self._where} sent a corrupt compressed answer ({exc})") from None
        finally:
            self.deadline.stop()

    def _answer(self, status: int, headers: httpx.Headers, body: bytes, url: str) -> Any:
        if status in (401, 403):
            hint = (f"the key in {API_KEY} was refused" if self.keyed
                    else f"set {API_KEY} to one of its API keys")
            raise PhoenixError(f"{self._where} refused access ({status}): {hint}")
        if status == 404 and "/v1/projects/" in url:
            raise PhoenixError(f"{self._where} has no project {self.project.name!r}{self._projects()}")
        if status >= 400:
            raise PhoenixError(f"{self._where} answered {status}{_detail(body)}"
                               + (" (the traces and OTLP span API need Phoenix 13.15 or later)"
                                  if status in (404, 405, 422) else ""))
        if not 200 <= status < 300:
            raise PhoenixError(f"{self._where} answered {status}, not a success")
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            kind = headers.get("content-type", "no content type").split(";")[0]
            raise PhoenixError(f"{self._where} answered {status} with {kind}, not JSON: is this Phoenix (or a "
                               f"proxy's or a login page)?") from None

    def _projects(self) -> str:
        """``; its projects: a, b`` — what Phoenix holds, when it says (best effort: the 404 is the error)."""
        try:
            status, _, body, _ = self._fetch(f"{self.project.base}/v1/projects", {"limit": 100})
            names = [p.get("name") for p in orjson.loads(body).get("data", []) if isinstance(p, dict)]
        except (PhoenixError, orjson.JSONDecodeError, AttributeError):
            return ""
        names = [n for n in names if isinstance(n, str)]
        return f"; its projects: {', '.join(repr(n) for n in names[:20])}" if status == 200 and names else ""


def _origin(scheme: str, host: str, port: int | None) -> tuple[str, str, int]:
    return scheme.lower(), host.lower(), port or (443 if scheme.lower() == "https" else 80)


def _start_and_id(span: dict[str, Any]) -> tuple[int, str]:
    try:
        start = int(span.get("start_time_unix_nano") or 0)
    except (TypeError, ValueError):
        start = 0
    return start, str(span.get("span_id"))


def _reason(exc: Exception) -> str:
    text = str(exc) or exc.__class__.__name__
    return text.split("] ", 1)[-1] if text.startswith("[Errno") else text


def _detail(body: bytes) -> str:
    """``: what Phoenix said`` — its JSON ``detail`` or the start of the body, in one short line."""
    try:
        said = orjson.loads(body)
        text = said.get("detail") if isinstance(said, dict) else None
    except orjson.JSONDecodeError:
        text = None
    text = text if isinstance(text, str) else body[:400 + 8192].decode("utf-8", errors="replace")
    text = " ".join(text.split())
    return f": {redacted_prefix(text, 200)}" if text else ""
