"""OpenTelemetry both ways: runs exported as GenAI spans, and other agents' OTLP traces opened as runs.

Sits above ``replay``/``loop``/``providers``/``trace`` and below ``cli`` and
``ui``. The trace layer knows nothing of OpenTelemetry: :mod:`tracetui.otel.detect`
tells OTLP files from tracetui traces by their content and hands back the same
:class:`~tracetui.trace.reader.TraceFile` and
:class:`~tracetui.trace.source.TraceSource` shapes, whose verdicts come from the one
shared rule (:meth:`~tracetui.trace.reader.RunData.verdict`).
"""
