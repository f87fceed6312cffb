"""otel sits above replay/loop/providers/trace and below cli/ui: the imports point one way."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "tracetui"


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_otel_imports_nothing_above_it():
    bad = [(p.name, n) for p in (PACKAGE / "otel").glob("*.py") for n in _imports(p)
           if n.split(".")[0] == "textual" or n.startswith(("tracetui.ui", "tracetui.cli", "tracetui.explain"))]
    assert bad == []


def test_the_layers_below_know_nothing_of_opentelemetry():
    below = [p for layer in ("trace", "loop", "providers", "replay") for p in (PACKAGE / layer).glob("*.py")]
    bad = [(p.name, n) for p in below for n in _imports(p) if n.startswith("tracetui.otel") or "opentelemetry" in n]
    assert below and bad == []
