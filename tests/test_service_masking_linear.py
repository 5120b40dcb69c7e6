"""Secret masking on the inputs that once made it quadratic (a 200 KB turn of `-eyJ` took 18.8 s) and on
the large turns users paste (a megabyte of one character, of base64, a long JSON log line): masking is
still correct on them, and searching in bounded windows finds exactly what one search over the whole text
finds. Their speed is measured by benches/probes/ingest_stall.py, not asserted here. Pure: no engine, no server."""

from __future__ import annotations

import base64
import json
import random
import re

import pytest

from funes_py import redact
from funes_py.redact import mask_secrets
from funes_py.server.turns import parse_body

JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
       ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
KEY = "sk-proj-Q9w8E7r6T5y4U3i2O1pAsDfGhJkL"
MB = 1_000_000


def whole_text_mask(text: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The reference: the same patterns, each searched over the whole text in one window."""
    with monkeypatch.context() as m:
        m.setattr(redact, "_WINDOW", 1 << 40)
        return mask_secrets(text)


def test_a_run_of_jwt_prefixes_is_left_alone_and_a_real_jwt_in_it_is_masked() -> None:
    run = "-eyJ" * 50_000  # 200 KB: the turn that stalled the service for 18.8 s
    assert mask_secrets(run) == run
    out = mask_secrets(run + f" {JWT} " + run)
    assert out == run + " [REDACTED jwt] " + run
    # Glued to the run, the JWT starts at the run's first `eyJ`, as the one-regex form `\beyJ...` said.
    assert mask_secrets(f"x {run}{JWT} y") == "x -[REDACTED jwt] y"


def test_the_jwt_search_finds_what_the_plain_regex_finds() -> None:
    plain = re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")
    rnd = random.Random(9)
    pieces = ["eyJ", "-", "_", ".", ".eyJ", "abcdefgh", "a", " ", "é", "x-", JWT]
    for _ in range(20_000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 25)))
        assert mask_secrets(text) == plain.sub("[REDACTED jwt]", text), text
    assert mask_secrets("x" + JWT) == "x" + JWT  # `\b`: a JWT does not start inside a word
    assert mask_secrets("session-" + JWT) == "session-[REDACTED jwt]"


@pytest.mark.parametrize("char", ["a", "-", "=", " ", "\n", "é"])
def test_a_megabyte_of_one_character(char: str) -> None:
    text = char * MB
    assert mask_secrets(text) == text
    keyed = char * (MB // 2) + f" {KEY} " + char * (MB // 2)
    assert mask_secrets(keyed) == char * (MB // 2) + " [REDACTED api key] " + char * (MB // 2)


def test_a_megabyte_of_base64() -> None:
    blob = base64.b64encode(random.Random(3).randbytes(750_000)).decode()
    assert mask_secrets(blob) == blob  # random base64 looks like no credential
    out = mask_secrets(f"{blob[:400_000]}\nAuthorization: Bearer {blob[:40]}\n{blob[400_000:]}")
    assert out.count("[REDACTED bearer token]") == 1 and f"Bearer {blob[:40]}" not in out


def test_a_long_json_log_line() -> None:
    records = [json.dumps({"ts": f"2026-10-01T00:00:{i % 60:02d}Z", "level": "info", "path": f"/api/items/{i}",
                           "auth": f"Bearer {JWT}", "password": f"hunter{i:04d}x", "dur_ms": i % 97})
               for i in range(6_000)]
    line = "".join(records)  # about 1 MB, no newline
    out = mask_secrets(line)
    assert JWT not in out and "hunter" not in out
    # The JWT pattern runs before the bearer one: "Bearer [REDACTED jwt]".
    assert out.count("[REDACTED jwt]") == 6_000 and out.count("[REDACTED secret]") == 6_000


def test_windows_find_what_one_search_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials placed across every window boundary, with tiny windows: each is masked as it would be
    by one search over the whole text."""
    rnd = random.Random(5)
    pieces = ["sk-", "sk_live_", "AKIA", "ghp_", "github_pat_", "xoxb-", "AIza", "hf_", "eyJ", "Bearer ",
              "password=", "api_key: ", "://u:", "@", "/", "-----BEGIN RSA PRIVATE KEY-----",
              "-----END RSA PRIVATE KEY-----", "-", "_", ".", " ", "\n", "=", ":", '"', "abcdefghij",
              "ABCDEFGHIJKLMNOP", "0123456789", "xY7_-k", JWT, KEY]
    texts = ["".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 80))) for _ in range(3_000)]
    expected = [whole_text_mask(t, monkeypatch) for t in texts]
    monkeypatch.setattr(redact, "_WINDOW", 7)
    monkeypatch.setattr(redact, "_OVERLAP", 4_000)  # longer than any credential here
    assert [mask_secrets(t) for t in texts] == expected


def test_an_unterminated_private_key_block_longer_than_a_window_is_masked_to_the_end() -> None:
    text = "before\n-----BEGIN PRIVATE KEY-----\n" + "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n" * 20_000
    assert mask_secrets(text) == "before\n[REDACTED private key]"


def test_chained_bearer_tokens_are_all_masked() -> None:
    # The first token ends in "-Bearer"; the token after it is masked too.
    out = mask_secrets("Bearer AAAAAAAAAAAAAAAA-Bearer BBBBBBBBBBBBBBBBBBBB end")
    assert out == "Bearer [REDACTED bearer token] [REDACTED bearer token] end"


def test_a_pathological_turn_goes_through_the_whole_ingest_rule() -> None:
    """parse_body (masking, then the pasted-recall rule) on the pathological turns keeps them whole."""
    for text in ["-eyJ" * 50_000, "a" * MB, ("> [2026-10-01 09:00 UTC]\n" * 40_000)]:
        body = {"user": "u", "conversation_id": "c",
                "turns": [{"role": "assistant", "text": text + "\nThe Ghent line L-7 changeover took 24 minutes.",
                           "ts": "2026-10-01T00:00:00Z"}]}
        conv = parse_body(body, mask=True)
        stored = json.loads(conv.lines[0])["blocks"][0]["text"]
        assert stored.endswith("The Ghent line L-7 changeover took 24 minutes.")
        if not text.startswith(">"):
            assert stored.startswith(text[:1000])
