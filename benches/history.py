"""A deterministic synthetic history: one operations lead's past conversations, each hiding one fact.

    history = generate(1000, seed=7)
    write_history(history, "benches/out/h1000")   # src/conv-00001.funes.jsonl ..., questions.jsonl, ...
    python -m benches.history --n 1000 --seed 7 --out benches/out/h1000

How a history is built (see benches/README.md for the why):
1. Each conversation gets one fact kind (ticket, rate, owner, decision), balanced and shuffled; the
   conversations asked about are chosen up front (their rates are reserved so each is unique).
2. Entities are dealt from decks so every machine, site and line appears in about six conversations:
   in its own facts, in other facts' chatter, or in small talk.
3. Facts get unique keys (machine+symptom, line+check, site+job, site+project) and unique answers.
4. Chatter mentions the same entities with attributes that never form a fact's key.
5. Messages are rendered from `vocab.en` templates; questions and unanswerable questions are phrased;
   `check_history` then proves the promises on the text itself.
Everything random comes from one `random.Random(seed)`; no clock, no global random, no set iteration.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType

from .korean import attach_particles
from .metrics import answer_pattern
from .vocab import en as vocab_en
from .vocab import ko as vocab_ko
from .vocab import mixed as vocab_mixed

KINDS = ("ticket", "rate", "owner", "decision")
MENTIONS_PER_ENTITY = 6          # target conversations per machine, site and line
CHATTER_MACHINES = 2             # machine mentions outside the fact, per conversation
CHATTER_SITES = 1
LINE_CHATTER_SHARE = 0.4         # share of conversations whose chatter names a production line
DISTRACTOR_SHARE = 0.3           # share whose fact message also names an unrelated MT-/DR- number
HISTORY_START = datetime(2025, 12, 1, tzinfo=timezone.utc)
HISTORY_END = datetime(2026, 11, 20, tzinfo=timezone.utc)
WORKDAY_START_S = 7 * 3600 + 30 * 60   # conversations start between 07:30 and 18:30 UTC
WORKDAY_S = 11 * 3600
HARNESSES = ("claude-desktop", "claude-desktop", "claude-web")
RATES = tuple(f"{x / 10:.1f}%" for x in range(4, 150))   # 0.4% .. 14.9%
# Tokens as the token-boundary rule of metrics.hit_at_k sees them: runs of word characters joined by
# "-" or ".", with an optional trailing "%"; a run of Hangul is a token of its own, so a particle attached
# to a code (MT-4471을) leaves the code whole. Used to check answers and absent ids on the text itself.
_TOKEN = re.compile(r"[^\W가-힣]+(?:[-.][^\W가-힣]+)*%?|[가-힣]+")


def _tables(V: ModuleType) -> dict[str, tuple]:
    """kind -> its attribute table (symptoms, checks, jobs, projects)."""
    return {"ticket": V.SYMPTOMS, "rate": V.CHECKS, "owner": V.JOBS, "decision": V.PROJECTS}


@dataclass(frozen=True)
class Lang:
    """What differs between the languages besides the word lists: how a machine is named ("pump P-003",
    "P-003 펌프"), the article before a symptom, the pool of job owners' names, and a last pass over each
    text (Korean particles). English keeps the original generator's behaviour byte for byte."""
    vocab: ModuleType
    machine: Callable[[ModuleType, str], str]
    article: Callable[[str], str]
    owner_names: Callable[[ModuleType, int], list[str]]
    finish: Callable[[str], str]


def _english_names(V: ModuleType, count: int) -> list[str]:
    names = [f"{f} {last}" for f in V.OWNER_FIRST for last in V.OWNER_LAST]
    if count > len(names):   # past ~12,000 conversations: add middle initials
        names += [f"{f} {c}. {last}" for f in V.OWNER_FIRST for c in "ABDEJKMRST" for last in V.OWNER_LAST]
    return names


