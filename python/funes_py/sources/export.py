"""The shared loop of the export adapters (ChatGPT, Claude.ai): stream the conversations of a
`conversations.json`, convert each, and hand the engine bounded items (a conversation's turns never split).

Place = the conversation's 1-based ordinal in the array; a refused conversation is reported with its id. A
conversation longer than FUNES_MAX_RECORD_BYTES characters, or nested too deeply to parse, is reported by its
ordinal and skipped; the rest of the export is read. Only the last item carries the export's signature: an
export that fails part-way (a damaged zip) is not recorded as indexed, and the next run reads it again."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .common import SHAPE_ERRORS, Bad, Line, Refused, Source, Unit, reason
from .jsonarray import Fault, NotAnArray, iter_array
from .limits import Limits

# An item holds at most this many conversations or this much line text (whichever comes first): memory stays
# bounded whatever the export's size, and the engine embeds and commits in batches anyway.
BATCH_CONVERSATIONS = 200
BATCH_CHARS = 8_000_000

Convert = Callable[[dict[str, Any]], list[str]]


def conversation_label(conv: Any, ids: tuple[str, ...]) -> str:
    if isinstance(conv, dict):
        for k in ids:
            if isinstance(conv.get(k), str) and conv[k]:
                return f"conversation {conv[k]}"
    return "conversation"


def read_export(unit: Unit, convert: Convert, ids: tuple[str, ...]) -> Iterator[Source]:
    """Items of at most BATCH_CONVERSATIONS conversations from the export in `unit`."""
    signature = unit.signature()
    limit = Limits.current().record
    lines: list[Line] = []
    bad: list[Bad] = []
    chars = count = 0
    with unit.open() as f:
        try:
            for ordinal, conv in enumerate(iter_array(f, limit=limit), start=1):
                if isinstance(conv, Fault):
                    bad.append((conv.ordinal, f"conversation #{conv.ordinal}: {conv.reason}"))
                    continue
                try:
                    if not isinstance(conv, dict):
                        raise Refused("not a JSON object")
                    new = convert(conv)
                except SHAPE_ERRORS as e:
                    bad.append((ordinal, f"{conversation_label(conv, ids)} (#{ordinal}): {reason(e)}"))
                    continue
                lines.extend((ordinal, line) for line in new)
                chars += sum(len(x) for x in new)
                count += 1
                if count >= BATCH_CONVERSATIONS or chars >= BATCH_CHARS:
                    yield Source(unit.key, None, lines, bad)
                    lines, bad, chars, count = [], [], 0, 0
        except NotAnArray as e:
            bad.append((1, str(e)))
    yield Source(unit.key, signature, lines, bad)  # the last item, even empty: the export was read to its end
