"""The response cache takes any text: lone surrogates and NULs in requests and replies."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from statelab.core import LLM, Completion, GenParams, Message
from statelab.llm import CachedLLM, ResponseCache
from statelab.llm.cache import request_key


class Echo(LLM):
    model_id = "echo"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        self.calls += 1
        return Completion(text="re: " + str(messages[-1]["content"]))


def test_odd_text_is_cached_and_replayed(tmp_path: Path) -> None:
    inner = Echo()
    llm = CachedLLM(inner, ResponseCache(tmp_path / "c.sqlite"))
    msgs = [{"role": "user", "content": "lone \ud800 nul \x00 emoji 😀"}]

    async def go() -> tuple[Completion, Completion]:
        return await llm.complete(msgs, GenParams()), await llm.complete(msgs, GenParams())

    first, second = asyncio.run(go())
    assert inner.calls == 1 and second.cached and not first.cached
    assert second.text == first.text == "re: lone \ud800 nul \x00 emoji 😀"


def test_keys_of_valid_text_are_unchanged() -> None:
    # the same digest as before the surrogate-safe encoding (caches stay valid)
    key, body = request_key("m", "complete", {"messages": [{"content": "héllo ✓"}]})
    assert key == hashlib.sha256(body.encode()).hexdigest()
    key2, body2 = request_key("m", "complete", {"messages": [{"content": "\ud800"}]})
    assert key2 != request_key("m", "complete", {"messages": [{"content": "\ud801"}]})[0]
    body2.encode("utf-8")
