"""Issue 23's hostile server, rerun: a raw-socket server on 127.0.0.1 in the test's own event
loop answers as a hostile or broken one would, through both HTTP clients (the lean one and
httpx), every test bounded in time. Each test failed on the code before the fix (noted).

Built through :func:`statelab.llm.make_llm`, as a run builds its model: the backend inside
the model wrapper (retries, the reply's guard), with the response cache where it matters.
"""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import json
import os
import socket
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from statelab.core import LLM, Completion, ConfigError, GenParams, ModelError
from statelab.llm import MAX_REPLY, check_spec, make_llm
from statelab.llm._model import MAX_TOKENS

MSGS: Any = [{"role": "user", "content": "hi"}]
Respond = Callable[[int, dict[str, str], asyncio.StreamWriter], Awaitable[None]]
CLIENTS = ["lean", "httpx"]
#: the same hostile servers through ``litellm:`` (its OpenAI route, with ``api_base``), where
#: the litellm extra is installed: the same caps and deadline
LITELLM = ["litellm"] if importlib.util.find_spec("litellm") else []
ALL = [*CLIENTS, *LITELLM]
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
if LITELLM:  # its first import takes seconds: not inside a test's bound
    import litellm
    import litellm.llms.openai.openai  # noqa: F401


def chat(text: str | None = "ok", usage: dict[str, Any] | None = None) -> bytes:
    body: dict[str, Any] = {"choices": [{"message": {"role": "assistant", "content": text}}]}
    body["usage"] = usage if usage is not None else {"prompt_tokens": 5, "completion_tokens": 1}
    return json.dumps(body).encode()


def http(body: bytes, status: str = "200 OK", extra: bytes = b"") -> bytes:
    return (
        b"HTTP/1.1 %s\r\nContent-Length: %d\r\n%s\r\n" % (status.encode(), len(body), extra) + body
    )


