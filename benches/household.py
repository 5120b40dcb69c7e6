"""A second, independent synthetic history: one parent's conversations about family logistics (held out).

    h = generate(1000, seed=7)
    write_history(h, "benches/out/household-1000-s7")
    python -m benches.household --n 1000 --seed 7

Written apart from `benches.history` (an operations lead) to report on what was not tuned on: another
domain, other templates (`vocab.household`), entities that are street addresses ("14 Alder Close") and
people's full names instead of coded identifiers, four other fact kinds, evenings and weekends of another
year, and conversations of six or eight messages.

| kind | key (must be matched) | answer |
|---|---|---|
| repair | address + problem ("blocked drain") | the tradesperson's full name |
| bill | address + bill ("council tax") | an amount, "£412.37" |
| booking | person + booking ("ferry crossing") | a confirmation code, "QX7R2M" |
| venue | person + occasion ("retirement do") | a venue, "Copper Kettle Inn" |

Each question has three phrasings: `long` (close: the fact's stems), `short` (keywords), `reworded`
(synonyms and another sentence shape; no content word of the fact's own turns). `unanswerable.jsonl` asks
about addresses and people never mentioned; `ood.jsonl` about things a household never discusses.
`check_household` proves the promises on the text (as `history.check_history` does). Everything random comes
from one `random.Random(seed)`.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

from .history import History, _cap, _Deck, _free_attr, _iso, _write_jsonl
from .metrics import answer_pattern, boundary_regex
from .reworded import content_stems, stem, template_words
from .vocab import household as V

KINDS = ("repair", "bill", "booking", "venue")
TABLES = {"repair": V.REPAIRS, "bill": V.BILLS, "booking": V.BOOKINGS, "venue": V.OCCASIONS}
ON_ADDRESS = ("repair", "bill")            # the other two kinds are about a person
MENTIONS_PER_ENTITY = 6
PERSON_CHATTER_SHARE = 0.5                 # conversations with a fourth exchange (eight messages)
HISTORY_START = datetime(2024, 9, 2, tzinfo=timezone.utc)
HISTORY_END = datetime(2025, 8, 29, tzinfo=timezone.utc)
EVENING_START_S = 18 * 3600 + 30 * 60      # conversations start between 18:30 and 22:30 UTC
EVENING_S = 4 * 3600
HARNESSES = ("claude-ios", "claude-web", "claude-web")
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
NO_SYNONYM = ()                            # reworded household questions reuse no stored content word


def generate(n_conversations: int, seed: int = 7, n_questions: int = 100) -> History:
    """A household history of `n_conversations` conversations with `n_questions` answerable questions
    (long, short and reworded phrasings) and as many unanswerable ones. Same arguments, same history."""
    if n_conversations < n_questions or n_questions < len(KINDS):
        raise ValueError(f"need n_conversations >= n_questions >= 4, got {n_conversations}, {n_questions}")
    h = _Builder(n_conversations, seed, n_questions).build()
    check_household(h)
    return h


def _addresses(rng: random.Random, count: int) -> list[str]:
    """`count` addresses, about eight per street, house numbers drawn from a range twice as large, so a
    street holds near twins (4 and 14 Alder Close)."""
    streets = [f"{s} {k}" for s in V.STREETS for k in V.STREET_KINDS]
    n_streets = min(len(streets), max(6, math.ceil(count / 8)))
    chosen = rng.sample(streets, n_streets)
    per = [count // n_streets + (i < count % n_streets) for i in range(n_streets)]
    out = []
    for street, c in zip(chosen, per, strict=True):
        out += [f"{num} {street}" for num in sorted(rng.sample(range(1, 2 * c + 3), c))]
    return out


def _code(rng: random.Random) -> str:
    while True:
        code = "".join(rng.choices(CODE_ALPHABET, k=6))
        if sum(c.isdigit() for c in code) >= 2 and any(c.isalpha() for c in code):
            return code


class _Builder:
    def __init__(self, n: int, seed: int, n_questions: int):
        self.n, self.seed, self.nq = n, seed, n_questions
        self.rng = random.Random(seed)

    def build(self) -> History:
        rng, n = self.rng, self.n
        self.kinds = [KINDS[i % 4] for i in range(n)]
        rng.shuffle(self.kinds)
        per_kind = [self.nq // 4 + (k < self.nq % 4) for k in range(4)]
        self.asked: set[int] = set()
        for kind, count in zip(KINDS, per_kind, strict=True):
            self.asked.update(rng.sample([i for i, k in enumerate(self.kinds) if k == kind], count))
        self.person_chatter = [rng.random() < PERSON_CHATTER_SHARE for _ in range(n)]
        self._make_entities()
        self._deal()
        self._make_facts()
        conversations = [self._render(i) for i in range(n)]
        questions = [self._question(q, i) for q, i in enumerate(sorted(self.asked))]
        stats = {"addresses": len(self.addresses), "people": len(self.people)}
        h = History(n, self.seed, conversations, self.facts, questions, self._unanswerable(), stats)
        h.ood = [{"qid": f"o-{i + 1:03d}", "question": t, "absent": list(a)} for i, (t, a) in enumerate(V.OOD)]
        return h

    def _make_entities(self) -> None:
        rng, n = self.rng, self.n
        count = {k: self.kinds.count(k) for k in KINDS}
        a = math.ceil((count["repair"] + count["bill"] + n) / MENTIONS_PER_ENTITY)
        p = math.ceil((count["booking"] + count["venue"] + sum(self.person_chatter)) / MENTIONS_PER_ENTITY)
        names = [f"{f} {last}" for f in V.PEOPLE_FIRST for last in V.PEOPLE_LAST]
        if p + 100 > len(names):  # past ~20,000 conversations: middle initials (smaller histories unchanged)
            names += [f"{f} {c}. {last}" for f in V.PEOPLE_FIRST for c in "ABDEJKMRST" for last in V.PEOPLE_LAST]
        if p + 100 > len(names):
            raise ValueError(f"{n} conversations need {p} people; the name lists hold {len(names)}")
        pool = rng.sample(names, p + 100)   # 100 kept back: people never mentioned (unanswerable questions)
        self.people, self.absent_people = pool[:p], pool[p:]
        pool = _addresses(rng, a + 100)
        rng.shuffle(pool)
        self.addresses, self.absent_addresses = sorted(pool[:a]), pool[a:]

    def _deal(self) -> None:
        addrs, people = _Deck(self.addresses, self.rng), _Deck(self.people, self.rng)
        self.ent = []
        for i, kind in enumerate(self.kinds):
            fact = addrs.draw() if kind in ON_ADDRESS else people.draw()
            addr = addrs.draw({fact})
            person = people.draw({fact}) if self.person_chatter[i] else None
            self.ent.append({"fact": fact, "addr": addr, "person": person})

    def _make_facts(self) -> None:
        rng = self.rng
        asked = sorted(self.asked)
        trades = [f"{f} {last}" for f in V.TRADE_FIRST for last in V.TRADE_LAST]
        venues = [f"{a} {b}" + (f" {k}" if k else "") for a in V.VENUE_ADJ for b in V.VENUE_NOUN for k in V.VENUE_KIND
                  if a != b]  # fmt: skip
        reserved = {"repair": rng.sample(trades, 25), "venue": rng.sample(venues, 25)}
        # A reserved venue's first two words are kept out of every other venue: "Blue Pheasant" would also
        # match inside "Blue Pheasant Inn".
        held = {" ".join(x.split()[:2]) for x in reserved["venue"]} | set(reserved["repair"])
        free = {"repair": [t for t in trades if t not in held],
                "venue": [v for v in venues if " ".join(v.split()[:2]) not in held]}
        used_codes: set[str] = set()
        used_amounts: set[str] = set()
        self.keys: dict[tuple, int] = {}
        self.facts = []
        for i, kind in enumerate(self.kinds):
            eid = self.ent[i]["fact"]
            attr = _free_attr(rng, 12, self.keys, kind, eid)
            if kind in reserved:
                answer = reserved[kind].pop() if i in self.asked and reserved[kind] else rng.choice(free[kind])
            elif kind == "bill":
                answer = self._fresh(used_amounts, lambda: f"£{rng.randrange(25, 2000)}.{rng.randrange(100):02d}")
            else:
                answer = self._fresh(used_codes, lambda: _code(rng))
            self.keys[(kind, eid, attr)] = i
            self.facts.append({"kind": kind, "id": eid, "attr": attr, "topic": TABLES[kind][attr][0], "answer": answer})
        self.asked_order = asked

    @staticmethod
    def _fresh(used: set[str], draw) -> str:
        while True:
            x = draw()
            if x not in used:
                used.add(x)
                return x

    # -----------------------------------------------------------------------------------------------

    def _render(self, i: int) -> list[dict]:
        rng, e, f = self.rng, self.ent[i], self.facts[i]
        d = {"kid": rng.choice(V.KIDS), "kid2": rng.choice(V.KIDS), "partner": V.PARTNERS[0],
             "pet": rng.choice(V.PETS), "dish": rng.choice(V.DISHES), "show": rng.choice(V.SHOWS)}
        start = self._start_s(i)
        small = (rng.choice(V.GREETINGS) + rng.choice(V.SMALLTALK).format(**d), rng.choice(V.SMALLTALK_REPLY))
        exchanges = [small, self._chatter_addr(e["addr"])]
        if e["person"]:
            exchanges.append(self._chatter_person(e["person"]))
        fact = self._fact(f, d)
        at = rng.choice((len(exchanges), len(exchanges), len(exchanges), 1, 2))   # usually last
        exchanges.insert(at, fact)
        session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        harness = rng.choice(HARNESSES)
        msgs, t = [], start
        for u, a in exchanges:
            for role, text in (("user", u), ("assistant", a)):
                msgs.append({"session_id": session, "turn_uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                             "seq": len(msgs), "ts": _iso(t), "role": role, "harness": harness,
                             "blocks": [{"block_type": "text", "text": text}]})  # fmt: skip
                t += rng.randint(15, 80) if role == "user" else rng.randint(30, 300)
        f.update(session_id=session, turn_uuid=msgs[2 * at]["turn_uuid"])
        if i in self.asked:
            pattern = answer_pattern(f["answer"])
            f["evidence_turns"] = [m["turn_uuid"] for m in msgs if pattern.search(m["blocks"][0]["text"])]
        return msgs

    def _chatter_addr(self, addr: str) -> tuple[str, str]:
        rng = self.rng
        bill = V.BILLS[_free_attr(rng, 12, self.keys, "bill", addr)][0]
        repair = V.REPAIRS[_free_attr(rng, 12, self.keys, "repair", addr)][0]
        text = rng.choice(V.CHATTER_ADDR).format(addr=addr, bill=bill, repair=repair)
        return text, rng.choice(V.CHATTER_REPLY)

    def _chatter_person(self, person: str) -> tuple[str, str]:
        rng = self.rng
        booking = V.BOOKINGS[_free_attr(rng, 12, self.keys, "booking", person)][0]
        occasion = V.OCCASIONS[_free_attr(rng, 12, self.keys, "venue", person)][0]
        text = rng.choice(V.CHATTER_PERSON).format(person=person, booking=booking, occasion=occasion)
        return text, rng.choice(V.CHATTER_REPLY)

    def _fact(self, f: dict, d: dict) -> tuple[str, str]:
        rng, kind = self.rng, f["kind"]
        slots = {**d, "topic": f["topic"], "addr": f["id"], "person": f["id"], "name": f["answer"],
                 "amount": f["answer"], "code": f["answer"], "venue": f["answer"]}
        lead = rng.choice(V.FACT_LEADS)
        body = rng.choice(V.FACTS[kind]).format(**slots)
        user = (lead + (body if lead else _cap(body)) + " " + rng.choice(V.FACT_TAILS).format(**slots)).strip()
        return user, rng.choice(V.FACT_ACKS[kind]).format(**slots)

    def _start_s(self, i: int) -> int:
        days = (HISTORY_END - HISTORY_START).days
        w = int(days * EVENING_S * (i + 0.6 * self.rng.random()) / self.n)
        day, second = divmod(w, EVENING_S)
        return int(HISTORY_START.timestamp()) + day * 86400 + EVENING_START_S + second

    # -----------------------------------------------------------------------------------------------

    def _phrasings(self, kind: str, eid: str, attr: int) -> dict:
        row = TABLES[kind][attr]
        who = {"addr": eid, "person": eid}
        return {"long": self.rng.choice(V.LONG_Q[kind]).format(close=row[1], **who),
                "short": V.SHORT_Q[kind].format(kw=row[2], **who),
                "reworded": self.rng.choice(V.REWORDED_Q[kind]).format(rw=self.rng.choice(row[3:5]), **who)}

    def _question(self, q: int, i: int) -> dict:
        f = self.facts[i]
        return {"qid": f"q-{q + 1:03d}", "kind": f["kind"], "answer": f["answer"], "session_id": f["session_id"],
                "turn_uuid": f["turn_uuid"], "evidence_turns": f["evidence_turns"],
                **self._phrasings(f["kind"], f["id"], f["attr"]), "key": {"id": f["id"], "topic": f["topic"]}}

    def _unanswerable(self) -> list[dict]:
        out = []
        addrs, people = iter(self.absent_addresses), iter(self.absent_people)
        for k in range(self.nq):
            kind = KINDS[k % 4]
            eid = next(addrs) if kind in ON_ADDRESS else next(people)
            p = self._phrasings(kind, eid, self.rng.randrange(12))
            out.append({"qid": f"u-{k + 1:03d}", "kind": kind, **p, "absent": [eid]})
        return out


# ---------------------------------------------------------------------------------------------------
# The promises, checked on the text itself

def _mentions(text: str, row: tuple) -> bool:
    low = text.lower()
    return any(p.lower() in low for p in row[:2])


def check_household(h: History) -> None:
    """Raise ValueError unless: each question's answer appears (whole token, any case) in exactly its own
    conversation; its key (address or person + topic) is one fact, said together in one message of that
    conversation only; its reworded phrasing names the key, not the answer, and shares no content stem with
    the turns that state the fact; no unanswerable question's address or person and no out-of-domain term
    appears anywhere."""
    texts = [[m["blocks"][0]["text"] for m in conv] for conv in h.conversations]
    joined = ["\n".join(t) for t in texts]
    home = {conv[0]["session_id"]: c for c, conv in enumerate(h.conversations)}
    keys: dict[tuple, int] = {}
    for f in h.facts:
        keys[(f["kind"], f["id"], f["attr"])] = keys.get((f["kind"], f["id"], f["attr"]), 0) + 1
    problems = []
    answers = boundary_regex([q["answer"] for q in h.questions] + [q["key"]["id"] for q in h.questions])
    where: dict[str, list[int]] = {}
    for c, text in enumerate(joined):
        for found in sorted({m.group(0).lower() for m in answers.finditer(text)}):
            where.setdefault(" ".join(found.split()), []).append(c)
    for q in h.questions:
        own = home[q["session_id"]]
        if where.get(q["answer"].lower(), []) != [own]:
            problems.append(f"{q['qid']}: answer {q['answer']!r} in conversations {where.get(q['answer'].lower())}")
        table = TABLES[q["kind"]]
        attr = [r[0] for r in table].index(q["key"]["topic"])
        if keys.get((q["kind"], q["key"]["id"], attr)) != 1:
            problems.append(f"{q['qid']}: key {q['key']} is not exactly one fact")
        pat = answer_pattern(q["key"]["id"])
        together = [c for c in where.get(q["key"]["id"].lower(), [])
                    if any(pat.search(t) and _mentions(t, table[attr]) for t in texts[c])]
        if together != [own]:
            problems.append(f"{q['qid']}: key {q['key']} said together in conversations {together}")
        problems += _reworded_problems(q, h.conversations[own])
    absent = [a for u in h.unanswerable for a in u["absent"]] + [t for o in getattr(h, "ood", []) for t in o["absent"]]
    if absent:
        pattern = boundary_regex(absent)
        for c, text in enumerate(joined):
            found = pattern.search(text)
            if found:
                problems.append(f"absent term {found.group(0)!r} appears in conversation {c}")
    if problems:
        raise ValueError("household history broke its promises:\n  " + "\n  ".join(problems[:20]))


def _reworded_problems(q: dict, conv: list[dict]) -> list[str]:
    text, key = q["reworded"], q["key"]["id"]
    out = []
    if not answer_pattern(key).search(text) or answer_pattern(q["answer"]).search(text):
        out.append(f"{q['qid']}: reworded question must name {key} and not the answer: {text!r}")
    stated = " ".join(m["blocks"][0]["text"] for m in conv
                      if m["turn_uuid"] == q["turn_uuid"] or m["turn_uuid"] in q["evidence_turns"])
    ignore = key.split() + q["answer"].split()
    shared = content_stems(text, ignore) & content_stems(stated, ignore) - {stem(w) for w in NO_SYNONYM}
    if shared:
        out.append(f"{q['qid']}: reworded question reuses {sorted(shared)}: {text!r}")
    return out


def vocab_overlaps() -> list[str]:
    """The reworded promise at the level of the word lists, for every seed at once: no reworded template or
    phrase shares a content stem with any wording its kind's facts can be stated in (fact templates, echoes,
    lead-ins, tails, the topic's own phrase). Returns the offending pairs (empty when kept)."""
    common = template_words(V.FACT_LEADS + V.FACT_TAILS)
    problems = []
    for kind, table in TABLES.items():
        stored = common | template_words(V.FACTS[kind] + V.FACT_ACKS[kind])
        problems += [f"{kind} template {t!r} reuses {sorted(template_words([t]) & stored)}"
                     for t in V.REWORDED_Q[kind] if template_words([t]) & stored]
        for row in table:
            own = stored | content_stems(row[0])
            problems += [f"{kind} phrase {p!r} reuses {sorted(content_stems(p) & own)} of {row[0]!r}"
                         for p in row[3:5] if content_stems(p) & own]
    return problems


