"""The right model without asking (issue 36): a new memory whose text is mostly in a script the default
embedder does not read gets multilingual-e5-small at its first index, recorded in its model stamp; opened
again without a model named, a memory gets its own; `status` says which and why; a model named by the
caller still wins. Through the library and the CLI, on real models and real memories."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benches.history import generate, write_history  # noqa: E402

pytestmark = [pytest.mark.models, pytest.mark.e5]

E5 = "intfloat/multilingual-e5-small-int8"


def _history(tmp_path: Path, lang: str, n: int = 40) -> Path:
    return write_history(generate(n, seed=11, n_questions=n, lang=lang), tmp_path / f"history-{lang}")


def test_choice_by_text_is_a_rule_on_letters():
    from funes_py import choice

    assert choice.for_texts(["The kiln K-047 runs hot", "N-11: we decided to wait"]).embedder is None
    korean = choice.for_texts(["어제 밤에 서버가 갑자기 멈췄어요.", "P-003 펌프 씰 누설 티켓은 지훈 씨가 맡았어요."])
    assert korean.embedder == E5 and "Hangul" in korean.why, korean
    assert choice.for_texts(["12:30", "#42"]).embedder is None, "no letters: nothing to choose by"


def test_a_korean_memory_gets_the_multilingual_model_and_keeps_it(tmp_path, monkeypatch):
    from funes_py import Engine

    monkeypatch.delenv("FUNES_EMBEDDER", raising=False)
    home = tmp_path / "memory"
    eng = Engine(home)
    assert eng.choice.open
    eng.index(_history(tmp_path, "ko"))
    assert eng.models.embedder_name == E5 and "Hangul" in eng.choice.why
    assert eng.status().memory_model.startswith(E5 + "@")
    again = Engine(home)  # no model named: the memory's own, no ModelMismatchError
    assert again.models.embedder_name == E5 and not again.choice.open
    assert again.recall("P-003 펌프", k=3)


def test_an_english_memory_keeps_the_default(tmp_path, monkeypatch):
    from funes_py import Engine
    from funes_py.convert.registry import DEFAULT_NAME

    monkeypatch.delenv("FUNES_EMBEDDER", raising=False)
    eng = Engine(tmp_path / "memory")
    eng.index(_history(tmp_path, "en"))
    assert eng.models.embedder_name == DEFAULT_NAME and eng.choice.why == "the default embedder"


def test_a_named_model_wins(tmp_path, models):
    from funes_py import Engine

    eng = Engine(tmp_path / "memory", models=models)
    eng.index(_history(tmp_path, "ko"))
    assert eng.models is models and eng.status().memory_model == models.embedder_stamp


def test_the_cli_says_which_model_and_why(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "FUNES_EMBEDDER"}
    home = str(tmp_path / "memory")
    run = lambda *a: subprocess.run([sys.executable, "-m", "funes_py.cli", *a], env=env, capture_output=True, text=True)  # noqa: E731
    indexed = run("index", "--home", home, str(_history(tmp_path, "ko")))
    assert indexed.returncode == 0, indexed.stderr
    assert f"model: {E5} (chosen for its text:" in indexed.stderr and "Hangul" in indexed.stderr
    status = run("status", "--home", home)
    assert status.returncode == 0, status.stderr
    assert f"memory model: {E5}@" in status.stdout
    assert "model choice: chosen for its text:" in status.stdout and "Hangul" in status.stdout
    recalled = run("recall", "--home", home, "-k", "2", "--", "펌프")
    assert recalled.returncode == 0, recalled.stderr  # opened with its own model: no exit 4 (mismatch)
