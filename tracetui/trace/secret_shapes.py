"""What a secret looks like: credential key names and token shapes, as regexes on lowercased JSON text.

Every pattern runs on the *lowercased* bytes of a JSON line (same offsets as the
original), so letters are written in lower case here; shapes whose case matters
(an AWS key id is upper case) say so with a check on the original bytes. A
pattern's group ``s``, when it has one, is the part to replace; otherwise the
whole match is.

Two rules keep the trace writer's memo sound (see ``tracetui.trace.writer``):
no pattern consumes an unescaped ``"`` except where a credential key ends at it
and ``:`` follows (or inside a header pair that opens with its own ``[`` or
``{``), and no lookaround tells the start of a string from a ``"``, ``:`` or
``,`` before it. Shapes read ``\n``/``\t`` escapes as the white space they are
(``tracetui.trace.redact``). Formats of particular services come from gitleaks'
rules (``tracetui.trace.gitleaks_rules``); the shapes here are the ones those
rules lack or catch in fewer forms. Values are therefore bounded by JSON's own quoting:
a token ends at a quote, a backslash (an escape such as ``\\n``), white space or
a separator, and the marker replaces the whole of it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import re2


def _words(*words: bytes) -> bytes:
    """Any of ``words`` not preceded by a letter or digit (the check comes after the word: a pattern that
    starts with a literal is searched for far faster than one that starts with a lookbehind)."""
    return rb"(?:" + rb"|".join(re.escape(w) + rb"(?<![a-z0-9]" + re.escape(w) + rb")" for w in words) + rb")"


#: a JSON key that names a credential, matched as the key's tail ("x-api-key", "client_secret", "db_pass");
#: a PIN, a one-time password or a card's security code as a key's last word ("card_pin"; never "spin");
#: never a count of tokens or a model's tokens ("max_output_tokens", "token_usage", "input_token_details",
#: "token_count", "tokenCount", "token_ids", "token_type_ids", "token_logprobs", "token_budget", "token_limit"),
#: nor a "secretary" (what such a key holds is still searched for secrets' shapes like any text)
CREDENTIAL_KEY = (
    rb"(?:api[_\-/]?key|authorization|cookie|password|passwd|secret(?!ar(?:y|ies))"
    rb"|token(?!s|[_\-]?(?:usage|counts?|details|ids?(?![a-z])|type|logprobs?|budget|limit)|izer)|bearer"
    rb"|private[_\-]?key|passphrase)"
    rb"[a-z0-9_\-]{0,64}"  # (bounded: from each credential word in a long run of them, a scan to its end was
    #                         quadratic in the run's length)
    rb"|" + _words(b"pass") + rb"(?:[_\-][a-z0-9_\-]{0,64})?"  # "pass", "db_pass", "pass_hash"; never "passed"
    rb"|auth"
    rb"|" + _words(b"pin", b"otp", b"cvv", b"cvc", b"passcode")  # a code that proves who one is: "card_pin", "otp"
)
#: the same names in free text ("password=", "password: x", "AWS_SECRET_ACCESS_KEY=…"), as whole words
FREE_KEY = _words(
    b"password", b"passwd", b"passphrase", b"pass", b"pwd", b"secret", b"token", b"clientsecret", b"secretkey",
    b"secret_key", b"secret-key", b"apikey", b"api_key", b"api-key", b"accesskey", b"access_key", b"access-key",
    b"privatekey", b"private_key", b"private-key", b"accesstoken", b"refreshtoken", b"authtoken",
    b"otp", b"pin", b"cvv", b"cvc", b"passcode",
) + rb"(?![a-z0-9])"
#: what a token is made of: anything up to white space, a quote, a backslash (a JSON escape) or a separator
_TOKEN = rb"[^\s\"'`\\<>,;()\[\]{}|]"
#: the rest of a token once its shape was recognised, so the marker replaces all of it (a final "." is prose)
TAIL = rb"(?:" + _TOKEN + rb"*" + rb"[^\s\"'`\\<>,;()\[\]{}|.])?"
#: a value after "=" or ":" in free text: a quoted string inside JSON text (\"…\"), a quoted one, or a token
_FREE_VALUE = (rb"(?P<s>(?:\\\\)*\\\"(?:[^\"\\]|\\+[^\"\\])*(?:(?:\\\\)*\\\")?|'[^'\\\n]*'|"
               rb"[^\s\"'`\\<>,;()\[\]{}|&]+)")  # a bare value ends at "&" too (the next query parameter)


#: headers whose value is a credential, as a header list names them
_HEADER_NAME = rb"(?:set-cookie|cookie|authorization|proxy-authorization|x-api-key|api-key)"


@dataclass(frozen=True)
class Shape:
    """One kind of secret: a regex and the literal texts (any one) a line must hold for it to be tried."""

    name: str
    pattern: re.Pattern[bytes]
    needles: tuple[bytes, ...]
    #: a further check on the original (not lowercased) bytes of the match, for shapes whose case matters
    check: Callable[[bytes], bool] | None = None
    #: for a shape with no literal of its own: a regex (RE2) for a part every match holds, tried instead
    near: bytes | None = None


def _random_looking(token: bytes) -> bool:
    """A token rather than a word: it holds a digit or a symbol, or upper case past its first letter."""
    word = token.split(None, 1)[-1]
    return any(c in b"0123456789._~+/=-" for c in word) or any(65 <= c <= 90 for c in word[1:])


def _upper_key_id(token: bytes) -> bool:
    """AWS key ids are upper case and digits (``AKIA…``), never prose like "asiapacific…"."""
    return token[:20].upper() == token[:20]


def _shape(name: str, pattern: bytes, *needles: bytes, check: Callable[[bytes], bool] | None = None,
           near: bytes | None = None) -> Shape:
    return Shape(name, re.compile(pattern), needles, check, near)


SHAPES: tuple[Shape, ...] = (
    _shape("bearer or basic credentials", b"" + _words(b"bearer", b"basic") + rb"\s+[a-z0-9._~+/=\-]{8,}" + TAIL,
           b"bearer", b"basic", check=_random_looking),
    # GitHub's "Authorization: token …" scheme, and the same written in prose or a log: the word stays
    _shape("token credentials", _words(b"token") + rb"\s+(?P<s>[a-z0-9._~+/=\-]{8,}" + TAIL + rb")", b"token",
           check=_random_looking),
    _shape("OpenAI or Anthropic key", rb"sk-(?<![a-z0-9]sk-)[a-z0-9_\-]{16,}" + TAIL, b"sk-"),  # (after an underscore too: KEY_sk-…)
    _shape("Stripe secret or restricted key",
           rb"[sr]k_(?:live|test)_(?<![a-z0-9][sr]k_live_)(?<![a-z0-9][sr]k_test_)[a-z0-9]{10,}" + TAIL,
           b"k_live_", b"k_test_"),
    _shape("Google API key", _words(b"aiza") + rb"[0-9a-z_\-]{30,}" + TAIL, b"aiza"),
    _shape("AWS access key id", _words(b"akia", b"asia") + rb"[0-9a-z]{16}" + TAIL, b"akia", b"asia",
           check=_upper_key_id),
    _shape("GitHub token",
           rb"(?:gh[pousr]_(?<![a-z0-9]gh[pousr]_)[a-z0-9]{20,}|github_pat_(?<![a-z0-9]github_pat_)[a-z0-9_]{20,})"
           + TAIL,
           b"gh", b"github_pat_"),
    _shape("Slack token", rb"(?:xox[abposr]-(?<![a-z0-9]xox[abposr]-)|xapp-(?<![a-z0-9]xapp-))[a-z0-9\-]{10,}" + TAIL,
           b"xox", b"xapp-"),
    _shape("GitLab token", _words(b"glpat-") + rb"[a-z0-9_\-]{20,}" + TAIL, b"glpat-"),
    _shape("Hugging Face token", _words(b"hf_") + rb"[a-z0-9]{30,}" + TAIL, b"hf_"),
    _shape("npm token", _words(b"npm_") + rb"[a-z0-9]{30,}" + TAIL, b"npm_"),
    _shape("SendGrid key", _words(b"sg.") + rb"[a-z0-9_\-]{16,}\.[a-z0-9_\-]{16,}" + TAIL, b"sg."),
    _shape("Azure connection string key",
           rb"(?:accountkey|sharedaccesskey|sharedaccesssignature|sharedsecret)\s*=\s*(?P<s>[^;\s\"'\\]+)",
           b"accountkey", b"sharedaccess", b"sharedsecret"),
    _shape("JSON Web Token", rb"eyj(?<![a-z0-9\-]eyj)[a-z0-9_\-]{5,}\.eyj[a-z0-9_\-]{5,}\.?" + TAIL, b"eyj"),  # (KEY_eyJ…)
    # (the body runs to the next "-----" once, then takes the END line if it is there: linear, where a lazy body
    # looking for END from each BEGIN was quadratic in a run of BEGIN lines)
    _shape("private key block",
           rb"-----begin (?:[a-z0-9]+ )*private key(?: block)?-----"
           rb"(?:[a-z0-9+/=:, \t\r\n]|-(?!----)|\\+[nrt])*(?:-----end (?:[a-z0-9]+ )*private key(?: block)?-----)?",
           b"private key"),
    _shape("Groq API key", _words(b"gsk_") + rb"[a-z0-9]{40,}" + TAIL, b"gsk_"),
    _shape("xAI API key", _words(b"xai-") + rb"[a-z0-9]{40,}" + TAIL, b"xai-"),
    _shape("Mailgun key", _words(b"key-") + rb"[0-9a-f]{32}(?![a-z0-9_\-])", b"key-"),
    _shape("token as a URL's user", rb"://(?P<s>[a-z0-9_\-.~+=]{16,})@(?=[a-z0-9])", b"://",
           check=lambda match: _random_looking(match[3:-1])),
    _shape("password in a URL", rb"://[^\s/?#@:\"'\\<>]*:(?P<s>[^\s/?#@\"'\\<>]+)@", b"://"),
    _shape("credential in a query string",
           rb"[?&;#](?:api[_\-]?key|apikey|key|token|access_token|refresh_token|id_token|auth|auth_token"
           rb"|password|passwd|pass|pwd|secret|client_secret|signature|sig|x-amz-signature"
           rb"|x-amz-security-token|x-amz-credential|session|sessionid|sid|jwt)"
           rb"=(?P<s>[^&#\s\"'\\<>]+)",
           b"=", ),
    _shape("Cookie or Set-Cookie header",
           rb"(?:set-cookie(?<![a-z0-9\-]set-cookie)|cookie(?<![a-z0-9\-]cookie))\s*:\s*(?P<s>[^\s\"\\][^\"\\\r\n]*)",
           b"cookie"),
    _shape("credential assignment", FREE_KEY + rb"[ \t]*[=:][ \t]*" + _FREE_VALUE,
           b"pass", b"pwd", b"secret", b"key", b"token", b"otp", b"pin", b"cvv", b"cvc"),
    _shape("AWS secret access key in prose",
           _words(b"aws") + rb"[^\"\n]{0,30}?secret[^\"\n]{0,30}?(?<![a-z0-9+/])(?P<s>[a-z0-9/+]{40})(?![a-z0-9/+=])",
           b"aws", check=lambda match: _random_looking(match[-40:])),
    _shape("Discord bot token",
           rb"(?<![a-z0-9_\-.])[mno][a-z0-9_\-]{23,25}\.[a-z0-9_\-]{6}\.[a-z0-9_\-]{27,38}(?![a-z0-9_\-])",
           near=rb"\.[a-z0-9_\-]{6}\.",  # (its middle part: a lone dot, in nearly every text, tried it everywhere)
           check=lambda token: token[:1] in b"MNO" and _random_looking(token)),
    # a credential header as a pair in a list (["Cookie", "…"], or a Python tuple) or a HAR entry
    # ({"name": "Cookie", "value": "…"}),
    # in JSON or in JSON held in a string: the one place a match spans quotes other than a key's; it starts at the
    # "[" or "{" that opens the pair, so it stays inside one part of a line
    _shape("credential header in a header list",
           rb"(?:[\[(]\s*(\\*)\"" + _HEADER_NAME + rb"\1\"\s*,\s*\1\"|\{\s*(\\*)\"name\2\"\s*:\s*\2\"" + _HEADER_NAME
           + rb"\2\"\s*,\s*\2\"value\2\"\s*:\s*\2\")(?P<s>[^\"\\]+)",
           b"cookie", b"authorization", b"api-key"),
    # the same object with its value first, as JSON text in a string ({"value": "…", "name": "Cookie"}; in the
    # line's own JSON the parsed object is redacted whatever its order)
    _shape("credential header object, value first",
           rb"\{\s*(\\*)\"value\1\"\s*:\s*\1\"(?P<s>[^\"\\]+)\1\"\s*,\s*\1\"name\1\"\s*:\s*\1\"" + _HEADER_NAME
           + rb"\1\"", b"cookie", b"authorization", b"api-key"),
)

#: a value under a credential key, in a JSON line: a string ``"password":"…"`` (group ``s``), or the
#: start of an object or list (group ``c``: rare, replaced whole by walking the parsed line)
KEYED = re.compile(rb"(?:" + CREDENTIAL_KEY + rb")\":\s*(?:\"(?P<s>(?:[^\"\\]|\\.)*)(?:\"|$)|(?P<c>[\[{]))")
#: a literal that every match of CREDENTIAL_KEY holds (the short code words only at a word's start, as the key
#: holds them: "shipping" holds "pin", never as a word): a text with none of them names no credential, and the
#: patterns made of CREDENTIAL_KEY (each tries its alternation at every byte) need not be tried on it
_CREDENTIAL_LITERAL = re.compile(rb"api|auth|bearer|cookie|pass|private|secret|token"
                                 rb"|cv[cv](?<![a-z0-9]cv[cv])|otp(?<![a-z0-9]otp)|pin(?<![a-z0-9]pin)")
#: the same for long texts (a message): RE2 scans for literals several times faster than ``re`` there, and
#: calls cost more than ``re``'s on short ones (RE2 has no lookbehind: the word's start is matched instead;
#: ``re`` searches a pattern whose every branch starts with a literal far faster)
_CREDENTIAL_LITERAL_LONG = re2.compile(rb"api|auth|bearer|cookie|pass|private|secret|token"
                                       rb"|(?:^|[^a-z0-9])(?:cv[cv]|otp|pin)")
_LONG_TEXT = 512


def may_name_credential(low: bytes) -> bool:
    """Whether a lowercased JSON text may hold a credential key's name (False: none of the key patterns can
    match it, on it nor on it without its backslashes), and always where an ``\\u00`` escape may spell one."""
    finder = _CREDENTIAL_LITERAL if len(low) < _LONG_TEXT else _CREDENTIAL_LITERAL_LONG
    if b"\\" in low:
        if b"\\u00" in low:
            return True
        # the patterns run on the text and on it without backslashes: either may hold a literal (a backslash
        # starts a word, as in ``\\pin``; taken out, it joins one, as in ``api\\/key``)
        return finder.search(low) is not None or finder.search(low.replace(b"\\", b"")) is not None
    return finder.search(low) is not None


#: the same inside a JSON string, at any depth of escaping: ``\"password\": \"…\"``, ``\\\"pass\\\":…``.
#: The key's quote has an odd run of backslashes; the value runs to the first quote with no more of them.
ESCAPED_KEYED = re.compile(
    rb"(?:" + CREDENTIAL_KEY + rb")((?:\\\\)*\\)\":\s*\1\"(?P<s>(?:[^\"\\]|\\+[^\"\\]|\1(?:\\\\)+\")*)"
)
#: a credential key's name anywhere (a JSON text inside a string that holds one is read as JSON)
CREDENTIAL_WORD = re.compile(CREDENTIAL_KEY)
#: a replay edit of a credential field: ``{"path":"/inputs/…/api_key","value":…}``
EDIT_OF_CREDENTIAL = re.compile(rb"\"path\":\s*\"[^\"]*/[^\"/]*(?:" + CREDENTIAL_KEY + rb")\",\s*\"value\":")
#: a header named as a credential in a header list (``[…,["X-Auth-Token","…"]]``) or a HAR-style header object
#: (``{"name":"Private-Token",…}``): such lines are parsed, and the header's value replaced (``redact._walk``)
HEADER_OF_CREDENTIAL = re.compile(rb"(?:\[\[|\],\[|\"name\":)\s*\"[a-z0-9_\-]{0,40}?(?:" + CREDENTIAL_KEY + rb")\"")
#: a key name that is a credential's: some tail of it is one
KEY_NAME = re.compile(rb"(?:" + CREDENTIAL_KEY + rb")$")
#: ``\u0073``-style escapes of printable ASCII written out as text: decoded before matching
ASCII_ESCAPE = re.compile(rb"\\+u00([2-7][0-9a-f])")
