"""The engine's BM25 leg and identifier leg, re-done in Python for the offline fusion lab (`fusion_lab`).

Recall returns each passage's fused score and its cosine, not its BM25 score; the lab's fusion needs the raw
BM25 score of every candidate. This module computes it as the engine does (`resident/bm25.rs`, the path of a
warm engine), so a fusion formula simulated here ranks as the engine does:
* analyser (`rust/src/analyzer.rs`, Lance's default FTS parameters, lance-tokenizer 13): split on every
  non-alphanumeric character, drop tokens of 40 bytes or more, lower-case, Snowball English stem, then drop
  stems in the NLTK English stop-word list (the filter runs after the stemmer, so "very" -> "veri" stays),
  fold to ASCII;
* document text (`analyzer::fts_document`): the month and year of the turn ("May 2023",
  `time::month_words`), the last 200 characters of the previous turn of the session (cut at a word,
  `chunk::turn_contexts`), the passage, then the glued identifiers of both ("mt4471");
* query (`analyzer::fts_query`): the words plus the glued identifiers, each term once;
* scoring (`resident/bm25.rs`, Lance's scorer): k1 1.2, b 0.75, idf ln(1 + (N - n + 0.5) / (n + 0.5)),
  document length in analysed terms.
`fusion_lab --check-engine` (`check_engine`) compares the rankings with the engine's own BM25 leg.
"""

from __future__ import annotations

import calendar
import math
import re
import string
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import date, datetime

import snowballstemmer

K1, B = 1.2, 0.75
# `analyzer::ANALYZER_VERSION` this module mirrors: the lab's cached pools are keyed by it.
ANALYZER_VERSION = 3
CONTEXT_CHARS = 200
MAX_TOKEN_BYTES = 40
# stop-words 0.10 "en" (its NLTK list), as lance-tokenizer 13 uses for Language::English.
STOP_WORDS = frozenset("""
a about above after again against ain all am an and any are aren aren't as at be because been before being
below between both but by can couldn couldn't d did didn didn't do does doesn doesn't doing don don't down
during each few for from further had hadn hadn't has hasn hasn't have haven haven't having he he'd he'll her
here hers herself he's him himself his how i i'd if i'll i'm in into is isn isn't it it'd it'll it's its
itself i've just ll m ma me mightn mightn't more most mustn mustn't my myself needn needn't no nor not now o
of off on once only or other our ours ourselves out over own re s same shan shan't she she'd she'll she's
should shouldn shouldn't should've so some such t than that that'll the their theirs them themselves then
there these they they'd they'll they're they've this those through to too under until up ve very was wasn
wasn't we we'd we'll we're were weren weren't we've what when where which while who whom why will with won
won't wouldn wouldn't y you you'd you'll your you're yours yourself yourselves you've
""".split())  # noqa: SIM905 - a word list reads better as text
_STEMMER = snowballstemmer.stemmer("english")


def _fold(token: str) -> str:
    if token.isascii():
        return token
    return "".join(c for c in unicodedata.normalize("NFKD", token) if not unicodedata.combining(c))


def _split(text: str) -> list[str]:
    out, cur = [], []
    for c in text:
        if c.isalnum():
            cur.append(c)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out


def analyse(text: str) -> list[str]:
    """The terms of a text, in order (repeats kept): what the FTS index stores for it."""
    words = [w.lower() for w in _split(text) if len(w.encode()) < MAX_TOKEN_BYTES]
    stems = _STEMMER.stemWords(words)
    return [_fold(s) for s in stems if s not in STOP_WORDS]


def identifier_tokens(text: str) -> list[str]:
    """`analyzer::identifier_tokens`: alnum runs joined by single - _ . / with a letter, a digit and a
    separator, glued and lower-cased, in order, without repeats, at most 40 characters."""
    out: list[str] = []
    n, i = len(text), 0
    while i < n:
        if not text[i].isalnum():
            i += 1
            continue
        start = end = i
        seps = 0
        while True:
            while end < n and text[end].isalnum():
                end += 1
            if end + 1 < n and text[end] in "-_./" and text[end + 1].isalnum():
                seps += 1
                end += 1
                continue
            break
        cand = text[start:end]
        if seps and any(c.isdigit() and c.isascii() for c in cand) and any(c.isalpha() for c in cand):
            glued = "".join(c for c in cand if c.isalnum()).lower()
            if len(glued) <= 40 and glued not in out:
                out.append(glued)
        i = max(end, i + 1)
    return out


def id_terms(text: str) -> list[str]:
    """`analyzer::id_terms`: glued identifiers plus words mixing letters with at least two digits."""
    out = identifier_tokens(text)
    for w in _split(text):
        if sum(c.isdigit() and c.isascii() for c in w) >= 2 and any(c.isalpha() for c in w):
            low = w.lower()
            if low not in out:
                out.append(low)
    return out


