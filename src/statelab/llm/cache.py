"""Response cache: SQLite, keyed by model id + the full request. Reruns are free and exact.

A reply answered from the cache took no model time: its ``latency`` is 0 and the first
call's is its ``original_latency`` (:meth:`~statelab.core.Completion.from_dict`), so a
rerun from the cache reports the model time it spent, not the time spent once before.

Secrets never enter a key or a row: requests hold messages and sampling parameters only,
and model ids are built without keys by every backend. Any text can be cached: a request
holding lone surrogates still has a key, and its stored copy is made storable.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import sys
import threading
import time
import weakref
from contextvars import ContextVar
from dataclasses import replace
from pathlib import Path
from typing import Any

from statelab.core import (
    LLM,
    CompleteRequest,
    Completion,
    ConfigError,
    GenParams,
    Message,
    ScoreRequest,
)
from statelab.llm._safe import storable

#: seconds the current task spent in the cache (key, lookup, queueing the write): statelab's
#: own time, not the model's; :class:`statelab.run.components.TimedLLM` takes it out of model time
CACHE_SECONDS: ContextVar[float] = ContextVar("statelab_cache_seconds", default=0.0)

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
    """The cache file. Lookups read it directly (a primary-key read, microseconds); writes
    go to a writer thread that commits them in batches (WAL, ``synchronous=NORMAL``), so a
    model call never waits for the disk. A written entry is visible to :meth:`get` at once
    (from memory until its batch is committed). :meth:`flush` waits for the pending writes,
    :meth:`close` flushes and stops the writer (also at interpreter exit). A write that
    fails turns the cache off (below).

    What a SIGKILL can lose is the last batch (milliseconds of answers): the store, not the
    cache, is the record of finished episodes, and a lost entry is only asked again.

    A write that fails (a full disk under the cache) turns the cache off, with one warning
    on stderr: no episode fails for it, later calls go to the model uncached."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = _connect(self.path)
        self._db.executescript(SCHEMA)
        self._writer = _Writer(self.path)
        self._finalizer = weakref.finalize(self, self._writer.close)
        self.off = False

    def _turn_off(self, e: BaseException) -> None:
        if not self.off:
            self.off = True
            why = " ".join(str(e).split()) or type(e).__name__
            print(
                f"warning: response cache {self.path}: cannot write ({why}); "
                "going on without the cache",
                file=sys.stderr,
                flush=True,
            )

    def get(self, key: str) -> dict[str, Any] | None:
        if self.off:
            return None
        pending = self._writer.pending(key)
        if pending is not None:
            return dict(json.loads(pending))
        with self._lock:
            row = self._db.execute(
                "SELECT response FROM completions WHERE key=?", (key,)
            ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def put(self, key: str, model: str, kind: str, request: str, response: dict[str, Any]) -> None:
        if self.off:
            return
        try:
            self._writer.put((key, model, kind, request, json.dumps(response)))
        except (sqlite3.Error, OSError) as e:  # an earlier batch failed to commit
            self._turn_off(e)

    def flush(self) -> None:
        """Wait until every entry put so far is committed."""
        if self.off:
            return
        try:
            self._writer.flush()
        except (sqlite3.Error, OSError) as e:
            self._turn_off(e)

    def close(self) -> None:
        try:
            self._finalizer()
        except (sqlite3.Error, OSError) as e:
            self._turn_off(e)
        finally:
            with self._lock:
                self._db.close()


def not_a_cache(path: Path) -> str | None:
    """Why the existing file ``path`` is no response cache (``None`` when it is one, or an
    empty SQLite file), read without writing anything."""
    try:
        db = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        finally:
            db.close()
    except sqlite3.Error as e:
        return f"is not a response cache ({e})"
    if tables and "completions" not in tables:
        return "is an SQLite file but not a response cache"
    return None


# -- managing the cache file (``statelab cache``) -----------------------------------------------
def _open_cache(path: Path, readonly: bool) -> sqlite3.Connection:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no response cache there")
    why = not_a_cache(p)
    if why is not None:
        raise ConfigError(f"{p} {why}")
    if readonly:
        return sqlite3.connect(f"file:{p.resolve()}?mode=ro", uri=True, timeout=30)
    return _connect(p)


def cache_stats(path: Path) -> list[dict[str, Any]]:
    """Per model id: entries, entries per kind (``complete``, ``score``...), the bytes of its
    requests and replies, and its oldest and newest entry (UTC, ISO); read-only, so safe
    while a run writes the cache (WAL readers see its last commit)."""
    db = _open_cache(path, readonly=True)
    try:
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name='completions'").fetchone():
            return []
        rows = db.execute(
            "SELECT model, kind, COUNT(*), SUM(LENGTH(request) + LENGTH(response)),"
            " MIN(created), MAX(created) FROM completions GROUP BY model, kind ORDER BY model, kind"
        ).fetchall()
    finally:
        db.close()
    out: dict[str, dict[str, Any]] = {}
    for model, kind, n, size, lo, hi in rows:
        m = out.setdefault(model, {"model": model, "entries": 0, "kinds": {}, "bytes": 0,
                                   "oldest": lo, "newest": hi})  # fmt: skip
        m["entries"] += n
        m["kinds"][kind] = n
        m["bytes"] += int(size or 0)
        m["oldest"], m["newest"] = min(m["oldest"], lo), max(m["newest"], hi)
    for m in out.values():
        m["oldest"], m["newest"] = _iso(m["oldest"]), _iso(m["newest"])
    return list(out.values())


def _iso(julian: float | None) -> str | None:
    if julian is None:
        return None
    unix = (julian - 2440587.5) * 86400.0
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(unix))


