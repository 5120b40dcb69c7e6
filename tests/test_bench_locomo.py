"""The LoCoMo loader reads the shared converted copy in place (CC BY-NC: never copied into the repo).
Hermetic tests use a tiny fake layout; the real-data test is skipped where the shared copy is absent."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benches import locomo  # noqa: E402

REFERENCE = """metric            single-hop   multi-hop         ALL
n                        841         282        1123
turn_recall@5          0.590       0.180       0.487
"""


def _fake(root: Path) -> Path:
    conv = root / "converted" / "conv-1"
    (conv / "src").mkdir(parents=True)
    (conv / "src" / "s1.funes.jsonl").write_text("{}\n", encoding="utf-8")
    rows = [
        {"question_id": "conv-1-q0", "question": "When?", "answer": 2023, "category": 2,
         "category_name": "temporal", "evidence_turns": ["t1", "t2"], "evidence_sessions": ["s1"]},
        {"question_id": "conv-1-q1", "question": "Who?", "answer": "", "category": 5,
         "category_name": "adversarial", "evidence_turns": [], "evidence_sessions": []},
    ]
    (conv / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (root / "bm25_reference.txt").write_text(REFERENCE, encoding="utf-8")
    return root


def test_load_skips_questions_without_evidence(tmp_path, monkeypatch):
    monkeypatch.setenv(locomo.ENV_VAR, str(_fake(tmp_path)))    # the directory above converted/ works too
    [conv] = locomo.load()
    assert conv.name == "conv-1" and conv.src == tmp_path / "converted" / "conv-1" / "src"
    [q] = conv.questions
    assert q.qid == "conv-1-q0" and q.answer == "2023" and q.evidence_turns == ("t1", "t2")
    assert locomo.bm25_reference()["turn_recall@5"] == {"single-hop": 0.59, "multi-hop": 0.18, "ALL": 0.487}


def test_missing_data_says_where_it_looked(tmp_path):
    with pytest.raises(FileNotFoundError, match=locomo.ENV_VAR):
        locomo.load(tmp_path / "nowhere")


@pytest.mark.skipif(not locomo.default_root().is_dir(), reason="shared LoCoMo copy not present")
def test_real_locomo_counts_match_its_readme():
    convs = locomo.load()
    assert len(convs) == 10
    assert sum(len(c.questions) for c in convs) == 1982
    ref = locomo.bm25_reference()
    assert ref["n"]["ALL"] == 1982 and ref["turn_recall@5"]["ALL"] == pytest.approx(0.517)
