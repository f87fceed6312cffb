"""CI runs the test command the README gives, word for word (so the durations a reader sees are CI's)."""
from __future__ import annotations

import re


def test_ci_runs_the_readme_test_command(root):
    readme = (root / "README.md").read_text(encoding="utf-8")
    ci = (root / ".ci" / "run").read_text(encoding="utf-8")
    shown = re.search(r"^pip install -e '\.\[test\]' && (python -m pytest.*)$", readme, re.M)
    assert shown, "the README no longer shows its test command"
    assert ci.rstrip().splitlines()[-1] == shown.group(1)
    assert "--durations=10" in shown.group(1)  # the suite's slowest tests are printed in every CI run
