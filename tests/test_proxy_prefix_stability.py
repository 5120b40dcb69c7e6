"""Done-when 1: over 40 scripted turns at a 16K window, the engine's request bodies break their prefix only at
mask batches and segment switches, and a proxy restarted mid-run sends byte-identical bodies.

Two proxies run the same scripted agent against two scripted engines (the test double): A straight through,
B stopped and started again after turn 20 (same data directory). Every body B's engine receives must equal,
byte for byte, the one A's engine receives. Within A, each body's messages must start with the previous
body's messages, except where the proxy reported a mask batch or a switch for that request; a notes request
shares the old prompt's prefix. Auto-recall is off here: whether its search finds an output depends on when
the background index run finished, which would differ between A and B (its replay is covered elsewhere).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from proxy_helpers import SYSTEM, TOOLS, Proxy, filler

from funes_py.proxy.segments import NOTES_PROMPT
from proxy_double import Reply, ScriptedEngine, call

pytestmark = pytest.mark.models

WINDOW = 16384
TURNS = 40
RESTART_AFTER = 20


def script(body: dict[str, Any], n: int) -> Reply:
    """The engine's side of the agent: read a file on most turns, a short answer every fifth."""
    last = body["messages"][-1]
    if last.get("role") == "user" and str(last.get("content", "")).startswith("[funes-proxy] This conversation"):
        return Reply(text="## Goal\ndocument the package\n## Constraints from the user\nnone\n## Decisions and reasons\n"
                          "- read every module\n## Current state\nhalf done\n## Open problems and next steps\nthe rest\n"
                          "## Facts to keep (with archive ids)\n- none yet")  # fmt: skip
    k = sum(1 for m in body["messages"] if m.get("role") == "tool")
    if k % 5 == 4 and last.get("role") == "tool":
        return Reply(text=f"Module {k} documented.")
    return Reply(tool_calls=[call("read", {"path": f"pkg/module_{k}.py"}, f"call_{k}")])


def agent_turn(history: list[dict[str, Any]], answer: dict[str, Any], turn: int) -> None:
    """The client's side: run the tool the model asked for, or say what to do next."""
    history.append(answer)
    if answer.get("tool_calls"):
        c = answer["tool_calls"][0]
        path = json.loads(c["function"]["arguments"])["path"]
        history.append({"role": "tool", "tool_call_id": c["id"], "content": f"# {path}\n" + filler(turn, 1500 + 700 * (turn % 4))})
    else:  # a user pasting a long log: user messages are never hidden, so segments must switch
        history.append({"role": "user", "content": f"Good. Continue ({turn}). The CI log:\n" + filler(1000 + turn, 9000)})


def run(proxy: Proxy, restart_after: int | None) -> list[dict[str, str]]:
    history = [SYSTEM, {"role": "user", "content": "Document every module of the package in pkg/."}]
    reports = []
    for turn in range(TURNS):
        if restart_after is not None and turn == restart_after:
            proxy.restart()
        resp = proxy.chat(history, tools=TOOLS)
        assert resp.status_code == 200, resp.text
        reports.append(dict(part.split("=", 1) for part in resp.headers["x-funes-proxy"].split("; ")))
        agent_turn(history, resp.json()["choices"][0]["message"], turn)
    return reports


def test_bodies_break_their_prefix_only_at_decisions_and_survive_a_restart(tmp_path):
    # Nothing here searches the archive: index runs (about a second each on 2 cores) are batched, so the two
    # proxies do not spend the test's time re-indexing after every turn.
    env = {"FUNES_PROXY_AUTO_RECALL": "off", "FUNES_PROXY_INDEX_DEBOUNCE_S": "20", "FUNES_PROXY_INDEX_MAX_WAIT_S": "60"}
    with ScriptedEngine(WINDOW, script=script) as ea, ScriptedEngine(WINDOW, script=script) as eb:
        with Proxy(tmp_path / "a", ea.url, env=env) as pa, Proxy(tmp_path / "b", eb.url, env=env) as pb:
            reports = run(pa, None)
            run(pb, RESTART_AFTER)
    assert ea.oversize == [] and eb.oversize == [], "a request larger than the window reached the engine"
    assert len(ea.raw) == len(eb.raw)
    for k, (a, b) in enumerate(zip(ea.raw, eb.raw, strict=True)):
        assert a == b, f"body {k} differs between the proxy that restarted and the one that did not"

    events = [r["events"] for r in reports]
    assert any("mask" in e for e in events), "40 turns at 16K must hide outputs"
    assert any("switch" in e for e in events), "the pasted logs must force a segment switch"
    # Walk the bodies: notes requests are their own; every other body maps to one turn, in order.
    turn_bodies = [b for b in ea.bodies if b["messages"][-1].get("content") != NOTES_PROMPT]
    notes = [(i, b) for i, b in enumerate(ea.bodies) if b["messages"][-1].get("content") == NOTES_PROMPT]
    assert len(turn_bodies) == TURNS and len(notes) == sum("switch" in e for e in events)
    breaks = 0
    for t in range(1, TURNS):
        prev, cur = turn_bodies[t - 1]["messages"], turn_bodies[t]["messages"]
        if cur[: len(prev)] != prev:
            breaks += 1
            assert "mask" in events[t] or "switch" in events[t], f"turn {t} broke the prefix without a decision"
    assert breaks >= 1
    for i, body in notes:  # a notes request keeps the old prompt's prefix (the engine's cache)
        turn = turn_bodies.index(ea.bodies[i + 1])
        if "mask" in events[turn]:
            continue  # hidden in the same request, just before the switch: the prefix moved already
        prev = ea.bodies[i - 1]["messages"]
        shared = body["messages"][:-1]
        assert shared == prev[: len(shared)] and len(shared) > len(prev) // 2
    for body in turn_bodies:
        assert body.get("id_slot") == 0 and body.get("cache_prompt") is True