# ---------------------------------------------------------------------------------------------------

def write_history(h: History, out_dir) -> Path:
    """Like `history.write_history`, plus ood.jsonl: src/conv-*.funes.jsonl, questions.jsonl (long, short,
    reworded), unanswerable.jsonl, ood.jsonl, facts.jsonl, manifest.json."""
    out = Path(out_dir)
    src = out / "src"
    src.mkdir(parents=True, exist_ok=True)
    for old in src.glob("conv-*.funes.jsonl"):
        old.unlink()
    for i, conv in enumerate(h.conversations, 1):
        _write_jsonl(src / f"conv-{i:05d}.funes.jsonl", conv)
    for name, rows in (("questions", h.questions), ("unanswerable", h.unanswerable), ("ood", h.ood),
                       ("facts", h.facts)):  # fmt: skip
        _write_jsonl(out / f"{name}.jsonl", rows)
    manifest = {"generator": "benches.household", "n_conversations": h.n_conversations, "seed": h.seed,
                "questions": len(h.questions), "unanswerable": len(h.unanswerable), "ood": len(h.ood), **h.stats}
    (out / "manifest.json").write_text(__import__("json").dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benches.household", description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="conversations (default 1000)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", help="output directory (default benches/out/household-N-sSEED)")
    args = ap.parse_args(argv)
    out = args.out or str(Path(__file__).parent / "out" / f"household-{args.n}-s{args.seed}")
    t0 = time.perf_counter()
    h = generate(args.n, args.seed)
    write_history(h, out)
    print(f"{args.n} conversations, {h.stats}; {time.perf_counter() - t0:.2f}s", file=sys.stderr)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
