"""The SDKs are test-only: tracetui itself speaks HTTP through httpx and imports none of them."""
from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SDKS = ("openai", "anthropic", "google", "httpx_sse", "httpx2")


def test_no_tracetui_module_imports_an_sdk():
    offenders = []
    for path in sorted((ROOT / "tracetui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in SDKS]
    assert offenders == []


def test_the_sdks_are_in_the_test_extra_only():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = " ".join(project["dependencies"])
    test = " ".join(project["optional-dependencies"]["test"])
    for sdk in ("openai", "anthropic", "google-genai", "httpx-sse"):
        assert sdk in test and sdk not in runtime
