"""BM25 reads Hangul, Han and Kana (issue 14): a bare noun finds the turn holding the noun with its particle
attached (서버 → 서버가), through BM25 alone, on both recall paths (the resident copy and Lance's FTS index
must see the same tokens); the query side is analysed the same way (서버를 finds 서버가); Latin words and
identifiers are matched as before. (A turn's BM25 text also holds the end of the turn before it, so the
answer is asserted first, not alone.) Runs only on an engine build with analyzer version 2 or later."""

from __future__ import annotations

import pytest

from conftest import needs_bigram_analyzer, write_conversation

pytestmark = [pytest.mark.models, needs_bigram_analyzer]

SERVER = "어제 밤에 서버가 갑자기 멈췄어요. 로그를 봐 주세요."
TICKET = "디스크 정리 후 MT-4471 티켓을 닫았어요."
LUNCH = "점심은 회사 앞에서 김치찌개를 먹었어요."
KILN = "The kiln K-047 on line 3 runs hot again."
TOKYO = "東京タワーの近くで来週の会議をします。"
SWITCH = "我们决定下个月更换机房的服务器。"


@pytest.fixture
def memory(engine, tmp_path):
    src = tmp_path / "src"
    write_conversation(src / "ko.funes.jsonl", "ko", [("user", SERVER), ("assistant", TICKET)])
    write_conversation(src / "ko2.funes.jsonl", "ko2", [("user", LUNCH), ("assistant", KILN)])
    write_conversation(src / "cjk.funes.jsonl", "cjk", [("user", TOKYO), ("assistant", SWITCH)])
    engine.index(src)
    return engine


def bm25(eng, query: str) -> list[str]:
    return [h.text for h in eng.recall(query, legs="bm25", k=5, neighbors=0)]


def test_a_bare_korean_noun_finds_the_noun_with_its_particle(memory):
    hits = memory.recall("서버", legs="bm25", k=5, neighbors=0)
    assert hits and hits[0].text == SERVER
    # The next turn carries the end of the one before it as BM25 context (chunk::turn_contexts), so it may
    # match too; nothing from another conversation does.
    assert {h.session_id for h in hits} == {"ko"}


def test_the_query_is_analysed_the_same_way(memory):
    # 서버를 (object particle) against 서버가 (subject particle): only the bigram 서버 is shared.
    assert bm25(memory, "서버를 다시 확인했나요")[0] == SERVER
    assert bm25(memory, "김치찌개")[0] == LUNCH


def test_han_and_kana_runs_are_read_as_bigrams(memory):
    assert bm25(memory, "東京")[0] == TOKYO
    assert bm25(memory, "服务器")[0] == SWITCH


def test_latin_words_and_identifiers_match_as_before(memory):
    assert bm25(memory, "MT-4471")[0] == TICKET
    assert bm25(memory, "kiln")[0] == KILN
