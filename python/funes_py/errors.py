"""Exceptions, catchable by name. One class per Rust error kind; a missing path is ``FileNotFoundError``.

::

    FunesError
    ├── ModelMismatchError   the memory was built with another embedding model (message says how to rebuild;
    │                        attributes ``stored``, ``loaded``, ``home``)
    ├── MemoryLockedError    another index run holds the writer lock (attribute ``home``)
    ├── InvalidInputError    empty query, bad date, unknown session or turn
    ├── ModelError           a model could not be loaded or run
    └── StorageError         the Lance dataset could not be read or written
"""

from ._funes import (
    FunesError,
    InvalidInputError,
    MemoryLockedError,
    ModelError,
    ModelMismatchError,
    StorageError,
)

__all__ = [
    "FunesError",
    "InvalidInputError",
    "MemoryLockedError",
    "ModelError",
    "ModelMismatchError",
    "StorageError",
]
