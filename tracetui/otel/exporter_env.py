"""Where and how ``tracetui export`` sends, as every OpenTelemetry exporter decides it: flags first, then the
``OTEL_EXPORTER_OTLP_TRACES_*`` variables, then the general ``OTEL_EXPORTER_OTLP_*`` ones, then the defaults.

- endpoint: ``--endpoint`` (``/v1/traces`` added when it names no path); ``…_TRACES_ENDPOINT`` as it is;
  ``OTEL_EXPORTER_OTLP_ENDPOINT`` with ``/v1/traces`` appended to its path (the spec's rule for the
  general variable);
- protocol: ``http/protobuf`` (the default) or ``http/json``; ``grpc`` is refused in words;
- timeout: ``--timeout`` in seconds, the variables in milliseconds (default 10 s);
- compression: ``gzip`` or ``none`` (the default).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping
from urllib.parse import SplitResult, urlsplit, urlunsplit

PROTOBUF, JSON = "http/protobuf", "http/json"
PROTOCOLS = (PROTOBUF, JSON)
COMPRESSIONS = ("gzip", "none")
DEFAULT_TIMEOUT_S = 10.0
_PREFIX, _TRACES = "OTEL_EXPORTER_OTLP_", "OTEL_EXPORTER_OTLP_TRACES_"


class SettingError(ValueError):
    """A variable or flag that no exporter could act on, said in words."""


@dataclass(frozen=True)
class ExporterSettings:
    endpoint: str | None  # None: nothing says where to send
    endpoint_is_url: bool  # True: the URL as it is (…_TRACES_ENDPOINT, or the general one with /v1/traces)
    protocol: str
    timeout_s: float
    compression: str | None  # "gzip", or None


def _variable(name: str, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """(the variable's full name, its value) of the per-signal variable, else the general one; None if unset."""
    for full in (_TRACES + name, _PREFIX + name):
        value = environ.get(full, "").strip()
        if value:
            return full, value
    return None


def _endpoint(flag: str | None, environ: Mapping[str, str]) -> tuple[str | None, bool]:
    if flag:
        _checked(flag, "--endpoint")
        return flag, False
    traces = environ.get(_TRACES + "ENDPOINT", "").strip()
    if traces:
        _checked(traces, _TRACES + "ENDPOINT")
        return traces, True
    general = environ.get(_PREFIX + "ENDPOINT", "").strip()
    if general:
        parts = _checked(general, _PREFIX + "ENDPOINT")
        return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/v1/traces")), True  # to the path
    return None, False


def _checked(url: str, where: str) -> SplitResult:
    """``url`` split, or :class:`SettingError` naming where it came from. The URL itself is never repeated:
    one mistyped (``htp//user:password@host``) holds a password no redactor recognises."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is no number, or out of range, raises here
    except ValueError:
        raise SettingError(f"{where}: not an http(s) URL (it cannot be parsed): expected http:// or https:// and "
                           f"a host, e.g. http://127.0.0.1:4318") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SettingError(f"{where}: not an http(s) URL: expected http:// or https:// and a host, e.g. "
                           f"http://127.0.0.1:4318")
    if parts.username or parts.password:
        raise SettingError(f"{where}: no credentials in the URL: give them as --header (e.g. "
                           f"'Authorization=Basic …') or OTEL_EXPORTER_OTLP_HEADERS")
    return parts


def settings(endpoint: str | None = None, protocol: str | None = None, timeout_s: float | None = None,
             compression: str | None = None, environ: Mapping[str, str] = os.environ) -> ExporterSettings:
    """The settings from the flags given (None: not given) and the environment; raises :class:`SettingError`."""
    url, as_is = _endpoint(endpoint, environ)
    found = None if protocol else _variable("PROTOCOL", environ)
    chosen = protocol or (found[1].lower() if found else PROTOBUF)
    if chosen not in PROTOCOLS:
        where = f"{found[0]}={found[1]}" if found else f"--protocol {chosen}"
        extra = " (gRPC is not sent by tracetui)" if chosen == "grpc" else ""
        raise SettingError(f"{where}: tracetui sends OTLP over HTTP as {' or '.join(PROTOCOLS)}{extra}")
    if timeout_s is None:
        found = _variable("TIMEOUT", environ)
        timeout_s = DEFAULT_TIMEOUT_S
        if found:
            try:
                millis = float(found[1])
            except ValueError:
                raise SettingError(f"{found[0]}={found[1]}: expected milliseconds, e.g. 10000") from None
            if not 100 <= millis <= 300_000:
                raise SettingError(f"{found[0]}={found[1]}: expected 100 to 300000 milliseconds")
            timeout_s = millis / 1000
    found = None if compression else _variable("COMPRESSION", environ)
    chosen_compression = compression or (found[1].lower() if found else "none")
    if chosen_compression not in COMPRESSIONS:
        where = f"{found[0]}={found[1]}" if found else f"--compression {chosen_compression}"
        raise SettingError(f"{where}: expected gzip or none")
    return ExporterSettings(url, as_is, chosen, timeout_s, None if chosen_compression == "none" else "gzip")