def month_words(ts: str, form: str = "month") -> str:
    """`time::month_words`: "May 2023" on the clock `ts` was written in; "" when it is not a time. The lab's
    other forms: "day" ("21 May 2023"), "none" (the engine before analyzer version 3)."""
    d = _written(ts) if form != "none" else None
    if d is None:
        return ""
    month = f"{calendar.month_name[d.month]} {d.year}"
    return f"{d.day} {month}" if form == "day" else month


def _written(ts: str) -> datetime | None:
    """`time::parse_written`: `ts` as its clock reads it (the offset kept); None when it is not a time."""
    try:
        return datetime.fromisoformat(ts.strip().replace("Z", "+00:00"))
    except ValueError:
        return None


# `time::month_number`: month names and their three-letter forms, any case, and "Sept".
_MONTHS = {name.lower(): i for names in (calendar.month_name, calendar.month_abbr)
           for i, name in enumerate(names) if name} | {"sept": 9}  # fmt: skip


def _day_of_month(word: str) -> int | None:
    digits = word.rstrip(string.ascii_letters)
    if word[len(digits):].lower() not in ("", "st", "nd", "rd", "th") or not 1 <= len(digits) <= 2:
        return None
    if not digits.isascii() or not digits.isdigit():
        return None
    return int(digits) if 1 <= int(digits) <= 31 else None


def _ymd(year: str, month: int, day: str) -> date | None:
    d = _day_of_month(day)
    if d is None or len(year) != 4 or not (year.isascii() and year.isdigit()):
        return None
    try:
        return date(int(year), month, d)
    except ValueError:
        return None


# `time::unit_dates`: year? month day? in unit words ("2023년 10월 24일", "2023年10月"), spaces allowed.
_UNIT_DATE = re.compile(r"(?<!\d)(?:(\d{1,4}) *[년年]\s*)?(\d{1,4}) *[월月](?:\s*(\d{1,4}) *[일日])?")


def _numeric_day(word: str) -> date | None:
    for form in ("%Y-%m-%d", "%Y.%m.%d", "%Y/%m/%d"):
        try:
            return datetime.strptime(word, form).date()
        except ValueError:
            pass
    return None


def _unit_days(text: str) -> list[date]:
    out = []
    for y, m, d in _UNIT_DATE.findall(text):
        if y and d and 1000 <= int(y) <= 9999 and 1 <= int(m) <= 12:
            try:
                out.append(date(int(y), int(m), int(d)))
            except ValueError:
                pass
    return out


def days_named(text: str) -> list[date]:
    """`time::days_named`: the days a text names in full ("October 24, 2023", "24th of Oct 2023",
    "2023-10-24", "2023.10.24", "2023/10/24", "2023년 10월 24일"); a month and day without a year, or a
    month and year alone, name none."""
    spaced = "".join(c if c.isalnum() or c in "-./" else " " for c in text)
    words = [w.strip("./") for w in spaced.split() if w.strip("./")]
    out: list[date] = []
    for i, w in enumerate(words):
        if (d := _numeric_day(w)) is not None:
            out.append(d)
            continue
        after = words[i + 1:i + 4] + [""] * 3   # the next three words ("" past the end)
        found = None
        if (m := _MONTHS.get(w.lower())) is not None:
            found = _ymd(after[1], m, after[0])
        elif _day_of_month(w) is not None:
            month, year = (after[1], after[2]) if after[0].lower() == "of" else (after[0], after[1])
            if (m := _MONTHS.get(month.lower())) is not None:
                found = _ymd(year, m, w)
        if found is not None:
            out.append(found)
    out += _unit_days(text)
    return [d for i, d in enumerate(out) if i == 0 or d != out[i - 1]]


def written_day(ts: str) -> date | None:
    """`time::written_day`: the day of `ts` on the clock it was written in."""
    d = _written(ts)
    return d.date() if d is not None else None


def fts_document(text: str, context: str, ts: str = "", dates: str = "month") -> str:
    body = f"{context}\n{text}" if context else text
    ids = identifier_tokens(body)
    date = month_words(ts, dates) if ts else ""
    out = f"{date}\n{body}" if date else body
    return f"{out}\n{' '.join(ids)}" if ids else out


def fts_query(query: str) -> str:
    ids = identifier_tokens(query)
    plain = "".join(c if c.isalnum() or c.isspace() else " " for c in query)
    return " ".join(plain.split() + ids)


