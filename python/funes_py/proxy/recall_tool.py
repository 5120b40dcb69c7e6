"""The `recall` tool the proxy adds to a request and runs itself: its definition, arguments and answers.

* `recall(query)`: hybrid recall over this conversation's archive (or, with scope "all", every conversation
  of the tenant), identifier guard and relevance floor on, rendered as dated verbatim passages with their
  message ids, under a character cap.
* `recall(id, offset)`: the exact text of one archived message, one page at a time. A page is a header line,
  the text, and a footer line; the texts of the pages, in order, are the message byte for byte. Scoped as a
  search is: a message of another conversation is read only with scope "all" (`in_scope`), so an id never
  shows what `recall(query)` in the same scope would not find.

The model never sees anything but these texts; the client never sees the calls at all.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..render import cut_at_word
from ..render import format_ts as short_ts
from .archive import Archive, Entry

log = logging.getLogger("funes_py.proxy")

NAMES = ("recall", "archive_recall", "history_recall", "funes_recall")
DESCRIPTION = (
    "Search or read the archive of this conversation: every earlier message and tool output, verbatim, "
    "including outputs hidden behind ⟪archived id=…⟫ receipts. Use it instead of guessing or re-running a "
    "command. recall(query=\"…\") finds passages (key words, names, or a description of what you need); "
    "recall(id=\"…\") returns one archived message exactly, page by page (offset)."
)
NOTHING = "Nothing relevant in the archive for this query. Do not guess: say it is not known, or try other words."
UNAVAILABLE = "The archive search is unavailable right now; continue without it."

Searcher = Callable[[str, "list[str] | None"], Awaitable[Sequence[Any]]]


def tool_name(client_tools: Sequence[Any] | None) -> str:
    """`recall`, or the first alternative the client does not declare itself."""
    taken = {str((t.get("function") or {}).get("name")) for t in client_tools or [] if isinstance(t, Mapping)}
    for name in NAMES:
        if name not in taken:
            return name
    return "funes_recall_" + str(len(taken))


def definition(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": DESCRIPTION,
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "what to search for"},
                    "id": {"type": "string", "description": "an archived message id, as in a receipt"},
                    "offset": {"type": "integer", "description": "with id: the character to continue from"},
                    "scope": {"type": "string", "enum": ["conversation", "all"],
                              "description": "all: search (or read by id) every earlier conversation too"},
                },
            },
        },
    }  # fmt: skip


@dataclass(frozen=True)
class RecallCall:
    query: str | None
    mid: str | None
    offset: int
    scope: str

    @classmethod
    def parse(cls, arguments: Any) -> RecallCall | str:
        """The call's arguments, or the error text the model gets back."""
        try:
            args = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            return "The arguments are not valid JSON; call recall with {\"query\": \"...\"} or {\"id\": \"...\"}."
        if not isinstance(args, Mapping):
            return "Call recall with {\"query\": \"...\"} or {\"id\": \"...\"}."
        query, mid, offset = args.get("query"), args.get("id"), args.get("offset", 0)
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            return "offset must be a non-negative integer."
        scope = "all" if args.get("scope") == "all" else "conversation"
        if isinstance(mid, str) and mid.strip():
            return cls(None, mid.strip(), offset, scope)
        if isinstance(query, str) and query.strip():
            return cls(" ".join(query.split())[:1000], None, 0, scope)
        return "Give a query (words to search for) or an id (from a receipt)."


def describe(mid: str, e: Entry) -> str:
    where = f"message {e.position + 1}" if e.position is not None else f"{e.kind} round"
    what = f"tool {e.tool} {e.origin or ''}".rstrip() if e.tool else e.role
    return f"id={mid} · {where} · {what} · {short_ts(e.ts)}"


def in_scope(archive: Archive, mid: str, conversation: str, scope: str) -> bool:
    """Whether `recall(id=mid)` in `conversation` may read the message: its own conversation's, or with scope
    "all" any of the tenant's (the archive is the tenant's: other tenants' ids are never in it)."""
    entry = archive.entries.get(mid)
    return entry is None or scope == "all" or entry.conversation == conversation


def out_of_scope(mid: str, tool: str) -> str:
    return (f"id={mid} is a message of another conversation: read it with {tool}(id=\"{mid}\", scope=\"all\"), "
            "or search this conversation instead.")


def page(archive: Archive, mid: str, offset: int, max_chars: int, tool: str, scope: str = "conversation") -> str:
    """One page of an archived message: header line, exact text, footer line."""
    entry = archive.entries.get(mid)
    text = archive.text(mid) if entry is not None else None
    if entry is None or text is None:
        return f"No archived message has id={mid}. Ids look like m1a2b3c4d5e6f; take one from a receipt or a search."
    total = len(text)
    if offset > total:
        return f"offset {offset} is past the end of id={mid} ({total} characters)."
    end = min(total, offset + max(max_chars, 1))
    header = f"[{tool} {describe(mid, entry)} · characters {offset}–{end} of {total}]"
    more = ", scope=\"all\"" if scope == "all" else ""
    footer = f"[continues: {tool}(id=\"{mid}\", offset={end}{more})]" if end < total else "[end of message]"
    return f"{header}\n{text[offset:end]}\n{footer}"


def page_text(page_answer: str) -> str:
    """The message text of a page (what reassembles byte for byte); for tests and the benchmark."""
    return page_answer.split("\n", 1)[1].rsplit("\n", 1)[0]


def render_hits(hits: Sequence[Any], archive: Archive, query: str, scope: str, max_chars: int) -> str:
    """Search results as dated verbatim passages, best first, cut to `max_chars`."""
    if not hits:
        return NOTHING
    where = "this conversation" if scope == "conversation" else "all conversations"
    out = f"[recall: {len(hits)} passage{'s' if len(hits) > 1 else ''} for \"{query}\" in {where}, best first]"
    shown = 0
    for hit in hits:
        entry = archive.entries.get(hit.turn_uuid)
        head = f"--- {describe(hit.turn_uuid, entry)}" if entry else f"--- id={hit.turn_uuid} · {short_ts(hit.ts)}"
        block = f"\n{head}\n{hit.text.strip()}"
        room = max_chars - len(out)
        if len(block) > room:
            if shown == 0 or room > 300:
                cut = cut_at_word(block, room)
                if cut.count("\n") >= 2:
                    out += cut
                    shown += 1
            break
        out += block
        shown += 1
    if shown < len(hits):
        out += f"\n[{len(hits) - shown} more left out for length: narrow the query, or read one with id]"
    return out