def prune_cache(
    path: Path, *, older_than_s: float | None = None, model: str | None = None,
    everything: bool = False,
) -> tuple[int, int]:  # fmt: skip
    """Delete the entries older than ``older_than_s`` seconds and/or of model ids matching
    ``model`` (an SQLite GLOB: ``openai-compat:*``), or ``everything``; returns (deleted,
    left). One transaction under SQLite's locking, so safe while a run uses the cache: its
    batches wait for it (30 s), its lookups of a deleted entry ask the model again, and its
    entries written after stay."""
    if not everything and older_than_s is None and model is None:
        raise ConfigError("prune what? name --older-than, --model, or both")
    where: list[str] = []
    args: list[float | str] = []
    if older_than_s is not None:
        where.append("created < julianday('now') - ?")
        args.append(older_than_s / 86400.0)
    if model is not None:
        where.append("model GLOB ?")
        args.append(model)
    sql = "DELETE FROM completions" + (" WHERE " + " AND ".join(where) if where else "")
    db = _open_cache(path, readonly=False)
    try:
        db.executescript(SCHEMA)
        try:
            db.execute("BEGIN IMMEDIATE")
            gone = db.execute(sql, args).rowcount
            db.execute("COMMIT")
        except sqlite3.OperationalError as e:
            raise ConfigError(f"{path}: cannot prune now ({e}); try again") from None
        (left,) = db.execute("SELECT COUNT(*) FROM completions").fetchone()
    finally:
        db.close()
    return int(gone), int(left)


def vacuum_cache(path: Path) -> int:
    """Compact the file after a prune (SQLite's VACUUM, between a run's batches: it waits for
    no writer and is refused in one line when one is mid-batch); the bytes it saved."""
    before = Path(path).stat().st_size
    db = _open_cache(path, readonly=False)
    try:
        db.execute("PRAGMA busy_timeout = 0")
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.OperationalError as e:
        msg = f"{path}: cannot compact it now, a run is writing it ({e}); try again"
        raise ConfigError(msg) from None
    finally:
        db.close()
    return before - Path(path).stat().st_size


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    return db


