"""Scoring through a server on the model's own chat template, and server slots per prompt kind.

:class:`ServerScorer`: the prompt is rendered here with the model's template (``template=``
in the spec: a ``llamacpp`` model, package or ``.gguf``, read with llama-cpp-python as the
embedded backend reads it; or a transformers tokenizer folder) and sent to ``/completions``
for the log-probabilities of its own tokens (``echo``, ``logprobs: 1``, ``max_tokens: 1``).
A continuation's score is the sum over its last tokens, counted with the same tokenizer: on
llama-cpp-python's server, the embedded ``llamacpp:`` backend's score bit for bit when both
see the same requests in the same order (it scores as this echo evaluates:
:mod:`statelab.llm._llamacpp_score`, which says why no looser agreement holds on llama.cpp).
All continuations of one call go in one request (``prompt`` as a list) where the server
takes it; a server that refuses a list (llama-cpp-python's) is sent one request per
continuation, concurrently.
A template that takes ``enable_thinking`` (Qwen3's) is rendered with it false, as the chat
requests ask the server (:mod:`statelab.llm._thinking`), unless the spec says ``thinking=on``.

:class:`Slots`: a llama.cpp server started with ``-np N`` keeps N prompt caches; a spec with
``slots=N`` sends each request ``id_slot`` (and ``cache_prompt``) so that one episode's kinds
of prompt (acting, summary, questions: told apart by their first message) each keep a slot,
as the embedded backend keeps a context for each, instead of evicting each other.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from statelab.core import ConfigError, Message, ModelError
from statelab.llm._thinking import template_kwargs

__all__ = ["ChatTemplate", "Scored", "ServerScorer", "Slots", "load_template"]

log = logging.getLogger(__name__)


class ChatTemplate(Protocol):
    """A model's chat template and tokenizer, here."""

    #: whether the server must not add its own special tokens (the template holds them)
    raw: bool
    #: the template's own text (Jinja), "" where unknown
    source: str

    def render(self, messages: list[Message], **kwargs: Any) -> str:
        """The chat as the template writes it, ending with the assistant's turn (``kwargs``:
        the template's variables, e.g. ``enable_thinking``)."""
        ...

    def tokens(self, text: str) -> list[int]:
        """The token ids the server will see for ``text`` sent as a prompt."""
        ...

    def piece(self, token: int) -> str:
        """One token's text."""
        ...

    def count(self, text: str) -> int:
        """Tokens in ``text`` as the local backend on this model counts them (no BOS)."""
        ...


class _GGUFTemplate:
    raw = False

    def __init__(self, spec: str) -> None:
        from statelab.llm.llamacpp import chat_formatter, load_vocab

        self.llm = load_vocab(spec)
        self.formatter = chat_formatter(self.llm)
        self.source = str(self.llm.metadata.get("tokenizer.chat_template") or "")

    def render(self, messages: list[Message], **kwargs: Any) -> str:
        chat: Any = messages
        return str(self.formatter(messages=chat, **kwargs).prompt)

    def tokens(self, text: str) -> list[int]:
        return list(self.llm.tokenize(text.encode(), add_bos=True, special=True))

    def piece(self, token: int) -> str:
        return bytes(self.llm.detokenize([token])).decode("utf-8", errors="ignore")

    def count(self, text: str) -> int:
        return len(self.llm.tokenize(text.encode(), add_bos=False, special=True))


class _HFTemplate:
    raw = True

    def __init__(self, folder: str) -> None:
        try:
            from transformers import AutoTokenizer
        except ImportError as e:  # pragma: no cover - the train extra
            raise ConfigError("template=<folder> needs transformers: statelab[train]") from e
        self.tok = AutoTokenizer.from_pretrained(folder)
        self.source = str(getattr(self.tok, "chat_template", None) or "")

    def render(self, messages: list[Message], **kwargs: Any) -> str:
        text = self.tok.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True, **kwargs
        )
        return str(text)

    def tokens(self, text: str) -> list[int]:
        return list(self.tok(text, add_special_tokens=False)["input_ids"])

    def piece(self, token: int) -> str:
        return str(self.tok.decode([token]))

    def count(self, text: str) -> int:
        return len(self.tokens(text))


def load_template(spec: str) -> ChatTemplate:
    """The chat template ``spec`` names: a folder with a ``tokenizer_config.json`` is a
    transformers tokenizer; anything else a ``llamacpp`` model (package or ``.gguf``)."""
    path = Path(spec).expanduser()
    if path.is_dir() and (path / "tokenizer_config.json").is_file():
        return _HFTemplate(str(path))
    return _GGUFTemplate(spec)


