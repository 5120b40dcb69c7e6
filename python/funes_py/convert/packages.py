"""Installed Python packages that ship model files, located without importing them."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def package_root(module: str) -> Path | None:
    """The directory of the installed top-level package `module`, or None when it is not installed."""
    found = importlib.util.find_spec(module)  # a top-level find_spec imports nothing
    for root in (found.submodule_search_locations or []) if found else []:
        return Path(root)
    return None
