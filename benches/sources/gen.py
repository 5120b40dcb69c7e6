"""Writes large, realistic exports for the source adapters' benchmarks: a ChatGPT `conversations.json` of a
given size (1 GB for the memory benchmark), streamed to disk so the generator itself stays small.

    python -m benches.sources.gen chatgpt benches/out/sources/chatgpt-1g.json --mb 1024 [--seed 7]

Each conversation is what a real export holds: a `mapping` tree under a hidden system root, user and
assistant messages with the metadata fields ChatGPT writes (which make up much of a real export's bytes),
about one in six with a regenerated answer (a branch the adapter must drop), some with `thoughts`, a python
call and its output (dropped: not addressed to all), image parts. The text is built from topic sentence
banks with numbers, names and code, so its length and token mix look like chat and not like one repeated
line. Conversation 137 holds a planted fact (`PLANTED`) the benchmark recalls at the end."""

from __future__ import annotations

import argparse
import json
import random
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PLANTED = ("The locker code for the Lisbon office is 4471-KESTREL, and the spare badge is in drawer 3.",
           "what is the locker code for the Lisbon office")  # fmt: skip
PLANTED_AT = 137

TOPICS = {
    "cooking": (
        "I'm making {dish} for {n} people on {day} and the recipe serves four.",
        "Scale every ingredient by {f:.2f}; keep the salt at {n2} g and taste before adding more.",
        "The {dish} came out {texture}; the oven was at {t} °C for {m} minutes.",
        "Lower the heat to {t2} °C and give it {m2} more minutes under foil so the top does not burn.",
    ),
    "code": (
        "My {lang} service returns {code} when the {thing} cache is cold. Here is the handler:",
        "```{lang}\ndef handle(req):\n    item = cache.get(req.key)\n    if item is None:\n        item = load_{thing}(req.key, timeout={n})\n    return item\n```",
        "The timeout of {n} s is shorter than the {thing} load at p99 ({m} s), so the first call fails.",
        "Warm the cache at start-up, or raise the timeout to {m2} s and add a retry with backoff capped at {n2} s.",
    ),
    "travel": (
        "We have {n} days in {city} in {month}. What should we not miss?",
        "Day one: the old town and the {sight} before 9:00, when the queues are short.",
        "The train from {city} to {city2} takes about {m} minutes; buy tickets {n2} days ahead in {month}.",
        "Pack layers: {month} evenings in {city2} drop to {t} °C.",
    ),
    "money": (
        "I earn {cur}{k},{n3:03d} a year and want to save for a {goal} in {n} years.",
        "Put {p}% of each payslip into a separate account on payday; that is {cur}{s} a month.",
        "With {r:.1f}% interest you reach {cur}{total:,} after {n} years.",
        "Keep three months of expenses ({cur}{e:,}) liquid before investing the rest.",
    ),
    "writing": (
        "Can you tighten this paragraph for the {doc}? It reads too long.",
        "Here is a shorter version: the {thing} project ships in {month}, two weeks late, because {reason}.",
        "Lead with the decision, then the reason, then what you need from {name} by {day}.",
        "Cut the adverbs in the second sentence and keep the numbers: {n} users, {p}% churn.",
    ),
}
FILL = {
    "dish": ["lasagne", "dal makhani", "paella", "shakshuka", "beef rendang", "mushroom risotto", "pierogi"],
    "texture": ["dry at the edges", "soggy in the middle", "a bit bland", "burnt on top", "perfect but salty"],
    "day": ["Friday", "Saturday", "Sunday", "Wednesday"],
    "lang": ["python", "go", "rust", "typescript"],
    "thing": ["tariff", "profile", "invoice", "session", "catalogue"],
    "code": ["504", "500", "429", "503"],
    "city": ["Lisbon", "Kyoto", "Oaxaca", "Tbilisi", "Bergen", "Valparaíso", "Plovdiv"],
    "city2": ["Porto", "Nara", "Puebla", "Kutaisi", "Ålesund", "Santiago", "Sofia"],
    "month": ["March", "May", "October", "December", "July"],
    "sight": ["cathedral", "fish market", "castle", "botanical garden", "harbour"],
    "cur": ["€", "$", "£"],
    "goal": ["flat deposit", "sabbatical", "new car", "wedding"],
    "doc": ["board update", "release notes", "grant report", "team newsletter"],
    "reason": ["the vendor API changed", "two people were out sick", "the audit found a gap in logging"],
    "name": ["Priya", "Marco", "Aisha", "Tomás", "Grace", "Dmitri", "Yuki"],
}


def _sentence(rng: random.Random, template: str) -> str:
    vals: dict[str, Any] = {k: rng.choice(v) for k, v in FILL.items()}
    vals.update(n=rng.randint(2, 12), n2=rng.randint(3, 30), n3=rng.randint(0, 999), m=rng.randint(12, 95),
                m2=rng.randint(5, 40), t=rng.randint(150, 240), t2=rng.randint(120, 180), f=rng.uniform(1.2, 3.5),
                k=rng.randint(28, 140), p=rng.randint(5, 30), s=rng.randint(150, 2400), r=rng.uniform(1.5, 6.5),
                total=rng.randint(5_000, 90_000), e=rng.randint(4_000, 15_000))  # fmt: skip
    return template.format(**vals)


def _text(rng: random.Random, topic: str, sentences: int) -> str:
    bank = TOPICS[topic]
    return " ".join(_sentence(rng, rng.choice(bank)) for _ in range(sentences))


