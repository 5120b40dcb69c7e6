"""Questions as users ask them: reworded questions and out-of-domain negatives for a generated history.

    h = history.generate(1000, seed=7)
    sets = reworded.build(h)              # {"reworded": [...], "ood": [...]}, checked by check_reworded
    reworded.write(sets, root)            # root/reworded.jsonl, root/ood.jsonl

`benches.history` asks each fact in close wording (`long`: a paraphrase that keeps the stems, "leaking seal"
for "seal leak") and as keywords (`short`). Users say "a weeping gasket" and "the last quality gate before
dispatch". `build` asks the same 100 facts again with synonyms and restructured sentences
(`vocab.reworded`), and adds negatives about things the history never discusses (a dentist, a lease, the
holiday party). It draws from its own `random.Random`, seeded from the history's seed, so the history's own
bytes (and `tests/test_bench_generator.py`) are untouched.

`check_reworded` proves the promises on the text: each reworded question names its key's identifier, does
not contain its answer, and shares no content word (after `stem`) with the fact's own turns except
identifiers and `vocab.reworded.NO_SYNONYM`; no out-of-domain term appears in any conversation.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from .metrics import answer_pattern, boundary_regex
from .vocab import en as V
from .vocab import reworded as R

_PHRASES = {"ticket": R.SYMPTOMS_R, "rate": R.CHECKS_R, "owner": R.JOBS_R, "decision": R.PROJECTS_R}
_TOPIC_ROWS = {"ticket": V.SYMPTOMS, "rate": V.CHECKS, "owner": V.JOBS, "decision": V.PROJECTS}
_SLOT = {"ticket": "rsym", "rate": "rcheck", "owner": "rjob", "decision": "rproj"}
_ID_SLOT = {"ticket": "mid", "rate": "line", "owner": "site", "decision": "site"}

# Function words and question words: what is left of a sentence after them is its content. Kept short on
# purpose: a word missing here only makes the "no shared content word" promise stricter.
STOP = frozenset("""
a about after again all also am an and any are as at back be been before being but by can could did do does
doing done for from get go goes going gone got had has have having he her here him his how i if in into is it
its itself just me mean more most my no not now of off on once one or our out over please remind so some
that the their them then there these they this those to too up us very was we were what what's when where
which while who who's whom whose why will with would you your i'm it's that's there's we're don't didn't
won't can't isn't let's give way point
""".split())
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_SUFFIXES = ("ations", "ation", "ings", "ing", "edly", "ies", "ied", "ed", "es", "ly", "s")


def stem(word: str) -> str:
    """A crude stem for the overlap promise: lower case, no possessive, one common suffix off. It conflates
    more than a real stemmer would ("leaking", "leaked", "leaks" -> "leak"), which is the safe direction."""
    w = word.lower()
    if w.endswith("'s"):
        w = w[:-2]
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "ls":   # "dropped" -> "dropp" -> "drop"
        w = w[:-1]
    return w.rstrip("e") if len(w) > 4 else w


def content_stems(text: str, ignore=()) -> set[str]:
    """Stems of the content words of `text`: words of three letters or more that are not in STOP, nor in
    `ignore` (identifiers, compared lower-cased)."""
    low = text.lower()
    skip = {x.lower() for x in ignore}
    words = [w[:-2] if w.endswith("'s") else w for w in _WORD.findall(low) if w not in STOP]
    return {stem(w) for w in words if len(w) >= 3 and w not in skip}


def _rng(seed: int, what: str) -> random.Random:
    """An rng of its own per set (a str seed hashes with sha512: the same on every run and machine)."""
    return random.Random(f"benches.reworded:{what}:{seed}")


def reworded_questions(h) -> list[dict]:
    """One reworded question per question of `h`, same qid order (`r-001` asks what `q-001` asks)."""
    rng = _rng(h.seed, "reworded")
    fact_by_session = {f["session_id"]: f for f in h.facts if "session_id" in f}
    out = []
    for q in h.questions:
        f = fact_by_session[q["session_id"]]
        kind = q["kind"]
        slots = {_ID_SLOT[kind]: f["id"], _SLOT[kind]: rng.choice(_PHRASES[kind][f["attr"]])}
        text = rng.choice(R.TEMPLATES_R[kind]).format(**slots)
        out.append({"qid": "r" + q["qid"][1:], "source_qid": q["qid"], "kind": kind, "answer": q["answer"],
                    "session_id": q["session_id"], "turn_uuid": q["turn_uuid"],
                    "evidence_turns": q["evidence_turns"], "key": q["key"], "reworded": text})
    return out


def ood_questions(seed: int, table=R.OOD) -> list[dict]:
    """The out-of-domain negatives, in a seeded order: {"qid", "question", "absent": [terms]}."""
    rows = list(table)
    _rng(seed, "ood").shuffle(rows)
    return [{"qid": f"o-{i + 1:03d}", "question": text, "absent": list(terms)} for i, (text, terms) in enumerate(rows)]


def build(h) -> dict[str, list[dict]]:
    """Both sets for history `h`, checked."""
    sets = {"reworded": reworded_questions(h), "ood": ood_questions(h.seed)}
    check_reworded(h, sets["reworded"], sets["ood"])
    return sets


def check_reworded(h, reworded: list[dict], ood: list[dict], no_synonym=R.NO_SYNONYM,
                   text_of=lambda m: m["blocks"][0]["text"]) -> None:  # fmt: skip
    """Raise ValueError unless every reworded question names its key's identifier, does not contain its
    answer, ends with "?" or ".", and shares no content stem with the turns of its own conversation that
    state the fact (the fact turn, and every turn holding the answer) beyond identifiers and `no_synonym`;
    and no out-of-domain question's `absent` terms appear (whole token, any case) in any conversation."""
    by_session = {conv[0]["session_id"]: conv for conv in h.conversations}
    allowed = {stem(w) for w in no_synonym}
    problems = []
    for q in reworded:
        text, key_id = q["reworded"], q["key"]["id"]
        if not answer_pattern(key_id).search(text):
            problems.append(f"{q['qid']}: does not name {key_id}")
        if answer_pattern(q["answer"]).search(text):
            problems.append(f"{q['qid']}: contains its answer {q['answer']!r}")
        if not text.endswith(("?", ".")):
            problems.append(f"{q['qid']}: not a sentence: {text!r}")
        stated = [text_of(m) for m in by_session[q["session_id"]]
                  if m["turn_uuid"] == q["turn_uuid"] or m["turn_uuid"] in q["evidence_turns"]]
        ids = re.findall(r"[\w]+(?:[-.][\w]+)+", " ".join(stated) + " " + text)
        shared = content_stems(text, ids) & content_stems(" ".join(stated), ids)
        if shared - allowed:
            problems.append(f"{q['qid']}: reuses {sorted(shared - allowed)} of the stored wording: {text!r}")
    terms = sorted({t for o in ood for t in o["absent"]})
    if terms:
        pattern = boundary_regex(terms)
        for conv in h.conversations:
            for m in conv:
                found = pattern.search(text_of(m))
                if found:
                    problems.append(f"out-of-domain term {found.group(0)!r} appears in {m['turn_uuid']}")
    if problems:
        raise ValueError("reworded question sets broke their promises:\n  " + "\n  ".join(problems[:20]))


