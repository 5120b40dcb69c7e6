"""Where the benchmarks read and write, in one place so that a module's folder inside benches/ does not decide it:
the repository root, benches/ itself, and benches/out/ (git-ignored: generated histories, cached memories, the
result JSON that `benches.results` writes RESULTS.md from)."""

from pathlib import Path

BENCHES = Path(__file__).parent
OUT = BENCHES / "out"
REPO = Path(__file__).resolve().parents[1]
