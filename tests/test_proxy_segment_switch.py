"""Segment switches (with the scripted engine, the test double): when even the masked prompt does not fit,
the proxy asks for handoff notes on the old prefix, then starts a new segment made of the system message,
a segment message (the first user request verbatim, the notes, an index of archived outputs) and the recent
tail; later requests map into it; no request larger than the window ever reaches the engine."""

from __future__ import annotations

from typing import Any

import pytest
from proxy_helpers import SYSTEM, TOOLS, Proxy, filler, tool_turn

from funes_py.proxy.segments import HEADINGS, NOTES_PROMPT
from proxy_double import Reply, ScriptedEngine, tokens

pytestmark = pytest.mark.models

WINDOW = 8192
FIRST = "Please refactor the billing module; keep the public API stable. Ticket BILL-4412."
NOTES = "\n".join(f"{h}\n- fact {i}" for i, h in enumerate(HEADINGS))


def script(body: dict[str, Any], n: int) -> Reply:
    if body["messages"][-1].get("content") == NOTES_PROMPT:
        return Reply(text=NOTES)
    return Reply(text=f"reply {n}")


def test_switch_notes_on_the_old_prefix_then_a_new_segment_that_later_turns_map_into(tmp_path):
    history = [SYSTEM, {"role": "user", "content": FIRST}]
    with ScriptedEngine(WINDOW, script=script) as engine, Proxy(tmp_path / "d", engine.url) as proxy:
        switched_at = None
        for turn in range(14):
            # Users paste long logs: never hidden, so only a new segment can make room.
            history += tool_turn(turn, "read", {"path": f"billing/f{turn}.py"}, filler(turn, 1500))
            history += [{"role": "assistant", "content": "Looking."}, {"role": "user", "content": f"log {turn}:\n" + filler(500 + turn, 3500)}]
            resp = proxy.chat(history, tools=TOOLS)
            assert resp.status_code == 200, resp.text
            if "switch" in resp.headers["x-funes-proxy"] and switched_at is None:
                switched_at = len(engine.bodies)
            history.append(resp.json()["choices"][0]["message"])
        assert switched_at is not None, "the pasted logs must force a segment switch"
        assert engine.oversize == [], "a request larger than the window reached the engine"
        assert all(tokens(b) < WINDOW for b in engine.bodies)

    notes_req, first_seg = engine.bodies[switched_at - 2], engine.bodies[switched_at - 1]
    before = engine.bodies[switched_at - 3]["messages"]
    assert notes_req["messages"][-1]["content"] == NOTES_PROMPT
    assert notes_req["messages"][:3] == before[:3], "the notes request keeps the old prompt's head"
    msgs = first_seg["messages"]
    assert msgs[0] == SYSTEM
    seg = msgs[1]["content"]
    assert seg.startswith("[funes-proxy: segment 1]")
    assert f"«««\n{FIRST}\n»»»" in seg, "the first user request, verbatim"
    assert NOTES in seg and "Largest archived outputs:" in seg and 'recall(id="m' in seg
    assert msgs[2:] and msgs[-1]["role"] == "user", "the recent tail follows, up to the newest message"
    later = [b for b in engine.bodies[switched_at:] if b["messages"][-1].get("content") != NOTES_PROMPT]
    same = [b for b in later if b["messages"][1]["content"].startswith("[funes-proxy: segment 1]")]
    assert same, "the next turns map into the new segment"
    for body in same:
        assert body["messages"][:2] == msgs[:2]
