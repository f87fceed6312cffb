"""A loopback server that answers any GET with a schema and counts the requests: a ``$ref`` fetched shows here."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

SAFE_RUN = 60  # seconds: only a safety net


@pytest.fixture
def counting_server():
    """``(url, requests)``: the server's address of a schema no argument fits, and the paths asked for."""
    requests: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            requests.append(self.path)
            body = b'{"type": "integer"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/schema+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/s.json", requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join(SAFE_RUN)