def _korean_names(V: ModuleType, count: int) -> list[str]:
    names = [last + first for last in V.OWNER_LAST for first in V.OWNER_FIRST]
    if count > len(names):
        raise ValueError(f"the Korean name list holds {len(names)} owners, {count} needed (about 16,000 "
                         "conversations at most)")
    return names


LANGS = {
    "en": Lang(vocab_en, lambda V, mid: f"{V.MACHINE_TYPES[mid[0]]} {mid}", lambda s: _a(s), _english_names, str),
    "ko": Lang(vocab_ko, lambda V, mid: f"{mid} {V.MACHINE_TYPES[mid[0]]}", str, _korean_names, attach_particles),
    "mixed": Lang(vocab_mixed, lambda V, mid: f"{mid} {V.MACHINE_TYPES[mid[0]]}", str, _korean_names,
                  attach_particles),
}


@dataclass
class History:
    """One generated history. `conversations[i]` is conversation i's six message dicts (the .funes.jsonl
    records); `facts[i]` its hidden fact; `questions` and `unanswerable` the question dicts."""
    n_conversations: int
    seed: int
    conversations: list[list[dict]]
    facts: list[dict]
    questions: list[dict]
    unanswerable: list[dict]
    stats: dict = field(default_factory=dict)
    lang: str = "en"


def generate(n_conversations: int, seed: int = 7, n_questions: int = 100, lang: str = "en") -> History:
    """Build a history of `n_conversations` conversations with `n_questions` answerable and as many
    unanswerable questions, split evenly over the four fact kinds. Same arguments, same history.
    `lang`: "en" (English), "ko" (Korean) or "mixed" (Korean sentences with English product names and
    jargon); the three share the generator, so their facts, confusers and questions have the same shape."""
    if n_conversations < n_questions or n_questions < len(KINDS):
        raise ValueError(f"need n_conversations >= n_questions >= 4, got {n_conversations}, {n_questions}")
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {sorted(LANGS)}, got {lang!r}")
    history = _Builder(n_conversations, seed, n_questions, lang).build()
    check_history(history)
    return history


# ---------------------------------------------------------------------------------------------------
# Entities: ids, and decks that deal them so each appears about MENTIONS_PER_ENTITY times.

class _Deck:
    """Deals items so each comes up once per pass (a shuffled pass, then the next), skipping items
    the caller already holds. Dealing len(items) * 6 cards gives each item about six mentions."""

    def __init__(self, items: list, rng: random.Random):
        self.items, self.rng, self.cards = list(items), rng, []

    def draw(self, avoid=()):
        for _ in range(2):
            for j in range(len(self.cards) - 1, max(-1, len(self.cards) - 9), -1):
                if self.cards[j] not in avoid:
                    return self.cards.pop(j)
            fresh = self.items[:]
            self.rng.shuffle(fresh)
            self.cards = fresh + self.cards
        raise ValueError("deck too small to deal distinct items")


