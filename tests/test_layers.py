"""The domain core never imports textual: only tracetui.ui may."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "tracetui"


def core_modules():
    for path in sorted(CORE.rglob("*.py")):
        rel = path.relative_to(CORE.parent)
        if rel.parts[1] == "ui":
            continue
        yield path, ".".join(rel.with_suffix("").parts)


def test_no_core_module_mentions_textual_in_its_imports():
    offenders = []
    for path, _ in core_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] == "textual" or n.startswith("tracetui.ui")]
    # cli.py is the one core-side place allowed to start the UI, lazily inside `open`
    assert [o for o in offenders if not o.startswith("cli.py")] == []


def test_importing_the_whole_core_loads_no_textual():
    mods = [name for _, name in core_modules() if not name.endswith("__main__")]
    code = "import sys\n" + "".join(f"import {m}\n" for m in mods) + \
        "bad = [m for m in sys.modules if m == 'textual' or m.startswith('textual.')]\nprint(bad)\nassert not bad\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr + out.stdout
