"""The question sets of the fusion lab, split into tuning and held-out, and each query's pool of candidates.

| set | split | questions | judged by |
|---|---|---|---|
| ops-N close / reworded | tuning | `benches.history` long questions, `benches.reworded` | answer in a passage (hit@k) |
| ops-N ood | tuning | `vocab.reworded.OOD` | nothing returned |
| home-N close / reworded | held out | `benches.household` long and reworded questions | hit@k |
| home-N ood | held out | `vocab.household.OOD` | nothing returned |
| locomo-tune / locomo-held | tuning / held out | LoCoMo conversations 1-5 / 6-10 | turn recall@k |

`pools(corpus, queries, models)` asks both legs once per query at depth 100 (the lab then cuts to any
depth), with every number the fusion kernels need (`fusion.Pool`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

from .. import household
from ..harness import read_jsonl
from ..history import HISTORY_END
from ..locomo import load as load_locomo
from ..synthetic import synthetic_root
from .corpus import Corpus
from .fusion import Pool, near_named_day
from .lexical import days_named, id_terms, written_day

DEPTH = 100


@dataclass
class Query:
    qid: str
    text: str
    answer: str | None = None                 # synthetic: the answer string
    evidence: tuple[str, ...] = ()            # LoCoMo: evidence turn_uuids
    category: str = ""
    negative: bool = False                    # a question with no answer in the memory


@dataclass
class QuerySet:
    name: str                                 # "ops-1000 reworded"
    split: str                                # "tuning" or "held-out"
    corpus: str                               # key into the corpora
    queries: list[Query]
    now: datetime | None = None               # recency's reference time (the history's end)
    pools: list[Pool] = field(default_factory=list)
    vectors: np.ndarray | None = None         # query vectors, for levers that re-embed


def synthetic_sets(domain: str, n: int) -> list[QuerySet]:
    root = synthetic_root(domain, n)
    split = "tuning" if domain == "ops" else "held-out"
    corpus = f"{'ops' if domain == 'ops' else 'home'}-{n}"
    qs = read_jsonl(root / "questions.jsonl")
    close = [Query(q["qid"], q["long"], q["answer"], category=q["kind"]) for q in qs]
    if domain == "ops":
        rw = [Query(q["qid"], q["reworded"], q["answer"], category=q["kind"]) for q in read_jsonl(root / "reworded.jsonl")]
        now = HISTORY_END
    else:
        rw = [Query(q["qid"], q["reworded"], q["answer"], category=q["kind"]) for q in qs]
        now = household.HISTORY_END
    ood = [Query(o["qid"], o["question"], negative=True) for o in read_jsonl(root / "ood.jsonl")]
    absent = [Query(u["qid"], u["long"], negative=True) for u in read_jsonl(root / "unanswerable.jsonl")]
    return [QuerySet(f"{corpus} close", split, corpus, close, now),
            QuerySet(f"{corpus} reworded", split, corpus, rw, now),
            QuerySet(f"{corpus} ood", split, corpus, ood, now),
            QuerySet(f"{corpus} unanswerable", split, corpus, absent, now)]


def locomo_sets() -> tuple[list[QuerySet], dict[str, Path]]:
    """Two sets, conversations 1-5 (tuning) and 6-10 (held out); each question keeps its conversation as
    its corpus (`QuerySet.corpus` is then per query: see `corpus_of`)."""
    convs = load_locomo()
    sets, srcs = [], {}
    for name, part in (("locomo-tune", convs[:5]), ("locomo-held", convs[5:])):
        queries = []
        for c in part:
            srcs[f"locomo/{c.name}"] = c.src
            queries += [Query(q.qid, q.question, evidence=q.evidence_turns, category=q.category_name,
                              answer=f"locomo/{c.name}") for q in c.questions]  # fmt: skip
        sets.append(QuerySet(name, "tuning" if name.endswith("tune") else "held-out", "locomo", queries))
    return sets, srcs


def corpus_of(qs: QuerySet, q: Query) -> str:
    """LoCoMo questions carry their conversation's corpus in `answer` (they have no answer string)."""
    return q.answer if qs.corpus == "locomo" and q.answer else qs.corpus


def build_pool(corpus: Corpus, query: str, qv: np.ndarray, now: datetime | None, depth: int = DEPTH,
               keys: tuple[str, ...] = ("turn",), scores: dict[int, float] | None = None) -> Pool:  # fmt: skip
    """Both legs at `depth`, with both raw scores for every row of the union. `keys`: the vectors the dense
    leg scores a row by (best of); `scores`: BM25 scores to use instead of the query's own (expansion)."""
    sims = corpus.cosines(qv, keys)
    order = np.argsort(-sims, kind="stable")[:depth]
    dense = [(int(i), float(sims[i])) for i in order]
    scores = corpus.bm25_scores(query) if scores is None else scores
    bm25 = sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:depth]
    return _pool(corpus, query, now, dense, bm25, lambda r: float(sims[r]), scores)


def engine_pool(eng, corpus: Corpus, query: str, now: datetime | None, depth: int = DEPTH) -> Pool:
    """`build_pool` with the dense leg asked of the engine's memory of the same passages instead of the lab's
    own vectors (no embedding of the corpus): the engine's dense top `depth` with their cosine estimates,
    the lab's BM25 top `depth`, and the engine's cosine of those (a recall computes it for every candidate).
    `check_engine` shows both legs agree with the lab's own at 1,000 conversations. One passage per turn."""
    # Every copy of a repeated text: the legs as fusion sees them, before `search::repeats`.
    hits = eng.recall(query, legs="dense", k=depth, candidates=depth, neighbors=0, half_life_days=0.0,
                      keep_repeats=True)  # fmt: skip
    dense = [(corpus.by_turn[h.turn_uuid], float(h.similarity)) for h in hits]
    scores = corpus.bm25_scores(query)
    bm25 = sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:depth]
    cos = dict(dense)
    if any(r not in cos for r, _ in bm25):
        for h in eng.recall(query, legs="bm25", k=depth, candidates=depth, neighbors=0, half_life_days=0.0,
                            keep_repeats=True):  # fmt: skip
            cos.setdefault(corpus.by_turn[h.turn_uuid], float(h.similarity))
    bm25 = [(r, s) for r, s in bm25 if r in cos]   # a BM25 tie at the cut the engine broke the other way
    return _pool(corpus, query, now, dense, bm25, cos.__getitem__, scores)


def _pool(corpus: Corpus, query: str, now: datetime | None, dense: list, bm25: list, cosine, scores: dict) -> Pool:
    """The `Pool` of both legs' lists: every listed passage's cosine (`cosine(row)`) and BM25 score, the
    query's identifiers each holds, and its age at `now`."""
    rows = {r for r, _ in dense} | {r for r, _ in bm25}
    wanted = set(id_terms(query))
    id_count = {r: len(wanted & set(id_terms(corpus.rows[r].text))) for r in rows} if wanted else {}
    ages = {}
    if now is not None:
        for r in rows:
            ts = datetime.fromisoformat(corpus.rows[r].ts)
            ages[r] = (now - ts).total_seconds() / 86400
    days = days_named(query)
    near_day = {r for r in rows if days and near_named_day(written_day(corpus.rows[r].ts), days)}
    return Pool(dense, bm25, {r: cosine(r) for r in rows}, {r: scores.get(r, 0.0) for r in rows},
                {r: c for r, c in id_count.items() if c}, len(wanted), ages,
                {r: corpus.rows[r].chunk_id for r in rows}, near_day)  # fmt: skip

