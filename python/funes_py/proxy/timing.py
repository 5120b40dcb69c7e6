"""Where one request's time went, for the `server-timing` response header (the benchmark reads it)."""

from __future__ import annotations

import time


class Timing:
    def __init__(self) -> None:
        self._last = time.perf_counter()
        self.phases: dict[str, float] = {}

    def mark(self, phase: str) -> None:
        """The time since the previous mark goes to `phase` (added up when a phase repeats)."""
        now = time.perf_counter()
        self.phases[phase] = self.phases.get(phase, 0.0) + (now - self._last) * 1000
        self._last = now

    def header(self) -> str:
        return ", ".join(f"{k};dur={v:.2f}" for k, v in self.phases.items())
