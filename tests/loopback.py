"""The loopback-only guard every test that opens sockets uses: a connection anywhere but this machine
fails the test, and proxy variables are cleared (a proxy would route loopback elsewhere)."""
from __future__ import annotations

import ipaddress
import socket

import pytest


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch):
    """No provider test may reach past this machine: connecting anywhere but loopback fails the test."""
    real = socket.socket.connect

    def connect(self, address):
        host = address[0] if isinstance(address, tuple) else None
        if host is not None:
            try:
                ok = ipaddress.ip_address(host).is_loopback
            except ValueError:
                ok = host == "localhost"
            if not ok:
                raise AssertionError(f"test tried to connect to {address!r}; only loopback is allowed")
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
