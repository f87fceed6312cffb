"""One run as one self-contained HTML page: shared, opened offline, nothing fetched (issue 23).

:func:`share_page` renders runs as the explorer shows them (the six lanes with the first failing
boundary marked, the banner, every event, the proven fixes); :func:`write_page` writes it atomically.
Everything from a trace reaches the page through :mod:`tracetui.share.escape`.
"""
from tracetui.share.output import WritesOverInput, default_output, safe_name, write_beside, write_page
from tracetui.share.page import share_page
from tracetui.trace.signature import failure_signature, masked

__all__ = ["WritesOverInput", "default_output", "failure_signature", "masked", "safe_name", "share_page",
           "write_beside", "write_page"]
