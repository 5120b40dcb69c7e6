"""Every malformed body is a BadRequest whose message names its place, never another exception: invalid
UTF-8 and JSON, deep nesting, huge number literals, lone UTF-16 surrogates, timestamps at the calendar's
edge, the per-request limits. And the answer's edge cases: an over-long query is cut at a word, an empty
result is the "nothing relevant" sentence, never an intro with no passage. Pure: no engine, no server
(tests/test_service_fuzz.py sends such bodies to a real one)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from funes_py.render import INTRO
from funes_py.render import NOTHING as NOTHING_FOUND
from funes_py.render import format_passages as render
from funes_py.server.jsonbody import BadRequest, JsonLimits, NotJson, parse_json
from funes_py.server.service import cut_query
from funes_py.server.turns import TurnLimits, parse_body, parse_request

LIMITS = JsonLimits(max_depth=32, max_number_chars=40)
TURN_LIMITS = TurnLimits(max_turns=100, max_turn_chars=1000)


def body(**turn: object) -> dict:
    t = {"role": "user", "text": "hello", "ts": "2026-10-01T09:00:00Z", **turn}
    return {"user": "alice", "conversation_id": "c-1", "turns": [t]}


def error_of(raw: bytes) -> str:
    with pytest.raises(BadRequest) as e:
        parse_request(raw, LIMITS, TURN_LIMITS, mask=True)
    return str(e.value)


@pytest.mark.parametrize("raw, starts", [
    (b"\xff\xfe{}", "body: not valid UTF-8 (byte 0)"),
    (b'{"user": "al\xc3ice"}', "body: not valid UTF-8 (byte 12)"),
    (b"\x00{\x00}", "body: not valid JSON"),  # would pass as UTF-16 through json.loads(bytes)
    (b"{not json", "body: not valid JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
    (b"\xef\xbb\xbf{}", "body: not valid JSON"),  # a byte order mark
    (b"[" * 100_000 + b"]" * 100_000, "body: nested deeper than 32 levels"),
    (b'{"a":' * 40 + b"1" + b"}" * 40, "a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a: nested deeper"),
    (b'{"n": ' + b"9" * 5000 + b"}", "body: a number longer than 40 characters"),
    (b'{"n": 1.' + b"0" * 50 + b"}", "body: a number longer than 40 characters"),
    (b'{"n": NaN}', "body: NaN is not JSON"),
    (b'{"n": -Infinity}', "body: -Infinity is not JSON"),
])
def test_bodies_that_are_not_acceptable_json(raw: bytes, starts: str) -> None:
    assert error_of(raw).startswith(starts)


def test_not_json_is_told_apart_from_unacceptable_json() -> None:
    """/mcp answers the first with a JSON-RPC parse error, the second with an invalid-request error."""
    with pytest.raises(NotJson):
        parse_json(b"\xff", LIMITS)
    with pytest.raises(NotJson):
        parse_json(b"[1,", LIMITS)
    with pytest.raises(BadRequest) as e:
        parse_json(b"[" * 40 + b"]" * 40, LIMITS)
    assert not isinstance(e.value, NotJson)


@pytest.mark.parametrize("where, value, field", [
    ("text", "ok \ud800 ok", "turns[0].text: lone UTF-16 surrogate \\ud800 at character 3"),
    ("id", "t-\udfff", "turns[0].id: lone UTF-16 surrogate \\udfff at character 2"),
    ("role", "\udc80", "turns[0].role: lone UTF-16 surrogate"),
])
def test_lone_surrogates_are_named_by_field(where: str, value: str, field: str) -> None:
    raw = json.dumps(body(**{where: value})).encode()  # json.dumps writes them as \ud800 escapes
    assert error_of(raw).startswith(field)
    with pytest.raises(BadRequest, match=r"^user: lone UTF-16 surrogate"):
        parse_body({**body(), "user": "al\ud83dice"}, mask=True)  # half an emoji


def test_a_surrogate_pair_is_one_character_and_fine() -> None:
    raw = json.dumps(body(text="rocket \U0001F680 launch")).encode()  # escaped as \ud83d\ude80
    conv = parse_request(raw, LIMITS, TURN_LIMITS, mask=True)
    assert "\U0001F680" in json.loads(conv.lines[0])["blocks"][0]["text"]


@pytest.mark.parametrize("ts", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_timestamps_past_the_calendar_edge_in_utc(ts: str) -> None:
    with pytest.raises(BadRequest, match=r"^turns\[0\]\.ts: .* falls outside the years 1 to 9999 in UTC"):
        parse_body(body(ts=ts), mask=True)


@pytest.mark.parametrize("ts, stored", [
    ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"),
    ("9999-12-31T23:59:59+00:00", "9999-12-31T23:59:59Z"),
    ("2026-10-01T09:00:00+02:00", "2026-10-01T07:00:00Z"),
])
def test_timestamps_at_the_edge_but_inside(ts: str, stored: str) -> None:
    assert json.loads(parse_body(body(ts=ts), mask=True).lines[0])["ts"] == stored


def test_a_very_long_timestamp_is_refused_without_parsing_it() -> None:
    with pytest.raises(BadRequest, match=r"^turns\[0\]\.ts: longer than 64 characters"):
        parse_body(body(ts="2026" * 100_000), mask=True)


def test_the_limits_on_turns_and_text() -> None:
    many = {**body(), "turns": [body()["turns"][0]] * 101}
    with pytest.raises(BadRequest, match=r"^turns: 101 turns, more than the limit of 100"):
        parse_body(many, mask=True, limits=TURN_LIMITS)
    with pytest.raises(BadRequest, match=r"^turns\[0\]\.text: 1001 characters, more than the limit of 1000"):
        parse_body(body(text="x" * 1001), mask=True, limits=TURN_LIMITS)
    assert parse_body(body(text="x" * 1000), mask=True, limits=TURN_LIMITS).lines


def test_a_long_query_is_cut_at_a_word() -> None:
    q = "pump curve " * 100_000  # 1.1 MB
    cut = cut_query(q, 1000)
    assert len(cut) <= 1000 and cut.endswith("curve") and cut.startswith("pump curve pump")
    assert cut_query("x" * 1_000_000, 1000) == "x" * 1000  # one word longer than the limit
    assert cut_query(" " * 1_000_000 + "pump", 1000) == "pump"
    assert cut_query("  a \n b  ", 1000) == "a b"


def hit(text: str, session: str = "s") -> SimpleNamespace:
    return SimpleNamespace(session_id=session, turn_uuid="u", seq=1, ts="2026-10-01T07:43:00Z", role="user",
                           block_type="text", text=text, score=1.0, neighbors=[])


@pytest.mark.parametrize("text", ["a" * 1_000_000, "\n\n" + "b" * 5000, "x" * 3990, "hello " + "y" * 9000])
@pytest.mark.parametrize("cap", [60, 90, 100, 400, 4000])
def test_an_answer_is_passages_or_the_nothing_sentence(text: str, cap: int) -> None:
    out = render([hit(text), hit(text, "t")], cap)
    assert len(out) <= cap
    if out != NOTHING_FOUND:
        assert out.startswith(INTRO)
        quoted = out.split("\nuser:", 1)[1].split("\n")[0].strip().removesuffix("…").strip()
        assert quoted, out  # some words of the turn, not just its role
    assert render([], cap) == NOTHING_FOUND
