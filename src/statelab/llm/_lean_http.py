"""A lean HTTP/1.1 client for plain ``http://`` OpenAI-compatible servers.

:class:`LeanHTTP` keeps one keep-alive pool sized to the backend's ``concurrency``, sends a
request in one write and reads the body by length, chunked or to close; a dropped keep-alive
is retried once on a new connection. Its failures are httpx's exceptions, so
:class:`statelab.llm.openai_compat.OpenAICompatLLM` handles both clients alike (``https://``,
proxies and given transports go through httpx; ``STATELAB_HTTP_CLIENT=httpx`` takes httpx
for everything). benchmarks/concurrency.py measures the two side by side.

What a hostile server cannot do to either client (the rules live here, once):

* send more than ``max_body`` bytes of body (by ``Content-Length``, chunk sizes or a body
  that runs to the close): :func:`capped` counts every body, and the call fails with
  :class:`BodyTooLarge`;
* hold a request past its ``timeout``: :func:`deadline` covers connecting, sending and
  every byte of the reply;
* answer a request with a response it sent unasked: a connection goes back to the pool
  only :data:`QUIET` seconds after its reply ended, and only when nothing came meanwhile
  (a byte arriving on an idle connection closes it), so a stray response is never read
  as the next request's reply;
* recurse: interim (1xx) responses are read in a loop, at most :data:`MAX_INTERIM`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Protocol

import httpx

__all__ = [
    "MAX_INTERIM",
    "QUIET",
    "BodyTooLarge",
    "LeanHTTP",
    "NestedTooDeep",
    "Reply",
    "Response",
    "TooManyInterim",
    "capped",
    "deadline",
]

#: seconds a connection rests after its reply before it may carry another request
QUIET = 0.05
#: interim (1xx) responses read before one request's reply, at most
MAX_INTERIM = 32


class BodyTooLarge(httpx.RemoteProtocolError):
    """A response body over the client's ``max_body`` bytes (not retried: it would again)."""


class NestedTooDeep(ValueError):
    """A JSON body nested past Python's recursion limit (not retried: it would again)."""


class TooManyInterim(httpx.RemoteProtocolError):
    """More than :data:`MAX_INTERIM` interim responses before the reply."""


def capped(size: int, limit: int) -> int:
    """``size`` (bytes of one body so far, or promised), or :class:`BodyTooLarge` past
    ``limit``: the one check every body read by either client passes."""
    if size > limit:
        raise BodyTooLarge(f"response body over {limit} bytes (max_body)")
    return size


