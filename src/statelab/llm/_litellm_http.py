"""LiteLLM's HTTP under statelab's rules (:mod:`statelab.llm._lean_http`): every response
body counted against ``max_body`` as it arrives (the promised length first), asked for
without compression (so the bytes counted are the bytes kept), no retries of its own, and a
connection never reused (a stray response cannot become the next reply; each call pays a
new connection).

LiteLLM reaches a provider one of two ways: through the OpenAI SDK (``openai/…`` and the
OpenAI-compatible providers), whose async HTTP client is ``litellm.aclient_session``, or
through its own handler (Anthropic, Gemini, Bedrock, …), which takes a ``client``. Both get
one :class:`CappedTransport`; the cap of the call in progress is a context variable
(:func:`body_cap`), so backends with different ``max_body`` share it. The whole-call deadline
is the backend's (:func:`statelab.llm._lean_http.deadline` around the call).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

from statelab.llm._lean_http import capped
from statelab.llm._options import MAX_BODY

__all__ = ["CappedTransport", "body_cap", "install", "provider_client"]

#: the largest body the call in progress may read (bytes)
_CAP: contextvars.ContextVar[int] = contextvars.ContextVar("statelab_litellm_cap", default=MAX_BODY)


@contextlib.contextmanager
def body_cap(limit: int) -> Iterator[None]:
    """Cap the bodies the calls inside read at ``limit`` bytes."""
    token = _CAP.set(limit)
    try:
        yield
    finally:
        _CAP.reset(token)


class _Capped(httpx.AsyncByteStream):
    def __init__(self, inner: Any, limit: int) -> None:
        self.inner, self.limit = inner, limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        n = 0
        async for part in self.inner:
            n += len(part)
            capped(n, self.limit)
            yield part

    async def aclose(self) -> None:
        await self.inner.aclose()


class CappedTransport(httpx.AsyncBaseTransport):
    """httpx's transport (one per event loop), each response body capped as it is read."""

    def __init__(self) -> None:
        self._inner: dict[asyncio.AbstractEventLoop, httpx.AsyncHTTPTransport] = {}

    def _transport(self) -> httpx.AsyncHTTPTransport:
        loop = asyncio.get_running_loop()
        for old in [lp for lp in self._inner if lp.is_closed()]:
            del self._inner[old]  # its connections died with it
        if loop not in self._inner:
            # no connection is reused: a stray response left on one (a byte after a reply)
            # could otherwise be read as the next request's reply
            limits = httpx.Limits(max_keepalive_connections=0)
            self._inner[loop] = httpx.AsyncHTTPTransport(retries=0, limits=limits)
        return self._inner[loop]

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        limit = _CAP.get()
        request.headers["Accept-Encoding"] = "identity"
        response = await self._transport().handle_async_request(request)
        promised = response.headers.get("content-length", "")
        try:
            if promised.strip().isdigit():
                capped(int(promised), limit)
        except Exception:
            await response.aclose()
            raise
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_Capped(response.stream, limit),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        inner = self._inner.pop(loop, None)
        if inner is not None:
            await inner.aclose()


_TRANSPORT = CappedTransport()
_HANDLER: list[Any] = []


def install(lite: Any) -> None:
    """Give the OpenAI SDK route of ``lite`` (LiteLLM) the capped transport (once)."""
    session = getattr(lite, "aclient_session", None)
    if not (isinstance(session, httpx.AsyncClient) and session._transport is _TRANSPORT):
        lite.aclient_session = httpx.AsyncClient(transport=_TRANSPORT, timeout=None)


def provider_client(lite: Any, model: str) -> Any:
    """The ``client`` a call of ``model`` passes LiteLLM: None where it goes through the
    OpenAI SDK (capped by :func:`install`), else LiteLLM's own handler over the capped
    transport."""
    try:
        provider = lite.get_llm_provider(model)[1]
    except Exception:  # LiteLLM will say what is wrong with the name itself
        return None
    sdk = set(getattr(lite, "openai_compatible_providers", ())) | {"openai", "azure"}
    if provider in sdk:
        return None
    if not _HANDLER:
        from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

        _HANDLER.append(AsyncHTTPHandler(transport=_TRANSPORT))
    return _HANDLER[0]
