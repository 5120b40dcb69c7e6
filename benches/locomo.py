"""LoCoMo (snap-research/LoCoMo) as converted for funes: read in place, at run time.

Licence: CC BY-NC 4.0. Nothing from it may be copied into this repository or its packages; this module
only reads the shared copy (see that directory's README.md). Layout expected under the root:

    <root>/conv-26/src/*.funes.jsonl       one file per LoCoMo session
    <root>/conv-26/questions.jsonl         question, answer, evidence_turns, category, ...
    <root>/../bm25_reference.txt           plain BM25 over turns, the reference numbers

How to evaluate: index each conversation as its own memory (names repeat across conversations), ask
only that conversation's questions, and score `metrics.turn_recall_at_k` on the returned turn_uuids.
The root is $FUNES_LOCOMO_DIR (the `converted` directory, or the directory above it), else
`shared/eval/locomo/converted` next to the repository.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .paths import REPO

ENV_VAR = "FUNES_LOCOMO_DIR"
CATEGORY_ORDER = ("single-hop", "multi-hop", "temporal", "open-domain", "adversarial")


@dataclass(frozen=True)
class LocomoQuestion:
    qid: str
    question: str
    answer: str               # may be empty for adversarial questions (no answer in the data)
    category: int             # 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial
    category_name: str
    evidence_turns: tuple[str, ...]
    evidence_sessions: tuple[str, ...]


@dataclass(frozen=True)
class LocomoConversation:
    name: str                 # "conv-26"
    src: Path                 # directory of .funes.jsonl files to index as one memory
    questions: tuple[LocomoQuestion, ...]


def default_root() -> Path:
    env = os.environ.get(ENV_VAR)
    if env:
        root = Path(env)
        return root / "converted" if (root / "converted").is_dir() else root
    return REPO.parent / "shared" / "eval" / "locomo" / "converted"


def load(root: str | os.PathLike | None = None) -> list[LocomoConversation]:
    """Every conversation under root, in name order, with the questions that have evidence turns
    (LoCoMo has 1,986 questions; 4 have none and are skipped, leaving 1,982)."""
    base = Path(root) if root is not None else default_root()
    if not base.is_dir():
        raise FileNotFoundError(f"LoCoMo data not found at {base}; set {ENV_VAR} to the converted directory")
    out = []
    for conv in sorted(p for p in base.iterdir() if (p / "src").is_dir()):
        questions = []
        with open(conv / "questions.jsonl", encoding="utf-8") as fh:
            for line in fh:
                q = json.loads(line)
                if not q.get("evidence_turns"):
                    continue
                questions.append(LocomoQuestion(
                    qid=q["question_id"], question=q["question"], answer=str(q.get("answer", "")),
                    category=int(q["category"]), category_name=q["category_name"],
                    evidence_turns=tuple(q["evidence_turns"]), evidence_sessions=tuple(q["evidence_sessions"])))
        out.append(LocomoConversation(conv.name, conv / "src", tuple(questions)))
    if not out:
        raise FileNotFoundError(f"no LoCoMo conversations (*/src/) under {base}")
    return out


def bm25_reference(path: str | os.PathLike | None = None) -> dict[str, dict[str, float]]:
    """The plain-BM25 reference table as {metric: {category: value}}, e.g.
    ref["turn_recall@5"]["ALL"] == 0.517; the row "n" holds the question counts."""
    p = Path(path) if path is not None else default_root().parent / "bm25_reference.txt"
    lines = [ln.split() for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip()]
    header = lines[0][1:]     # column names after "metric"
    table: dict[str, dict[str, float]] = {}
    for row in lines[1:]:
        if len(row) != len(header) + 1:
            raise ValueError(f"unexpected row in {p}: {' '.join(row)}")
        table[row[0]] = {c: float(v) for c, v in zip(header, row[1:], strict=True)}
    return table
