"""The C allocator's arenas in a long-running funes_py process (the recall service, the proxy, the CLI's
index runs).

glibc gives each thread that allocates while another holds an arena an arena of its own, up to 8 per core,
and gives little of a thread arena's freed memory back to the system. An index run allocates and frees on
many threads (Lance's writers and index builders, ONNX Runtime, tokio's blocking pool), so a process that
indexes all day grew by tens of KB per run in freed-but-kept memory. Two arenas keep that bounded at no
measured cost in recall throughput (benches/HISTORY.md, "Soak"). The library does not do this on import: the
process is its host's to tune; a host that indexes continuously can set `MALLOC_ARENA_MAX=2` itself.
"""

from __future__ import annotations

import ctypes
import os
import sys

# mallopt's parameter number for the arena cap (glibc's malloc.h).
M_ARENA_MAX = -8
ARENA_MAX = 2


def limit_arenas() -> bool:
    """Caps glibc's malloc arenas at `ARENA_MAX` for this process, unless the operator chose a cap
    (`MALLOC_ARENA_MAX`, which glibc reads at start) or the C library is not glibc. Call it first thing in
    `main`, before threads allocate: arenas that exist stay. Returns whether the cap was set."""
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ:
        return False
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "gnu_get_libc_version"):  # musl and others: no glibc arenas to cap
        return False
    libc.mallopt.argtypes, libc.mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(libc.mallopt(M_ARENA_MAX, ARENA_MAX))
