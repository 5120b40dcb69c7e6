"""Mask credential shapes in turn text before anything is written to disk (pure, no I/O).

A memory is searched and quoted back to an agent months later; a key pasted into a chat must not live on
in it. The patterns aim at shapes with few false positives (a prefix plus enough random characters), so
ordinary prose, ticket numbers and hashes in text pass through untouched. Each match becomes
`[REDACTED <kind>]`, which keeps the sentence readable and says what was there.

Cost: a pasted log file or a megabyte of base64 is normal input, so the cost must be linear in the text
and no single regex call may run long (it holds the GIL, and every recall of every tenant needs the GIL
to answer). So: every pattern starts only where few starts are possible and never backtracks over a long
run (tests/test_service_masking_linear.py holds the inputs that once broke that), and `mask_secrets`
searches in windows of `_WINDOW` characters instead of calling `sub` once on the whole text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Order matters: the private-key block and URL passwords go first so a key inside them is masked once.
# Each pattern begins with a literal, so the regex engine skips to its candidates at memchr speed (ordinary
# prose costs almost nothing); the word boundary the literal needs is a lookbehind placed after it
# (`sk-(?<!\wsk-)` is `\bsk-`). Runs that cannot end in a match are possessive (`{30,}+`): no backtracking.
# A pattern with a group named `s` masks only that group and keeps the rest of its match.
_PATTERNS: list[tuple[str, re.Pattern[str] | None]] = [
    (
        "private key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
    # scheme://user:password@host -> keep user and host, mask the password.
    ("password", re.compile(r"://[^\s:/@]+:(?P<s>[^\s@/]+)(?=@)")),
    ("api key", re.compile(r"sk-(?<!\wsk-)(?:proj-|ant-(?:api\d\d-)?|live-|test-)?[A-Za-z0-9_\-]{20,}")),
    ("api key", re.compile(r"[rps]k_(?<!\w[rps]k_)(?:live|test)_[A-Za-z0-9]{16,}")),
    ("aws key", re.compile(r"A(?<!\wA)(?:KIA|SIA|GPA|IDA|ROA)[A-Z0-9]{16}\b")),
    ("github token", re.compile(r"g(?<!\wg)(?:h[pousr]_[A-Za-z0-9]{30,}+\b|ithub_pat_[A-Za-z0-9_]{40,})")),
    ("slack token", re.compile(r"xox(?<!\wxox)[abposr]-[A-Za-z0-9\-]{10,}")),
    ("google api key", re.compile(r"AIza(?<!\wAIza)[0-9A-Za-z_\-]{35}")),
    ("huggingface token", re.compile(r"hf_(?<!\whf_)[A-Za-z0-9]{30,}+\b")),
    ("jwt", None),  # `\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`, found by _jwt_spans
    ("bearer token", re.compile(r"(?i)bearer (?<!\wbearer )(?=(?P<s>[A-Za-z0-9_\-\.=+/~]{16,}))")),
    # key=value / key: value for words that name a secret; the value must look like one (8+ chars, no spaces).
    (
        "secret",
        re.compile(
            r"(?i)([psac](?<!\w[psac])(?:assword|asswd|wd|ecret|pi[_-]?key|ccess[_-]?token|uth[_-]?token"
            r"|lient[_-]?secret)[\"']?\s*[:=]\s*[\"']?)(?!\[REDACTED)(?P<s>[^\s\"',;]{8,})"
        ),
    ),
]


# Substrings every match of each pattern contains (lower-cased for the case-insensitive ones): a pattern is
# run only on text that holds one of them. `in` is a fast scan, and most text holds none, so masking a ~1 GB
# export costs a fraction of running every pattern over every text (the patterns dominated the adapters' time).
_TRIGGERS: dict[str, tuple[str, ...]] = {
    "private key": ("PRIVATE KEY",),
    "password": ("://",),
    "api key": ("sk-", "_live_", "_test_"),
    "aws key": ("AKIA", "ASIA", "AGPA", "AIDA", "AROA"),
    "github token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "slack token": ("xox",),
    "google api key": ("AIza",),
    "huggingface token": ("hf_",),
    "jwt": ("eyJ",),
    "bearer token": ("bearer ",),
    "secret": ("pass", "pwd", "secret", "key", "token"),
}
_CASE_INSENSITIVE = {"bearer token", "secret"}
assert {k for k, _ in _PATTERNS} == set(_TRIGGERS)


def _may_match(kind: str, text: str, lower: str) -> bool:
    haystack = lower if kind in _CASE_INSENSITIVE else text
    return any(t in haystack for t in _TRIGGERS[kind])


# One search looks at most _WINDOW + _OVERLAP characters: a few milliseconds for the slowest pattern. A match
# must start in its window and may run up to _OVERLAP characters past it; one that reaches the end of what
# the search saw (an unterminated private key block, say) is matched again against the whole text, so it
# is never cut short. A credential longer than _OVERLAP (32 K; a large JWT is a few K) may go unseen.
_WINDOW = 64 * 1024
_OVERLAP = 32 * 1024


def mask_secrets(text: str) -> str:
    """`text` with every credential shape replaced by `[REDACTED <kind>]`: the same result as calling each
    pattern's `sub` in turn, found in bounded steps."""
    lower = text.lower()
    for kind, pattern in _PATTERNS:
        if not _may_match(kind, text, lower):
            continue
        pieces: list[str] = []
        done = 0
        for start, end in _jwt_spans(text) if pattern is None else map(_masked, _matches(pattern, text)):
            if start < done:  # inside what an earlier match of this pattern already masked
                continue
            pieces.append(text[done:start])
            pieces.append(f"[REDACTED {kind}]")
            done = end
        if pieces:
            pieces.append(text[done:])
            text = "".join(pieces)
    return text