def _ids(rng: random.Random, prefixes, count: int, width: int, floor: int) -> tuple[list[str], dict]:
    """`count` ids spread over `prefixes`, numbers drawn from a range about twice as large as needed so
    neighbours exist (K-039 and K-019 both real). Returns the ids and {prefix: used numbers}."""
    per = [count // len(prefixes) + (i < count % len(prefixes)) for i in range(len(prefixes))]
    ids, used = [], {}
    for prefix, c in zip(prefixes, per, strict=True):
        top = max(floor, 2 * c)
        nums = sorted(rng.sample(range(1, top + 1), c))
        used[prefix] = (set(nums), top)
        ids += [f"{prefix}-{n:0{width}d}" for n in nums]
    return ids, used


def _absent_id(rng: random.Random, prefix: str, used: dict, width: int) -> str:
    """A well-formed id with this prefix that the history never uses, near the used ones."""
    nums, top = used[prefix]
    free = [n for n in range(1, top + 21) if n not in nums]
    return f"{prefix}-{rng.choice(free):0{width}d}"


def _refs(rng: random.Random, prefix: str, count: int) -> list[str]:
    """`count` distinct reference numbers like MT-4471 (five digits once four would be crowded)."""
    lo, hi = (1000, 9999) if count < 4000 else (10000, 99999)
    return [f"{prefix}-{n}" for n in rng.sample(range(lo, hi + 1), count)]


def _free_attr(rng: random.Random, n: int, taken, kind: str, eid: str) -> int:
    """A random attribute index in range(n) such that (kind, eid, index) is not in `taken`, the fact
    keys; random tries first, a scan if they fail."""
    for _ in range(8):
        i = rng.randrange(n)
        if (kind, eid, i) not in taken:
            return i
    free = [i for i in range(n) if (kind, eid, i) not in taken]
    if not free:
        raise ValueError("no free combination left; raise the entity counts")
    return rng.choice(free)


# ---------------------------------------------------------------------------------------------------

class _Builder:
    def __init__(self, n: int, seed: int, n_questions: int, lang: str = "en"):
        self.n, self.seed, self.nq = n, seed, n_questions
        self.rng = random.Random(seed)
        self.lang_name, self.lang = lang, LANGS[lang]
        self.V = self.lang.vocab

    def build(self) -> History:
        rng, n = self.rng, self.n
        self.kinds = [KINDS[i % 4] for i in range(n)]
        rng.shuffle(self.kinds)
        self.asked = self._choose_asked()
        self.line_chatter = [rng.random() < LINE_CHATTER_SHARE for _ in range(n)]
        self.distractor = [rng.random() < DISTRACTOR_SHARE for _ in range(n)]
        self._make_entities()
        self._deal()
        self._make_facts()
        self._make_chatter()
        conversations = [self._render(i) for i in range(n)]
        questions = [self._question(q, i) for q, i in enumerate(sorted(self.asked))]
        unanswerable = self._unanswerable()
        stats = {"machines": len(self.machines), "sites": len(self.sites), "lines": len(self.lines)}
        return History(n, self.seed, conversations, self.facts, questions, unanswerable, stats, self.lang_name)

    def _choose_asked(self) -> set[int]:
        per_kind = [self.nq // 4 + (k < self.nq % 4) for k in range(4)]
        asked: set[int] = set()
        for kind, count in zip(KINDS, per_kind, strict=True):
            pool = [i for i, k in enumerate(self.kinds) if k == kind]
            asked.update(self.rng.sample(pool, count))
        return asked

    def _make_entities(self) -> None:
        rng, n, kinds, V = self.rng, self.n, self.kinds, self.V
        count = {k: kinds.count(k) for k in KINDS}
        m = math.ceil((count["ticket"] + CHATTER_MACHINES * n) / MENTIONS_PER_ENTITY)
        s = math.ceil((count["owner"] + count["decision"] + CHATTER_SITES * n) / MENTIONS_PER_ENTITY)
        ln = math.ceil((count["rate"] + sum(self.line_chatter)) / MENTIONS_PER_ENTITY)
        self.machines, self.machine_used = _ids(rng, list(V.MACHINE_TYPES), max(m, 16), 3, 40)
        self.sites, self.site_used = _ids(rng, V.SITE_PREFIXES, max(s, 12), 2, 30)
        self.lines, self.line_used = _ids(rng, ["L"], max(ln, 6), 2, 24)
        n_mt = count["ticket"] + sum(self.distractor) + self.nq
        n_dr = count["decision"] + sum(self.distractor) + self.nq
        self.mt_pool, self.dr_pool = _refs(rng, "MT", n_mt), _refs(rng, "DR", n_dr)
        names = self.lang.owner_names(V, count["owner"])
        self.names = rng.sample(names, count["owner"])
        self.bld = {}

    def _deal(self) -> None:
        """Per conversation: the fact's entity first, then the chatter entities (distinct from it)."""
        machines, sites, lines = (_Deck(x, self.rng) for x in (self.machines, self.sites, self.lines))
        self.ent = []
        for i, kind in enumerate(self.kinds):
            fact_m = machines.draw() if kind == "ticket" else None
            fact_l = lines.draw() if kind == "rate" else None
            fact_s = sites.draw() if kind in ("owner", "decision") else None
            ma = machines.draw({fact_m})
            mb = machines.draw({fact_m, ma})
            site = sites.draw({fact_s})
            line = lines.draw({fact_l}) if self.line_chatter[i] else None
            self.ent.append({"fact": fact_m or fact_l or fact_s, "ma": ma, "mb": mb, "site": site, "line": line})

    def _make_facts(self) -> None:
        rng, V = self.rng, self.V
        self.keys: dict[tuple, int] = {}         # (kind, id, attribute index) -> conversation
        mt, dr, names = iter(self.mt_pool), iter(self.dr_pool), iter(self.names)
        asked_rates = [i for i in sorted(self.asked) if self.kinds[i] == "rate"]
        reserved = dict(zip(asked_rates, rng.sample(RATES, len(asked_rates)), strict=True))
        reserved_set = set(reserved.values())
        free_rates = [r for r in RATES if r not in reserved_set]   # other facts may share these
        self.facts = []
        for i, kind in enumerate(self.kinds):
            eid = self.ent[i]["fact"]
            if kind == "ticket":
                attr = self._symptom_for(eid)
                answer = next(mt)
            elif kind == "rate":
                attr = _free_attr(rng, len(V.CHECKS), self.keys, "rate", eid)
                answer = reserved.get(i) or rng.choice(free_rates)
            elif kind == "owner":
                attr = _free_attr(rng, len(V.JOBS), self.keys, "owner", eid)
                answer = next(names)
            else:
                attr = _free_attr(rng, len(V.PROJECTS), self.keys, "decision", eid)
                answer = next(dr)
            self.keys[(kind, eid, attr)] = i
            self.facts.append({"kind": kind, "id": eid, "attr": attr, "topic": _tables(V)[kind][attr][0],
                               "answer": answer, "option": rng.choice("ABCD")})
        # Spare reference numbers: distractors in chatter, then absent ones for unanswerable questions.
        self.mt_spare, self.dr_spare = list(mt), list(dr)

    def _symptom_for(self, mid: str) -> int:
        """A symptom that fits the machine type and does not form an existing ticket key with it."""
        V = self.V
        fits = [s for s, row in enumerate(V.SYMPTOMS) if mid[0] in row[3]]
        free = [s for s in fits if ("ticket", mid, s) not in self.keys]
        if not free:
            free = [s for s in range(len(V.SYMPTOMS)) if ("ticket", mid, s) not in self.keys]
        return self.rng.choice(free)

    def _make_chatter(self) -> None:
        """Attributes for the chatter mentions, never forming a fact's key (check_history proves it on
        the text: a question's id and topic are said together in its own conversation only)."""
        rng, V = self.rng, self.V
        self.chat = []
        for i in range(self.n):
            e = self.ent[i]
            c = {"sym": None, "site_t": rng.randrange(len(V.CHATTER_SITE)), "job": 0, "proj": 0, "check": 0}
            if rng.random() < 0.5:
                c["sym"] = self._symptom_for(e["ma"])
            c["job"] = _free_attr(rng, len(V.JOBS), self.keys, "owner", e["site"])
            c["proj"] = _free_attr(rng, len(V.PROJECTS), self.keys, "decision", e["site"])
            if e["line"]:
                c["check"] = _free_attr(rng, len(V.CHECKS), self.keys, "rate", e["line"])
            c["line_t"] = rng.randrange(len(V.CHATTER_LINE))
            self.chat.append(c)

    # -----------------------------------------------------------------------------------------------
    # Rendering

    def _slots(self, i: int) -> dict:
        rng, e, c, V, lang = self.rng, self.ent[i], self.chat[i], self.V, self.lang
        c1, c2 = rng.sample(V.COLLEAGUES, 2)
        d = {"c1": c1, "c2": c2, "food": rng.choice(V.FOODS), "hobby": rng.choice(V.HOBBIES),
             "event": rng.choice(V.EVENTS), "mins": rng.randrange(35, 95, 5), "area": rng.choice(V.AREAS),
             "ma": lang.machine(V, e["ma"]), "ma_id": e["ma"], "mb": lang.machine(V, e["mb"]),
             "site": e["site"], "line": e["line"], "check": V.CHECKS[c["check"]][0],
             "job": V.JOBS[c["job"]][0], "proj": V.PROJECTS[c["proj"]][0],
             "a_sym": lang.article(V.SYMPTOMS[c["sym"]][2]) if c["sym"] is not None else "",
             "bld": self._bld()}
        if self.distractor[i]:
            d["mt"], d["dr"] = self.mt_spare.pop(), self.dr_spare.pop()
        return d

    def _bld(self) -> str:
        alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
        while True:
            b = "BLD-" + "".join(self.rng.choices(alphabet, k=8))
            if b not in self.bld:
                self.bld[b] = None
                return b

    def _render(self, i: int) -> list[dict]:
        """Six messages: small talk, ops chatter and the fact, as three user/assistant exchanges. Most
        conversations state the fact last; some in the middle; some open with it."""
        rng, d, f, V = self.rng, self._slots(i), self.facts[i], self.V
        start = self._start_s(i)
        when = datetime.fromtimestamp(start, timezone.utc)
        small_u, small_a = _smalltalk(V, rng, d, when)
        chat_u, chat_a = _chatter(V, rng, d, self.chat[i])
        fact_u, fact_a = _fact_text(V, rng, d, f, self.distractor[i])
        greeting = rng.choice(V.GREETINGS["am" if when.hour < 12 else "pm"])
        order = rng.random()
        if order < 0.6:
            users, fact_turn = [(greeting + small_u, small_a), (chat_u, chat_a), (fact_u, fact_a)], 2
        elif order < 0.85:
            users, fact_turn = [(greeting + small_u, small_a), (fact_u, fact_a), (chat_u, chat_a)], 1
        else:
            users, fact_turn = [(greeting + fact_u, fact_a), (chat_u, chat_a), (small_u, small_a)], 0
        session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        harness = rng.choice(HARNESSES)
        msgs, t = [], start
        for u, a in users:
            for role, text in (("user", u), ("assistant", a)):
                seq = len(msgs)
                msgs.append({"session_id": session, "turn_uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                             "seq": seq, "ts": _iso(t), "role": role, "harness": harness,
                             "blocks": [{"block_type": "text", "text": self.lang.finish(text)}]})
                t += rng.randint(20, 90) if role == "user" else rng.randint(40, 400)
        f.update(session_id=session, turn_uuid=msgs[2 * fact_turn]["turn_uuid"])
        if i in self.asked:   # every turn that carries the answer (the assistant may echo it)
            pattern = answer_pattern(f["answer"])
            f["evidence_turns"] = [m["turn_uuid"] for m in msgs if pattern.search(m["blocks"][0]["text"])]
        return msgs

    def _start_s(self, i: int) -> int:
        """Conversation i's start, in epoch seconds: evenly through the period's working hours, jittered,
        so conversation order is time order."""
        days = (HISTORY_END - HISTORY_START).days
        w = int(days * WORKDAY_S * (i + 0.6 * self.rng.random()) / self.n)
        day, second = divmod(w, WORKDAY_S)
        return int(HISTORY_START.timestamp()) + day * 86400 + WORKDAY_START_S + second

    # -----------------------------------------------------------------------------------------------
    # Questions

    def _question(self, q: int, i: int) -> dict:
        f, V, finish = self.facts[i], self.V, self.lang.finish
        d = _fact_slots(V, f)
        kind = f["kind"]
        return {"qid": f"q-{q + 1:03d}", "kind": kind, "answer": f["answer"],
                "session_id": f["session_id"], "turn_uuid": f["turn_uuid"],
                "evidence_turns": f["evidence_turns"],
                "long": finish(self.rng.choice(V.LONG_Q[kind]).format(**d)),
                "short": finish(V.SHORT_Q[kind].format(**d)),
                "key": {"id": f["id"], "topic": d["topic"]}}

    def _unanswerable(self) -> list[dict]:
        rng, out, V, finish = self.rng, [], self.V, self.lang.finish
        per_kind = [self.nq // 4 + (k < self.nq % 4) for k in range(4)]
        seen: set[str] = set()
        for kind, count in zip(KINDS, per_kind, strict=True):
            made = 0
            while made < count:
                by_ref = kind in V.LONG_Q_BY_REF and made % 2 == 1
                fake = {"kind": kind, "attr": 0, "answer": "", "option": "A"}
                if by_ref:
                    ref = (self.mt_spare if kind == "ticket" else self.dr_spare).pop()
                    d = {"mt": ref, "dr": ref}
                    long_q, short_q = rng.choice(V.LONG_Q_BY_REF[kind]), V.SHORT_Q_BY_REF[kind]
                else:
                    ref = self._absent_entity(kind)
                    fake.update(id=ref, attr=self._absent_attr(kind, ref))
                    d = _fact_slots(V, fake)
                    long_q, short_q = rng.choice(V.LONG_Q[kind]), V.SHORT_Q[kind]
                if ref in seen:
                    continue
                seen.add(ref)
                made += 1
                out.append({"qid": f"u-{len(out) + 1:03d}", "kind": kind, "long": finish(long_q.format(**d)),
                            "short": finish(short_q.format(**d)), "absent": [ref]})
        return out

    def _absent_entity(self, kind: str) -> str:
        V = self.V
        if kind == "ticket":
            prefix = self.rng.choice(list(V.MACHINE_TYPES))
            return _absent_id(self.rng, prefix, self.machine_used, 3)
        if kind == "rate":
            return _absent_id(self.rng, "L", self.line_used, 2)
        return _absent_id(self.rng, self.rng.choice(V.SITE_PREFIXES), self.site_used, 2)

    def _absent_attr(self, kind: str, ref: str) -> int:
        if kind == "ticket":
            return self.rng.choice([s for s, row in enumerate(self.V.SYMPTOMS) if ref[0] in row[3]])
        return self.rng.randrange(len(_tables(self.V)[kind]))


# ---------------------------------------------------------------------------------------------------
# Text helpers (pure given the rng)

def _a(noun_phrase: str) -> str:
    return ("an " if noun_phrase[0] in "aeiou" else "a ") + noun_phrase


def _fact_slots(V: ModuleType, f: dict) -> dict:
    """Template slots naming a fact (or a fake one, for unanswerable questions)."""
    kind, eid, a = f["kind"], f.get("id", ""), f["attr"]
    d = {"opt": f["option"]}
    if kind == "ticket":
        sym, symq, symkw, _ = V.SYMPTOMS[a]
        d.update(mid=eid, mnoun=V.MACHINE_TYPES[eid[0]], sym=sym, symq=symq, symkw=symkw, mt=f["answer"],
                 topic=sym)
    elif kind == "rate":
        check, checkq, checkkw = V.CHECKS[a]
        d.update(line=eid, check=check, checkq=checkq, checkkw=checkkw, rate=f["answer"], topic=check)
    elif kind == "owner":
        job, jobq, jobkw = V.JOBS[a]
        d.update(site=eid, job=job, jobq=jobq, jobkw=jobkw, name=f["answer"], topic=job)
    else:
        proj, projq, projkw = V.PROJECTS[a]
        d.update(site=eid, proj=proj, projq=projq, projkw=projkw, dr=f["answer"], topic=proj)
    return d


def _smalltalk(V: ModuleType, rng: random.Random, d: dict, day: datetime) -> tuple[str, str]:
    topic = rng.choice(("weather", "lunch", "weekend", "commute", "team"))
    if topic == "lunch" and day.hour < 12 or topic == "commute" and day.hour >= 12:
        topic = "team"
    if topic == "weather":
        season = ("winter", "winter", "spring", "spring", "spring", "summer", "summer", "summer",
                  "autumn", "autumn", "autumn", "winter")[day.month - 1]
        user = rng.choice(V.WEATHER[season])
    else:
        if topic == "weekend":
            topic = "weekend_past" if day.weekday() in (0, 1) else "weekend_next"
        user = rng.choice(V.SMALLTALK[topic]).format(**d)
    user = user + " " + _cap(rng.choice(V.CHATTER_MACHINE_B).format(**d))
    return user, rng.choice(V.SMALLTALK_REPLY[topic])


def _chatter(V: ModuleType, rng: random.Random, d: dict, c: dict) -> tuple[str, str]:
    first = V.CHATTER_SYMPTOM if c["sym"] is not None else V.CHATTER_STATUS
    parts = [rng.choice(first), V.CHATTER_SITE[c["site_t"]]]
    if d["line"]:
        parts.append(V.CHATTER_LINE[c["line_t"]])
    return " ".join(_cap(p.format(**d)) for p in parts), rng.choice(V.CHATTER_REPLY).format(**d)


def _cap(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:]


def _fact_text(V: ModuleType, rng: random.Random, d: dict, f: dict, distractor: bool) -> tuple[str, str]:
    """The fact said in passing (`d`: the chatter slots, for colleagues and the distractor number)."""
    kind = f["kind"]
    fd = {**d, **_fact_slots(V, f)}
    lead = rng.choice(V.FACT_LEADS)
    fact = rng.choice(V.FACTS[kind]).format(**fd)
    if not lead:
        fact = _cap(fact)
    if distractor:
        tail = rng.choice(V.CHATTER_DISTRACTOR).format(**d)
    else:
        tail = rng.choice(V.FACT_TAILS).format(**d)
    user = (lead + fact + " " + tail).strip()
    return user, rng.choice(V.FACT_ACKS[kind]).format(**fd)


def _iso(epoch_s: int) -> str:
    return datetime.fromtimestamp(epoch_s, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------------------------------------------
# The promises, checked on the text itself

def check_history(h: History) -> None:
    """Raise ValueError unless: each question's answer appears (as a whole token, any case) in exactly
    its own conversation; its key (id + topic) belongs to exactly one fact and is said together, in one
    message, in that conversation only; and no unanswerable question's id appears anywhere."""
    tables = _tables(LANGS[h.lang].vocab)
    topics = {row[0]: row[:3] for table in tables.values() for row in table}
    texts = [[m["blocks"][0]["text"] for m in conv] for conv in h.conversations]
    lowered = ["\n".join(t).lower() for t in texts]
    single = {x.lower() for q in h.questions for x in (q["answer"], q["key"]["id"]) if " " not in x}
    single |= {a.lower() for u in h.unanswerable for a in u["absent"]}
    names = {q["answer"].lower(): q["answer"].lower().split()[-1] for q in h.questions if " " in q["answer"]}
    where: dict[str, list[int]] = {}
    for c, low in enumerate(lowered):
        tokens = set(_TOKEN.findall(low))
        for tok in tokens & single:
            where.setdefault(tok, []).append(c)
        for name, last in names.items():   # a cheap token test first, the boundary regex to confirm
            if last in tokens and answer_pattern(name).search(low):
                where.setdefault(name, []).append(c)
    session_index = {conv[0]["session_id"]: c for c, conv in enumerate(h.conversations)}
    fact_keys: dict[tuple, int] = {}
    for f in h.facts:
        k = (f["kind"], f["id"], f["attr"])
        fact_keys[k] = fact_keys.get(k, 0) + 1
    problems = []
    for q in h.questions:
        home = session_index.get(q["session_id"])
        found = where.get(q["answer"].lower(), [])
        if found != [home]:
            problems.append(f"{q['qid']}: answer {q['answer']!r} found in conversations {found}, expected [{home}]")
        topic = topics[q["key"]["topic"]]
        attr_i = [row[0] for row in tables[q["kind"]]].index(topic[0])
        if fact_keys.get((q["kind"], q["key"]["id"], attr_i)) != 1:
            problems.append(f"{q['qid']}: key {q['key']} is not exactly one fact")
        together = [c for c in where.get(q["key"]["id"].lower(), [])
                    if any(answer_pattern(q["key"]["id"]).search(t) and _mentions(t, topic) for t in texts[c])]
        if together != [home]:
            problems.append(f"{q['qid']}: key {q['key']} said together in conversations {together}")
    for u in h.unanswerable:
        for a in u["absent"]:
            if a.lower() in where:
                problems.append(f"{u['qid']}: absent id {a} appears in conversations {where[a.lower()]}")
    if problems:
        raise ValueError("synthetic history broke its promises:\n  " + "\n  ".join(problems[:20]))


def _mentions(text: str, topic: tuple) -> bool:
    low = text.lower()
    return any(p.lower() in low for p in topic)


# ---------------------------------------------------------------------------------------------------
# Files and CLI

def write_history(history: History, out_dir) -> Path:
    """Write the history under out_dir and return out_dir:
        src/conv-00001.funes.jsonl ...   one conversation per file, six messages, in time order
        questions.jsonl                  the answerable questions
        unanswerable.jsonl               the questions about things the history never mentions
        facts.jsonl                      one line per conversation: its hidden fact
        manifest.json                    n_conversations, seed, counts (to tell a stale directory)
    Earlier conv-*.funes.jsonl files in src/ are removed first, so a smaller N never mixes with a larger."""
    out = Path(out_dir)
    src = out / "src"
    src.mkdir(parents=True, exist_ok=True)
    for old in src.glob("conv-*.funes.jsonl"):
        old.unlink()
    for i, conv in enumerate(history.conversations, 1):
        _write_jsonl(src / f"conv-{i:05d}.funes.jsonl", conv)
    _write_jsonl(out / "questions.jsonl", history.questions)
    _write_jsonl(out / "unanswerable.jsonl", history.unanswerable)
    _write_jsonl(out / "facts.jsonl", history.facts)
    manifest = {"generator": "benches.history", "n_conversations": history.n_conversations,
                "seed": history.seed, "questions": len(history.questions),
                "unanswerable": len(history.unanswerable), **history.stats,
                **({"lang": history.lang} if history.lang != "en" else {})}   # English manifests as before
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return out


def _write_jsonl(path: Path, rows) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def history_dirname(n: int, seed: int = 7, lang: str = "en") -> str:
    """`history-N-sSEED` for English (the name the caches have always had), `history-LANG-N-sSEED` else."""
    return f"history-{n}-s{seed}" if lang == "en" else f"history-{lang}-{n}-s{seed}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benches.history", description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="conversations (default 1000)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--questions", type=int, default=100, help="answerable (and unanswerable) questions")
    ap.add_argument("--lang", choices=sorted(LANGS), default="en",
                    help="en (default), ko (Korean) or mixed (Korean with English product names and jargon)")
    ap.add_argument("--out", help="output directory (default benches/out/history[-LANG]-N-sSEED)")
    args = ap.parse_args(argv)
    out = args.out or str(Path(__file__).parent / "out" / history_dirname(args.n, args.seed, args.lang))
    t0 = time.perf_counter()
    history = generate(args.n, args.seed, args.questions, args.lang)
    t1 = time.perf_counter()
    write_history(history, out)
    t2 = time.perf_counter()
    print(f"{args.n} conversations, {len(history.questions)} questions, {len(history.unanswerable)} "
          f"unanswerable, {history.stats}; generated+checked {t1 - t0:.2f}s, written {t2 - t1:.2f}s",
          file=sys.stderr)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
