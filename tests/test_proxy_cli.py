"""`funes-py proxy`'s command line: the names the issue gives, and the refusals that keep the archive safe
(a non-loopback address without a tokens file; a generic engine without --window)."""

from __future__ import annotations

import subprocess
import sys

from proxy_helpers import pythonpath_env


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "funes_py.cli", "proxy", *args], capture_output=True, text=True,
                          env={**pythonpath_env(), **(env or {})}, timeout=60)  # fmt: skip


def test_help_names_every_flag():
    out = _run("--help").stdout
    for flag in ("--upstream", "--host", "--port", "--data", "--window", "--engine"):
        assert flag in out
    assert "{auto,llama.cpp,openai}" in out


def test_refuses_a_public_address_without_a_tokens_file():
    r = _run("--upstream", "http://127.0.0.1:9", "--host", "0.0.0.0", env={"FUNES_TOKENS_FILE": ""})
    assert r.returncode == 2 and "FUNES_TOKENS_FILE" in r.stderr


def test_a_generic_engine_needs_a_window():
    r = _run("--upstream", "http://127.0.0.1:9", "--engine", "openai")
    assert r.returncode == 2 and "--window" in r.stderr


def test_bad_values_name_their_variable():
    r = _run("--upstream", "http://127.0.0.1:9", env={"FUNES_PROXY_AUTO_RECALL": "always"})
    assert r.returncode == 2 and "FUNES_PROXY_AUTO_RECALL" in r.stderr
    r = _run("--upstream", "ftp://x")
    assert r.returncode == 2 and "--upstream" in r.stderr
