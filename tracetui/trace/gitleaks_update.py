"""Updating the vendored gitleaks rules: the published TOML is kept as the source, converted to the JSON read at run time.

    python -m tracetui.trace.gitleaks_update NEW_gitleaks.toml COMMIT

replaces ``rules/gitleaks.toml`` (the licence header kept, the commit noted) and
writes ``rules/gitleaks.json`` from it, both atomically and only once every rule
compiles on RE2; ``--check`` only tells whether the JSON is the TOML's conversion.
It needs Python 3.11+ (tomllib); running the rules does not. Then run
tests/test_gitleaks_rules.py (every rule needs a sample, made from its regex in
tests/gitleaks_samples.py) and benchmarks/bench_redact.py.

The conversion keeps what tracetui reads (``regex``, ``keywords``, ``entropy``,
``secretGroup``, ``allowlists``' ``regexTarget``/``regexes``/``stopwords``/``condition``,
the global allowlist's regexes and stopwords) and leaves out rules and allowlists
about file paths (a trace has no paths; an allowlist whose paths half is dropped
would wrongly allow by its regexes alone) and :data:`LEFT_OUT`.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import re2

from tracetui.trace.gitleaks_rules import RULES_FILE, RULES_SOURCE

#: rules not used: they match across a whole line (a JSON line is one line), and tracetui's own shapes
#: catch what they are for (private key blocks; curl's Authorization header and user)
LEFT_OUT = frozenset({"private-key", "curl-auth-header", "curl-auth-user"})
#: the end of a token as gitleaks' generated rules write it, and as it is read here: prose also ends one with
#: punctuation ("the key is dapi…!", "(key-…)"), which code seldom does
TOKEN_END = r"""(?:[\x60'"\s;]|\\[nr]|$)"""
PROSE_TOKEN_END = r"""(?:[\x60'"\s;!),.\]}>|&<]|\\[nr]|$)"""
HEADER_END = "# " + "-" * 100 + "\n"
_ALLOWLIST_KEYS = ("regexTarget", "regexes", "stopwords", "condition")


class UpdateError(Exception):
    """A config that cannot replace the vendored rules (said in a sentence)."""


def convert(toml_text: str) -> tuple[dict[str, Any], int]:
    """The JSON form of a gitleaks config, and how many rules had their token end widened."""
    import tomllib  # (Python 3.11+; only updating needs it)

    try:
        config = tomllib.loads(toml_text)
    except tomllib.TOMLDecodeError as error:
        raise UpdateError(f"the new config is not valid TOML: {error}") from None
    rules, widened = [], 0
    for table in config.get("rules", ()):
        if "regex" not in table or "path" in table or table.get("id") in LEFT_OUT:
            continue
        regex = table["regex"]
        if TOKEN_END in regex:
            regex, widened = regex.replace(TOKEN_END, PROSE_TOKEN_END), widened + 1
        rule = {"id": table["id"], "regex": regex, "keywords": list(table.get("keywords", ()))}
        for key in ("entropy", "secretGroup"):
            if key in table:
                rule[key] = table[key]
        allowlists = [{k: a[k] for k in _ALLOWLIST_KEYS if k in a} for a in table.get("allowlists", ())
                      if "paths" not in a and (a.get("regexes") or a.get("stopwords"))]
        if allowlists:
            rule["allowlists"] = allowlists
        rules.append(rule)
    glob = config.get("allowlist", {})
    return {"rules": rules, "allowlist": {k: glob[k] for k in ("regexes", "stopwords") if k in glob}}, widened


def validate(converted: dict[str, Any]) -> None:
    """Every regex compiles on RE2, and the rules are many enough to be a real config."""
    if len(converted["rules"]) < 100:
        raise UpdateError(f"the new config has only {len(converted['rules'])} usable rules (gitleaks has 200+)")
    for rule in converted["rules"]:
        regexes = [rule["regex"]] + [r for a in rule.get("allowlists", ()) for r in a.get("regexes", ())]
        for regex in regexes:
            try:
                re2.compile(regex.encode())
            except re2.error as error:
                raise UpdateError(f"rule {rule['id']}: its regex does not compile on RE2 ({error})") from None
        if not rule["keywords"]:
            raise UpdateError(f"rule {rule['id']} has no keywords (every rule is tried only on its keywords)")


def dumps(converted: dict[str, Any]) -> str:
    return json.dumps(converted, ensure_ascii=False, indent=0, sort_keys=True) + "\n"


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def update(new: Path, commit: str) -> int:
    """Replace the vendored rules by ``new`` (a gitleaks config at ``commit``); returns the rules' count."""
    text = new.read_text(encoding="utf-8")
    converted, widened = convert(text)
    validate(converted)
    if widened == 0:
        raise UpdateError("no rule ends with gitleaks' usual token end any more: update TOKEN_END in "
                          "tracetui/trace/gitleaks_update.py to the new one")
    header = RULES_SOURCE.read_text(encoding="utf-8").split(HEADER_END, 1)[0].splitlines(keepends=True)
    header[1] = f"# at commit {commit}. Unmodified below the line of dashes.\n"
    _write_atomically(RULES_FILE, dumps(converted))
    _write_atomically(RULES_SOURCE, "".join(header) + HEADER_END + text)
    print(f"{len(converted['rules'])} rules ({widened} with the token end widened for prose)")
    return len(converted["rules"])


def main(argv: list[str]) -> int:
    try:
        if argv[:1] == ["--check"]:
            current = dumps(convert(RULES_SOURCE.read_text(encoding="utf-8"))[0])
            if current != RULES_FILE.read_text(encoding="utf-8"):
                print(f"{RULES_FILE} is not the conversion of {RULES_SOURCE}")
                return 1
            return 0
        if len(argv) != 2:
            print("usage: python -m tracetui.trace.gitleaks_update NEW_gitleaks.toml COMMIT | --check",
                  file=sys.stderr)
            return 2
        update(Path(argv[0]), argv[1])
    except (UpdateError, OSError) as error:
        print(f"gitleaks rules not updated: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
