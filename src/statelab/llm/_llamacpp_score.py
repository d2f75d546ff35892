"""How the embedded ``llamacpp:`` backend scores a continuation: token for token as
llama-cpp-python's completion with ``echo`` and ``logprobs`` evaluates the same text, so that
its OpenAI-compatible server on the same GGUF (:mod:`statelab.llm._server_scoring`) returns
the same numbers for the same requests in the same order.

Why it must be that way and not "any split, equal to float tolerance": llama.cpp quantises
activations to 8 bits before every quantised matmul, so a last-bit difference between two
kernels flips some roundings and the flip propagates. Which kernel computes a position depends
on the batch it is evaluated in (flash attention: batches of up to 60 tokens took another
path than ones of 64 or more; without it, lone 1-token batches differed now and then).
Measured on the embedded SmolLM2 (Q4_1, a 118-token reader prompt and continuation;
docs/run-on-a-server.md, "Scores and the evaluation split"): a position's log-probability of
the next token moves by 0.037 nats (median) and up to 0.24 between two splits, as much as it
differs from the dequantised float32 model, and a 4-token continuation's sum by up to 0.36;
evaluated in the same split, it is the same bit for bit.

So a scoring request ``prompt + continuation`` keeps the longest prefix the context holds
(all but the last token when it holds all of them; nothing is evaluated when it holds exactly
those tokens and the logits the scoring reads), evaluates the rest in ``n_batch`` chunks, and
reads each continuation token's log-probability (float32, the server's arithmetic) from the
logits of the position before it: computed now, or kept from the request that computed them
(:class:`Rows`, what the server's ``scores`` array holds). A score still depends on what the
context held before, on the server alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from statelab.core import ModelError

__all__ = ["Rows", "boundary", "echo_logprobs"]


class Rows:
    """Logits one context computed at given positions, valid until it evaluates again from
    a position at or before them. Only the positions a scoring reads are kept (the
    continuation's and the one before it), and a generation on the context drops them all
    (:meth:`clear`): a later scoring that needs one evaluates from there instead."""

    def __init__(self) -> None:
        self._rows: dict[int, np.ndarray] = {}

    def clear(self) -> None:
        """Forget every row (the context evaluated something else)."""
        self._rows.clear()

    def drop_from(self, start: int) -> None:
        """Forget the rows at ``start`` and after (the context evaluates from there)."""
        for k in [k for k in self._rows if k >= start]:
            del self._rows[k]

    def keep_only(self, first: int) -> None:
        """Forget the rows before ``first`` (a new scoring reads none of them)."""
        for k in [k for k in self._rows if k < first]:
            del self._rows[k]

    def put(self, pos: int, row: np.ndarray) -> None:
        """Keep the logits computed at ``pos``."""
        self._rows[pos] = row

    def get(self, pos: int) -> np.ndarray | None:
        """The logits at ``pos``, if kept."""
        return self._rows.get(pos)

    def __len__(self) -> int:
        return len(self._rows)


def boundary(p_tok: list[int], full: list[int]) -> int:
    """Where a continuation's tokens start in ``full`` (the tokens of prompt + continuation):
    after the prompt's tokens, or (where a token spans the boundary) at the first that
    differs, and never at 0 or past the last token (as the served scorer counts them)."""
    common = 0
    for a, b in zip(full, p_tok, strict=False):
        if a != b:
            break
        common += 1
    return max(1, min(common, len(full) - 1))


def _held(llm: Any, tokens: list[int]) -> int:
    cached = llm.input_ids[: llm.n_tokens]
    n = min(len(cached), len(tokens))
    diff = np.nonzero(cached[:n] != np.asarray(tokens[:n]))[0]
    return int(diff[0]) if len(diff) else n


def _evaluate(llm: Any, rows: Rows, tokens: list[int], first: int) -> None:
    """Bring ``llm`` to ``tokens`` as llama-cpp-python's ``generate`` does, keeping the
    logits of positions ``first - 1`` on in ``rows``; evaluates earlier than it would where
    a row the scoring reads is not kept."""
    common = _held(llm, tokens)
    need = range(first - 1, len(tokens) - 1)
    if common == len(tokens) == llm.n_tokens and all(rows.get(i) is not None for i in need):
        return  # the server samples from what it holds: nothing evaluated
    start = common - 1 if common == len(tokens) else common
    missing = [i for i in need if i < start and rows.get(i) is None]
    start = min([start, *missing])
    rows.drop_from(start)
    llm.n_tokens = start
    llm._ctx.kv_cache_seq_rm(-1, start, -1)
    n_vocab = llm.n_vocab()
    for i in range(start, len(tokens), llm.n_batch):
        chunk = tokens[i : i + llm.n_batch]
        # logits where the scoring reads them (and, as llama.cpp wants, at the last token):
        # the server computes them at every position, which gives the same bits (measured)
        # at the cost of the vocabulary projection for every prompt token
        llm._batch.set_batch(batch=chunk, n_past=i, logits_all=False)
        flags = llm._batch.batch.logits
        for j in range(max(0, first - 1 - i), len(chunk)):
            flags[j] = True
        at = [j for j in range(len(chunk)) if flags[j]]
        llm._ctx.decode(llm._batch)
        llm.input_ids[i : i + len(chunk)] = chunk
        llm.n_tokens = i + len(chunk)
        out = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(len(at), n_vocab))
        for k, j in enumerate(at):
            if i + j >= first - 1:
                rows.put(i + j, out[k].copy())
    llm._requires_eval = False


def echo_logprobs(llm: Any, rows: Rows, tokens: list[int], first: int) -> list[float]:
    """The log-probability of each of ``tokens[first:]`` given the tokens before it, as
    llama-cpp-python's echo computes it for the prompt ``tokens`` (see the module)."""
    from llama_cpp import Llama

    n_ctx = llm.n_ctx()
    if len(tokens) > n_ctx:
        raise ModelError(f"prompt of {len(tokens)} tokens exceeds the context of {n_ctx}")
    if not 1 <= first < len(tokens):
        raise ValueError(f"no continuation tokens to score: {first} of {len(tokens)}")
    _evaluate(llm, rows, tokens, first)
    out = []
    for j in range(first, len(tokens)):
        row = rows.get(j - 1)
        assert row is not None  # _evaluate kept it
        out.append(float(Llama.logits_to_logprobs(row)[tokens[j]]))
    return out