class _Writer:
    """A thread committing queued cache rows in batches, one transaction per batch."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cv = threading.Condition()
        self._queue: list[tuple[str, str, str, str, str]] = []
        self._pending: dict[str, str] = {}  # key -> response JSON, queued or being written
        self._busy = False
        self._closed = False
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def pending(self, key: str) -> str | None:
        with self._cv:
            return self._pending.get(key)

    def put(self, row: tuple[str, str, str, str, str]) -> None:
        with self._cv:
            self._raise()
            if self._closed:
                raise RuntimeError("the response cache is closed")
            self._queue.append(row)
            self._pending[row[0]] = row[4]
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"statelab-cache-{self.path.name}", daemon=True
                )
                self._thread.start()
            self._cv.notify_all()

    def flush(self) -> None:
        with self._cv:
            while (self._queue or self._busy) and self._error is None:
                self._cv.wait()
            self._raise()

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()
        with self._cv:
            self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _run(self) -> None:
        db = _connect(self.path)
        try:
            while True:
                with self._cv:
                    while not self._queue and not self._closed:
                        self._cv.wait()
                    if not self._queue:
                        return
                    batch, self._queue, self._busy = self._queue, [], True
                try:
                    db.execute("BEGIN")
                    db.executemany(
                        "INSERT OR REPLACE INTO completions(key, model, kind, request, response)"
                        " VALUES (?,?,?,?,?)",
                        batch,
                    )
                    db.execute("COMMIT")
                except BaseException as e:  # a full disk: the next put says so
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    with self._cv:
                        self._error = e
                finally:
                    with self._cv:
                        for key, *_, response in batch:
                            if self._pending.get(key) is response:
                                del self._pending[key]
                        self._busy = False
                        self._cv.notify_all()
        finally:
            db.close()


class CachedLLM(LLM):
    """Wraps any backend; identical requests are answered from the cache (``cached=True``)."""

    def __init__(self, inner: LLM, cache: ResponseCache) -> None:
        self.inner = inner
        self.cache = cache
        self.model_id = inner.model_id
        self.max_concurrency = inner.max_concurrency
        self.constrained = inner.constrained
        self.vision = inner.vision
        self.context_tokens = inner.context_tokens
        self.hits = 0
        self.misses = 0

    def for_episode(self, key: str) -> CachedLLM:
        inner = self.inner.for_episode(key)
        return self if inner is self.inner else CachedLLM(inner, self.cache)

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        t0 = time.perf_counter()
        key, body = request_key(
            self.model_id, "complete", {"messages": messages, "params": params.to_dict()}
        )
        hit = self.cache.get(key)
        if hit is not None and _sane(hit):
            self.hits += 1
            done = self._masked(key, body, Completion.from_dict(hit, cached=True))
            _spent(time.perf_counter() - t0)
            return done
        self.misses += 1
        t1 = time.perf_counter()
        completion = await self.inner.complete(messages, params)
        t2 = time.perf_counter()
        self.cache.put(key, self.model_id, "complete", body, completion.to_dict())
        _spent(t1 - t0 + time.perf_counter() - t2)
        return completion

    def _masked(self, key: str, body: str, done: Completion) -> Completion:
        """A cached reply with the backend's secrets masked: a row cached before replies were
        redacted (or before the key was set) may hold one. Such a row is rewritten masked
        (``redacted`` among its flags), so the secret leaves the cache too."""
        redact = getattr(self.inner, "redact", None)
        text = redact(done.text) if redact is not None else done.text
        if text == done.text:
            return done
        flags = done.flags if "redacted" in done.flags else (*done.flags, "redacted")
        done = replace(done, text=text, flags=flags)
        self.cache.put(key, self.model_id, "complete", body, done.to_dict())
        return done

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        t0 = time.perf_counter()
        key, body = request_key(
            self.model_id, "score", {"messages": messages, "continuations": continuations}
        )
        hit = self.cache.get(key)
        if hit is not None:
            self.hits += 1
            scores = [float(x) for x in hit["scores"]]
            _spent(time.perf_counter() - t0)
            return scores
        self.misses += 1
        t1 = time.perf_counter()
        scores = await self.inner.score(messages, continuations)
        t2 = time.perf_counter()
        self.cache.put(key, self.model_id, "score", body, {"scores": scores})
        _spent(t1 - t0 + time.perf_counter() - t2)
        return scores

    async def complete_many(self, requests: list[CompleteRequest]) -> list[Completion]:
        """Each request answered from the cache where it is there; only the misses (each
        distinct one once) go to the backend, as one batch."""
        t0 = time.perf_counter()
        keyed = [
            request_key(self.model_id, "complete", {"messages": m, "params": p.to_dict()})
            for m, p in requests
        ]
        out: list[Completion | None] = []
        for key, body in keyed:
            hit = self.cache.get(key)
            if hit is not None and _sane(hit):
                out.append(self._masked(key, body, Completion.from_dict(hit, cached=True)))
            else:
                out.append(None)
        missing = _misses(keyed, out)
        self.hits += len(requests) - len(missing)
        self.misses += len(missing)
        t1 = time.perf_counter()
        fresh = await self.inner.complete_many([CompleteRequest(*requests[i]) for i in missing])
        t2 = time.perf_counter()
        for i, c in zip(missing, fresh, strict=True):
            self.cache.put(keyed[i][0], self.model_id, "complete", keyed[i][1], c.to_dict())
        answered = _fill(keyed, out, dict(zip(missing, fresh, strict=True)), _repeat)
        _spent(t1 - t0 + time.perf_counter() - t2)
        return answered

    async def score_many(self, requests: list[ScoreRequest]) -> list[list[float]]:
        """As :meth:`complete_many`, for scoring."""
        t0 = time.perf_counter()
        keyed = [
            request_key(self.model_id, "score", {"messages": m, "continuations": c})
            for m, c in requests
        ]
        out: list[list[float] | None] = []
        for key, _ in keyed:
            hit = self.cache.get(key)
            out.append([float(x) for x in hit["scores"]] if hit is not None else None)
        missing = _misses(keyed, out)
        self.hits += len(requests) - len(missing)
        self.misses += len(missing)
        t1 = time.perf_counter()
        fresh = await self.inner.score_many([ScoreRequest(*requests[i]) for i in missing])
        t2 = time.perf_counter()
        for i, scores in zip(missing, fresh, strict=True):
            self.cache.put(keyed[i][0], self.model_id, "score", keyed[i][1], {"scores": scores})
        answered = _fill(keyed, out, dict(zip(missing, fresh, strict=True)), list)
        _spent(t1 - t0 + time.perf_counter() - t2)
        return answered

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    async def aclose(self) -> None:
        try:
            await self.inner.aclose()
        finally:
            await asyncio.to_thread(self.cache.close)


#: the most tokens a cached row may count (the model wrapper's bound); a row past it (cached
#: before replies were checked) is asked again, not replayed into every rerun
_MAX_TOKENS = 10**9


def _misses(keyed: list[tuple[str, str]], out: list[Any]) -> list[int]:
    """The positions of the first request of each distinct key the cache did not answer."""
    seen: set[str] = set()
    missing = []
    for i, ((key, _), got) in enumerate(zip(keyed, out, strict=True)):
        if got is None and key not in seen:
            seen.add(key)
            missing.append(i)
    return missing


def _fill(
    keyed: list[tuple[str, str]], out: list[Any], fresh: dict[int, Any], again: Any
) -> list[Any]:
    """``out`` with each miss answered: the first of a key by the backend, a repeat of it
    by ``again(answer)`` (what a cache hit on it would have given)."""
    first = {keyed[i][0]: v for i, v in fresh.items()}
    done = []
    for i, ((key, _), got) in enumerate(zip(keyed, out, strict=True)):
        if got is None:
            got = fresh[i] if i in fresh else again(first[key])
        done.append(got)
    return done


def _repeat(first: Completion) -> Completion:
    """A request repeated in one batch, answered by its first copy's reply: what a cache
    hit gives (no model time of its own, the first call's latency kept apart)."""
    return replace(first, cached=True, latency=0.0, original_latency=first.latency)


def _sane(row: dict[str, Any]) -> bool:
    """Whether a cached completion row can be replayed (its token counts are counts)."""
    usage = row.get("usage")
    return (
        isinstance(usage, list)
        and len(usage) == 2
        and all(type(n) is int and 0 <= n <= _MAX_TOKENS for n in usage)
    )


def _spent(seconds: float) -> None:
    CACHE_SECONDS.set(CACHE_SECONDS.get() + seconds)