@dataclass(frozen=True)
class Scored:
    """What scoring one call's continuations took: each continuation's score, the tokens
    the server says it was sent and generated over all the requests (its ``usage``; where it
    says nothing, the template's count of each prompt and one generated token a prompt), and
    the requests sent (one with every prompt, or one a continuation)."""

    scores: list[float]
    n_in: int
    n_out: int
    requests: int


class ServerScorer:
    """Scores continuations through ``owner``'s ``/completions`` on a local chat template."""

    def __init__(self, owner: Any, template: str | None) -> None:
        # ``owner``: the OpenAICompatLLM whose ``_post`` sends the requests
        self.owner = owner
        self.template = template
        self._loaded: ChatTemplate | None = None
        self._loading = threading.Lock()
        self.batch: bool | None = None  # None: not tried yet
        self.scored_once = False  # a scoring came back: the server gives echo log-probs

    def _get(self) -> ChatTemplate:
        # once, whatever the threads asking: two llama.cpp loads at once race on the process's
        # stdout (llama-cpp-python silences a load by pointing fd 1 and 2 at /dev/null and
        # back; interleaved, one restores the other's /dev/null and every later print is lost)
        with self._loading:
            if self._loaded is None:
                assert self.template is not None
                self._loaded = load_template(self.template)
            return self._loaded

    def count(self, text: str) -> int:
        """Tokens in ``text`` by the template's tokenizer (loaded here on first use)."""
        return self._get().count(text)

    async def loaded(self) -> ChatTemplate:
        """The template, loaded once (off the event loop)."""
        if self._loaded is not None:
            return self._loaded
        return await asyncio.to_thread(self._get)

    def render(self, tpl: ChatTemplate, messages: list[Message]) -> str:
        """The scoring prompt: the template rendered with thinking off where it takes the
        switch (:mod:`statelab.llm._thinking`), unless the spec says ``thinking=on``."""
        on = getattr(self.owner, "thinking", None) == "on"
        kwargs = {} if on else template_kwargs(getattr(tpl, "source", ""), reasoning=False)
        return tpl.render(messages, **kwargs) if kwargs else tpl.render(messages)

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        """Log-likelihood of each continuation as the assistant's reply (see the module)."""
        return (await self.scored(messages, continuations)).scores

    async def scored(self, messages: list[Message], continuations: list[str]) -> Scored:
        """:meth:`score`, with the tokens the requests took and how many were sent."""
        tpl = await self.loaded()
        prompt = self.render(tpl, messages)
        p_tok = tpl.tokens(prompt)
        todo = [i for i, c in enumerate(continuations) if c]
        tails = [self._tail(tpl, p_tok, prompt, continuations[i]) for i in todo]
        texts = [prompt + continuations[i] for i in todo]
        out = [0.0] * len(continuations)
        if not todo:
            return Scored(out, 0, 0, 0)
        try:
            found, n_in, n_out, requests = await self._all(tpl, texts)
        except Exception as e:
            e.args = (f"{self.owner.model_id} cannot score continuations: {e}",)
            raise
        for i, tail, choice in zip(todo, tails, found, strict=True):
            out[i] = _tail_sum(choice, tail, tpl)
        self.scored_once = True
        return Scored(out, n_in, n_out, requests)

    @staticmethod
    def _tail(tpl: ChatTemplate, p_tok: list[int], prompt: str, cont: str) -> list[int]:
        """The continuation's tokens as the server tokenises ``prompt + cont``: those after
        the prompt's, or (where a token spans the boundary) those from the first that
        differs."""
        full = tpl.tokens(prompt + cont)
        common = 0
        for a, b in zip(full, p_tok, strict=False):
            if a != b:
                break
            common += 1
        return full[min(common, len(full) - 1) :]

    async def _all(
        self, tpl: ChatTemplate, texts: list[str]
    ) -> tuple[list[dict[str, Any]], int, int, int]:
        """Every text's echo, the tokens in and out over the requests, and the requests."""
        if len(texts) > 1 and self.batch is not False:
            try:
                got, usage = await self._request(tpl, texts)
                if len(got) == len(texts):
                    self.batch = True
                    return (got, *_counted([usage], [texts], tpl), 1)
            except ModelError as e:  # the server's refusal of a list, or a real failure
                if e.kind not in ("http", "malformed") or self.batch:
                    raise
            self.batch = False
            log.info("%s takes one prompt per request: scoring one by one", self.owner.base_url)
        parts = await asyncio.gather(*(self._request(tpl, [t]) for t in texts))
        counted = _counted([u for _, u in parts], [[t] for t in texts], tpl)
        return ([p[0][0] for p in parts], *counted, len(parts))

    async def _request(
        self, tpl: ChatTemplate, texts: list[str]
    ) -> tuple[list[dict[str, Any]], tuple[int | None, int | None]]:
        body: dict[str, Any] = {
            "model": self.owner.model,
            "prompt": texts if len(texts) > 1 else texts[0],
            "max_tokens": 1,  # 0 means "no limit" to llama-cpp-python
            "echo": True,
            "logprobs": 1,
            "temperature": 0.0,
        }
        if tpl.raw:  # the template wrote the special tokens already (vLLM's field)
            body["add_special_tokens"] = False
        got: tuple[list[dict[str, Any]], tuple[int | None, int | None]]
        got = await self.owner._post("/completions", body, _parse_scoring)
        return got


