"""Arize Phoenix for the integration test: its HTTP server on 127.0.0.1 only, its gRPC receiver off.

Phoenix always binds its OTLP/gRPC receiver to every interface; the test only
sends OTLP/HTTP, so the receiver is not started at all (a test server listens on
loopback only). Everything else is Phoenix as shipped, configured through its own
environment variables (port, host, working directory, telemetry) by the test.
"""
from __future__ import annotations

import runpy
import sys

from phoenix.server import grpc_server


async def _no_grpc_receiver(self) -> None:
    self._server = None


grpc_server.GrpcServer.__aenter__ = _no_grpc_receiver  # type: ignore[method-assign]
sys.argv = ["phoenix", "serve"]
runpy.run_module("phoenix.server.main", run_name="__main__")
