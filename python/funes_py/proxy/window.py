"""Token estimates and the window guard (pure).

Without the engine's tokenizer a prompt's size is estimated from characters (CHARS_PER_TOKEN, plus a few
tokens per message for the chat template's markers) and calibrated from the engine's own count
(`usage.prompt_tokens`) after every answer: an exponential average of actual / estimated, clamped. Until the
first calibration the guard keeps a wider slack. On llama.cpp the proxy checks a prompt exactly with the
engine's token-count endpoint when the estimate comes close to the limit (see `engines`).

The guard's rule: prompt (with slack) + max_tokens + MARGIN <= window, for every request sent upstream.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .messages import text_of

CHARS_PER_TOKEN = 3.5
PER_MESSAGE = 6  # <|im_start|>role\n ... <|im_end|>\n and the like
PER_CALL = 10
MARGIN = 32
SLACK_UNCALIBRATED = 0.15
SLACK_CALIBRATED = 0.05
SCALE_MIN, SCALE_MAX = 0.4, 2.5
CALIBRATION_WEIGHT = 0.3
# Closer than this share of the window to the limit, an estimate is checked exactly when the engine can.
EXACT_CHECK_SHARE = 0.9


def raw_tokens(msg: Mapping[str, Any]) -> float:
    """One message's uncalibrated estimate."""
    chars = len(text_of(msg.get("content")))
    calls = msg.get("tool_calls")
    extra = 0.0
    if isinstance(calls, list):
        for call in calls:
            fn = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(fn, Mapping):
                args = fn.get("arguments")
                chars += len(args if isinstance(args, str) else json.dumps(args)) + len(str(fn.get("name", "")))
            extra += PER_CALL
    return chars / CHARS_PER_TOKEN + PER_MESSAGE + extra


class Sizer:
    """Raw estimates of one request's messages, each computed once (a request sizes its prompt several
    times: trigger, fit, batch, guard, every round). Keyed by object identity: valid while the request's
    message objects are alive, which is the request's own lifetime."""

    def __init__(self) -> None:
        self._memo: dict[int, float] = {}
        self._keep: list[Any] = []  # holds the objects, so an id cannot be reused within the request

    def message(self, msg: Mapping[str, Any]) -> float:
        v = self._memo.get(id(msg))
        if v is None:
            v = self._memo[id(msg)] = raw_tokens(msg)
            self._keep.append(msg)
        return v

    def messages(self, messages: Sequence[Mapping[str, Any]]) -> float:
        return sum(self.message(m) for m in messages)


def raw_tools(tools: Sequence[Any] | None) -> float:
    if not tools:
        return 0.0
    return len(json.dumps(tools, ensure_ascii=False)) / CHARS_PER_TOKEN + 20


@dataclass
class Estimator:
    scale: float | None = None  # None: not calibrated yet (1.0 with the wide slack)

    @property
    def factor(self) -> float:
        return 1.0 if self.scale is None else self.scale

    @property
    def slack(self) -> float:
        return SLACK_UNCALIBRATED if self.scale is None else SLACK_CALIBRATED

    def tokens(self, raw: float) -> int:
        return int(raw * self.factor + 0.5)

    def prompt(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] | None) -> int:
        return self.tokens(sum(raw_tokens(m) for m in messages) + raw_tools(tools))

    def calibrate(self, raw: float, actual: int) -> float | None:
        """Fold one exact count into the scale; returns the new scale, or None when nothing changed."""
        if raw <= 0 or actual <= 0:
            return None
        ratio = min(SCALE_MAX, max(SCALE_MIN, actual / raw))
        new = ratio if self.scale is None else (1 - CALIBRATION_WEIGHT) * self.scale + CALIBRATION_WEIGHT * ratio
        new = round(new, 6)  # stored as it is used: a restart replays the same estimates, hence the same bodies
        if self.scale is not None and abs(new - self.scale) < 0.005:
            return None
        self.scale = new
        return new

    def guarded(self, prompt: int) -> int:
        """The prompt as the guard counts it: the estimate plus its slack."""
        return int(prompt * (1 + self.slack)) + MARGIN


@dataclass(frozen=True)
class Window:
    size: int
    response: int  # room kept for an answer when the client names no max_tokens

    def room(self, guarded_prompt: int) -> int:
        """max_tokens that still fit after a prompt (guarded count)."""
        return self.size - guarded_prompt

    def max_tokens(self, guarded_prompt: int, requested: int | None) -> int | None:
        """What to send as max_tokens, or None when the prompt leaves less than the answer needs.

        A client's own max_tokens is lowered to what fits, never raised; without one, the rest of the window
        (a prompt that fits is never refused for want of a client limit)."""
        room = self.room(guarded_prompt)
        need = min(requested, self.response) if requested else self.response
        if room < max(need, 1):
            return None
        return min(requested, room) if requested else room

    def close_to_limit(self, guarded_prompt: int, max_tokens: int) -> bool:
        return guarded_prompt + min(max_tokens, self.response) > EXACT_CHECK_SHARE * self.size
