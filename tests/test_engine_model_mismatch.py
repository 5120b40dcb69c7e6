"""A memory remembers its embedder: opening it with another model is refused with a message that says how
to rebuild; the rebuild re-embeds the stored text without the source files."""

from __future__ import annotations

import shutil

import pytest

from conftest import write_conversation

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    from funes_py import Models
    from funes_py.convert.build import build_model
    from funes_py.convert.random_model import write_random_model

    root = tmp_path_factory.mktemp("tiny")
    write_random_model(root / "src", kind="embedder", family="bert")
    built = build_model(root / "src", out_dir=root / "built", name="test/tiny-random-embedder")
    return Models.load(embedder=built)


def test_other_model_is_refused_then_rebuild_works(models, tiny_models, tmp_path):
    from funes_py import Engine, ModelMismatchError

    src = tmp_path / "src"
    write_conversation(src / "a.funes.jsonl", "a", [("user", "The kiln K-047 runs hot."), ("assistant", "Logged K-047.")])
    home = tmp_path / "memory"
    Engine(home, models).index(src)
    with pytest.raises(ModelMismatchError) as err:
        Engine(home, tiny_models)
    msg = str(err.value)
    assert models.embedder_name in msg and "tiny-random-embedder" in msg and "--rebuild" in msg

    shutil.rmtree(src)  # the rebuild must not need the sources
    eng, n = Engine.rebuild(home, tiny_models)
    assert n == 2
    assert eng.status().memory_model == tiny_models.embedder_stamp
    assert {h.text for h in eng.recall("K-047", k=2)} == {"The kiln K-047 runs hot.", "Logged K-047."}
    with pytest.raises(ModelMismatchError):
        Engine(home, models)