class Hostile:
    """Reads each request and lets ``respond(n, headers, writer)`` answer the n-th (from 1)."""

    def __init__(self, respond: Respond) -> None:
        self.respond = respond
        self.requests = 0
        self.connections = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                headers = {}
                while (h := await reader.readline()) not in (b"\r\n", b""):
                    k, _, v = h.decode().partition(":")
                    headers[k.strip().lower()] = v.strip()
                await reader.readexactly(int(headers["content-length"]))
                self.requests += 1
                await self.respond(self.requests, headers, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


def play(
    respond: Respond,
    client: str,
    monkeypatch: pytest.MonkeyPatch,
    *,
    n: int = 1,
    options: str = "timeout=3&retries=0",
    userinfo: str = "",
    cache: Path | None = None,
    bound: float = 15.0,
    at_port: int = 0,
) -> tuple[Hostile, list[Completion | BaseException]]:
    """``n`` requests one after another (no pause) through ``client``; each outcome."""
    if client == "httpx":
        monkeypatch.setenv("STATELAB_HTTP_CLIENT", "httpx")
    else:
        monkeypatch.delenv("STATELAB_HTTP_CLIENT", raising=False)
    if client == "litellm":
        monkeypatch.setenv("OPENAI_API_KEY", "sk-hostile-0123456789")
    hostile = Hostile(respond)

    async def go() -> list[Completion | BaseException]:
        server = await asyncio.start_server(hostile.handle, "127.0.0.1", at_port)
        port = server.sockets[0].getsockname()[1]
        spec = f"openai-compat:http://{userinfo}127.0.0.1:{port}/v1#m?{options}"
        if client == "litellm":
            base = f"http://{userinfo}127.0.0.1:{port}/v1"
            spec = f"litellm:openai/gpt-4o-mini?api_base={base}&{options}"
        llm: LLM = make_llm(spec, cache=cache)
        out: list[Completion | BaseException] = []
        try:
            for i in range(n):
                try:
                    out.append(await llm.complete(MSGS, GenParams(seed=i)))
                except Exception as e:
                    out.append(e)
        finally:
            await llm.aclose()
            server.close()
        return out

    async def bounded() -> list[Completion | BaseException]:
        return await asyncio.wait_for(go(), bound)

    return hostile, asyncio.run(bounded())


def failed(outcome: Completion | BaseException, kind: str) -> ModelError:
    assert isinstance(outcome, ModelError), outcome
    assert getattr(outcome, "kind", None) == kind, (outcome, getattr(outcome, "kind", None))
    assert "\n" not in str(outcome) and len(str(outcome)) < 400
    return outcome


# -- 1. bodies are capped ----------------------------------------------------------------


async def _stream(writer: asyncio.StreamWriter, head: bytes, chunk: bytes, mib: int) -> None:
    writer.write(head)
    for _ in range(mib):
        writer.write(chunk)
        await writer.drain()
    await asyncio.sleep(30)  # then hold the connection: only the cap ends the call


def _big(kind: str) -> Respond:
    block = b"x" * (1 << 20)

    async def respond(n: int, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
        if kind == "length":
            await _stream(writer, b"HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\n",
                          block, 3)  # fmt: skip
        elif kind == "chunk":
            head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFF\r\n"
            await _stream(writer, head, block, 3)
        else:  # no length: the body runs to the close, which never comes
            await _stream(writer, b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", block, 3)

    return respond


@pytest.mark.parametrize("client", ALL)
@pytest.mark.parametrize("kind", ["length", "chunk", "close"])
def test_a_body_over_max_body_fails_the_call_in_one_line(client, kind, monkeypatch):
    """Before: the lean client buffered without bound (5.7 GB in 7 s, then MemoryError)."""
    hostile, (out,) = play(_big(kind), client, monkeypatch,
                           options="timeout=10&retries=3&max_body=1000000")  # fmt: skip
    e = failed(out, "too-large")
    assert "1000000 bytes" in str(e) and hostile.requests == 1  # not retried: it would again


@pytest.mark.parametrize("client", ALL)
def test_the_default_cap_refuses_a_promised_ten_gigabytes(client, monkeypatch):
    _, (out,) = play(_big("length"), client, monkeypatch)
    assert f"{16 * 1024 * 1024} bytes" in str(failed(out, "too-large"))


# -- 2. one deadline for the whole request -----------------------------------------------


async def _drip(n: int, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
    body = chat()
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body))
    for byte in body:  # a byte every 0.1 s: no single read waits long
        writer.write(bytes([byte]))
        await writer.drain()
        await asyncio.sleep(0.1)


@pytest.mark.parametrize("client", ALL)
def test_a_slow_drip_is_cut_at_the_request_timeout(client, monkeypatch):
    """Before: httpx held such a request past 240 s with ``timeout: 4`` (per-read only)."""
    _, (out,) = play(_drip, client, monkeypatch, options="timeout=1&retries=0", bound=8)
    failed(out, "timeout")


# -- 3. a reply belongs to its request -----------------------------------------------------


async def _with_stray(n: int, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
    writer.write(http(chat(f"reply {n}")))
    await writer.drain()
    await asyncio.sleep(0.002)  # then, unasked, a second response
    writer.write(http(chat("STRAY")))
    await writer.drain()


@pytest.mark.parametrize("client", ALL)
def test_a_stray_response_is_never_the_next_reply(client, monkeypatch):
    """Before: 2 of 6 replies were the stray, with both clients."""
    hostile, out = play(_with_stray, client, monkeypatch, n=6)
    texts = [o.text if isinstance(o, Completion) else repr(o) for o in out]
    assert texts == [f"reply {i}" for i in range(1, 7)]
    assert hostile.requests == 6


# -- 4. and 7. a reply enters capped, its token counts checked ----------------------------


@pytest.mark.parametrize("client", ALL)
def test_a_huge_reply_is_cut_where_it_enters_and_marked(client, monkeypatch, tmp_path):
    """Before: a 1 MB reply came back whole (10 MB replies made a 110 MB prompt)."""

    async def huge(n: int, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
        writer.write(http(chat("y" * 1_000_000)))
        await writer.drain()

    _, (out,) = play(huge, client, monkeypatch, cache=tmp_path / "c.sqlite")
    assert isinstance(out, Completion)
    assert len(out.text) == MAX_REPLY and "reply-cut" in out.flags
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        (size,) = db.execute("SELECT max(length(response)) FROM completions").fetchone()
    assert size < MAX_REPLY + 1000  # the cache holds the cut reply


@pytest.mark.parametrize("client", ["lean", *LITELLM])
@pytest.mark.parametrize("claimed", [-1000, 10**20, True])
def test_impossible_token_counts_are_replaced_and_marked(claimed, client, monkeypatch):
    """Before: -1000 printed "In tok/step -1,000"; 10**20 failed storing the episode."""

    async def lying(n: int, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
        usage = {"prompt_tokens": claimed, "completion_tokens": claimed}
        writer.write(http(chat("ok", usage)))
        await writer.drain()

    _, (out,) = play(lying, client, monkeypatch)
    assert isinstance(out, Completion)
    n_in, n_out = out.usage.input_tokens, out.usage.output_tokens
    assert 0 <= n_in <= MAX_TOKENS and 0 <= n_out <= MAX_TOKENS < 2**63
    # (LiteLLM itself reads ``true`` as 1 token, before statelab sees it)
    assert (n_in, n_out) != (claimed, claimed) or (client, claimed) == ("litellm", True)
    assert n_in >= 1 and n_out >= 1  # the tokenizer's count stands in
    if claimed is not True:
        assert "usage-replaced" in out.flags
    if client == "litellm":  # priced from the counts kept, not the server's claim
        from statelab.llm._pricing import call_cost

        assert out.cost is not None and out.cost == call_cost("openai/gpt-4o-mini", n_in, n_out)
        assert out.cost < 0.01  # before: 10**20 tokens cost $63e12; -1000 none at all


@pytest.mark.parametrize("client", ALL)
def test_a_reply_without_choices_is_a_one_line_model_error(client, monkeypatch):
    """Before: ``choices: []`` was a raw IndexError through litellm: (its traceback stored
    as the episode's error)."""

    async def empty(n: int, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
        writer.write(http(json.dumps({"choices": [], "usage": {}}).encode()))
        await writer.drain()

    _, (out,) = play(empty, client, monkeypatch, options="timeout=3&retries=0")
    failed(out, "malformed")


# -- 10. no recursion -------------------------------------------------------------------


@pytest.mark.parametrize("client", ALL)
def test_thousands_of_interim_responses_end_in_a_model_error(client, monkeypatch):
    """Before: RecursionError (not a model error: invisible to the breaker)."""

    async def interim(n: int, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n" * 5000 + http(chat("late")))
        await writer.drain()

    hostile, (out,) = play(interim, client, monkeypatch, options="timeout=5&retries=2")
    if client == "lean":
        failed(out, "malformed")
        assert hostile.requests == 1
    else:  # httpx reads interim responses in a loop; either way, never a RecursionError
        assert isinstance(out, Completion | ModelError), out


@pytest.mark.parametrize("client", CLIENTS)  # litellm: the OpenAI SDK parses it (see report)
def test_deeply_nested_json_is_a_model_error_not_retried(client, monkeypatch):
    async def nested(n: int, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
        writer.write(http(b"[" * 200_000 + b"]" * 200_000))
        await writer.drain()

    hostile, (out,) = play(nested, client, monkeypatch, options="timeout=5&retries=3")
    assert "nested too deeply" in str(failed(out, "malformed"))
    assert hostile.requests == 1


# -- 11. secrets masked in every form; content: null ------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_an_echoed_basic_header_never_reaches_an_error(client, monkeypatch):
    """Before: the base64 of user:password came back in episodes.error (7 cases)."""

    async def echo(n: int, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
        body = json.dumps({"error": f"denied for {headers.get('authorization')}"}).encode()
        writer.write(http(body, "401 Unauthorized"))
        await writer.drain()

    _, (out,) = play(echo, client, monkeypatch, userinfo="alice:pa%2Fss%23word@")
    message = str(failed(out, "http"))
    basic = base64.b64encode(b"alice:pa/ss#word").decode()
    for secret in (basic, basic.rstrip("="), "pa/ss#word", "pa%2Fss%23word"):
        assert secret not in message, message
    assert "denied for Basic ***" in message


@pytest.mark.parametrize("password", ["hunter#2222", "hunter?2222", "hunter/2222"])
def test_a_password_with_url_characters_is_never_printed(password):
    """Before: the part of the password before a raw '#', '?' or '/' was printed."""
    with pytest.raises(ConfigError) as e:
        check_spec(f"openai-compat:http://alice:{password}@127.0.0.1:8000/v1#m")
    message = str(e.value)
    assert "hunter" not in message and "2222" not in message and "alice" not in message
    assert "\n" not in message


@pytest.mark.parametrize("client", CLIENTS)
def test_an_api_key_echoed_in_a_reply_is_masked_before_the_cache(client, monkeypatch, tmp_path):
    """Before: the key reached the store, the cache, the export and the viewer."""
    key = "sk-hostile-test-0123456789"
    monkeypatch.setenv("OPENAI_COMPAT_API_KEY", key)

    async def echo(n: int, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
        writer.write(http(chat(f"your key is {key}, {base64.b64encode(key.encode()).decode()}")))
        await writer.drain()

    _, (out,) = play(echo, client, monkeypatch, cache=tmp_path / "c.sqlite")
    assert isinstance(out, Completion)
    assert out.text == "your key is ***, ***" and "redacted" in out.flags
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        rows = db.execute("SELECT request || response FROM completions").fetchall()
    assert rows and not any(key in r[0] for r in rows)


def test_a_secret_in_a_cache_row_written_before_the_redactor_is_masked_on_a_hit(
    monkeypatch, tmp_path
):
    """Before: a row cached before replies were redacted (here: before the key was set)
    replayed the key into every rerun, and kept it in the cache."""
    key = "sk-hostile-old-row-0123456789"
    monkeypatch.delenv("OPENAI_COMPAT_API_KEY", raising=False)

    async def echo(n: int, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
        writer.write(http(chat(f"your key is {key}")))
        await writer.drain()

    cache = tmp_path / "c.sqlite"
    with socket.socket() as s:  # one port for both runs: the cache key names the URL
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    hostile, (old,) = play(echo, "lean", monkeypatch, cache=cache, at_port=port)
    assert isinstance(old, Completion) and key in old.text  # no key known: cached as it came
    monkeypatch.setenv("OPENAI_COMPAT_API_KEY", key)
    hostile, (hit,) = play(echo, "lean", monkeypatch, cache=cache, at_port=port)
    assert hostile.requests == 0  # answered from the cache
    assert isinstance(hit, Completion) and hit.cached
    assert hit.text == "your key is ***" and "redacted" in hit.flags
    with sqlite3.connect(cache) as db:
        rows = db.execute("SELECT response FROM completions").fetchall()
    assert len(rows) == 1 and key not in rows[0][0] and "***" in rows[0][0]


@pytest.mark.parametrize("message", [
    {"role": "assistant", "content": None, "refusal": "I can't help with that."},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "t", "type": "function"}]},
])  # fmt: skip
def test_a_null_content_is_a_distinct_error_never_cached(message, monkeypatch, tmp_path):
    """Before: cached as an empty reply and scored as an illegal move."""

    async def refuse(n: int, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
        writer.write(http(json.dumps({"choices": [{"message": message}]}).encode()))
        await writer.drain()

    hostile, (out,) = play(refuse, "lean", monkeypatch, options="timeout=3&retries=3",
                           cache=tmp_path / "c.sqlite")  # fmt: skip
    e = failed(out, "no-content")
    assert ("tool call" if "tool_calls" in message else "refusal") in str(e)
    assert hostile.requests == 1
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        assert db.execute("SELECT count(*) FROM completions").fetchone() == (0,)


# -- in a run: the breaker sees what used to escape it ------------------------------------


class Threaded:
    """A :class:`Hostile` server on its own event loop in a thread (a run has its own)."""

    def __init__(self, respond: Respond) -> None:
        import threading

        self.hostile = Hostile(respond)
        self.loop = asyncio.new_event_loop()
        started = threading.Event()

        async def serve() -> None:
            self.server = await asyncio.start_server(self.hostile.handle, "127.0.0.1", 0)
            self.port = self.server.sockets[0].getsockname()[1]
            started.set()

        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(serve(), self.loop)
        assert started.wait(5)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.server.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


def test_a_run_against_deep_json_fails_episodes_as_model_errors_and_stops(tmp_path):
    """Before: 12 of 12 episodes failed in RecursionError and the run went on."""
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync

    async def nested(n: int, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
        writer.write(http(b"[" * 200_000 + b"]" * 200_000))
        await writer.drain()

    srv = Threaded(nested)
    try:
        exp = parse_experiment({
            "name": "deep", "model": f"openai-compat:http://127.0.0.1:{srv.port}/v1#m",
            "seeds": list(range(12)), "grid": {"env": ["hanoi"]}, "out": str(tmp_path / "r"),
            "cache": None, "expert": False, "random": False, "concurrency": 1,
            "max_consecutive_failures": 3,
        })  # fmt: skip
        res = run_sync(exp, progress=None)
    finally:
        srv.close()
    assert res.failed == 3 and res.done == 0 and res.stopped.startswith("stopped early: 3")
    (reason,) = res.reasons
    assert "nested too deeply" in reason and srv.hostile.requests == 3


def test_a_cached_row_with_impossible_counts_is_asked_again_not_replayed(tmp_path):
    """Before: the cached usage of 10**20 failed every rerun the same way."""
    from statelab.llm import CachedLLM, ResponseCache, ScriptedLLM

    cache = tmp_path / "c.sqlite"
    backend = ScriptedLLM(["fresh"])
    llm = CachedLLM(backend, ResponseCache(cache))
    assert asyncio.run(llm.complete(MSGS, GenParams())).text == "fresh"
    llm.cache.close()
    with sqlite3.connect(cache) as db:  # as a cache written before the counts were checked
        (key, response) = db.execute("SELECT key, response FROM completions").fetchone()
        bad = {**json.loads(response), "text": "stale", "usage": [10**20, -5]}
        db.execute("UPDATE completions SET response=? WHERE key=?", (json.dumps(bad), key))
    llm = CachedLLM(backend, ResponseCache(cache))
    again = asyncio.run(llm.complete(MSGS, GenParams()))
    llm.cache.close()
    assert (again.text, again.cached, backend.calls) == ("fresh", False, 2)
