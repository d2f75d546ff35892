"""The HTTP side of the OpenAI-compatible backend (:mod:`statelab.llm.openai_compat`): one
POST and how it failed (:class:`ModelServerError`), credentials kept out of every message, the
readers of a chat reply and of an echo's log-probabilities, and how a chat request is held
to a choice (:class:`Forms`, :func:`constrain_body`: the server's form, probed once), shared
with the ``litellm:`` backend, which sends the same fields through LiteLLM."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from typing import Any, TypeVar

import httpx

from statelab.core import GenParams, ModelError
from statelab.llm import _constrain as forms
from statelab.llm._http import Clients
from statelab.llm._lean_http import BodyTooLarge, NestedTooDeep, Reply, TooManyInterim
from statelab.llm._safe import Redactor, terminal_safe

__all__ = ["Forms", "ModelServerError", "NoContent", "Wire", "constrain_body"]

T = TypeVar("T")


class ModelServerError(ModelError):
    """A request to a model server failed; ``kind`` says how, ``retryable`` whether the
    model wrapper may try again, ``retry_after`` what the server asked for (seconds)."""

    def __init__(
        self,
        message: str,
        kind: str,
        status: int | None = None,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class Wire:
    """One POST to ``base_url`` with the credentials, its reply parsed or its failure
    classified (mixed into :class:`~statelab.llm.openai_compat.OpenAICompatLLM`, which sets
    the attributes below)."""

    base_url: str
    api_key_env: str
    timeout: float
    _http: Clients
    _auth: httpx.BasicAuth | None
    _basic: str | None
    _secrets: tuple[str, ...]

    def secrets(self) -> tuple[str, ...]:
        """The API key (read now) and the URL's password, with ``user:password``."""
        key = self._key()
        return (key, *self._secrets) if key else self._secrets

    def _key(self) -> str | None:
        return os.environ.get(self.api_key_env) or None

    def _scrub(self, text: str) -> str:
        """One line, short, printable, with credentials (if a server echoes them) masked
        before it is cut (a cut must not leave half a secret)."""
        text = Redactor(self.secrets())(text)
        return " ".join(terminal_safe(text).split())[:200]

    def _credentials(self) -> tuple[dict[str, str], Any]:
        """The headers and httpx auth a request to the server carries (its key as a bearer
        token, or the URL's user and password)."""
        key = self._key()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        auth: Any = httpx.USE_CLIENT_DEFAULT
        if key is None and self._basic is not None:
            if self._http.lean_fits():
                headers["Authorization"] = self._basic
            else:
                auth = self._auth
        return headers, auth

    async def _post(self, path: str, body: dict[str, Any], parse: Callable[[Any], T]) -> T:
        """One POST; ``parse(json)``, or a classified :class:`ModelServerError`."""
        shown = self.base_url + path
        headers, auth = self._credentials()
        try:
            r = await self._http.post(path, body, headers, auth)
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as e:
            reason = f"cannot talk to {shown}: {self._scrub(str(e))}"
            raise ModelServerError(reason, "protocol") from None
        except httpx.TimeoutException as e:
            reason = f"{type(e).__name__} after {self.timeout:g} s talking to {shown}"
            raise ModelServerError(reason, "timeout", retryable=True) from None
        except httpx.ConnectError as e:
            reason = f"cannot connect to {shown}: {self._scrub(str(e))}"
            raise ModelServerError(reason, "connect", retryable=True) from None
        except BodyTooLarge as e:
            raise ModelServerError(f"{shown}: {e}", "too-large") from None
        except TooManyInterim as e:
            raise ModelServerError(f"malformed response from {shown}: {e}", "malformed") from None
        except httpx.TransportError as e:  # the connection dropped, a broken reply
            reason = f"{type(e).__name__} talking to {shown}: {self._scrub(str(e))}"
            raise ModelServerError(reason, "transport", retryable=True) from None
        return self._read(r, shown, parse)

    def _read(self, r: Reply, shown: str, parse: Callable[[Any], T]) -> T:
        status = r.status_code
        if not 200 <= status < 300:
            reason = f"HTTP {status} from {shown}: {self._scrub(r.text)}"
            retry = status == 429 or status >= 500
            raise ModelServerError(reason, "http", status, retryable=retry,
                                   retry_after=_retry_after(r) if retry else None)  # fmt: skip
        try:
            return parse(r.json())
        except NoContent as e:
            raise ModelServerError(f"{shown} replied with no content ({e})", "no-content",
                                   status) from None  # fmt: skip
        except NestedTooDeep as e:
            raise ModelServerError(f"malformed response from {shown}: {e}", "malformed",
                                   status) from None  # fmt: skip
        except (ValueError, KeyError, IndexError, TypeError) as e:
            excerpt = self._scrub(r.text) or type(e).__name__
            reason = f"malformed response from {shown}: {excerpt}"
            raise ModelServerError(reason, "malformed", status, retryable=True) from None


