"""`funes-py demo` (the README's first command after setup) runs end to end and says it passed."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.models


def test_demo_passes(capsys):
    from funes_py.server.demo import main

    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("demo passed")
    assert out.count("found\n") >= 3 and "MISSING" not in out