class Response(Protocol):
    """What the OpenAI-compatible backend reads of a response (httpx's, or the lean one)."""

    @property
    def status_code(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def headers(self) -> Any: ...
    def json(self) -> Any: ...


class Reply:
    """A response as read by either client: status, lower-cased headers, the body."""

    __slots__ = ("content", "headers", "status_code")

    def __init__(self, status: int, headers: dict[str, str], content: bytes) -> None:
        self.status_code, self.headers, self.content = status, headers, content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body as JSON (a ``ValueError`` for one nested past Python's recursion limit)."""
        try:
            return json.loads(self.content)
        except RecursionError:
            raise NestedTooDeep("JSON nested too deeply") from None


class _Conn(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection: bytes in a buffer, a future to wait on more."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.closed = False
        self.waiter: asyncio.Future[None] | None = None
        self.used = False  # has answered a request before (a stale keep-alive may fail)
        self.got = False  # bytes came back for the request in flight
        self.idle = False  # no request in flight: any byte now is a stray (closes it)
        self.limit = 1 << 62

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self.idle:  # unrequested bytes: this connection can no longer be trusted
            self.close()
            return
        self.got = True
        self.buf += data
        if len(self.buf) > self.limit + 65536:  # past any body we would read: stop reading
            assert self.transport is not None
            self.transport.pause_reading()
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

    async def _head(self) -> tuple[str, int, dict[str, str]]:
        """The next response's status line and headers (interim ones skipped, in a loop)."""
        buf = self.buf
        for _ in range(MAX_INTERIM + 1):
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
            if status >= 200:  # else an interim response (100 Continue): the real one follows
                headers: dict[str, str] = {}
                for line in head[1:]:
                    k, _, v = line.partition(":")
                    headers[k.strip().lower()] = v.strip()
                return version, status, headers
        raise TooManyInterim(f"over {MAX_INTERIM} interim responses before the reply")

    async def read_reply(self) -> tuple[Reply, bool]:
        """The next response, and whether the connection can carry another request."""
        buf = self.buf
        version, status, headers = await self._head()
        reusable = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        if status in (204, 304):  # no body, by definition
            return Reply(status, headers, b""), reusable and not self.closed and not buf
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = await self._chunked()
        elif "content-length" in headers:
            try:
                n = int(headers["content-length"])
            except ValueError:
                raise httpx.RemoteProtocolError("bad Content-Length") from None
            if n < 0:
                raise httpx.RemoteProtocolError("bad Content-Length")
            capped(n, self.limit)
            while len(buf) < n:
                await self.more()
            body = bytes(buf[:n])
            del buf[:n]
        else:  # the body runs to the end of the connection
            while not self.closed:
                capped(len(buf), self.limit)
                await self.more_or_eof()
            capped(len(buf), self.limit)
            body, reusable = bytes(buf), False
            buf.clear()
        return Reply(status, headers, body), reusable and not self.closed and not buf

    async def more_or_eof(self) -> None:
        if not self.closed:
            self.waiter = asyncio.get_running_loop().create_future()
            await self.waiter
            self.waiter = None

    async def _chunked(self) -> bytes:
        buf, out = self.buf, bytearray()
        while True:
            while (eol := buf.find(b"\r\n")) < 0:
                if len(buf) > 4096:
                    raise httpx.RemoteProtocolError("chunk size line over 4 KiB")
                await self.more()
            try:
                size = int(bytes(buf[:eol]).split(b";")[0].strip() or b"x", 16)
            except ValueError:
                raise httpx.RemoteProtocolError("bad chunk size") from None
            del buf[: eol + 2]
            capped(len(out) + size, self.limit)
            if size == 0:  # trailers, then an empty line
                while (eol := buf.find(b"\r\n")) != 0:
                    if len(buf) > 65536:
                        raise httpx.RemoteProtocolError("trailers over 64 KiB")
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
    """A minimal HTTP/1.1 client for JSON POSTs (and GETs) to one plain-http server: a pool of
    keep-alive connections (as many as requests in flight; the caller's semaphore bounds
    them), each request one write, the response read by Content-Length or chunks. A reused
    connection the server had already closed (its keep-alive timeout) is retried once on a
    new one. Failures are httpx's exceptions, so the caller handles both clients alike.

    httpx spends about 0.6 ms of CPU per request on the machinery a plain server does not
    need (redirects, cookies, auth flows, per-request URL and header models, two writes);
    this spends a tenth of it (benchmarks/concurrency.py)."""

    def __init__(
        self,
        host: str,
        port: int,
        netloc: str,
        timeout: float,
        connect_timeout: float,
        max_body: int = 1 << 62,
        pool: int = 8,
    ) -> None:
        self.host, self.port = host, port
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self.max_body, self.pool = max_body, pool
        self._resting: dict[_Conn, asyncio.TimerHandle] = {}
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
        conn.limit = self.max_body
        return conn

    def _take(self) -> _Conn | None:
        while self.idle:
            conn = self.idle.pop()
            if not conn.closed and not conn.buf:
                conn.idle = False
                return conn
            conn.close()
        return None

    def _rest(self, conn: _Conn) -> None:
        """Take ``conn`` back after :data:`QUIET` seconds if nothing came meanwhile."""
        conn.idle = True  # from now on, a byte closes it

        def back() -> None:
            self._resting.pop(conn, None)
            if conn.closed or conn.buf or len(self.idle) >= self.pool:
                conn.close()
            else:
                self.idle.append(conn)

        self._resting[conn] = asyncio.get_running_loop().call_later(QUIET, back)

    async def post(self, target: str, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        """POST ``body`` as JSON to ``target``, within the timeout."""
        return await self.send("POST", target, json.dumps(body, allow_nan=False).encode(),
                               headers)  # fmt: skip

    async def send(
        self, method: str, target: str, data: bytes, headers: dict[str, str]
    ) -> Reply:
        """One request (``GET``: ``data`` empty), the whole exchange within the timeout."""
        extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        request = (
            f"{method} {target} HTTP/1.1{self.prefix}{extra}Content-Length: {len(data)}\r\n\r\n"
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

    async def _exchange(self, conn: _Conn, request: bytes) -> Reply:
        assert conn.transport is not None
        ok, conn.got = False, False
        try:
            conn.transport.write(request)
            reply, reusable = await conn.read_reply()
            ok = reusable
            return reply
        finally:
            if ok and not conn.buf:
                conn.used = True
                self._rest(conn)
            else:
                conn.close()

    def close(self) -> None:
        resting, self._resting = self._resting, {}
        for conn, handle in resting.items():
            handle.cancel()
            conn.close()
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
