"""tracetui: find where an LLM tool-calling loop went wrong."""
import os as _os

__version__ = "0.1.0"

# numpy is used for bulk byte scans, never for linear algebra; left alone, its BLAS starts a thread per
# core that spins for the first ~50 ms after import, taking a core from the index, the explorer's first
# frame, and the check's worker process. A user's own setting wins.
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
