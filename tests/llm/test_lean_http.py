"""The OpenAI-compatible backend's lean HTTP/1.1 client (plain-http servers): keep-alive
reuse, chunked and read-to-close bodies, a stale keep-alive retried on a new connection,
failures as the same ModelServerError kinds, and ``STATELAB_HTTP_CLIENT=httpx`` (issue 13.2).

The server here is a raw asyncio one in the test's own event loop, so what goes over each
connection is exactly what a test writes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from statelab.core import GenParams
from statelab.llm import Model, RetryPolicy
from statelab.llm._compat_wire import ModelServerError
from statelab.llm._lean_http import QUIET
from statelab.llm.openai_compat import OpenAICompatLLM

MSGS: Any = [{"role": "user", "content": "hi"}]


def chat(text: str) -> bytes:
    return json.dumps(
        {
            "choices": [{"message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 2},
        }
    ).encode()


class Raw:
    """Answers each POST by ``mode``: ``length`` (HTTP/1.1, Content-Length, kept alive),
    ``chunked`` (HTTP/1.1, chunks with an extension and a trailer), ``close`` (HTTP/1.1 and
    Content-Length, then the server closes the connection without saying so: the next
    request on it finds it dead), ``to-close`` (HTTP/1.0, no length: the body runs to the
    end of the connection), ``drop-second`` (answers a connection's first request and closes
    on its second, unanswered: a keep-alive the server dropped while the request was on its
    way), ``interim`` (``length`` after a ``100 Continue``), ``hang`` (never answers)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.connections = 0
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        answered = 0
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                headers = {}
                while (h := await reader.readline()) not in (b"\r\n", b""):
                    k, _, v = h.decode().partition(":")
                    headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers["content-length"]))
                self.requests.append(json.loads(body))
                self.headers.append(headers)
                data = chat(f"reply {len(self.requests)}")
                if self.mode == "drop-second" and answered:
                    return
                answered += 1
                if self.mode == "hang":
                    await asyncio.sleep(60)
                if self.mode == "chunked":
                    half = len(data) // 2
                    writer.write(
                        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + b"%x;ext=1\r\n%s\r\n" % (half, data[:half])
                        + b"%x\r\n%s\r\n" % (len(data) - half, data[half:])
                        + b"0\r\nX-Trailer: yes\r\n\r\n"
                    )
                elif self.mode == "to-close":
                    writer.write(b"HTTP/1.0 200 OK\r\n\r\n" + data)
                    await writer.drain()
                    return
                else:
                    if self.mode == "interim":
                        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(data))
                    await writer.drain()
                    writer.write(data)  # the body in a second segment
                await writer.drain()
                if self.mode == "close":
                    return
        finally:
            writer.close()


def calls(mode: str, n: int, url_extra: str = "", **kw: Any) -> tuple[Raw, list[str]]:
    raw = Raw(mode)

    async def go() -> list[str]:
        server = await asyncio.start_server(raw.handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        retries = kw.pop("max_retries", 5)
        provider = OpenAICompatLLM(f"http://{url_extra}127.0.0.1:{port}/v1", "m", **kw)
        llm = Model(provider, RetryPolicy(retries=retries, backoff=0.01))
        try:
            out = []
            for _ in range(n):
                out.append((await llm.complete(MSGS, GenParams())).text)
                # the server's close (mode "close") arrives; the connection rests (QUIET)
                await asyncio.sleep(QUIET + 0.02)
            assert provider._http.lean is not None or kw.get("transport")
            return out
        finally:
            await llm.aclose()
            server.close()
            await server.wait_closed()

    return raw, asyncio.run(go())


def test_keep_alive_carries_every_request_over_one_connection():
    raw, texts = calls("length", 4)
    assert texts == ["reply 1", "reply 2", "reply 3", "reply 4"]
    assert raw.connections == 1
    assert raw.requests[0]["model"] == "m" and raw.requests[0]["messages"] == MSGS
    assert raw.headers[0]["content-type"] == "application/json"
    assert raw.headers[0]["host"].startswith("127.0.0.1:")


def test_an_interim_response_is_skipped():
    raw, texts = calls("interim", 2)
    assert texts == ["reply 1", "reply 2"] and raw.connections == 1


def test_chunked_bodies_are_read_and_the_connection_kept():
    raw, texts = calls("chunked", 3)
    assert texts == ["reply 1", "reply 2", "reply 3"]
    assert raw.connections == 1


def test_a_keep_alive_the_server_closed_is_retried_at_once_on_a_new_connection():
    raw, texts = calls("close", 3, max_retries=0)
    assert texts == ["reply 1", "reply 2", "reply 3"]  # no error, no backoff, no repeat
    assert raw.connections == 3 and len(raw.requests) == 3


def test_a_request_on_a_dropped_keep_alive_is_sent_again_on_a_new_connection():
    raw, texts = calls("drop-second", 3, max_retries=0)  # not the backend's own retry
    assert texts == ["reply 1", "reply 3", "reply 5"]  # requests 2 and 4 went unanswered
    assert raw.connections == 3 and len(raw.requests) == 5


def test_a_body_that_runs_to_the_end_of_the_connection():
    raw, texts = calls("to-close", 2)
    assert texts == ["reply 1", "reply 2"]
    assert raw.connections == 2


def test_url_credentials_become_basic_auth():
    raw, _ = calls("length", 1, url_extra="u%40x:p%3Aw@")
    assert raw.headers[0]["authorization"] == "Basic dUB4OnA6dw=="  # base64("u@x:p:w")


def test_no_answer_is_a_timeout_error_retried_once():
    raw = Raw("hang")

    async def go() -> None:
        server = await asyncio.start_server(raw.handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        provider = OpenAICompatLLM(f"http://127.0.0.1:{port}/v1", "m", timeout=0.3)
        llm = Model(provider, RetryPolicy(backoff=0.01))
        try:
            await llm.complete(MSGS, GenParams())
        finally:
            await llm.aclose()
            server.close()

    with pytest.raises(ModelServerError) as e:
        asyncio.run(go())
    assert e.value.kind == "timeout" and len(raw.requests) == 2


def test_httpx_on_request_speaks_the_same(monkeypatch):
    monkeypatch.setenv("STATELAB_HTTP_CLIENT", "httpx")
    raw = Raw("length")

    async def go() -> tuple[str, bool]:
        server = await asyncio.start_server(raw.handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        llm = OpenAICompatLLM(f"http://127.0.0.1:{port}/v1", "m")
        try:
            text = (await llm.complete(MSGS, GenParams())).text
            return text, llm._http.lean is None and bool(llm._http._clients)
        finally:
            await llm.aclose()
            server.close()

    assert asyncio.run(go()) == ("reply 1", True)
    assert raw.requests[0]["messages"] == MSGS
