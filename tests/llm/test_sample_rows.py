"""The ``hf:`` backend's sampler (``statelab.llm._hf_batch.sample_rows``): every row draws its
token from its own generator, batched or alone, by the inverse of its nucleus's CDF."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch", reason="needs the train extra")

from statelab.llm._hf_batch import sample, sample_rows  # noqa: E402


def _gen(seed: int) -> torch.Generator:
    return torch.Generator(device="cpu").manual_seed(seed)


def test_a_row_draws_the_same_token_alone_and_in_any_batch() -> None:
    g = torch.Generator().manual_seed(3)
    logits = torch.randn(6, 5000, generator=g) * 3
    temps = [0.8, 0.0, 1.3, 0.8, 0.5, 1.0]
    tops = [0.95, 1.0, 0.5, 1.0, 0.9, 0.2]
    alone = [[sample(logits[r], temps[r], tops[r], gen) for _ in range(20)]
             for r, gen in enumerate(_gen(100 + r) for r in range(6))]  # fmt: skip
    gens = [_gen(100 + r) for r in range(6)]
    together = [sample_rows(logits, temps, tops, gens) for _ in range(20)]
    assert [[step[r] for step in together] for r in range(6)] == alone
    order = [4, 0, 5, 2, 1, 3]  # another batch, another order
    gens = [_gen(100 + r) for r in order]
    shuffled = [sample_rows(logits[order], [temps[r] for r in order], [tops[r] for r in order],
                            gens) for _ in range(20)]  # fmt: skip
    assert [[step[order.index(r)] for step in shuffled] for r in range(6)] == alone
    assert len({t for row in alone for t in row}) > 6  # not one token everywhere


def test_the_token_is_the_inverse_cdf_of_the_kept_nucleus_at_the_rows_own_draw() -> None:
    probs = torch.tensor([0.1, 0.5, 0.2, 0.2])
    logits = probs.log()
    for seed in range(30):
        u = float(torch.rand(1, generator=_gen(seed), dtype=torch.float64))
        # sorted: 0.5 (token 1), 0.2 (2 or 3), 0.2, 0.1; top_p 0.6 keeps the first two
        # (mass 0.7): token 1 when u * 0.7 < 0.5, else the second
        got = sample(logits, 1.0, 0.6, _gen(seed))
        if u * 0.7 < 0.5:
            assert got == 1
        else:
            assert got in (2, 3)
        assert sample(logits, 0.0, 0.6, _gen(seed)) == 1  # temperature 0: the argmax


def test_the_draws_follow_the_tempered_nucleus() -> None:
    probs = torch.tensor([0.5, 0.3, 0.2])
    logits = probs.log()
    n = 6000
    gens = [_gen(7 + i) for i in range(n)]
    whole = sample_rows(logits.expand(n, 3), [1.0] * n, [1.0] * n, gens)
    share = [whole.count(t) / n for t in range(3)]
    assert share == pytest.approx([0.5, 0.3, 0.2], abs=0.025)
    cut = sample_rows(logits.expand(n, 3), [1.0] * n, [0.75] * n, [_gen(i) for i in range(n)])
    assert set(cut) == {0, 1}  # 0.5 + 0.3 reaches 0.75: token 2 is cut
    assert cut.count(0) / n == pytest.approx(0.5 / 0.8, abs=0.025)
    hot = sample_rows(logits.expand(n, 3), [2.0] * n, [1.0] * n, [_gen(i) for i in range(n)])
    z = sum(p ** 0.5 for p in (0.5, 0.3, 0.2))  # temperature 2: p^(1/2), renormalised
    assert hot.count(2) / n == pytest.approx(math.sqrt(0.2) / z, abs=0.025)


def test_batch_limits_default_by_device_and_follow_their_variables(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from statelab.llm._hf_batch import max_rows, token_budget

    for name in ("STATELAB_HF_DEVICE", "STATELAB_HF_BATCH", "STATELAB_HF_BATCH_TOKENS"):
        monkeypatch.delenv(name, raising=False)
    assert (max_rows(), token_budget()) == (32, 16384)
    monkeypatch.setenv("STATELAB_HF_DEVICE", "cuda")
    assert (max_rows(), token_budget()) == (256, 262144)
    monkeypatch.setenv("STATELAB_HF_BATCH", "64")
    monkeypatch.setenv("STATELAB_HF_BATCH_TOKENS", "1000")
    assert (max_rows(), token_budget()) == (64, 1000)


def test_the_shared_prefix_leaves_every_prompt_a_token_and_needs_enough_to_share() -> None:
    from statelab.llm._hf_batch import SHARED_MIN, shared_prefix

    base = list(range(100))
    assert shared_prefix([base]) == 0  # one prompt: nothing to share
    assert shared_prefix([base, [*base[:60], 7, 8], base[:80]]) == 60
    assert shared_prefix([base, base]) == 99  # identical: each keeps its last token
    assert shared_prefix([base[:50], base]) == 49
    assert shared_prefix([base, [*base[: SHARED_MIN - 1], *([-1] * 10)]]) == 0  # too short to pay
