"""``scripted:<file>``: replays given replies in order, for tests and demos.

The file is a JSON list of strings, or text with one reply per line. When the script runs
out, the last reply repeats. ``score`` gives 0.0 to continuations that contain the next
scripted reply and -100.0 to the others.

A script file's model id names it by its content, ``scripted:<file name>#<digest>`` (a
SHA-256 of the replies), so two scripts that share a file name (``a/replies.json``,
``b/replies.json``) never share response-cache entries, and an edited script is not answered
from the old one's cache. An inline ``ScriptedLLM(replies, name)`` keeps ``scripted:<name>``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import deque
from pathlib import Path

from statelab.core import LLM, Completion, ConfigError, GenParams, Message, Usage


def _text(messages: list[Message]) -> str:
    out = []
    for m in messages:
        c = m["content"]
        out.append(c if isinstance(c, str) else " ".join(p.get("text", "") for p in c))
    return "\n".join(out)


def script_digest(replies: list[str]) -> str:
    """First 16 hex digits of the SHA-256 of the replies (as a JSON list): the script's id."""
    blob = json.dumps(list(replies), ensure_ascii=False, separators=(",", ":"))
    # surrogatepass: a script may hold a lone surrogate (valid JSON), as a server's reply may
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:16]


#: prompts a scripted model keeps in ``seen`` (the last ones): tests read a few, and a run of
#: any number of episodes keeps no more
SEEN_KEPT = 256


class ScriptedLLM(LLM):
    """Replies from a script, in order (see the module docstring). Every episode gets its
    own cursor (:meth:`for_episode`), so any number of episodes play at once: the experiment's
    ``concurrency`` applies, as for an HTTP backend. ``seen`` holds the last
    :data:`SEEN_KEPT` prompts (on the episode's cursor and on the model it came from)."""

    constrained = False
    #: episodes share nothing but the script: as many at once as the experiment asks
    max_concurrency = 1 << 20

    def __init__(self, replies: list[str], name: str = "inline") -> None:
        if not replies:
            raise ConfigError("scripted model: the script has no replies")
        self.replies = list(replies)
        self.model_id = f"scripted:{name}"
        self.calls = 0
        self.seen: deque[list[Message]] = deque(maxlen=SEEN_KEPT)

    @classmethod
    def from_file(cls, path: str) -> ScriptedLLM:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"scripted model: no such file {path!r}")
        raw = p.read_text()
        try:
            data = json.loads(raw)
            replies = [str(x) for x in data] if isinstance(data, list) else [raw]
        except json.JSONDecodeError:
            replies = [line for line in raw.splitlines() if line.strip()]
        return cls(replies, name=f"{p.name}#{script_digest(replies)}")

    def for_episode(self, key: str) -> ScriptedLLM:
        """A cursor of its own for one episode: every episode reads the script from its first
        reply, whatever ran before or beside it (resumed and concurrent runs replay exactly).
        Calls are still counted, and the last prompts kept, on this object too."""
        view = ScriptedLLM(self.replies, self.model_id.removeprefix("scripted:"))
        view._parent = self
        return view

    _parent: ScriptedLLM | None = None

    def _next(self) -> str:
        reply = self.replies[min(self.calls, len(self.replies) - 1)]
        self.calls += 1
        if self._parent is not None:
            self._parent.calls += 1
        return reply

    def _saw(self, messages: list[Message]) -> None:
        self.seen.append(messages)
        if self._parent is not None:
            self._parent.seen.append(messages)

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        start = time.perf_counter()
        self._saw(messages)
        text = self._next()
        usage = Usage(self.count_tokens(_text(messages)), self.count_tokens(text))
        return Completion(text, usage=usage, latency=time.perf_counter() - start)

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        self._saw(messages)
        want = self._next().strip().lower()
        return [0.0 if want and want in c.lower() else -100.0 for c in continuations]

    def count_tokens(self, text: str) -> int:
        return max(1, len(text.split()))
