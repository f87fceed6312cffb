"""Many runs at once: compare two runs, group failures, search events, a CI baseline and JUnit report.

Pure core (no textual): the explorer, the CLI and the MCP server call it. Above ``otel`` and ``explain``
(it reads any trace, OTLP included), below ``share``/``mcp`` and the UI.
"""
