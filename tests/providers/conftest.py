from __future__ import annotations

from loopback import loopback_only  # noqa: E402,F401  (autouse: every provider test stays on this machine)
