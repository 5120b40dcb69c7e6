"""A memory written by an older BM25 analyzer is re-tokenised on open, not mixed (issue 14): the fixture
tests/data/memory_analyzer_v1 was made by the engine before the CJK bigram analyzer (whitespace, version 1,
no stamp; tests/data/make_memory_analyzer_v1.py). Opened by a build with analyzer version 2, the memory
reports the new version, its old rows answer a bare Korean noun through BM25 alone on both recall paths,
their text and vectors are kept (no re-embedding needed), and a second open rewrites nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import needs_bigram_analyzer

pytestmark = pytest.mark.models

FIXTURE = Path(__file__).resolve().parent / "data" / "memory_analyzer_v1"
SERVER = "어제 밤에 서버가 갑자기 멈췄어요. 로그를 봐 주세요."
TICKET = "로그를 보니 디스크가 가득 찼습니다. MT-4471 티켓으로 정리했어요."
GRINDER = "Which coffee grinder did we pick for the office?"
# The fixture's embedder, named: the library's default may change (the int8 MiniLM), the fixture's stamp does not.
EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def minilm():
    from funes_py import Models

    return Models.load(embedder=EMBEDDER)


def test_fixture_is_an_unstamped_memory():
    """The fixture really predates the stamp: its manifests carry the model stamp but no analyzer version."""
    manifests = list((FIXTURE / "chunks.lance" / "_versions").glob("*.manifest"))
    assert manifests
    for m in manifests:
        data = m.read_bytes()
        assert b"funes_py.embedding_model" in data and b"funes_py.analyzer_version" not in data


@needs_bigram_analyzer
@pytest.mark.parametrize("resident", [True, False], ids=["resident", "lance"])
def test_an_older_memory_is_retokenised_on_open(minilm, tmp_path, resident):
    from funes_py import Engine, _funes

    home = tmp_path / "memory"
    shutil.copytree(FIXTURE, home)
    eng = Engine(home, minilm, resident=resident)
    st = eng.status()
    assert st.analyzer_version == _funes.ANALYZER_VERSION >= 2
    assert st.rows == 4 and st.memory_model == minilm.embedder_stamp

    hits = eng.recall("서버", legs="bm25", k=5, neighbors=0)
    # Version 1 read 서버가 as one token: 서버 found nothing. (The next turn holds it as BM25 context.)
    assert hits and hits[0].text == SERVER and {h.session_id for h in hits} == {"ko-1"}
    assert eng.recall("MT-4471", legs="bm25", k=5, neighbors=0)[0].text == TICKET
    # Text and vectors kept: the dense leg still ranks the English turn first for its paraphrase.
    assert eng.recall("what coffee machine did the office choose", legs="dense", k=1, neighbors=0)[0].text == GRINDER
    assert [t.text for t in eng.get("ko-1")] == [SERVER, TICKET]

    version = st.version
    del eng
    again = Engine(home, minilm, resident=resident)
    assert again.status().version == version, "a second open re-tokenised again"
    assert again.status().analyzer_version == _funes.ANALYZER_VERSION
    assert again.recall("서버", legs="bm25", k=5, neighbors=0)[0].text == SERVER
