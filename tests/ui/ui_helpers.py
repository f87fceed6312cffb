"""Helpers for reading what the explorer shows."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import orjson
from textual.strip import Strip


def screen_strips(app) -> list[Strip]:
    return app.screen._compositor.render_strips()


def screen_text(app) -> str:
    """Everything on the terminal right now, as plain lines."""
    return "\n".join(strip.text for strip in screen_strips(app))


def write_lines(path: Path, lines: Iterable[bytes]) -> str:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return str(path)


def encode(record: dict) -> bytes:
    return orjson.dumps(record)


async def wait_until(pilot, condition, tries: int = 40) -> None:
    """Let the app run until ``condition()`` holds (e.g. a worker's re-run has opened a screen), bounded."""
    for _ in range(tries):
        await pilot.pause(0.02)
        if condition():
            return
