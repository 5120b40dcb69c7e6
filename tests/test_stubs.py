"""The typed stubs (`_funes.pyi`) match the compiled module: every name, signature and default, checked by
mypy's stubtest against the installed extension. PEP 800 disjoint bases are not checked: PyO3 classes do
not declare them."""

from __future__ import annotations

import subprocess
import sys


def test_stubs_match_the_compiled_module():
    out = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "--ignore-disjoint-bases", "funes_py._funes"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
