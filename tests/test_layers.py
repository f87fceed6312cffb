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
            offenders += [f"{path.relative_to(CORE).as_posix()}: {n}" for n in names if n.split(".")[0] == "textual" or n.startswith("tracetui.ui")]
    # cli/open.py is the one core-side place allowed to start the UI, lazily inside `open`
    assert [o for o in offenders if not o.startswith("cli/open.py:")] == []


def test_importing_the_whole_core_loads_no_textual():
    mods = [name for _, name in core_modules() if not name.endswith("__main__")]
    code = "import sys\n" + "".join(f"import {m}\n" for m in mods) + \
        "bad = [m for m in sys.modules if m == 'textual' or m.startswith('textual.')]\nprint(bad)\nassert not bad\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr + out.stdout


# -- the import-linter contracts (pyproject.toml [tool.importlinter]) ----------------------------------
ROOT = CORE.parent
LAYERS = ["tracetui.cli", "tracetui.ui | tracetui.samples", "(tracetui.share) | (tracetui.mcp)",
          "tracetui.triage", "(tracetui.explain) | (tracetui.otel)",
          "tracetui.replay", "tracetui.record", "tracetui.loop", "tracetui.providers", "tracetui.trace"]


def _lint(root: Path) -> subprocess.CompletedProcess:
    """Run import-linter on the package under ``root`` with the project's own contracts."""
    code = ("import sys\nfrom importlinter.cli import lint_imports\n"
            "sys.exit(lint_imports(config_filename='pyproject.toml', cache_dir=None, no_logo=True))\n")
    env = {**__import__("os").environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, env=env,
                          timeout=120)


def test_the_layer_contract_is_the_documented_order():
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")
    assert layers["layers"] == LAYERS


def test_the_import_contracts_hold():
    out = _lint(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 kept, 0 broken" in out.stdout


def test_an_upward_import_breaks_the_layer_contract(tmp_path):
    """The contract can fail: a copy of the package where the trace layer imports the loop is refused."""
    import shutil

    shutil.copytree(CORE, tmp_path / "tracetui", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with open(tmp_path / "tracetui" / "trace" / "format.py", "a") as fh:
        fh.write("\nfrom tracetui.loop import runner  # noqa: E402 - an upward import, on purpose\n")
    out = _lint(tmp_path)
    assert out.returncode == 1
    assert "tracetui.trace is not allowed to import tracetui.loop" in out.stdout


def test_no_import_cycle_between_modules():
    import grimp

    graph = grimp.build_graph("tracetui", cache_dir=None)
    modules = sorted(m for m in graph.modules if m.startswith("tracetui."))
    cycles = [(a, b) for a in modules for b in graph.find_modules_directly_imported_by(a)
              if b.startswith("tracetui.") and a != b and graph.chain_exists(importer=b, imported=a)]
    assert cycles == []


def test_the_readme_names_every_layer_of_the_contract():
    """The README's one-line picture of the layers is the contract's, so a reader learns where OpenTelemetry sits."""
    import re
    import tomllib

    root = CORE.parent
    contract = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]
    packages = {name.split(".")[1] for layer in contract["layers"] for name in re.findall(r"tracetui\.\w+", layer)}
    line = next(l for l in (root / "README.md").read_text().splitlines() if l.startswith("Dependencies point one way"))
    assert {p for p in packages - {"samples"} if f"`{p}`" not in line} == set(), line
