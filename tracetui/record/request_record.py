"""What a trace keeps of a request an agent sent: never its headers (its credentials live there), its body
as sent, a hash to compare it by, and the SDK's own retry count.

Credentials are read from the headers only to be forgotten: each value is registered as a
:class:`~tracetui.trace.known_secret.KnownSecret`, so a server that echoes the key back (in any
form) finds it scrubbed from what is recorded, as the built-in loop scrubs its own key.
"""
from __future__ import annotations

import hashlib
import threading
from typing import Any, Iterable
from urllib.parse import parse_qsl, urlsplit

import orjson

from tracetui.providers.response_caps import bytes_words
from tracetui.record.routes import SECRET_QUERY, gemini_model, provider_of, recorded_url, streamed_by_path
from tracetui.trace.format import BOM
from tracetui.trace.known_secret import KnownSecret
from tracetui.trace.limits import too_deep
from tracetui.trace.stream_redact import redact_events

#: a request body larger than this is kept as its hash only (the contract's per-body cap)
MAX_REQUEST_BODY = 4 * 1024 * 1024
#: headers that carry a credential, as each SDK sends it
CREDENTIAL_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key", "proxy-authorization",
                                "openai-api-key", "cookie"})
MIN_SECRET_CHARS = 12  # shorter values ("EMPTY", "ollama") are placeholders, and scrubbing them would corrupt bodies


def parsed_body(raw: bytes) -> Any:
    """The body as JSON when it is JSON a trace can hold, else its text; None when empty."""
    if not raw:
        return None
    try:
        value = orjson.loads(raw[len(BOM):] if raw.startswith(BOM) else raw)
    except orjson.JSONDecodeError:
        return raw.decode("utf-8", errors="replace")
    return raw.decode("utf-8", errors="replace") if too_deep(value) else value


def request_record(method: str, path: str, headers: Iterable[tuple[str, str]], raw: bytes) -> dict[str, Any]:
    """The contract's REQUEST: method, url (no ``key=``), provider, model, stream, body, body_sha256, retry_count."""
    provider = provider_of(method, path)
    body = parsed_body(raw)
    model = gemini_model(path) if provider == "gemini" else None
    if model is None and isinstance(body, dict) and isinstance(body.get("model"), str):
        model = body["model"]
    stream = streamed_by_path(path) or (isinstance(body, dict) and body.get("stream") is True)
    retry = None
    for name, value in headers:
        if name.lower() == "x-stainless-retry-count" and value.strip().isdigit():
            retry = int(value.strip())
    return {"method": method.upper(), "url": recorded_url(path), "provider": provider, "model": model,
            "stream": bool(stream),
            "body": {"omitted": bytes_words(len(raw))} if len(raw) > MAX_REQUEST_BODY else body,
            "body_sha256": hashlib.sha256(raw).hexdigest(), "retry_count": retry}


class Credentials:
    """Every credential the agent has sent so far, each known in all the forms a server may echo it."""

    def __init__(self) -> None:
        self._secrets: dict[str, KnownSecret] = {}
        self._lock = threading.Lock()

    def learn(self, path: str, headers: Iterable[tuple[str, str]]) -> None:
        values = []
        for name, value in headers:
            if name.lower() in CREDENTIAL_HEADERS:
                scheme, _, token = value.strip().partition(" ")
                values += [value.strip(), token.strip()] if token else [scheme]
        values += [v for k, v in parse_qsl(urlsplit(path).query) if k.lower() in SECRET_QUERY]
        with self._lock:
            for value in values:
                if len(value) >= MIN_SECRET_CHARS and value not in self._secrets:
                    self._secrets[value] = KnownSecret(value)

    def _all(self) -> list[KnownSecret]:
        with self._lock:
            return list(self._secrets.values())

    def scrub(self, value: Any) -> Any:
        for secret in self._all():
            value = secret.scrub(value)
        return value

    def scrub_events(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A stream's events: a key split across two events is caught as well (``redact_events``)."""
        secrets = self._all()
        if not secrets:
            return redact_events(events, None)
        for secret in secrets:
            events = redact_events(events, secret)
        return events
