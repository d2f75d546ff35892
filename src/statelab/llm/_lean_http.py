"""A lean HTTP/1.1 client for plain ``http://`` OpenAI-compatible servers.

:class:`LeanHTTP` keeps one keep-alive pool sized to the backend's ``concurrency``, sends a
request in one write and reads the body by length, chunked or to close; a dropped keep-alive
is retried once on a new connection. Its failures are httpx's exceptions, so
:class:`statelab.llm.openai_compat.OpenAICompatLLM` handles both clients alike (``https://``,
proxies and given transports go through httpx; ``STATELAB_HTTP_CLIENT=httpx`` takes httpx
for everything). benchmarks/concurrency.py measures the two side by side.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Protocol

import httpx

__all__ = ["LeanHTTP", "Response", "deadline"]


class Response(Protocol):
    """What the OpenAI-compatible backend reads of a response (httpx's, or the lean one)."""

    @property
    def status_code(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def headers(self) -> Any: ...
    def json(self) -> Any: ...


class _Reply:
    """A response read by :class:`LeanHTTP`: status, lower-cased headers, the body."""

    __slots__ = ("content", "headers", "status_code")

    def __init__(self, status: int, headers: dict[str, str], content: bytes) -> None:
        self.status_code, self.headers, self.content = status, headers, content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.content)


class _Conn(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection: bytes in a buffer, a future to wait on more."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.closed = False
        self.waiter: asyncio.Future[None] | None = None
        self.used = False  # has answered a request before (a stale keep-alive may fail)
        self.got = False  # bytes came back for the request in flight

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.got = True
        self.buf += data
        self._wake()

    def eof_received(self) -> bool:
        self.closed = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def more(self) -> None:
        """Wait for more bytes; the peer closing first is a ``RemoteProtocolError``."""
        if self.closed:
            raise httpx.RemoteProtocolError("the server closed the connection mid-response")
        self.waiter = asyncio.get_running_loop().create_future()
        await self.waiter
        self.waiter = None

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    async def read_reply(self) -> tuple[_Reply, bool]:
        """The next response, and whether the connection can carry another request."""
        buf = self.buf
        while (end := buf.find(b"\r\n\r\n")) < 0:
            if len(buf) > 65536:
                raise httpx.RemoteProtocolError("response headers over 64 KiB")
            await self.more()
        head = bytes(buf[:end]).decode("latin-1").split("\r\n")
        del buf[: end + 4]
        version, _, rest = head[0].partition(" ")
        try:
            status = int(rest[:3])
        except ValueError:
            raise httpx.RemoteProtocolError(f"bad status line {head[0][:80]!r}") from None
        headers: dict[str, str] = {}
        for line in head[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        reusable = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        if status < 200:  # an interim response (100 Continue): the real one follows
            return await self.read_reply()
        if status in (204, 304):  # no body, by definition
            return _Reply(status, headers, b""), reusable and not self.closed and not buf
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = await self._chunked()
        elif "content-length" in headers:
            try:
                n = int(headers["content-length"])
            except ValueError:
                raise httpx.RemoteProtocolError("bad Content-Length") from None
            while len(buf) < n:
                await self.more()
            body = bytes(buf[:n])
            del buf[:n]
        else:  # the body runs to the end of the connection
            while not self.closed:
                await self.more_or_eof()
            body, reusable = bytes(buf), False
            buf.clear()
        return _Reply(status, headers, body), reusable and not self.closed and not buf

    async def more_or_eof(self) -> None:
        if not self.closed:
            self.waiter = asyncio.get_running_loop().create_future()
            await self.waiter
            self.waiter = None

    async def _chunked(self) -> bytes:
        buf, out = self.buf, bytearray()
        while True:
            while (eol := buf.find(b"\r\n")) < 0:
                await self.more()
            try:
                size = int(bytes(buf[:eol]).split(b";")[0].strip() or b"x", 16)
            except ValueError:
                raise httpx.RemoteProtocolError("bad chunk size") from None
            del buf[: eol + 2]
            if size == 0:  # trailers, then an empty line
                while (eol := buf.find(b"\r\n")) != 0:
                    if eol > 0:
                        del buf[: eol + 2]
                    else:
                        await self.more()
                del buf[:2]
                return bytes(out)
            while len(buf) < size + 2:
                await self.more()
            out += buf[:size]
            del buf[: size + 2]


class LeanHTTP:
    """A minimal HTTP/1.1 client for JSON POSTs to one plain-http server: a pool of
    keep-alive connections (as many as requests in flight; the caller's semaphore bounds
    them), each request one write, the response read by Content-Length or chunks. A reused
    connection the server had already closed (its keep-alive timeout) is retried once on a
    new one. Failures are httpx's exceptions, so the caller handles both clients alike.

    httpx spends about 0.6 ms of CPU per request on the machinery a plain server does not
    need (redirects, cookies, auth flows, per-request URL and header models, two writes);
    this spends a tenth of it (benchmarks/concurrency.py)."""

    def __init__(
        self, host: str, port: int, netloc: str, timeout: float, connect_timeout: float
    ) -> None:
        self.host, self.port = host, port
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self.prefix = f"\r\nHost: {netloc}\r\nContent-Type: application/json\r\n"
        self.prefix += "Accept: application/json\r\nUser-Agent: statelab\r\n"
        self.idle: list[_Conn] = []

    async def _connect(self) -> _Conn:
        loop = asyncio.get_running_loop()
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(_Conn, self.host, self.port), self.connect_timeout
            )
        except asyncio.TimeoutError:
            raise httpx.ConnectTimeout(f"no connection within {self.connect_timeout:g} s") from None
        except OSError as e:
            raise httpx.ConnectError(str(e) or type(e).__name__) from None
        return conn

    def _take(self) -> _Conn | None:
        while self.idle:
            conn = self.idle.pop()
            if not conn.closed and not conn.buf:
                return conn
            conn.close()
        return None

    async def post(self, target: str, body: dict[str, Any], headers: dict[str, str]) -> _Reply:
        data = json.dumps(body, allow_nan=False).encode()
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        request = (
            f"POST {target} HTTP/1.1{self.prefix}{extra}Content-Length: {len(data)}\r\n\r\n"
        ).encode("latin-1") + data
        try:
            async with deadline(self.timeout):
                conn = self._take()
                if conn is not None:
                    try:
                        return await self._exchange(conn, request)
                    except (httpx.RemoteProtocolError, OSError):
                        if not (conn.used and not conn.got):
                            raise
                        # a keep-alive the server had closed: once more, on a new connection
                return await self._exchange(await self._connect(), request)
        except asyncio.TimeoutError:
            raise httpx.ReadTimeout(f"no reply within {self.timeout:g} s") from None
        except OSError as e:
            raise httpx.ReadError(str(e) or type(e).__name__) from None

    async def _exchange(self, conn: _Conn, request: bytes) -> _Reply:
        assert conn.transport is not None
        ok, conn.got = False, False
        try:
            conn.transport.write(request)
            reply, reusable = await conn.read_reply()
            ok = reusable
            return reply
        finally:
            if ok:
                conn.used = True
                self.idle.append(conn)
            else:
                conn.close()

    def close(self) -> None:
        idle, self.idle = self.idle, []
        for conn in idle:
            conn.close()


def deadline(seconds: float) -> Any:
    """``asyncio.timeout`` (Python 3.11+), else a cancel scope of our own making."""
    timeout = getattr(asyncio, "timeout", None)
    if timeout is not None:
        return timeout(seconds)
    return _Deadline(seconds)


class _Deadline:
    """``asyncio.timeout`` for Python 3.10: cancels the task after ``seconds`` and turns the
    cancellation into ``asyncio.TimeoutError``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.fired = False
        self.handle: asyncio.TimerHandle | None = None

    async def __aenter__(self) -> None:
        task = asyncio.current_task()
        assert task is not None

        def fire() -> None:
            self.fired = True
            task.cancel()

        self.handle = asyncio.get_running_loop().call_later(self.seconds, fire)

    async def __aexit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        assert self.handle is not None
        self.handle.cancel()
        if self.fired and kind is asyncio.CancelledError:
            raise asyncio.TimeoutError
        return False
