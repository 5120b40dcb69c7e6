"""The engine's view of a history: the client's messages with every stored decision applied (pure).

Between two new decisions, the list this builds for a request is an exact extension of the list it built for
the previous one: decisions are keyed by message id and applied the same way every time, so the engine's
prefix cache stays valid, across proxy restarts too (the decisions are on disk).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .decisions import ConversationState, Segment
from .receipts import appended, masked_copy


@dataclass
class Physical:
    messages: list[Mapping[str, Any]]  # shared with the request and the decisions: never mutated
    start: int  # client position where the verbatim part begins (the segment's cut, or 0)
    segment: Segment | None
    # For each client position from `start` on, the index in `messages` where its rendering begins.
    index_of: dict[int, int] = field(default_factory=dict)

    def hidden(self, position: int, mid: str, state: ConversationState) -> bool:
        """Whether the client's message at `position` is out of the engine's sight (masked or cut off)."""
        return position < self.start or mid in state.masks


def build(messages: Sequence[Mapping[str, Any]], ids: Sequence[str], state: ConversationState) -> Physical:
    seg = state.segment_for(list(ids))
    start = seg.cut if seg is not None else 0
    out: list[Mapping[str, Any]] = list(seg.head) if seg is not None else []
    index_of: dict[int, int] = {}
    for i in range(start, len(messages)):
        mid = ids[i]
        index_of[i] = len(out)
        inserted = state.inserts.get(mid)
        if inserted is not None:
            out.extend(inserted)
            continue
        m = messages[i]
        if mid in state.masks:
            out.append(masked_copy(m, state.masks[mid]))
        elif state.autos.get(mid):
            out.append(appended(m, state.autos[mid]))
        else:
            out.append(m)
    return Physical(out, start, seg, index_of)
