"""The offline fusion lab: the engine's ranking, the RRF ranking it replaced, and candidate levers, simulated on
the same pools, tuned on the tuning sets and reported on the held-out ones (`lab.sets`).

    python -m benches.lab.fusion_lab --n 1000 3000                 # every set, the named configs
    python -m benches.lab.fusion_lab --n 1000 --sweep              # the fusion grid on the tuning sets
    python -m benches.lab.fusion_lab --n 1000 --check-engine       # the lab's legs and ranking against the engine's

A config is a fuser (`fusion.score_fusion` with its constants, or `fusion.rrf`) and the engine's settings
around it: leg depth, the cut to `candidates`, k, identifier guard, relevance floor, recency. `ENGINE` is what
`Engine.recall(q)` does by default since the score-fusion port (`proposal()`: legs 100 deep, `candidates` 30,
k 8, recency 30 days with `now` pinned to the history's end; LoCoMo: k 10, recency off, as `locomo_recall`);
`proposal(k=3, guard=True, candidates=8)` is what the MCP service does. `RRF_LIBRARY` and `RRF_SERVICE` are
the same two before the port (RRF over legs `candidates` deep: 30, and 8 for the service).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..metrics import answer_pattern, turn_recall_table
from ..synthetic import synthetic_root
from . import corpus as lab_corpus
from . import fusion, lexical
from .corpus import LAB_OUT, Corpus
from .sets import QuerySet, build_pool, corpus_of, engine_pool, locomo_sets, synthetic_sets

Fuser = Callable[[fusion.Pool], list[tuple[int, float]]]
# Bumped when a cached pool would no longer be what `load` builds (2: the engine's legs with every copy of a
# repeated text, `sets.engine_pool`; 3: `Pool.near_day`; 4: BM25 with the model's near words; 5: the same pools,
# but `Pool` moved to `benches.lab.fusion`, which older pickles do not name).
POOL_VERSION = 5
ENGINE_FUSION = (fusion.ENGINE_ALPHA, fusion.ENGINE_NORM, None, fusion.ENGINE_ID_BONUS)


@dataclass(frozen=True)
class Config:
    name: str
    fuse: Fuser
    depth: int = 30            # rows per leg before fusion (RRF: `candidates`; score fusion: FUSION_DEPTH)
    k: int = 8
    guard: bool = False
    floor: float | None = None
    half_life: float = 30.0
    candidates: int | None = None   # the fused list's cut before floor and guard (None: `depth`)
    floor_spares_ids: bool = False  # rows naming a queried identifier pass the floor (`fusion.finish`)
    lever: Callable | None = None   # a ranking of its own from (corpus, query, pool, first): `levers.py`
    keep_repeats: bool = False      # every copy of a repeated text (the engine before `search::repeats`)


def rrf_engine(depth: int = 30, k: int = 8, guard: bool = False, floor: float | None = None) -> Config:
    """The engine before the score-fusion port: RRF of legs `depth` (its `candidates`) deep."""
    return Config("rrf 0.3", lambda p: fusion.rrf(p, 0.3), depth, k, guard, floor)


RRF_LIBRARY = rrf_engine()
RRF_SERVICE = rrf_engine(depth=8, k=3, guard=True)


def proposal(depth: int = 100, k: int = 8, guard: bool = False, floor: float | None = None,
             candidates: int = 30) -> Config:  # fmt: skip
    """The lever kept (tuned on the tuning sets, see `sweep`) and ported, the engine's ranking since: score
    fusion, z-scores per leg over its own top 100, dense weight 0.3, identifier bonus 0.5; the fused list cut
    to `candidates`."""
    return Config("score z 0.3 id 0.5", lambda p: fusion.score_fusion(p, *ENGINE_FUSION), depth, k, guard, floor,
                  candidates=candidates)  # fmt: skip


def lever_configs() -> list[Config]:
    """The engine's ranking and the levers beyond the formula (`levers.py`), each around the engine's
    settings: `python -m benches.lab.fusion_lab --levers`."""
    from . import levers

    out = [ENGINE]
    out += [replace(ENGINE, name=f"session cap {cap}", lever=levers.capped(cap)) for cap in (2, 3, 4)]
    out += [replace(ENGINE, name=f"second hop: top 3, {t} terms, weight {w:g}, idf >= {i:g}",
                    lever=levers.second_hop(3, t, w, i)) for t in (5, 10) for w in (0.3, 0.6) for i in (2.0, 4.0)]
    out += [replace(ENGINE, name=f"dense weight {hi:g} under BM25 coverage {pivot:g}",
                    lever=levers.coverage_weight(0.3, hi, pivot)) for hi in (0.5, 0.6) for pivot in (0.3, 0.5)]
    return out


NAMED = [replace(RRF_LIBRARY, name="library before the port (rrf 0.3, depth 30)"),
         replace(proposal(), name="library proposal (score z 0.3, id 0.5, depth 100)"),
         replace(RRF_SERVICE, name="service before the port (rrf, depth 8, k 3, guard)"),
         replace(proposal(k=3, guard=True, candidates=8), name="service proposal (score, depth 100, candidates 8, k 3, guard)")]


# What the engine ranks by since the score-fusion port (main d3ff2eb): `check_engine` compares against it.
ENGINE = replace(proposal(), name="engine (score fusion, depth 100, candidates 30)")

LANCE = replace(proposal(), name="library proposal, Lance path (absent BM25 = 0)",
                fuse=lambda p: fusion.score_fusion(fusion.lance_view(p), *ENGINE_FUSION))


def rank(qs: QuerySet, pool: fusion.Pool, cfg: Config, corpus: Corpus | None = None, query: str = "") -> list[int]:
    p = pool.cut(cfg.depth)
    k = 10 if qs.corpus == "locomo" and cfg.k == 8 else cfg.k
    half_life = 0.0 if qs.corpus == "locomo" else cfg.half_life
    text_of = None if corpus is None or cfg.keep_repeats else (lambda r: corpus.rows[r].text)
    if cfg.lever is not None:
        from .levers import LONG

        def first(q: fusion.Pool, fuse: Fuser | None = None) -> list[int]:
            return fusion.finish(q, (fuse or cfg.fuse)(q), cfg.candidates or cfg.depth, LONG, cfg.floor, cfg.guard,
                                 half_life, text_of=text_of)  # fmt: skip
        return cfg.lever(corpus, query, p, first)[:k]
    return fusion.finish(p, cfg.fuse(p), cfg.candidates or cfg.depth, k, cfg.floor, cfg.guard, half_life,
                         cfg.floor_spares_ids, text_of)  # fmt: skip


def evaluate(qs: QuerySet, corpora: dict[str, Corpus], cfg: Config) -> dict:
    """hit@1/3/8 (answer sets), the share answered nothing (negatives), or turn recall (LoCoMo)."""
    if qs.corpus == "locomo":
        rows = []
        for q, pool in zip(qs.queries, qs.pools, strict=True):
            c = corpora[corpus_of(qs, q)]
            turns = list(dict.fromkeys(c.rows[r].turn_uuid for r in rank(qs, pool, cfg, c, q.text)))
            rows.append((q.category, turns, q.evidence))
        table = turn_recall_table(rows, ks=(1, 5, 10))
        return {"n": len(rows), **{cat: {m: round(v, 4) for m, v in t.items()} for cat, t in table.items()}}
    c = corpora[qs.corpus]
    if qs.queries[0].negative:
        empty = sum(not rank(qs, p, cfg, c, q.text) for q, p in zip(qs.queries, qs.pools, strict=True))
        return {"n": len(qs.pools), "nothing": empty / len(qs.pools)}
    hits = {1: 0, 3: 0, 8: 0}
    for q, pool in zip(qs.queries, qs.pools, strict=True):
        pat = answer_pattern(q.answer)
        ranked = rank(qs, pool, cfg, c, q.text)
        first = next((i + 1 for i, r in enumerate(ranked) if pat.search(c.rows[r].text)), None)
        for k in hits:
            hits[k] += first is not None and first <= k
    return {"n": len(qs.pools), **{f"hit@{k}": v / len(qs.pools) for k, v in hits.items()}}


def headline(qs: QuerySet, result: dict) -> float:
    """The one number a set is judged by: hit@3, the share of nothing, or LoCoMo turn recall@10."""
    if qs.corpus == "locomo":
        return result["ALL"]["turn_recall@10"]
    return result.get("hit@3", result.get("nothing", 0.0))


# ---------------------------------------------------------------------------------------------------
# Loading

def open_engine(corpus: str, models, keep_index: bool = False):
    """The engine's memory of a lab corpus ("ops-1000", "home-1000", "locomo/conv-26") with `models`'
    embedder (the memories `benches.meaning` measures), indexed if needed."""
    from funes_py import Engine

    from ..locomo import load as load_locomo
    from ..meaning import indexed_household, indexed_ops, locomo_memory

    kind, _, rest = corpus.partition("-")
    if kind in ("ops", "home"):
        indexed = indexed_ops if kind == "ops" else indexed_household
        return Engine(indexed(int(rest), models, keep_index)[1], models)
    conv = next(c for c in load_locomo() if c.name == corpus.split("/")[1])
    return locomo_memory(models, conv, keep_index)


def load(ns: list[int], models, locomo: bool = True, source: str = "lab") -> tuple[list[QuerySet], dict[str, Corpus]]:
    """Every set and corpus, each query's pool computed (or read from the cache). `source` "lab": the dense
    leg from the lab's own vectors (the corpus is embedded once); "engine": from the engine's memory of the
    same passages (`sets.engine_pool`: nothing embedded but the queries; the memory is indexed if
    missing)."""
    sets: list[QuerySet] = []
    srcs: dict[str, Path] = {}
    for n in ns:
        for domain, gen in (("ops", "ops"), ("home", "household")):
            srcs[f"{domain}-{n}"] = synthetic_root(gen, n) / "src"
            sets += synthetic_sets(gen, n)
    if locomo:
        lsets, lsrcs = locomo_sets()
        srcs |= lsrcs
        sets += lsets
    corpora: dict[str, Corpus] = {}
    for key, src in srcs.items():
        t = time.perf_counter()
        corpora[key] = Corpus.load(src, models, name=key.replace("/", "-"), embed=source == "lab")
        print(f"{key}: {len(corpora[key].rows):,} passages in {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
    engines: dict[str, object] = {}
    for qs in sets:
        t = time.perf_counter()
        qs.vectors = models.embed_queries([q.text for q in qs.queries])
        key = hashlib.sha256(repr([source, POOL_VERSION, lexical.ANALYZER_VERSION, lab_corpus.EMBED_ALONE] + [(corpus_of(qs, q), q.text, qs.now) for q in qs.queries]).encode()
                             + models.embedder_stamp.encode() + qs.vectors.tobytes()).hexdigest()[:16]  # fmt: skip
        cache = LAB_OUT / "pools" / f"{qs.name.replace(' ', '-').replace('/', '-')}-{key}.pkl"
        if cache.exists():
            qs.pools = pickle.loads(cache.read_bytes())
        else:
            qs.pools = []
            for q, v in zip(qs.queries, qs.vectors, strict=True):
                c = corpus_of(qs, q)
                if source == "lab":
                    qs.pools.append(build_pool(corpora[c], q.text, v, qs.now))
                else:
                    if c not in engines:
                        engines[c] = open_engine(c, models)
                    qs.pools.append(engine_pool(engines[c], corpora[c], q.text, qs.now))
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_bytes(pickle.dumps(qs.pools))
        print(f"{qs.name}: {len(qs.queries)} pools in {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
    return sets, corpora


# ---------------------------------------------------------------------------------------------------
# Reports

def table(sets: list[QuerySet], corpora: dict[str, Corpus], configs: list[Config]) -> tuple[str, list[dict]]:
    head = "| set | split | " + " | ".join(c.name for c in configs) + " |\n|---|---|" + "---|" * len(configs) + "\n"
    body, rows = "", []
    for qs in sets:
        cells = []
        for cfg in configs:
            if qs.corpus == "locomo" and cfg.k < 8:   # turn recall@5/@10 needs more than 3 passages
                cells.append("–")
                continue
            r = evaluate(qs, corpora, cfg)
            rows.append({"set": qs.name, "split": qs.split, "config": cfg.name, **r})
            cells.append(cell(qs, r))
        body += f"| {qs.name} | {qs.split} | " + " | ".join(cells) + " |\n"
    return head + body, rows


def cell(qs: QuerySet, r: dict) -> str:
    if qs.corpus == "locomo":
        a = r["ALL"]
        return f"{100 * a['turn_recall@5']:.1f} / {100 * a['turn_recall@10']:.1f}"
    if "nothing" in r:
        return f"{100 * r['nothing']:.0f}% nothing"
    return f"{100 * r['hit@1']:.0f} / {100 * r['hit@3']:.0f} / {100 * r['hit@8']:.0f}"


# ---------------------------------------------------------------------------------------------------
# Tuning

def score_config(alpha: float, norm: str, id_bonus: float, depth: int, dense_norm: str | None = None,
                 k: int = 8, guard: bool = False) -> Config:  # fmt: skip
    name = f"score a={alpha:g} {norm}{'/' + dense_norm if dense_norm else ''} id={id_bonus:g} d={depth}"
    return Config(name, lambda p: fusion.score_fusion(p, alpha, norm, dense_norm, id_bonus), depth, k, guard)


def grid() -> list[Config]:
    out = []
    for depth in (30, 50, 100):
        for norm, dense_norm in (("minmax", None), ("max", None), ("z", None), ("max", "raw"), ("minmax", "raw")):
            for alpha in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
                for id_bonus in (0.0, 0.2, 0.5, 1.0):
                    out.append(score_config(alpha, norm, id_bonus, depth, dense_norm))
    return out


def sweep(sets: list[QuerySet], corpora: dict[str, Corpus], configs: list[Config], top: int = 15) -> str:
    """Each config's headline on every tuning set with answers, against the RRF ranking the grid was run to
    replace (`RRF_LIBRARY`); ranked by the mean gain, among configs that lose at most a point on no set."""
    tuning = [s for s in sets if s.split == "tuning" and not s.queries[0].negative]
    base = {s.name: headline(s, evaluate(s, corpora, RRF_LIBRARY)) for s in tuning}
    scored = []
    for cfg in configs:
        h = {s.name: headline(s, evaluate(s, corpora, cfg)) for s in tuning}
        gain = sum(h[n] - base[n] for n in h) / len(h)
        worst = min(h[n] - base[n] for n in h)
        scored.append((worst >= -0.01, gain, cfg.name, h))
    scored.sort(key=lambda x: (not x[0], -x[1]))
    names = [s.name for s in tuning]
    out = "| config | mean gain | " + " | ".join(names) + " |\n|---|---|" + "---|" * len(names) + "\n"
    out += "| RRF before the port (rrf 0.3, d=30) | – | " + " | ".join(f"{100 * base[n]:.1f}" for n in names) + " |\n"
    for ok, gain, name, h in scored[:top]:
        out += (f"| {name}{'' if ok else ' (loses > 1 pt somewhere)'} | {100 * gain:+.1f} | "
                + " | ".join(f"{100 * h[n]:.1f}" for n in names) + " |\n")
    return out


@dataclass(frozen=True)
class Variant:
    """One way to build every query's pool again (`variants_table`); the defaults are the engine's."""
    name: str
    keys: tuple[str, ...] = ("turn",)        # the vectors the dense leg scores a row by (best of)
    prf: tuple[int, float] | None = None     # (m, beta): the query vector moved towards the first ranking's top m
    bm25: tuple[float, float] | None = None  # (k1, b) instead of the engine's (`lexical.K1`, `lexical.B`)
    mask: float | None = None                # each row's cosine averaged with its cosine to the query without
                                             # its words of idf >= mask (what BM25 matches: names, identifiers)
    dates: str = "month"                     # the turn's date in BM25's documents (`lexical.month_words`)
    meaning: tuple[float, float, int, bool] | None = None  # BM25 also asks for the corpus's words nearest each
                                             # query word: (min cosine, weight, words per word (0: every one
                                             # of the nearest 10), only for query words the corpus lacks)
                                             # (`levers.MeaningTerms`)
    thesaurus: str = ""                      # those words from the embedder's word list (`levers.Thesaurus`):
                                             # "present" the nearest the memory has, "any" the nearest,
                                             # "listed" the nearest of query words on the list only (a table)


def lab_variants(corpora: dict[str, Corpus], models, keys: str | None, bm25: bool, masked: bool,
                 dates: bool = False, meaning: bool = False) -> list[Variant]:  # fmt: skip
    """The variants `--keys` (dense keys per passage, and dense pseudo-relevance feedback), `--bm25-grid`,
    `--masked`, `--dates` (the turn's date in BM25: none, as before analyzer version 3, or with the day) and
    `--meaning` (BM25 also asks for the words nearest the query's in the embedder's space: the corpus's own,
    or the embedder's word list, `levers.Thesaurus`) compare with the engine. Vector keys are sums of vectors the corpus has
    (`levers.neighbour_vectors`); `--keys texts` adds the previous and own turn embedded together ("prev")."""
    from . import levers

    out = [Variant("the engine")]
    if keys:
        for before, after in ((0.5, 0.0), (1.0, 0.0), (0.5, 0.5)):
            key = f"sum {before:g}/{after:g}"
            for c in corpora.values():
                c.add_vectors(key, levers.neighbour_vectors(c, before, after))
            out += [Variant(f"max(turn, {key})", ("turn", key)), Variant(f"{key} alone", (key,))]
        out += [Variant(f"prf top {m}, beta {b:g}", prf=(m, b)) for m, b in ((3, 0.3), (3, 0.6), (1, 0.5))]
    if keys == "texts":
        for c in corpora.values():
            c.add_keys("prev", levers.key_texts(c, "prev"), models)
        out += [Variant("max(turn, prev text)", ("turn", "prev")), Variant("prev text alone", ("prev",))]
    if bm25:
        out += [Variant(f"bm25 k1 {k1:g} b {b:g}", bm25=(k1, b))
                for k1, b in ((1.2, 0.5), (1.2, 0.3), (1.2, 0.9), (0.9, 0.5), (1.6, 0.5))]
    if masked:
        out += [Variant(f"mean with masked query, idf >= {t:g}", mask=t) for t in (3.0, 4.0, 5.0)]
    if dates:
        out += [Variant("no date in BM25", dates="none"), Variant("day, month and year in BM25", dates="day")]
    if meaning:
        out += [Variant(f"words by meaning, cos >= {t:g}, weight {w:g}, {m} each{', absent words' if a else ''}",
                        meaning=(t, w, m, a))
                for t, w, m, a in ((0.6, 0.5, 3, False), (0.5, 0.5, 3, False), (0.6, 0.3, 3, False),
                                   (0.5, 0.5, 3, True))]  # fmt: skip
        out += [Variant(f"thesaurus, cos >= {t:g}, weight {w:g}, {m} each", meaning=(t, w, m, False), thesaurus="present")
                for t, w, m in ((0.7, 0.5, 3), (0.6, 0.5, 3), (0.5, 0.5, 3), (0.6, 0.3, 3))]
        out += [Variant("thesaurus, cos >= 0.5, weight 0.5, 3 each, had or not", meaning=(0.5, 0.5, 3, False),
                        thesaurus="any")]
        out += [Variant(f"thesaurus, cos >= {t:g}, weight {w:g}, all of the nearest 10", meaning=(t, w, 0, False),
                        thesaurus="any")
                for t, w in ((0.5, 0.5), (0.55, 0.5), (0.5, 0.4))]
        # The kept form (`thesaurus.rs`): a table per model, so only the query's words on the list expand.
        out += [Variant(f"thesaurus table, cos >= {t:g}, weight {w:g}, all of the nearest 10", meaning=(t, w, 0, False),
                        thesaurus="listed")
                for t, w in ((0.5, 0.5), (0.55, 0.5))]
    return out


def masked_query(corpus: Corpus, query: str, min_idf: float) -> str:
    """The query without its words that hold a term of idf >= `min_idf` or an identifier (the query itself
    when nothing else is left)."""
    ids = set(lexical.id_terms(query))
    kept = [w for w in query.split() if not any(i in ids for i in lexical.id_terms(w))
            and not any(corpus.bm25.idf(t) >= min_idf for t in lexical.analyse(w) if t in corpus.bm25.postings)]  # fmt: skip
    return " ".join(kept) or query


def variants_table(sets: list[QuerySet], corpora: dict[str, Corpus], variants: list[Variant], cfg: Config,
                   models) -> tuple[str, list[dict]]:  # fmt: skip
    """`table` with one column per variant: every pool built again as the variant says, ranked by `cfg`."""
    from . import levers

    scores = {id(q): corpora[corpus_of(qs, q)].bm25_scores(q.text) for qs in sets for q in qs.queries}
    near: dict[str, levers.MeaningTerms] = {}
    if any(v.meaning for v in variants):
        from .corpus import embed_cached

        words = list(dict.fromkeys(w for qs in sets for q in qs.queries for w in levers.words_of(q.text)))
        word_vectors = dict(zip(words, embed_cached(models, words, "query-words"), strict=True))
        near = {key: levers.MeaningTerms(c, models, word_vectors) for key, c in corpora.items()}
        thesaurus = levers.Thesaurus(models, word_vectors, Path(models.embedder_dir) / "tokenizer.json")

    def pool(qs: QuerySet, q, v, var: Variant, mv) -> fusion.Pool:
        c = corpora[corpus_of(qs, q)]
        k1, b = var.bm25 or (None, None)
        bm = scores[id(q)] if var.bm25 is None and var.dates == "month" else c.bm25_scores(q.text, var.dates, k1, b)
        if var.meaning is not None:
            extra = (thesaurus.extra(c, q.text, *var.meaning, present_only=var.thesaurus == "present",
                                     listed_only=var.thesaurus == "listed") if var.thesaurus
                     else near[corpus_of(qs, q)].extra(q.text, *var.meaning))  # fmt: skip
            bm = c.bm25.scores(q.text, extra=extra)   # these near words instead of the table's
        p = build_pool(c, q.text, v, qs.now, keys=var.keys, scores=bm)
        if var.prf is not None:   # pseudo-relevance feedback on the dense leg
            top = rank(qs, p, cfg, c)[:var.prf[0]]
            p = build_pool(c, q.text, levers.rocchio(c, v, top, var.prf[1]), qs.now, keys=var.keys, scores=bm)
        if mv is not None:        # each candidate's cosine averaged with its cosine to the masked query
            masked = c.cosines(mv)
            cos = {r: (x + float(masked[r])) / 2 for r, x in p.cos.items()}
            dense = sorted(((r, cos[r]) for r, _ in p.dense), key=lambda x: (-x[1], x[0]))
            p = fusion.Pool(dense, p.bm25, cos, p.bm, p.id_count, p.wanted, p.age_days, p.chunk_id, p.near_day)
        return p

    head = "| set | split | " + " | ".join(v.name for v in variants) + " |\n|---|---|" + "---|" * len(variants) + "\n"
    cells: dict[str, list[str]] = {qs.name: [] for qs in sets}
    rows = []
    for var in variants:
        for qs in sets:
            assert qs.vectors is not None
            masked = [None] * len(qs.queries)
            if var.mask is not None:
                masked = list(models.embed_queries([masked_query(corpora[corpus_of(qs, q)], q.text, var.mask)
                                                    for q in qs.queries]))  # fmt: skip
            pools = [pool(qs, q, v, var, mv) for q, v, mv in zip(qs.queries, qs.vectors, masked, strict=True)]
            r = evaluate(replace(qs, pools=pools), corpora, cfg)
            rows.append({"set": qs.name, "split": qs.split, "variant": var.name, **r})
            cells[qs.name].append(cell(qs, r))
        print(f"{var.name}: done", file=sys.stderr, flush=True)
    body = "".join(f"| {qs.name} | {qs.split} | " + " | ".join(cells[qs.name]) + " |\n" for qs in sets)
    return head + body, rows


def check_engine(sets: list[QuerySet], corpora: dict[str, Corpus], models, limit: int = 100) -> str:
    """How often the lab's reproduction of the engine's ranking (`ENGINE`: score fusion) equals the engine's
    own answer (the same turns in the same order), and how much the legs' top 30 overlap, per set."""
    engines: dict[str, object] = {}

    def engine(corpus: str):
        if corpus not in engines:
            engines[corpus] = open_engine(corpus, models)
        return engines[corpus]

    out = "| set | same top k | dense top 30 overlap | bm25 top 30 overlap |\n|---|---|---|---|\n"
    for qs in sets:
        if qs.queries[0].negative:
            continue
        same = dense = bm25 = 0
        pairs = list(zip(qs.queries, qs.pools, strict=True))[:limit]
        for q, pool in pairs:
            c = corpus_of(qs, q)
            rows, eng = corpora[c].rows, engine(c)
            k = 10 if qs.corpus == "locomo" else 8
            hl = 0.0 if qs.corpus == "locomo" else 30.0
            lab = [rows[r].turn_uuid for r in rank(qs, pool, ENGINE, corpora[c])]
            got = [h.turn_uuid for h in eng.recall(q.text, k=k, neighbors=0, half_life_days=hl, now=qs.now)]
            same += lab == got
            for leg, store in (("dense", pool.dense), ("bm25", pool.bm25)):
                theirs = {h.turn_uuid for h in eng.recall(q.text, k=30, candidates=30, neighbors=0,
                                                          half_life_days=0.0, legs=leg, keep_repeats=True)}  # fmt: skip
                mine = {rows[r].turn_uuid for r, _ in store[:30]}
                share = len(theirs & mine) / max(1, len(mine))
                dense, bm25 = (dense + share, bm25) if leg == "dense" else (dense, bm25 + share)
        n = len(pairs)
        out += f"| {qs.name} | {100 * same / n:.0f}% | {100 * dense / n:.1f}% | {100 * bm25 / n:.1f}% |\n"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benches.lab.fusion_lab", description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1000])
    ap.add_argument("--no-locomo", action="store_true")
    ap.add_argument("--embedder", help="model for the lab's vectors (default: the library's)")
    ap.add_argument("--check-engine", action="store_true", help="compare the lab's legs and ranking with the engine's")
    ap.add_argument("--sweep", action="store_true", help="the score-fusion grid on the tuning sets")
    ap.add_argument("--levers", action="store_true", help="session cap, second hop, per-query dense weight")
    ap.add_argument("--keys", choices=("vectors", "texts"), help="the dense leg over more keys per passage "
                    "(vectors: sums of neighbours' vectors; texts: also the previous turn embedded with it) and "
                    "dense pseudo-relevance feedback")
    ap.add_argument("--bm25-grid", action="store_true", help="BM25's k1 and b")
    ap.add_argument("--masked", action="store_true", help="cosines averaged with the query's without its rare words")
    ap.add_argument("--dates", action="store_true", help="the turn's date in BM25's documents: none, or with the day")
    ap.add_argument("--meaning", action="store_true", help="BM25 also asks for the corpus's words nearest the query's")
    ap.add_argument("--lance", action="store_true", help="the proposal on the Lance path (rows outside BM25's list score 0)")
    ap.add_argument("--embed-alone", action="store_true", help="the lab's vectors with each passage embedded alone "
                    "(the int8 model's vectors depend on their batch-mates)")
    ap.add_argument("--source", choices=("lab", "engine"), default="lab",
                    help="dense leg from the lab's vectors (embeds each corpus once) or the engine's memory")
    args = ap.parse_args(argv)
    lab_corpus.EMBED_ALONE = args.embed_alone
    from funes_py import Models

    models = Models.load(embedder=args.embedder) if args.embedder else Models.load()
    sets, corpora = load(args.n, models, locomo=not args.no_locomo, source=args.source)
    if args.check_engine:
        print(check_engine(sets, corpora, models))
        return 0
    if args.sweep:
        print(sweep(sets, corpora, grid()))
        return 0
    if args.keys or args.bm25_grid or args.masked or args.dates or args.meaning:
        if args.source != "lab":
            ap.error("--keys, --bm25-grid, --masked, --dates and --meaning need --source lab (the lab's vectors and BM25)")
        variants = lab_variants(corpora, models, args.keys, args.bm25_grid, args.masked, args.dates, args.meaning)
        md, rows = variants_table(sets, corpora, variants, ENGINE, models)
        print(md)
        LAB_OUT.mkdir(parents=True, exist_ok=True)
        (LAB_OUT / "variants-results.json").write_text(json.dumps(rows, indent=1))
        return 0
    configs = lever_configs() if args.levers else [NAMED[1], LANCE] if args.lance else NAMED
    md, rows = table(sets, corpora, configs)
    print(md)
    LAB_OUT.mkdir(parents=True, exist_ok=True)
    (LAB_OUT / "lab-results.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
