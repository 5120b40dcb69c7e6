"""One tenant's proxy state: its archive, the decisions of each conversation, one lock per conversation.

Layout (`DATA/<tenant>/`): `src/` (archive), `state/<conversation>.jsonl` (decisions), `memory/` (the
engine). A tenant is a user from the tokens file, or "local" when there is none; its directory is named by
a hash of the user, as in the recall service.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .archive import Archive
from .decisions import ConversationState
from .window import Estimator

LOCAL_USER = "local"


@dataclass
class Conversation:
    id: str
    state: ConversationState
    estimator: Estimator
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_request: float = 0.0  # monotonic; for idle autosave


class Tenant:
    def __init__(self, tid: str, root: Path, mask: Any = None) -> None:
        self.id = tid
        self.root = root
        self.archive = Archive(root / "src", mask)
        self.archive.open()
        self._conversations: dict[str, Conversation] = {}

    def state_path(self, conv: str) -> Path:
        return self.root / "state" / f"{conv}.jsonl"

    def conversation(self, conv: str) -> Conversation:
        c = self._conversations.get(conv)
        if c is None:
            state = ConversationState.load(self.state_path(conv))
            c = self._conversations[conv] = Conversation(conv, state, Estimator(state.scale))
        return c

    def known(self, conv: str) -> bool:
        return conv in self._conversations or self.archive.has(conv) or self.state_path(conv).exists()

    def drop(self, conv: str) -> bool:
        """Forget a conversation's archive file and decisions here (its engine rows are the caller's)."""
        had = self.archive.forget(conv)
        self._conversations.pop(conv, None)
        try:
            self.state_path(conv).unlink()
            had = True
        except FileNotFoundError:
            pass
        return had
