"""funes_py.malloc: the service's cap on glibc's malloc arenas, in a fresh interpreter each time (the cap is
process-wide)."""

import os
import subprocess
import sys

import pytest

CHECK = "from funes_py.malloc import limit_arenas; print(limit_arenas())"


def run(env: dict[str, str]) -> str:
    return subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_caps_arenas_unless_the_operator_chose() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    assert run(env) == "True"  # glibc accepted the cap
    assert run({**env, "MALLOC_ARENA_MAX": "4"}) == "False"  # the operator's value stands
