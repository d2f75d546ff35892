"""Response cache: SQLite, keyed by model id + the full request. Reruns are free and exact.

Secrets never enter a key or a row: requests hold messages and sampling parameters only,
and model ids are built without keys by every backend. Any text can be cached: a request
holding lone surrogates still has a key, and its stored copy is made storable.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from statelab.core import LLM, Completion, GenParams, Message
from statelab.llm._safe import storable

SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL DEFAULT (julianday('now'))
);
"""


def request_key(model_id: str, kind: str, request: dict[str, Any]) -> tuple[str, str]:
    body = json.dumps(
        {"model": model_id, "kind": kind, **request},
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    # surrogatepass: a lone surrogate in a message (from a model or an env) still hashes, and
    # valid text hashes to the same bytes as before
    digest = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()
    return digest, storable(body)


class ResponseCache:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT response FROM completions WHERE key=?", (key,)
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def put(self, key: str, model: str, kind: str, request: str, response: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO completions(key, model, kind, request, response)"
                " VALUES (?,?,?,?,?)",
                (key, model, kind, request, json.dumps(response)),
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()


class CachedLLM(LLM):
    """Wraps any backend; identical requests are answered from the cache (``cached=True``)."""

    def __init__(self, inner: LLM, cache: ResponseCache) -> None:
        self.inner = inner
        self.cache = cache
        self.model_id = inner.model_id
        self.max_concurrency = inner.max_concurrency
        self.constrained = inner.constrained
        self.vision = inner.vision
        self.hits = 0
        self.misses = 0

    def for_episode(self, key: str) -> CachedLLM:
        inner = self.inner.for_episode(key)
        return self if inner is self.inner else CachedLLM(inner, self.cache)

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        key, body = request_key(
            self.model_id, "complete", {"messages": messages, "params": params.to_dict()}
        )
        hit = self.cache.get(key)
        if hit is not None:
            self.hits += 1
            return Completion.from_dict(hit, cached=True)
        self.misses += 1
        completion = await self.inner.complete(messages, params)
        self.cache.put(key, self.model_id, "complete", body, completion.to_dict())
        return completion

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        key, body = request_key(
            self.model_id, "score", {"messages": messages, "continuations": continuations}
        )
        hit = self.cache.get(key)
        if hit is not None:
            self.hits += 1
            return [float(x) for x in hit["scores"]]
        self.misses += 1
        scores = await self.inner.score(messages, continuations)
        self.cache.put(key, self.model_id, "score", body, {"scores": scores})
        return scores

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    async def aclose(self) -> None:
        await self.inner.aclose()
