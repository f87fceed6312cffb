"""Fixtures of the producer tests (tests/otel/test_sdk_producers.py, test_framework_producers.py)."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def offline(tmp_path_factory):
    """No key, no exporter of an SDK's own, nothing to phone home to."""
    with pytest.MonkeyPatch.context() as mp:
        for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OTEL_EXPORTER_OTLP_ENDPOINT",
                     "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OPENINFERENCE_ENABLE_GENAI_SEMCONV"):
            mp.delenv(name, raising=False)
        mp.setenv("OTEL_SDK_DISABLED", "false")
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("LANGSMITH_TRACING", "false")
        yield tmp_path_factory.mktemp("producers")