def _counted(
    usages: list[tuple[int | None, int | None]], texts: list[list[str]], tpl: ChatTemplate
) -> tuple[int, int]:
    """Tokens in and out over requests: each request's ``usage`` where the server sent it,
    else its prompts counted by the template and one generated token a prompt."""
    n_in = n_out = 0
    for (i, o), ts in zip(usages, texts, strict=True):
        n_in += i if i is not None else sum(len(tpl.tokens(t)) for t in ts)
        n_out += o if o is not None else len(ts)
    return n_in, n_out


def _parse_scoring(data: Any) -> tuple[list[dict[str, Any]], tuple[int | None, int | None]]:
    """A scoring reply's choices (:func:`_parse_choices`) and its usage, where it has one."""
    usage = data.get("usage") if isinstance(data, dict) else None
    n_in = n_out = None
    if isinstance(usage, dict):
        p, c = usage.get("prompt_tokens"), usage.get("completion_tokens")
        n_in = p if isinstance(p, int) and not isinstance(p, bool) and p >= 0 else None
        n_out = c if isinstance(c, int) and not isinstance(c, bool) and c >= 0 else None
    return _parse_choices(data), (n_in, n_out)


def _parse_choices(data: Any) -> list[dict[str, Any]]:
    choices = sorted(data["choices"], key=lambda c: int(c.get("index", 0)))
    out = []
    for c in choices:
        lp = c["logprobs"]
        values = [None if x is None else float(x) for x in lp["token_logprobs"]]
        tokens = [str(t) for t in lp.get("tokens") or []]
        if not values or (tokens and len(tokens) != len(values)):
            raise ValueError("echo logprobs missing or misaligned")
        out.append({"logprobs": values, "tokens": tokens, "finish": c.get("finish_reason")})
    return out


def _tail_sum(choice: dict[str, Any], tail: list[int], tpl: ChatTemplate) -> float:
    """The sum of the continuation's log-probabilities: the last ``len(tail)`` prompt tokens
    of the echo, before the one generated token (or none, when the server ended at once; the
    token texts say which where they can)."""
    values, tokens = choice["logprobs"], choice["tokens"]
    n = len(tail)
    order = (1, 0) if choice["finish"] == "length" else (0, 1)
    pieces = [tpl.piece(t) for t in tail]
    gen = order[0]
    for g in order:
        if tokens and tokens[len(tokens) - g - n : len(tokens) - g] == pieces:
            gen = g
            break
    picked = values[len(values) - gen - n : len(values) - gen]
    if len(picked) != n or any(v is None for v in picked):
        raise ValueError("the server's echo is shorter than the continuation")
    return float(sum(v for v in picked if v is not None))


class Slots:
    """``id_slot`` per (episode, kind of prompt) over ``n`` server slots, least recently
    used first (see the module)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._of: dict[tuple[str | None, str], int] = {}
        self._used = [0] * n
        self._clock = 0

    @staticmethod
    def kind(messages: list[Message]) -> str:
        """A prompt's kind: its first message's opening (the part that names the task)."""
        first = messages[0].get("content", "") if messages else ""
        if isinstance(first, list):
            first = "".join(p.get("text", "") for p in first if isinstance(p, dict))
        return hashlib.sha256(str(first)[:256].encode()).hexdigest()[:16]

    def fields(self, episode: str | None, messages: list[Message]) -> dict[str, Any]:
        """The request fields that keep this prompt on its slot."""
        key = (episode, self.kind(messages))
        self._clock += 1
        slot = self._of.get(key)
        if slot is None:
            slot = min(range(self.n), key=self._used.__getitem__)
            for k in [k for k, v in self._of.items() if v == slot]:
                del self._of[k]  # the slot goes to the new kind; the old one gets another
            self._of[key] = slot
        self._used[slot] = self._clock
        return {"id_slot": slot, "cache_prompt": True}
