"""The run filter box: typing filters the run list; a screen key that cannot be text goes to the screen.

After ``/cross`` the list shows ``cross_tenant``; an ``e`` typed next would search for
``crosse`` and show nothing, so it is taken as the screen's ``e`` (edit) instead: the
box hands focus back to the run list and the key is pressed again there. A key that
still matches a run stays text, so any filter can be typed.
"""
from __future__ import annotations

from textual import events
from textual.widgets import Input


class FilterBox(Input):
    async def _on_key(self, event: events.Key) -> None:
        hand_over = getattr(self.screen, "filter_hands_over", None)
        if event.is_printable and event.character and hand_over is not None and hand_over(
                self.value + event.character, event.key):
            event.stop()
            event.prevent_default()
            self.screen.leave_filter()  # type: ignore[attr-defined]
            self.app.simulate_key(event.key)
            return
        await super()._on_key(event)
