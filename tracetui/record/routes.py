"""Which API a request is for, where it is forwarded, and what the agent's environment points at.

The SDKs read a base URL from the environment (``OPENAI_BASE_URL`` with its ``/v1``,
``ANTHROPIC_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``), so one endpoint on 127.0.0.1 serves all
three and tells their requests apart by path. A path none of them names is still forwarded
(``/v1/models``, a token count) and recorded with no provider: its lanes are HTTP only.
"""
from __future__ import annotations

import re
from typing import Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit

#: the public API root of each vendor (the request path is kept after it)
DEFAULT_UPSTREAMS: dict[str, str] = {
    "openai": "https://api.openai.com",
    "anthropic": "https://api.anthropic.com",
    "gemini": "https://generativelanguage.googleapis.com",
}
VENDORS = tuple(DEFAULT_UPSTREAMS)
#: a provider name (as the adapters name them) → the vendor whose root serves it
VENDOR_OF = {"openai-chat": "openai", "openai-responses": "openai", "openai": "openai",
             "anthropic": "anthropic", "gemini": "gemini", "google": "gemini"}

_GEMINI = re.compile(r"^/v1(?:beta|alpha)?\d*/models/(?P<model>[^/:]+):(?P<verb>generateContent|streamGenerateContent)$")
_PATHS = {"/v1/responses": "openai-responses", "/v1/chat/completions": "openai-chat", "/v1/messages": "anthropic"}
#: query parameters that carry a credential (google's ``key=``): never in a recorded URL
SECRET_QUERY = frozenset({"key", "api_key", "api-key"})


class UpstreamError(ValueError):
    """An ``--upstream`` value that cannot be used; the message says why, in words."""


def provider_of(method: str, path: str) -> str | None:
    """The adapter name of a request (``openai-chat``, ``gemini`` …), None for a path no adapter reads."""
    if method.upper() != "POST":
        return None
    bare = urlsplit(path).path
    if bare in _PATHS:
        return _PATHS[bare]
    return "gemini" if _GEMINI.match(bare) else None


def gemini_model(path: str) -> str | None:
    found = _GEMINI.match(urlsplit(path).path)
    return found["model"] if found else None


def streamed_by_path(path: str) -> bool:
    """Gemini says "stream" in its path (``:streamGenerateContent``), the others in the body."""
    found = _GEMINI.match(urlsplit(path).path)
    return bool(found and found["verb"] == "streamGenerateContent")


def vendor_for(provider: str | None, path: str, headers: Mapping[str, str]) -> str:
    """Whose root a request goes to: its provider's, else guessed from the SDK's own headers and path."""
    if provider is not None:
        return VENDOR_OF[provider]
    lowered = {k.lower() for k in headers}
    if "anthropic-version" in lowered or "x-api-key" in lowered:
        return "anthropic"
    if "x-goog-api-key" in lowered or urlsplit(path).path.startswith(("/v1beta", "/v1alpha", "/upload")):
        return "gemini"
    return "openai"


def recorded_url(path: str) -> str:
    """The path as a trace keeps it: a credential in the query (``key=``) dropped."""
    parts = urlsplit(path)
    if not parts.query:
        return parts.path
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() not in SECRET_QUERY]
    return parts.path + ("?" + urlencode(kept) if kept else "")


def child_env(port: int) -> dict[str, str]:
    """The variables that point each SDK at the local endpoint (OpenAI's base URL carries ``/v1``)."""
    root = f"http://127.0.0.1:{port}"
    return {"OPENAI_BASE_URL": f"{root}/v1", "ANTHROPIC_BASE_URL": root, "GOOGLE_GEMINI_BASE_URL": root}


def _root(url: str, what: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UpstreamError(f"--upstream {what}: give an http:// or https:// URL with a host, such as "
                            f"https://api.openai.com")
    try:
        parts.port  # noqa: B018 - raises for a port that is no port
    except ValueError as exc:
        raise UpstreamError(f"--upstream {what}: {exc}") from None
    if parts.query or parts.fragment:
        raise UpstreamError(f"--upstream {what}: an API root has no query or fragment")
    return url.rstrip("/")


#: the variable each vendor's SDK reads its base URL from (OpenAI's ends in ``/v1``), as child_env sets them
BASE_URL_VARS = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL", "gemini": "GOOGLE_GEMINI_BASE_URL"}


def _root_from_env(vendor: str, base: str) -> str:
    """The API root behind a base URL the user's environment already sets (its requests went there)."""
    name = BASE_URL_VARS[vendor]
    try:
        root = _root(base.strip(), name)
    except UpstreamError as exc:
        why = str(exc).partition(": ")[2]
        raise UpstreamError(f"{name} in your environment is no API root to forward to ({why}); say where "
                            f"requests go with --upstream {vendor}=URL") from None
    if vendor != "openai":
        return root
    if not root.endswith("/v1"):
        raise UpstreamError(f"{name} is set to {public_root(root)}, which does not end in /v1: the request path "
                            f"(/v1/chat/completions …) is kept after an API root, so say where requests go with "
                            f"--upstream openai=ROOT (else they, and your key, would go to {DEFAULT_UPSTREAMS[vendor]})")
    return root[:-len("/v1")]


def parse_upstreams(values: list[str] | tuple[str, ...], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``--upstream URL`` (the root for every vendor) and ``--upstream PROVIDER=URL`` (one vendor's), over the
    defaults; later values win. With ``environ``, a vendor no ``--upstream`` names keeps the base URL the
    environment gives its SDK (``OPENAI_BASE_URL`` …): the agent's key is for that server, and sent to
    the vendor's public API instead it would reach a party it was never meant for."""
    roots = dict(DEFAULT_UPSTREAMS)
    named: set[str] = set()
    for vendor, var in BASE_URL_VARS.items():
        base = (environ or {}).get(var, "").strip()
        if base:
            roots[vendor] = base  # checked below, unless an --upstream replaces it
    for value in values:
        name, sep, url = value.partition("=")
        if sep and "://" not in name:
            vendor = VENDOR_OF.get(name.strip().lower())
            if vendor is None:
                raise UpstreamError(f"--upstream {value}: {name!r} is no provider here; use one of "
                                    f"{', '.join(VENDORS)} (or give a URL alone for all of them)")
            roots[vendor] = _root(url.strip(), value)
            named.add(vendor)
        else:
            root = _root(value.strip(), value)
            roots = dict.fromkeys(VENDORS, root)
            named.update(VENDORS)
    for vendor, var in BASE_URL_VARS.items():
        if vendor not in named and (environ or {}).get(var, "").strip():
            roots[vendor] = _root_from_env(vendor, roots[vendor])
    return roots


def public_root(root: str) -> str:
    """An API root as words and a trace show it: a ``user:password@`` in it dropped."""
    parts = urlsplit(root)
    if "@" not in parts.netloc:
        return root
    return parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl()


def upstream_url(roots: Mapping[str, str], vendor: str, path: str) -> str:
    """Where a request is forwarded: the vendor's root with the request's path (and query) after it."""
    return roots[vendor] + path
