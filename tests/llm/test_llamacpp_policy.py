"""The local backend's context choice and constrained choice, on stand-in contexts (no model):
a short match never evicts a long cached prompt, and constrained choice asks for logits
only where the remaining choices branch, drawing exactly what a token-by-token walk draws."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest

from statelab.core import GenParams
from statelab.llm.llamacpp import MIN_REUSE, LlamaCppLLM, sample_index

EOS = 0
VOCAB = 300


class FakeContext:
    """What the backend reads of a llama.cpp context: its cached tokens, and a tokenizer."""

    def __init__(self) -> None:
        self.input_ids = np.zeros(4096, dtype=np.intc)
        self.n_tokens = 0

    def hold(self, tokens: list[int]) -> None:
        self.input_ids[: len(tokens)] = tokens
        self.n_tokens = len(tokens)

    def tokenize(self, text: bytes, add_bos: bool, special: bool) -> list[int]:
        return ([1] if add_bos else []) + [b + 2 for b in text]  # one token per byte


def backend(n_slots: int) -> Any:
    llm = LlamaCppLLM.__new__(LlamaCppLLM)
    llm._slots = [FakeContext() for _ in range(n_slots)]
    llm._used = [0] * n_slots
    llm._clock = 0
    llm._eos = EOS
    return llm


HEADER = [1, 5, 6, 7]  # a chat template's opening tokens, shared by every prompt


def test_a_short_match_never_evicts_a_long_cached_prompt() -> None:
    llm = backend(3)
    acting = HEADER + list(range(20, 520))
    llm._slot(acting).hold(acting)
    assert llm._slots[0].n_tokens == 504
    summary = HEADER + list(range(600, 700))  # shares only the header with the acting prompt
    chosen = llm._slot(summary)
    assert chosen is llm._slots[1]  # an empty context, not the acting one
    chosen.hold(summary)
    assert llm._slot([*acting, 9, 9]) is llm._slots[0]  # the next acting prompt: its own
    assert llm._slot([*summary[:60], 3]) is llm._slots[1]  # a long shared prefix: reused


def test_a_context_is_reused_when_its_whole_content_is_a_prefix() -> None:
    llm = backend(2)
    short = [*HEADER, 30, 31]  # shorter than MIN_REUSE, but all of it is reused
    llm._slot(short).hold(short)
    assert llm._slot(short + [40] * 5) is llm._slots[0]


def test_with_every_context_taken_the_least_recently_used_goes() -> None:
    llm = backend(2)
    a, b = HEADER + [50] * 100, HEADER + [60] * 100
    llm._slot(a).hold(a)
    llm._slot(b).hold(b)
    llm._slot(a)  # a used again: b is now the older
    assert llm._slot(HEADER + [70] * 100) is llm._slots[1]
    assert len(HEADER) < MIN_REUSE


# -- constrained choice ------------------------------------------------------------------------


def logits_of(ctx: list[int]) -> np.ndarray:
    """A deterministic stand-in model: logits a function of the whole context."""
    seed = int.from_bytes(hashlib.sha256(np.asarray(ctx, dtype=np.int64).tobytes()).digest()[:8])
    return np.random.default_rng(seed).normal(0, 2, VOCAB)


def reference_choice(llm: Any, p_tok: list[int], params: GenParams) -> str:
    """The plain walk: logits after every token, a draw wherever choices differ."""
    seqs = [llm._tokens(params.choice_prefix + c, bos=False) for c in params.choices]
    rng = np.random.default_rng(params.seed or 0)
    alive, ctx, pos = list(range(len(seqs))), list(p_tok), 0
    while True:
        ended = [i for i in alive if len(seqs[i]) == pos]
        going = [i for i in alive if len(seqs[i]) > pos]
        if len(alive) == 1 or not going:
            return params.choice_prefix + params.choices[alive[0]]
        logits = logits_of(ctx)
        nxt = sorted({seqs[i][pos] for i in going})
        cands = nxt + ([EOS] if ended else [])
        if len(cands) == 1:
            tok = cands[0]
        else:
            tok = cands[sample_index(logits[cands], params.temperature, params.top_p, rng)]
        if tok == EOS and ended:
            return params.choice_prefix + params.choices[ended[0]]
        alive = [i for i in going if seqs[i][pos] == tok]
        ctx.append(tok)
        pos += 1


MOVES = [f"Move the top disk of rod {a} to the top of rod {b}" for a in "ABC" for b in "ABC"]
CASES = [
    [m for m in MOVES if m[25] != m[-1]],  # Hanoi's six moves
    ["go", "go north", "go north east", "look"],  # choices that prefix each other
    ["take apple", "take apple from table", "take pear"],
]


@pytest.mark.parametrize("choices", CASES)
def test_constrained_choice_draws_what_the_plain_walk_draws(choices: list[str]) -> None:
    llm = backend(1)
    asked: list[int] = []

    def logits_after(_llm: Any, tokens: list[int]) -> np.ndarray:
        asked.append(len(tokens))
        return logits_of(tokens)

    llm._logits_after = logits_after
    prompt = llm._tokens("the state ...", bos=True)
    for seed in range(40):
        for temperature, top_p in ((0.2, 0.95), (1.0, 1.0), (0.0, 1.0)):
            params = GenParams(
                temperature=temperature,
                top_p=top_p,
                seed=seed,
                choices=tuple(choices),
                choice_prefix="Action: ",
            )
            asked.clear()
            text, _ = llm._choose(llm._slots[0], prompt, params)
            assert text == reference_choice(llm, prompt, params)
            # logits only at branches: never more than the choices' trie has branch points
            assert len(asked) <= len(choices) - 1 + sum(" " in c for c in choices)
            assert len(set(asked)) == len(asked)  # each position evaluated once


def test_nothing_is_evaluated_after_the_last_branch() -> None:
    llm = backend(1)
    asked: list[int] = []

    def logits_after(_llm: Any, tokens: list[int]) -> np.ndarray:
        asked.append(len(tokens))
        out = np.zeros(VOCAB)
        out[ord("b") + 2] = 10.0  # always pick "b..."
        return out

    llm._logits_after = logits_after
    prompt = llm._tokens("p", bos=True)
    params = GenParams(temperature=0.0, choices=("a then a long tail", "b then a long tail"))
    text, n = llm._choose(llm._slots[0], prompt, params)
    assert text == "b then a long tail" and n == len(text)
    assert asked == [len(prompt)]  # one evaluation: the prompt, at the only branch
