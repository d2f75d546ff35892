"""The HTTP clients of the OpenAI-compatible backend, behind one ``post`` (and a ``get``).

A plain ``http://`` server is spoken to through :class:`~statelab.llm._lean_http.LeanHTTP`;
``https://``, an HTTP proxy from the environment, a given transport, or
``STATELAB_HTTP_CLIENT=httpx`` go through httpx. Both keep the same rules (see
:mod:`statelab.llm._lean_http`): one whole-request deadline, every body counted against
``max_body`` by :func:`~statelab.llm._lean_http.capped`, and a connection back in the pool
only after :data:`~statelab.llm._lean_http.QUIET` seconds without a stray byte. Failures
are httpx's exceptions for both.
"""

from __future__ import annotations

import asyncio
import functools
import os
import ssl
from typing import Any
from urllib.parse import SplitResult

import httpx

from statelab.llm._lean_http import QUIET, LeanHTTP, Reply, capped, deadline

__all__ = ["CONNECT_TIMEOUT", "POOL", "Clients"]

CONNECT_TIMEOUT = 10.0
POOL = 8  # connections per httpx client (see Clients._make)


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every client of the process: httpx builds one per client
    otherwise, loading the CA bundle each time (~60-80 ms of CPU, even for http URLs)."""
    return httpx.create_ssl_context()


class Clients:
    """The clients of one backend for the running event loop (made anew when it changes)."""

    def __init__(
        self,
        url: SplitResult,
        *,
        timeout: float,
        concurrency: int,
        max_body: int,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.split, self.timeout, self.n, self.max_body = url, timeout, concurrency, max_body
        self.transport = transport
        self._params = httpx.QueryParams(url.query)
        self._clients: list[httpx.AsyncClient] = []
        self._load: list[int] = []
        self._lean: LeanHTTP | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._resting: set[asyncio.Task[None]] = set()

    @property
    def lean(self) -> LeanHTTP | None:
        """The lean client, when this backend uses it (after the first request)."""
        return self._lean

    def lean_fits(self) -> bool:
        """Whether :class:`LeanHTTP` speaks to this server: plain http, no transport given,
        no HTTP proxy in the environment, and httpx not asked for."""
        if self.split.scheme != "http" or self.transport is not None:
            return False
        if os.environ.get("STATELAB_HTTP_CLIENT", "").lower() == "httpx":
            return False
        proxies = ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
        return not any(os.environ.get(v) for v in proxies)

    def _make(self) -> None:
        """The clients of the running loop. httpx connections are spread over clients of
        at most :data:`POOL` each: httpcore scans every connection of a pool on each request
        (and polls its socket), so one pool of 256 costs a core at 256 requests in flight,
        while 32 pools of 8 cost next to nothing. Each pool may hold twice its share, for
        the connections resting after a reply."""
        loop = asyncio.get_running_loop()
        if self._loop is loop and (self._clients or self._lean is not None):
            return
        self._loop = loop
        connect = min(self.timeout, CONNECT_TIMEOUT)
        if self.lean_fits():
            u = self.split
            netloc = u.netloc.rpartition("@")[2]
            self._lean = LeanHTTP(u.hostname or "", u.port or 80, netloc, self.timeout,
                                  connect, self.max_body, self.n)  # fmt: skip
            return
        timeout = httpx.Timeout(self.timeout, connect=connect)
        k = -(-self.n // POOL)
        share = -(-self.n // k)
        limits = httpx.Limits(max_connections=2 * share, max_keepalive_connections=share)
        self._clients = [
            httpx.AsyncClient(
                timeout=timeout, transport=self.transport, limits=limits, verify=_tls()
            )
            for _ in range(k)
        ]
        self._load = [0] * k

    async def post(
        self, url: str, body: dict[str, Any], headers: dict[str, str], auth: Any
    ) -> Reply:
        """POST ``body`` as JSON; the whole exchange within the timeout, the body capped."""
        self._make()
        if self._lean is not None:
            u = self.split
            target = (u.path.rstrip("/") + url) + (f"?{u.query}" if u.query else "")
            return await self._lean.post(target, body, headers)
        base = self.split._replace(netloc=self.split.netloc.rpartition("@")[2], query="")
        full = base.geturl().rstrip("/") + url
        return await self._spread(full, body, headers, auth)

    async def get(self, path: str, headers: dict[str, str], auth: Any) -> Reply:
        """GET ``path`` (from the server's root, not the base URL's path), as :meth:`post`
        is held: the timeout, the body capped."""
        self._make()
        query = f"?{self.split.query}" if self.split.query else ""
        if self._lean is not None:
            return await self._lean.send("GET", path + query, b"", headers)
        base = self.split._replace(netloc=self.split.netloc.rpartition("@")[2], path="",
                                   query="")  # fmt: skip
        return await self._spread(base.geturl() + path, None, headers, auth)

    async def _spread(
        self, url: str, body: dict[str, Any] | None, headers: dict[str, str], auth: Any
    ) -> Reply:
        load, clients = self._load, self._clients
        i = min(range(len(load)), key=load.__getitem__)
        load[i] += 1
        try:
            return await self._httpx(clients[i], url, body, headers, auth)
        finally:
            load[i] -= 1

    async def _httpx(
        self, client: httpx.AsyncClient, url: str, body: dict[str, Any] | None,
        headers: dict[str, str], auth: Any,
    ) -> Reply:  # fmt: skip
        headers = {**headers, "Accept-Encoding": "identity"}
        method = "GET" if body is None else "POST"
        request = client.build_request(method, url, json=body, headers=headers,
                                       params=self._params)  # fmt: skip
        response: httpx.Response | None = None
        done = False
        try:
            async with deadline(self.timeout):
                response = await client.send(request, auth=auth, stream=True)
                promised = response.headers.get("content-length")
                if promised is not None and promised.strip().isdigit():
                    capped(int(promised), self.max_body)
                content = bytearray()
                # the raw stream (asked for identity encoding), not aiter_bytes: that one hands
                # the connection back at its end, with no time for a stray response to show
                stream: Any = response.stream
                async for part in stream:
                    capped(len(content) + len(part), self.max_body)
                    content += part
                done = True
        except asyncio.TimeoutError:
            raise httpx.ReadTimeout(f"no reply within {self.timeout:g} s") from None
        finally:
            if response is not None:
                if done:  # the connection rests before the pool may hand it out again
                    self._rest(response)
                else:
                    await response.aclose()
        assert response is not None
        heads = {k.lower(): v for k, v in response.headers.items()}
        return Reply(response.status_code, heads, bytes(content))

    def _rest(self, response: httpx.Response) -> None:
        async def later() -> None:
            try:
                await asyncio.sleep(QUIET)
            finally:
                await response.aclose()

        task = asyncio.get_running_loop().create_task(later())
        self._resting.add(task)
        task.add_done_callback(self._resting.discard)

    async def aclose(self) -> None:
        """Close every connection (those resting too)."""
        resting, self._resting = self._resting, set()
        for task in resting:
            task.cancel()
        if resting:
            await asyncio.gather(*resting, return_exceptions=True)
        clients, self._clients, self._loop = self._clients, [], None
        lean, self._lean = self._lean, None
        if lean is not None:
            lean.close()
        for client in clients:
            await client.aclose()
