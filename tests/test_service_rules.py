"""The service's pure text rules: secret masking, the tool's output form and cap, the pasted-recall rule,
ingest body validation, and configuration. Hermetic: no server, no models."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest

from funes_py.redact import mask_secrets
from funes_py.render import INTRO
from funes_py.render import NOTHING as NOTHING_FOUND
from funes_py.render import format_passages as render
from funes_py.server.config import ServiceConfig
from funes_py.server.passages import passage_count, strip_pasted_recall
from funes_py.server.turns import BadRequest, parse_body

# --- secrets ----------------------------------------------------------------------------------------

SECRETS = {
    "openai key": "sk-proj-Xr4Tq9Lm2Vb7Nc1Zp8Ws5Ye3Ua6Io0Kd",
    "anthropic key": "sk-ant-api03-h7Gf2Kp9Qw4Zx1Vb6Nm3Lk8Jh5Df0Sa",
    "aws key": "AKIAIOSFODNN7EXAMPLE",
    "github token": "ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ",
    "slack token": "xoxb-2048-4096-Ab3Cd5Ef7Gh9",
    "bearer": "Bearer abc123def456ghi789jkl012mno",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXZhbHVl",
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_credential_shapes_are_masked(kind: str) -> None:
    secret = SECRETS[kind]
    out = mask_secrets(f"here it is: {secret} -- keep it safe")
    assert "[REDACTED" in out
    assert secret.split()[-1] not in out
    assert out.startswith("here it is:") and out.endswith("-- keep it safe")


def test_private_key_block_and_url_password_are_masked() -> None:
    text = (
        "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
        "-----END OPENSSH PRIVATE KEY-----\nand db postgres://etl:Hunt3r2-prod@db.internal:5432/ops, password=S3cr3tPassw0rd"
    )
    out = mask_secrets(text)
    assert "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" not in out
    assert "Hunt3r2-prod" not in out and "postgres://etl:[REDACTED password]@db.internal" in out
    assert "S3cr3tPassw0rd" not in out


def test_ordinary_text_passes_through() -> None:
    text = "Ticket MT-3318 blocks N-11; sha 3f5a9c1e2b7d4a6f8e0c1b2a; the password policy is 12 characters; run -k 100."
    assert mask_secrets(text) == text


def test_masking_is_configurable() -> None:
    body = {"user": "u", "conversation_id": "c", "turns": [{"role": "user", "text": SECRETS["aws key"], "ts": "2026-10-01T00:00:00Z"}]}
    assert SECRETS["aws key"] not in parse_body(body, mask=True).lines[0]
    assert SECRETS["aws key"] in parse_body(body, mask=False).lines[0]


# --- output -----------------------------------------------------------------------------------------

def _hit(sid: str, seq: int, text: str, neighbors: list | None = None, ts: str = "2026-10-03T21:58:00Z"):
    return SimpleNamespace(session_id=sid, turn_uuid=f"{sid}-{seq}", seq=seq, ts=ts, role="user",
                           block_type="text", text=text, score=1.0, neighbors=neighbors or [])


def _nb(seq: int, text: str, role: str = "assistant"):
    return SimpleNamespace(turn_uuid=f"n{seq}", role=role, seq=seq, ts="2026-10-03T21:55:00Z", text=text)


def test_passages_are_dated_merged_and_free_of_ids() -> None:
    hits = [
        _hit("secret-session-id", 4, "We postpone N-11 until MT-3318 is closed.", [_nb(3, "MT-3318 blocks N-11."), _nb(5, "Noted.")]),
        _hit("secret-session-id", 5, "Noted.", [_nb(4, "We postpone N-11 until MT-3318 is closed.", "user")]),
    ]
    out = render(hits, 4000)
    assert out.startswith(INTRO)
    assert passage_count(out) == 1  # overlapping hits of one conversation: one passage, no turn twice
    assert out.count("We postpone N-11") == 1
    assert "[2026-10-03 21:55 UTC]" in out
    assert "secret-session-id" not in out and "turn_uuid" not in out and "get" not in out.lower().split()


def test_a_turn_shown_in_full_is_not_repeated_as_a_neighbour_preview() -> None:
    full = ("SettleNet switched its export to file format v2.3 at the month-end close on 30 September.\n"
            "In v2.3 the settlement column is renamed settled_amt, so our mapping reads nothing and the "
            "settlement_amount column arrives empty for every month-end row.")
    preview = " ".join(full.split())[:150].rsplit(" ", 1)[0] + "…"  # what the engine gives as a neighbour
    hits = [
        _hit("s", 4, "Why would the settlement column be empty only at the end of September?", [_nb(5, preview)]),
        _hit("s", 5, full, [_nb(4, "Why would the settlement column be empty only at the end of September?", "user")]),
    ]
    out = render(hits, 4000)
    assert out.count("SettleNet switched") == 1, out
    assert "settlement_amount column arrives empty" in out  # the full text is the one kept


@pytest.mark.parametrize("cap", [120, 300, 650, 1000, 4000])
def test_output_never_exceeds_the_cap_and_never_cuts_a_word(cap: int) -> None:
    words = [f"word{i:04d}" for i in range(900)]
    hits = [_hit(f"s{j}", 0, " ".join(words[j * 300:(j + 1) * 300])) for j in range(3)]
    out = render(hits, cap)
    assert len(out) <= cap
    cut = [t for t in out.split() if re.match(r"word\d", t) and not re.fullmatch(r"word\d{4}", t)]
    assert not cut, "a word was cut"
    assert passage_count(out) >= 1


def test_nothing_found() -> None:
    assert render([], 4000) == NOTHING_FOUND


# --- pasted recall output ---------------------------------------------------------------------------

def test_a_turn_that_is_mostly_pasted_recall_is_skipped() -> None:
    pasted = render([_hit("s", 1, "The settlement column was empty because of format v2.3.", [_nb(2, "Escalated to Marta.")])], 4000)
    assert strip_pasted_recall("Here is what I found:\n\n" + pasted) is None
    assert strip_pasted_recall("```\n" + pasted + "\n```") is None


def test_own_words_around_a_quote_are_kept_without_the_quote() -> None:
    text = ("From our notes:\n> [2026-10-01 07:43 UTC]\n> user: Why was the settlement column empty?\n"
            "> assistant: SettleNet switched to format v2.3.\n\nSo the fix is the column mapping, and Marta owns it.")
    out = strip_pasted_recall(text)
    assert out is not None and "So the fix is the column mapping" in out
    assert "SettleNet switched" not in out and "[2026-10-01" not in out


def test_a_pasted_answer_is_not_stored_but_the_user_turn_is() -> None:
    pasted = render([_hit("s", 1, "Base case is Scenario B with 3.2% growth.")], 4000)
    body = {"user": "u", "conversation_id": "c", "turns": [
        {"role": "user", "text": "what was the base case?", "ts": "2026-10-10T10:00:00Z"},
        {"role": "assistant", "text": pasted, "ts": "2026-10-10T10:00:05Z"},
        {"role": "tool", "text": pasted, "ts": "2026-10-10T10:00:04Z"},
    ]}
    conv = parse_body(body, mask=True)
    assert len(conv.lines) == 1 and conv.skipped == 2
    assert json.loads(conv.lines[0])["role"] == "user"


# --- ingest body ------------------------------------------------------------------------------------

def _body(**over):
    body = {"user": "alice", "conversation_id": "conv-1", "turns": [{"role": "user", "text": "hi", "ts": "2026-10-01T09:00:00+02:00"}]}
    body.update(over)
    return body


def test_turns_become_funes_jsonl_lines() -> None:
    body = _body(turns=[{"role": "user", "text": "a", "ts": "2026-10-01T09:00:00+02:00"},
                        {"id": "t-2", "role": "Assistant", "text": "b", "ts": "2026-10-01T07:01:00"}])
    lines = [json.loads(line) for line in parse_body(body, mask=True).lines]
    assert lines[0] == {"session_id": "conv-1", "turn_uuid": "conv-1-0", "seq": 0, "ts": "2026-10-01T07:00:00Z",
                        "role": "user", "harness": "gateway", "blocks": [{"block_type": "text", "text": "a"}]}
    assert lines[1]["turn_uuid"] == "t-2" and lines[1]["role"] == "assistant" and lines[1]["ts"] == "2026-10-01T07:01:00Z"


@pytest.mark.parametrize("over, field", [
    ({"conversation_id": "../etc"}, "conversation_id"),
    ({"conversation_id": "x" * 129}, "conversation_id"),
    ({"conversation_id": ""}, "conversation_id"),
    ({"user": ""}, "user"),
    ({"user": None}, "user"),
    ({"turns": []}, "turns"),
    ({"turns": [{"role": "user", "text": "hi"}]}, "turns[0].ts"),
    ({"turns": [{"role": "user", "text": "hi", "ts": "yesterday"}]}, "turns[0].ts"),
    ({"turns": [{"text": "hi", "ts": "2026-10-01T00:00:00Z"}]}, "turns[0].role"),
    ({"turns": [{"role": "user", "ts": "2026-10-01T00:00:00Z"}]}, "turns[0].text"),
])
def test_bad_bodies_name_the_field(over: dict, field: str) -> None:
    with pytest.raises(BadRequest) as e:
        parse_body(_body(**over), mask=True)
    assert str(e.value).startswith(field)


# --- configuration ----------------------------------------------------------------------------------

def test_config_defaults_env_and_flags() -> None:
    cfg = ServiceConfig.load({})
    assert (cfg.recall_k, cfg.recall_candidates, cfg.recall_rerank, cfg.recall_min_similarity) == (3, 8, False, None)
    assert (cfg.recall_max_chars, cfg.max_concurrent_recalls, cfg.recall_timeout_s) == (4000, 4, 10.0)
    assert (cfg.host, cfg.port, cfg.index_debounce_s) == ("127.0.0.1", 8000, 2.0)
    env = {"FUNES_PORT": "9100", "FUNES_RECALL_K": "5", "FUNES_MASK_SECRETS": "off",
           "FUNES_RECALL_MIN_SIMILARITY": "0.3", "FUNES_DATA": "/srv/funes"}
    cfg = ServiceConfig.load(env, port=9200, data_dir="/tmp/d")
    assert (cfg.port, cfg.recall_k, cfg.mask_secrets, cfg.recall_min_similarity) == (9200, 5, False, 0.3)
    assert cfg.data_dir == "/tmp/d"


def test_config_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="FUNES_RECALL_K"):
        ServiceConfig.load({"FUNES_RECALL_K": "0"})
    with pytest.raises(ValueError, match="FUNES_PORT"):
        ServiceConfig.load({"FUNES_PORT": "eighty"})
