"""Which outputs a mask batch may hide, and what the receipt says (pure parts; the HTTP path is covered by
the prefix-stability test): never the newest output, at least two assistant turns old, at least the minimum
size, oldest first, and only a batch that frees a worthwhile share unless the request must be made to fit."""

from __future__ import annotations

import hashlib

from proxy_helpers import SYSTEM, filler, tool_turn

from funes_py.proxy.identity import identify
from funes_py.proxy.messages import Call, calls_by_id
from funes_py.proxy.receipts import candidates, choose_batch, receipt
from funes_py.proxy.window import raw_tokens


def _history():
    h = [SYSTEM, {"role": "user", "content": "go"}]
    h += tool_turn(0, "bash", {"command": "pytest -q"}, filler(0, 3000) + "\n12 passed in 0.8s  ")
    h += tool_turn(1, "read", {"path": "small.py"}, "x = 1\n")  # too small to be worth hiding
    for i in range(2, 6):
        h += tool_turn(i, "read", {"path": f"m{i}.py"}, filler(i, 3000))
    return h


def test_candidates_follow_the_rules_and_batches_go_oldest_first():
    h = _history()
    ident = identify(h, {})
    sizes = [int(raw_tokens(m)) if m["role"] == "tool" else 0 for m in h]
    pool = candidates(h, ident.ids, sizes, {}, 0, min_tokens=200, min_age_turns=2)
    positions = [c.position for c in pool]
    tools = [i for i, m in enumerate(h) if m["role"] == "tool"]
    assert tools[1] not in positions, "the small output is never hidden"
    assert tools[-1] not in positions, "the newest output is never hidden"
    assert tools[-2] not in positions, "an output only one assistant turn old is kept"
    assert positions == sorted(positions) and positions[0] == tools[0]
    batch = choose_batch(pool, to_free=900, min_free=500)
    assert [c.position for c in batch] == positions[: len(batch)] and len(batch) < len(pool)
    assert choose_batch(pool, to_free=900, min_free=10_000) == [], "too small a batch is not worth a cache break"
    hidden = {c.mid: "r" for c in batch}
    again = candidates(h, ident.ids, sizes, hidden, 0, min_tokens=200, min_age_turns=2)
    assert not {c.mid for c in again} & set(hidden), "a hidden output is never chosen twice"
    later = candidates(h, ident.ids, sizes, {}, tools[3], min_tokens=200, min_age_turns=2)
    assert all(c.position >= tools[3] for c in later), "a segment's hidden past is not masked again"


def test_a_receipt_is_one_line_with_id_tool_command_size_hash_last_line_and_how_to_read_it():
    h = _history()
    text = h[3]["content"]
    call = calls_by_id(h)[h[3]["tool_call_id"]]
    assert call == Call("bash", '{"command":"pytest -q"}')
    r = receipt("m0123456789ab", text, call, 880, "recall")
    assert "\n" not in r
    assert "id=m0123456789ab" in r and "bash `pytest -q`" in r and "880 tokens" in r
    assert hashlib.sha256(text.encode()).hexdigest()[:12] in r
    assert "«12 passed in 0.8s»" in r and 'recall(id="m0123456789ab")' in r
