"""Mask credential shapes in turn text before anything is written to disk (pure, no I/O).

A memory is searched and quoted back to an agent months later; a key pasted into a chat must not live on
in it. The patterns aim at shapes with few false positives (a prefix plus enough random characters), so
ordinary prose, ticket numbers and hashes in text pass through untouched. Each match becomes
`[REDACTED <kind>]`, which keeps the sentence readable and says what was there.
"""

from __future__ import annotations

import re

# Order matters: the private-key block and URL passwords go first so a key inside them is masked once.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "private key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
    # scheme://user:password@host -> keep user and host, mask the password.
    ("password", re.compile(r"(?<=://)([^\s:/@]+):([^\s@/]+)(?=@)")),
    ("api key", re.compile(r"\bsk-(?:proj-|ant-(?:api\d\d-)?|live-|test-)?[A-Za-z0-9_\-]{20,}")),
    ("api key", re.compile(r"\b(?:rk|pk|sk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("aws key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{16}\b")),
    ("github token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}")),
    ("slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("google api key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("huggingface token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("bearer token", re.compile(r"(?i)(?<=\bbearer )[A-Za-z0-9_\-\.=+/~]{16,}")),
    # key=value / key: value for words that name a secret; the value must look like one (8+ chars, no spaces).
    (
        "secret",
        re.compile(
            r"(?i)(\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)"
            r"[\"']?\s*[:=]\s*[\"']?)(?!\[REDACTED)[^\s\"',;]{8,}"
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


def mask_secrets(text: str) -> str:
    """`text` with every credential shape replaced by `[REDACTED <kind>]`."""
    lower = text.lower()
    for kind, pattern in _PATTERNS:
        if not _may_match(kind, text, lower):
            continue
        if kind == "password":
            text = pattern.sub(lambda m: f"{m.group(1)}:[REDACTED password]", text)
        elif kind == "secret":
            text = pattern.sub(lambda m: f"{m.group(1)}[REDACTED secret]", text)
        else:
            text = pattern.sub(f"[REDACTED {kind}]", text)
    return text
