"""Exit codes of ``funes-py``, one table for every command.

0 ok · 1 other error · 2 usage · 3 no memory at --home · 4 model mismatch · 5 path not found or unreadable ·
6 memory locked by another index run.
"""

from __future__ import annotations

import sys

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_NO_MEMORY, EXIT_MODEL, EXIT_PATH, EXIT_LOCKED = 0, 1, 2, 3, 4, 5, 6


def fail(msg: str, code: int) -> int:
    """Prints ``error: msg`` to stderr and returns ``code``."""
    print(f"error: {msg}", file=sys.stderr)
    return code