def _masked(m: re.Match[str]) -> tuple[int, int]:
    """The span a match masks: its group `s` when it has one, else all of it."""
    return m.span("s") if "s" in m.re.groupindex else m.span()


# A JWT is `\beyJ<8+>.eyJ<8+>.<8+>` of base64url characters. As one regex it is quadratic: in a run like
# `-eyJ-eyJ-eyJ...` every `eyJ` is a start, and each start scans to the run's end looking for the '.' (a
# 200 KB turn took 18.8 s). So it is found from its tail instead: `.eyJ<8+>.<8+>` has few starts and each
# character is scanned by at most two of them; then the first segment is the run of base64url characters
# before the tail's '.', read backwards once, and the JWT starts at its first `\beyJ` (the leftmost start,
# as the regex would find).
_JWT_TAIL = re.compile(r"\.eyJ[A-Za-z0-9_\-]{8,}+\.[A-Za-z0-9_\-]{8,}+")
_JWT_HEAD = re.compile(r"(?<!\w)eyJ")
_BASE64URL_RUN = re.compile(r"[A-Za-z0-9_\-]*")


def _jwt_spans(text: str) -> Iterator[tuple[int, int]]:
    reverse: str | None = None
    pos = done = 0
    while (tail := _next_match(_JWT_TAIL, text, pos)) is not None:
        dot = tail.start()
        if reverse is None:
            reverse = text[::-1]
        run = _BASE64URL_RUN.match(reverse, len(text) - dot)
        assert run is not None  # `*` always matches
        first = dot - (run.end() - run.start())
        head = _JWT_HEAD.search(text, max(first, done), dot - 8)  # the 'eyJ' and 8 more before the '.'
        if head is None:
            pos = dot + 1  # not a JWT; another tail may start inside this one
            continue
        yield head.start(), tail.end()
        pos = done = tail.end()


def _matches(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """What `pattern.finditer(text)` gives (leftmost matches, not overlapping), found in bounded steps."""
    pos = 0
    while (m := _next_match(pattern, text, pos)) is not None:
        yield m
        pos = m.end() if m.end() > m.start() else m.start() + 1


def _next_match(pattern: re.Pattern[str], text: str, pos: int) -> re.Match[str] | None:
    """`pattern.search(text, pos)`, searching at most _WINDOW + _OVERLAP characters per call. Lookbehinds
    still see the text before a window: `search(text, pos, endpos)` only moves where matching starts, while
    `endpos` acts as the end of the text, so a match that reaches it is redone without it."""
    n = len(text)
    while pos < n:
        limit = min(n, pos + _WINDOW)  # a match must start before this
        endpos = min(n, limit + _OVERLAP)
        m = pattern.search(text, pos, endpos)
        if m is None or m.start() >= limit:
            pos = limit
            continue
        if max(m.end(), _masked(m)[1]) == endpos < n:  # cut short by endpos, or there only because the text "ended"
            full = pattern.match(text, m.start())
            if full is None:
                pos = m.start() + 1
                continue
            m = full
        return m
    return None
