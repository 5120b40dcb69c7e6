"""Where prometheus_client keeps the counts of several processes: set up before it is first imported.

Kept apart from `funes_py.metrics`, which imports prometheus_client (and so fixes its mode) when imported.
See that module's doc for why and when.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
_own: list[str] = []  # the directory this process made, removed by `cleanup_multiprocess`


def prepare_multiprocess() -> str:
    """Make this process and the processes it starts count together; call before anything imports
    prometheus_client (this module's metrics included). Returns the directory."""
    given = os.environ.get(MULTIPROC_ENV)
    if given:
        Path(given).mkdir(parents=True, exist_ok=True)
        for stale in Path(given).glob("*.db"):
            stale.unlink(missing_ok=True)
        return given
    own = tempfile.mkdtemp(prefix="funes-metrics-")
    os.environ[MULTIPROC_ENV] = own
    _own.append(own)
    atexit.register(cleanup_multiprocess)
    return own


def cleanup_multiprocess() -> None:
    """Remove the directory `prepare_multiprocess` made (never one the operator named). The service calls it
    when it has stopped its workers: atexit alone is not enough, since uvicorn ends a process stopped by
    SIGTERM by raising the signal again once it has shut down, and atexit handlers do not run then."""
    while _own:
        shutil.rmtree(_own.pop(), ignore_errors=True)
