"""`funes-py index --rebuild` from the command line: a memory opened with another embedder is refused with
exit code 4 and a message naming both models and the rebuild command; the rebuild re-embeds the stored text
(no source files needed) with the configured embedder, after which the old model is the one refused.
(tests/test_engine_model_mismatch.py proves the same through the Python API.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import write_conversation

pytestmark = pytest.mark.models

EXIT_MODEL = 4


def run(*args, home, **env):
    return subprocess.run(
        [sys.executable, "-m", "funes_py.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=dict(os.environ, FUNES_HOME=str(home), **env),
        timeout=300,
        check=False,
    )


def test_rebuild_through_the_command_line(tmp_path):
    from funes_py.convert.build import build_model
    from funes_py.convert.random_model import write_random_model

    tiny = build_model(write_random_model(tmp_path / "tiny-src", family="bert"), out_dir=tmp_path / "tiny",
                       name="test/tiny-cli-embedder")  # fmt: skip
    src, home = tmp_path / "src", tmp_path / "memory"
    write_conversation(
        src / "a.funes.jsonl", "a", [("user", "The kiln K-047 runs hot."), ("assistant", "Logged K-047.")]
    )
    assert run("index", src, home=home).returncode == 0

    refused = run("--embedder", tiny, "recall", "K-047", home=home)
    assert refused.returncode == EXIT_MODEL, refused.stderr
    assert "all-MiniLM-L6-v2" in refused.stderr and "test/tiny-cli-embedder" in refused.stderr
    assert "--rebuild" in refused.stderr and "Traceback" not in refused.stderr

    shutil.rmtree(src)  # the rebuild reads the stored text, not the sources
    rebuilt = run("index", "--rebuild", home=home, FUNES_EMBEDDER=str(tiny))
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "re-embedded 2 chunks" in rebuilt.stdout and "test/tiny-cli-embedder@" in rebuilt.stdout

    hits = run("--embedder", tiny, "recall", "--json", "-k", "1", "kiln", home=home)  # BM25 decides: random vectors
    assert hits.returncode == 0, hits.stderr
    assert json.loads(hits.stdout)[0]["text"].startswith("The kiln")
    assert run("recall", "K-047", home=home).returncode == EXIT_MODEL  # now the default model is the stranger