def query_terms(query: str) -> list[str]:
    seen: dict[str, None] = {}
    for t in analyse(fts_query(query)):
        seen.setdefault(t, None)
    return list(seen)


def words_of(text: str) -> list[str]:
    """`thesaurus::words`: the plain words of a text a table can list (ASCII letters only, three or more),
    lower-cased, each once, in order; not names (`is_name`)."""
    out: dict[str, None] = {}
    for m in re.finditer(r"[^\W_]+", text):
        w = m.group(0)
        if len(w) >= 3 and w.isascii() and w.isalpha() and not is_name(text[: m.start()], w):
            out.setdefault(w.lower(), None)
    return list(out)


def is_name(before: str, word: str) -> bool:
    """`thesaurus::is_name`: capitalised where a sentence does not start (not first, nor after . ? ! : or a
    line, quote or bracket)."""
    tail = before.rstrip()
    return word[:1].isupper() and bool(tail) and tail[-1] not in ".?!:\n\"'("


def read_thesaurus(path) -> dict[str, list[tuple[str, float]]]:
    """`thesaurus::Thesaurus::parse`: a model's `thesaurus.tsv`, near words by word, nearest first."""
    table: dict[str, list[tuple[str, float]]] = {}
    for line in open(path, encoding="utf-8").read().splitlines():
        word, *fields = line.split("\t")
        if word.strip():
            table[word.strip().lower()] = [(f.rsplit(":", 1)[0], float(f.rsplit(":", 1)[1])) for f in fields]
    return table


def near_terms(table: dict[str, list[tuple[str, float]]], query: str, min_cosine: float = 0.55,
               weight: float = 0.5) -> dict[str, float]:  # fmt: skip
    """`thesaurus::Thesaurus::expand`: the BM25 terms of the near words of the query's words (plain ASCII words
    of three letters or more, not stop words) with their weights, none the query has."""
    have = set(query_terms(query))
    out: dict[str, float] = {}
    for w in words_of(query):
        if w not in table or not analyse(w):
            continue
        for near, cos in table[w]:
            terms = analyse(fts_query(near))
            if cos >= min_cosine and terms and terms[0] not in have:
                out[terms[0]] = max(out.get(terms[0], 0.0), weight * cos)
    return out


def tail_at_word(text: str, limit: int = CONTEXT_CHARS) -> str:
    """`chunk::tail_at_word`: the last `limit` characters, starting at a word."""
    if len(text) <= limit:
        return text.strip()
    tail = text[len(text) - limit:]
    for i, c in enumerate(tail):
        if c.isspace():
            return tail[i:].strip()
    return tail.strip()


class Bm25:
    """BM25 over documents given as (text, context, ts) triples, numbered in order (ts "": undated); `dates`:
    the form of the date indexed with each (`month_words`)."""

    def __init__(self, docs: Sequence[tuple[str, str, str]], dates: str = "month"):
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self.doc_len: list[int] = []
        for d, (text, context, ts) in enumerate(docs):
            terms = analyse(fts_document(text, context, ts, dates))
            for t, tf in Counter(terms).items():
                self.postings[t].append((d, tf))
            self.doc_len.append(len(terms))
        self.n = len(self.doc_len)
        self.avgdl = sum(self.doc_len) / self.n if self.n else 0.0

    def idf(self, term: str) -> float:
        df = len(self.postings.get(term, ()))
        return math.log(1.0 + (self.n - df + 0.5) / (df + 0.5))

    def scores(self, query: str, extra: dict[str, float] | None = None, k1: float | None = None,
               b: float | None = None) -> dict[int, float]:  # fmt: skip
        """Every document sharing a term with the query, with its BM25 score; `extra` adds terms with a
        weight each (query expansion); `k1` and `b` replace the engine's (`K1`, `B`)."""
        k1 = K1 if k1 is None else k1
        b = B if b is None else b
        out: dict[int, float] = defaultdict(float)
        weights = dict.fromkeys(query_terms(query), 1.0)
        for t, w in (extra or {}).items():
            weights.setdefault(t, w)
        for t, qw in weights.items():
            plist = self.postings.get(t)
            if not plist:
                continue
            idf = math.log(1.0 + (self.n - len(plist) + 0.5) / (len(plist) + 0.5))
            w = qw * idf * (k1 + 1.0)
            for d, tf in plist:
                norm = k1 * (1.0 - b + b * self.doc_len[d] / self.avgdl)
                out[d] += w * tf / (tf + norm)
        return out

    def top(self, query: str, n: int) -> list[tuple[int, float]]:
        """The n best documents, best first; ties by document number (the engine's `top_n` order)."""
        s = self.scores(query)
        return sorted(s.items(), key=lambda x: (-x[1], x[0]))[:n]