def _message(mid: str, role: str, t: float, content: dict[str, Any], recipient: str = "all",
             hidden: bool = False, name: str | None = None) -> dict[str, Any]:  # fmt: skip
    meta: dict[str, Any] = {"is_visually_hidden_from_conversation": True} if hidden else {
        "citations": [], "content_references": [], "message_type": None, "model_slug": "gpt-4o",
        "default_model_slug": "gpt-4o", "parent_id": None, "request_id": uuid.UUID(int=int(t * 1000)).hex[:16],
        "timestamp_": "absolute", "finish_details": {"type": "stop", "stop_tokens": [200002]}, "is_complete": True,
    }  # fmt: skip
    return {"id": mid, "author": {"role": role, "name": name, "metadata": {}}, "create_time": t, "update_time": None,
            "content": content, "status": "finished_successfully", "end_turn": role == "assistant" or None,
            "weight": 1.0, "metadata": meta, "recipient": recipient, "channel": None}  # fmt: skip


def conversation(rng: random.Random, i: int, t0: float) -> dict[str, Any]:
    topic = rng.choice(list(TOPICS))
    ids = iter(str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(1000))
    root, sys_id = next(ids), next(ids)
    mapping: dict[str, Any] = {root: {"id": root, "message": None, "parent": None, "children": [sys_id]}}
    mapping[sys_id] = {
        "id": sys_id,
        "parent": root,
        "children": [],
        "message": _message(sys_id, "system", t0, {"content_type": "text", "parts": [""]}, hidden=True),
    }
    parent, t = sys_id, t0

    def add(role: str, content: dict[str, Any], **kw: Any) -> str:
        nonlocal parent, t
        nid = next(ids)
        t += rng.uniform(5, 120)
        mapping[nid] = {"id": nid, "parent": parent, "children": [], "message": _message(nid, role, t, content, **kw)}
        mapping[parent]["children"].append(nid)
        parent = nid
        return nid

    for turn in range(rng.randint(2, 9)):
        if i == PLANTED_AT and turn == 1:
            add("user", {"content_type": "text", "parts": ["Please remember this for me. " + PLANTED[0]]})
            add(
                "assistant", {"content_type": "text", "parts": ["Noted: locker 4471-KESTREL, spare badge in drawer 3."]}
            )
            continue
        user_text = _text(rng, topic, rng.randint(1, 4))
        if rng.random() < 0.1:
            add(
                "user",
                {
                    "content_type": "multimodal_text",
                    "parts": [
                        {
                            "content_type": "image_asset_pointer",
                            "asset_pointer": f"file-service://file-{next(ids)[:12]}",
                            "size_bytes": rng.randint(50_000, 900_000),
                            "width": 1024,
                            "height": 768,
                        },
                        user_text,
                    ],
                },
            )
        else:
            add("user", {"content_type": "text", "parts": [user_text]})
        asked = parent
        if rng.random() < 0.15:  # a python call and its output: not addressed to all, dropped by the adapter
            add(
                "assistant",
                {"content_type": "code", "language": "unknown", "text": "import math\nprint(math.pi * 2)"},
                recipient="python",
            )
            add("tool", {"content_type": "execution_output", "text": "6.283185307179586"}, name="python")
        if rng.random() < 0.15:
            add(
                "assistant",
                {
                    "content_type": "thoughts",
                    "thoughts": [{"summary": "Working it out", "content": _text(rng, topic, 2), "finished": True}],
                },
            )
        if rng.random() < 0.17:  # a regenerated answer: the first one stays on a branch
            before = parent
            add("assistant", {"content_type": "text", "parts": [_text(rng, topic, rng.randint(2, 6))]})
            parent = before
        add("assistant", {"content_type": "text", "parts": [_text(rng, topic, rng.randint(3, 12))]})
        del asked
    cid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    return {"title": f"{topic.title()} question {i}", "create_time": t0, "update_time": t, "mapping": mapping,
            "moderation_results": [], "current_node": parent, "plugin_ids": None, "conversation_id": cid,
            "conversation_template_id": None, "gizmo_id": None, "gizmo_type": None, "is_archived": False,
            "is_starred": None, "safe_urls": [], "blocked_urls": [], "default_model_slug": "gpt-4o",
            "conversation_origin": None, "voice": None, "async_status": None, "disabled_tool_ids": [],
            "is_do_not_remember": False, "memory_scope": "global_enabled", "id": cid}  # fmt: skip


def conversations(seed: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    t0 = 1_704_067_200.0  # 2024-01-01
    for i in range(1, 10**9):
        t0 += rng.uniform(600, 30_000)
        yield conversation(rng, i, t0)


def write_chatgpt(path: Path, mb: float, seed: int = 7) -> tuple[int, int]:
    """Writes conversations until the file reaches `mb` MiB; returns (conversations, bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    limit = int(mb * 1024 * 1024)
    n = size = 0
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        f.write("[")
        size = 1
        for conv in conversations(seed):
            piece = ("," if n else "") + json.dumps(conv, ensure_ascii=False)
            f.write(piece)
            size += len(piece.encode())
            n += 1
            if size >= limit and n > PLANTED_AT:
                break
        f.write("]")
    tmp.rename(path)
    return n, path.stat().st_size


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("format", choices=["chatgpt"])
    ap.add_argument("out", type=Path)
    ap.add_argument("--mb", type=float, default=1024.0)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    n, size = write_chatgpt(args.out, args.mb, args.seed)
    print(f"wrote {args.out}: {n} conversations, {size / 2**20:.1f} MiB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