class Forms:
    """Which constrained form a server's replies are held by (mixed into the backends that
    send OpenAI's chat fields; they set the attributes and :meth:`_probe_send`):
    ``constrain`` as the spec asks (``auto``: probed once per server, see
    :mod:`statelab.llm._constrain`; ``off``: none), the server known by ``base_url`` and
    ``model``."""

    constrain: str
    base_url: str
    model: str
    _probe_lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    async def _probe_send(self, body: dict[str, Any]) -> forms.ProbeReply:
        raise NotImplementedError

    def _known(self) -> str:
        """The form this server was found to take, if it was asked already ("" if not)."""
        if self.constrain == "off":
            return ""
        if self.constrain != "auto":
            return self.constrain
        return forms.remembered(self.base_url, self.model) or ""

    async def _form(self) -> str:
        """The constrained form this server takes (probed once, see ``_constrain``)."""
        if self.constrain != "auto":
            return self.constrain
        found = forms.remembered(self.base_url, self.model)
        if found is not None:
            return found
        loop = asyncio.get_running_loop()
        if self._probe_lock is None or self._probe_lock[0] is not loop:
            self._probe_lock = (loop, asyncio.Lock())
        async with self._probe_lock[1]:  # one probe, however many episodes start at once
            return await forms.probe(self.base_url, self.model, self._probe_send)

    async def constrained_form(self, body: dict[str, Any], params: GenParams) -> str:
        """Put ``params``' structured output and choice constraint into a chat ``body``;
        the form the reply is held by ("" for a free reply, no choices asked)."""
        form = ""
        if params.choices and self.constrain != "off":  # only a choice asks the server
            form = await self._form()
        constrain_body(body, params, form, form or self._known())
        return form


def constrain_body(body: dict[str, Any], params: GenParams, form: str, known: str) -> None:
    """``params``' JSON schema as ``response_format``, the choice's constraint in ``form``
    (with room for the whole reply), and the sampling fields of the server family ``known``
    reveals, put into a chat request ``body``."""
    if params.json_schema is not None:
        schema = json.loads(params.json_schema)
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "reply", "schema": schema, "strict": True},
        }
    if form and params.choices:
        forms.apply(form, body, params.choice_prefix, params.choices)
        if form != forms.NONE:  # room for the whole reply, JSON braces included
            longest = max(len(params.choice_prefix + c) for c in params.choices)
            body["max_tokens"] = max(params.max_tokens, longest // 2 + 32)
    body.update(forms.sampling(known))


class NoContent(ValueError):
    """A chat reply whose ``content`` is null: a refusal or a tool call, not an empty text."""


def _retry_after(r: Reply) -> float | None:
    try:
        return max(0.0, float(r.headers["retry-after"]))
    except (KeyError, ValueError):
        return None  # absent, or an HTTP date: fall back to exponential backoff


def parse_chat(data: Any) -> tuple[str, int | None, int | None]:
    message = data["choices"][0]["message"]
    if not isinstance(message, dict):
        raise TypeError("choices[0].message is not an object")
    text = message.get("content")
    # servers that parse reasoning out of the reply (vLLM --reasoning-parser, DeepSeek) send
    # it apart: it is put back as the <think> block the model wrote, unclosed when the reply
    # stopped inside it, so that agents see and store one text
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    thought = isinstance(reasoning, str) and reasoning.strip()
    if text is None and not thought:
        what = "a tool call" if message.get("tool_calls") else "a refusal"
        refusal = message.get("refusal")
        raise NoContent(f"{what}{': ' + refusal[:80] if isinstance(refusal, str) else ''}")
    text = text or ""
    if not isinstance(text, str):
        raise TypeError("choices[0].message.content is not a string")
    if thought:
        text = f"<think>{reasoning}</think>{text}" if text else f"<think>{reasoning}"
    usage = data.get("usage") or {}
    n_in, n_out = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return text, n_in if isinstance(n_in, int) else None, n_out if isinstance(n_out, int) else None


def parse_echo(data: Any) -> tuple[list[int], list[float | None]]:
    lp = data["choices"][0]["logprobs"]
    offsets, logprobs = list(lp["text_offset"]), list(lp["token_logprobs"])
    if not offsets or len(offsets) != len(logprobs):
        raise ValueError("echo logprobs missing or misaligned")
    return [int(o) for o in offsets], [None if x is None else float(x) for x in logprobs]