def write(sets: dict[str, list[dict]], root) -> None:
    """root/reworded.jsonl and root/ood.jsonl (written whole, then renamed into place)."""
    for name, rows in sets.items():
        path = Path(root) / f"{name}.jsonl"
        tmp = path.with_suffix(".jsonl.tmp")
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        tmp.replace(path)


def template_words(templates) -> set[str]:
    """Content stems of sentence templates, their {slots} left out."""
    return set().union(*(content_stems(re.sub(r"\{\w+\}", " ", t)) for t in templates)) if templates else set()


def vocab_overlaps() -> list[str]:
    """The promise at the level of the word lists, for every seed at once: no reworded template or phrase
    shares a content stem with any wording a fact of its kind can be stated in (its fact templates, the
    assistant's echoes, the lead-ins and tails around a fact, the topic's own phrase and keyword, and for
    tickets the machine nouns and areas). Returns the offending pairs (empty when kept)."""
    common = template_words(V.FACT_LEADS + V.FACT_TAILS + V.CHATTER_DISTRACTOR)
    allowed = {stem(w) for w in R.NO_SYNONYM}
    extra = {"ticket": template_words(tuple(V.MACHINE_TYPES.values()) + V.AREAS)}
    problems = []
    for kind, phrases in _PHRASES.items():
        stored = common | template_words(V.FACTS[kind] + V.FACT_ACKS[kind]) | extra.get(kind, set())
        problems += [f"{kind} template {t!r} reuses {sorted(template_words([t]) & stored)}"
                     for t in R.TEMPLATES_R[kind] if template_words([t]) & stored]
        for row, alts in zip(_TOPIC_ROWS[kind], phrases, strict=True):
            own = stored | content_stems(row[0]) | content_stems(row[2])
            problems += [f"{kind} phrase {p!r} reuses {sorted(content_stems(p) & own - allowed)} of {row[0]!r}"
                         for p in alts if content_stems(p) & own - allowed]
    return problems
