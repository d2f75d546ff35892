"""Batched generation and scoring for the ``hf:`` backend (:mod:`.transformers_backend`).

**Scoring** many (prompt, continuations) requests: the prompts of a group run in one
left-padded forward pass (attention mask, explicit position ids, a KV cache), the prefix
they all share (a reader's system prompt and goal: 192 tokens of a cooking reader's prompt)
once, on one row, before it; the cache is
then gathered once per continuation (``batch_select_indices``) and every continuation of the
group runs in a second pass, right-padded after its own prompt. A continuation's first token
is scored from its prompt's last logits, the rest from the second pass. A group holds as many
requests as fit :func:`token_budget` (prompt and continuation tokens times the rows that
carry them); a request whose continuations alone do not fit is split into several, each with
its own copy of the prompt pass.

**Generation**: the prompts of a group run left-padded in one pass (a prompt asked several
times, as a write point's K forks or the read-time oracle's 8 samples are, once: its cache
row is then copied to each of its sequences), then one forward pass per token for every
sequence still going; a sequence that ends (its end-of-sequence token,
a stop string in its text, its own ``max_tokens``) leaves the batch (its cache row dropped).
Each sequence samples from its own ``torch.Generator`` seeded by its request's seed, with its
own temperature and top-p, so what it generates does not depend on the batch it ran in; the
sampling itself runs for all rows at once on the model's device (:func:`sample_rows`: one
uniform draw a row from its generator, then softmax, sort and the nucleus cut batched), so a
step of 192 rows costs a few batched kernels, not 192 sorts of the vocabulary on the CPU.

A prompt pass computes the logits of its last position only (``logits_to_keep=1``). Padded
rows are masked, so a row's numbers are its own up to the float rounding of batched
matrix products (on CPU, float32: log-likelihoods agree with the one-at-a-time path to about
1e-5 nats; tests/llm/test_hf_batch.py holds them to 1e-4 and generated text to equality).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from statelab.core import Completion, GenParams, Usage

#: one scoring request as token ids: the prompt's, and each continuation's
ScoreIds = tuple[list[int], list[list[int]]]


def _on_gpu() -> bool:
    return os.environ.get("STATELAB_HF_DEVICE", "cpu") != "cpu"


def token_budget() -> int:
    """Padded tokens one forward pass may carry, over all its rows
    (``STATELAB_HF_BATCH_TOKENS``; by default 16,384 on the CPU, 262,144 on a GPU)."""
    default = "262144" if _on_gpu() else "16384"
    return max(1, int(os.environ.get("STATELAB_HF_BATCH_TOKENS", default)))


def max_rows() -> int:
    """Sequences one generation batch holds at most (``STATELAB_HF_BATCH``; by default 32 on
    the CPU, 256 on a GPU: 16 write points' 12 forks merged are one batch)."""
    return max(1, int(os.environ.get("STATELAB_HF_BATCH", "256" if _on_gpu() else "32")))


def _left_padded(seqs: Sequence[list[int]], pad: int, device: Any) -> tuple[Any, Any, Any]:
    """(ids, attention mask, position ids) of ``seqs`` padded on the left."""
    import torch

    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for r, s in enumerate(seqs):
        ids[r, width - len(s) :] = torch.tensor(s, dtype=torch.long)
        mask[r, width - len(s) :] = 1
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    return ids.to(device), mask.to(device), pos.to(device)


# -- scoring --------------------------------------------------------------------------------


def _split(items: Sequence[ScoreIds], budget: int) -> list[tuple[int, ScoreIds]]:
    """Each request, with its continuations cut into parts whose rows fit ``budget``
    (tagged with the request's index)."""
    out: list[tuple[int, ScoreIds]] = []
    for i, (p, conts) in enumerate(items):
        part: list[list[int]] = []
        for c in conts:
            if part and (len(part) + 1) * (len(p) + max(len(x) for x in [*part, c])) > budget:
                out.append((i, (p, part)))
                part = []
            part.append(c)
        out.append((i, (p, part)))
    return out


def _groups(parts: list[tuple[int, ScoreIds]], budget: int) -> list[list[tuple[int, ScoreIds]]]:
    """Consecutive parts whose second pass (every continuation a row, as wide as the widest
    prompt plus continuation) fits ``budget``."""
    groups: list[list[tuple[int, ScoreIds]]] = []
    cur: list[tuple[int, ScoreIds]] = []
    for part in parts:
        trial = [*cur, part]
        rows = sum(len(c) for _, (_, c) in trial)
        width = max(len(p) for _, (p, _) in trial) + max(len(x) for _, (_, c) in trial for x in c)
        if cur and rows * width > budget:
            groups.append(cur)
            trial = [part]
        cur = trial
    if cur:
        groups.append(cur)
    return groups


def score_ids(model: Any, pad: int, items: Sequence[ScoreIds]) -> list[list[float]]:
    """The summed log-probability of each continuation after its prompt, for every request
    (see the module); a continuation is a non-empty list of token ids."""
    budget = token_budget()
    out: list[list[float]] = [[] for _ in items]
    for group in _groups(_split(items, budget), budget):
        for (i, _), got in zip(group, _score_group(model, pad, [g for _, g in group]), strict=True):
            out[i].extend(got)
    return out


#: the fewest tokens a group's prompts must share for the shared part to be run once
SHARED_MIN = 32


def shared_prefix(prompts: Sequence[list[int]]) -> int:
    """Tokens every prompt starts with, leaving each at least one of its own (0 when fewer
    than :data:`SHARED_MIN` or one prompt)."""
    if len(prompts) < 2:
        return 0
    first, n = prompts[0], min(len(p) for p in prompts) - 1
    for p in prompts[1:]:
        k = 0
        while k < n and p[k] == first[k]:
            k += 1
        n = k
    return n if n >= SHARED_MIN else 0


def _prompt_pass(model: Any, pad: int, prompts: list[list[int]]) -> tuple[Any, Any]:
    """(the prompts' last logits, their attention mask) after one pass over them, the cache
    in the model's output: the prefix they share (:func:`shared_prefix`, e.g. a reader's
    system prompt and goal) is run once, on one row, its cache copied to every row, and the
    rest left-padded after it (the padding masked, positions counted from the prefix)."""
    import torch

    dev = model.device
    n = shared_prefix(prompts)
    if not n:
        ids, mask, pos = _left_padded(prompts, pad, dev)
        out = model(
            input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True, logits_to_keep=1
        )
        return out, mask
    head = model(input_ids=torch.tensor([prompts[0][:n]], device=dev), use_cache=True,
                 logits_to_keep=1)  # fmt: skip
    cache = head.cache
    cache.batch_select_indices(torch.zeros(len(prompts), dtype=torch.long, device=dev))
    ids, tail_mask, pos = _left_padded([p[n:] for p in prompts], pad, dev)
    mask = torch.cat([torch.ones((len(prompts), n), dtype=tail_mask.dtype, device=dev),
                      tail_mask], 1)  # fmt: skip
    out = model(input_ids=ids, attention_mask=mask, position_ids=pos + n, cache=cache,
                use_cache=True, logits_to_keep=1)  # fmt: skip
    return out, mask


def _score_group(model: Any, pad: int, group: list[ScoreIds]) -> list[list[float]]:
    import torch

    first, mask = _prompt_pass(model, pad, [p for p, _ in group])
    last = torch.log_softmax(first.logits[:, -1].float(), -1)
    rows = [(g, c) for g, (_, conts) in enumerate(group) for c in conts]
    firsts = [float(last[g, c[0]]) for g, c in rows]
    rest = None
    if any(len(c) > 1 for _, c in rows):
        rest = _rest_of(first.cache, model, pad, [len(p) for p, _ in group], mask, rows)
    out: list[list[float]] = [[] for _ in group]
    for r, (g, c) in enumerate(rows):
        out[g].append(firsts[r] + (float(rest[r]) if rest is not None and len(c) > 1 else 0.0))
    return out


def _rest_of(
    cache: Any, model: Any, pad: int, plens: list[int], mask: Any, rows: list[tuple[int, list[int]]]
) -> Any:
    """The summed log-probability of each row's continuation tokens after its first, from
    one pass over every row (its prompt's cache gathered to it)."""
    import torch

    dev = model.device
    index = torch.tensor([g for g, _ in rows], device=dev)
    cache.batch_select_indices(index)
    width = max(len(c) - 1 for _, c in rows) or 1
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    cmask = torch.zeros((len(rows), width), dtype=torch.long)
    for r, (_, c) in enumerate(rows):
        ids[r, : len(c) - 1] = torch.tensor(c[:-1], dtype=torch.long)
        cmask[r, : len(c) - 1] = 1
    plen = torch.tensor([plens[g] for g, _ in rows])
    pos = plen[:, None] + torch.arange(width)[None, :]
    full = torch.cat([mask[index].cpu(), cmask], dim=1)
    res = model(
        input_ids=ids.to(dev), attention_mask=full.to(dev), position_ids=pos.to(dev),
        cache=cache, use_cache=True,
    )  # fmt: skip
    lp = torch.log_softmax(res.logits.float(), -1)
    target = torch.full((len(rows), width), 0, dtype=torch.long)
    for r, (_, c) in enumerate(rows):
        target[r, : len(c) - 1] = torch.tensor(c[1:], dtype=torch.long)
    picked = lp.gather(-1, target.to(dev)[..., None])[..., 0]
    return (picked * cmask.to(dev)).sum(-1).cpu()


# -- generation -----------------------------------------------------------------------------


def generate_ids(
    model: Any,
    pad: int,
    eos: int | None,
    decode: Callable[[list[int]], str],
    sample: Callable[[Any, list[float], list[float], list[Any]], list[int]],
    items: Sequence[tuple[list[int], GenParams]],
) -> list[list[int]]:
    """The reply tokens of every (prompt ids, params) request, generated in batches of at
    most :func:`max_rows` sequences (see the module)."""
    rows = max_rows()
    out: list[list[int]] = []
    for start in range(0, len(items), rows):
        out += _generate_group(model, pad, eos, decode, sample, items[start : start + rows])
    return out


def _generate_group(
    model: Any,
    pad: int,
    eos: int | None,
    decode: Callable[[list[int]], str],
    sample: Callable[[Any, list[float], list[float], list[Any]], list[int]],
    items: Sequence[tuple[list[int], GenParams]],
) -> list[list[int]]:
    import torch

    dev = model.device
    gens = [torch.Generator(device="cpu").manual_seed(int(p.seed or 0)) for _, p in items]
    outs: list[list[int]] = [[] for _ in items]
    distinct: dict[tuple[int, ...], int] = {}  # a prompt asked several times is run once
    source = [distinct.setdefault(tuple(p), len(distinct)) for p, _ in items]
    ids, mask, pos = _left_padded([list(p) for p in distinct], pad, dev)
    res = model(
        input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True, logits_to_keep=1
    )
    cache, logits = res.cache, res.logits[:, -1]
    if len(distinct) < len(items):  # each row its prompt's cache, mask and last logits
        index = torch.tensor(source, device=dev)
        cache.batch_select_indices(index)
        mask, pos, logits = mask[index], pos[index], logits[index]
    live = [r for r, (_, p) in enumerate(items) if p.max_tokens > 0]
    at = {r: k for k, r in enumerate(range(len(items)))}  # row of the batch -> row of logits
    nxt = pos[:, -1] + 1
    while live:
        going, toks = [], []
        rows = logits[torch.tensor([at[r] for r in live], device=logits.device)]
        ps = [items[r][1] for r in live]
        drawn = sample(rows, [p.temperature for p in ps], [p.top_p for p in ps],
                       [gens[r] for r in live])  # fmt: skip
        for r, params, tok in zip(live, ps, drawn, strict=True):
            if tok == eos:
                continue
            outs[r].append(tok)
            if params.stop and any(s in decode(outs[r]) for s in params.stop):
                continue
            if len(outs[r]) >= params.max_tokens:
                continue
            going.append(r)
            toks.append(tok)
        if not going:
            break
        keep = torch.tensor([at[r] for r in going], device=dev)
        if len(going) < mask.shape[0]:
            cache.batch_select_indices(keep)
        mask = torch.cat([mask[keep], torch.ones((len(going), 1), dtype=mask.dtype, device=dev)], 1)
        nxt = nxt[keep]
        res = model(
            input_ids=torch.tensor(toks, device=dev)[:, None], attention_mask=mask,
            position_ids=nxt[:, None], cache=cache, use_cache=True,
        )  # fmt: skip
        cache, logits = res.cache, res.logits[:, -1]
        nxt = nxt + 1
        live, at = going, {r: k for k, r in enumerate(going)}
    return outs


# -- one batch of chat requests -------------------------------------------------------------


def complete_items(llm: Any, items: list[tuple[str, GenParams]]) -> list[Completion]:
    """The replies of ``llm`` (the ``hf:`` backend) to (rendered prompt, params) requests:
    those with ``choices`` scored in one batch (the most likely choice, as ``complete``
    picks it), the rest generated in batches; each reply's latency the batch's mean."""
    start = time.perf_counter()
    out: list[Completion | None] = [None] * len(items)
    chosen = [i for i, (_, p) in enumerate(items) if p.choices]
    free = [i for i, (_, p) in enumerate(items) if not p.choices]
    if chosen:
        asked = [(items[i][0], _options(items[i][1])) for i in chosen]
        for i, (prompt, conts), scores in zip(chosen, asked, llm.score_texts(asked), strict=True):
            best = conts[max(range(len(conts)), key=lambda k: (scores[k], -k))]
            out[i] = Completion(best, Usage(llm.count_tokens(prompt), llm.count_tokens(best)))
    if free:
        for i, got in zip(free, llm.generate_many([items[i] for i in free]), strict=True):
            out[i] = Completion(got[0], Usage(got[1], got[2]))
    took = (time.perf_counter() - start) / max(1, len(items))
    return [replace(c, latency=took) for c in out if c is not None]


def _options(params: GenParams) -> list[str]:
    return [params.choice_prefix + c for c in params.choices or ()]


def sample(logits: Any, temperature: float, top_p: float, gen: Any) -> int:
    """One sequence's next token from its last logits (a 1-d tensor): :func:`sample_rows`
    of one row, so a sequence sampled alone and in a batch draws the same token."""
    return sample_rows(logits[None, :], [temperature], [top_p], [gen])[0]


def sample_rows(logits: Any, temps: list[float], top_ps: list[float],
                gens: list[Any]) -> list[int]:  # fmt: skip
    """The next token of every row of ``logits`` (rows x vocabulary, on the model's device):
    temperature and nucleus (top-p) sampling, temperature 0 the argmax.

    Each sampled row draws one uniform ``u`` from its own generator (``gens[r]``, on the
    CPU); the rest runs for all rows at once where the logits are: softmax at the row's
    temperature, the probabilities sorted, the smallest prefix whose mass reaches ``top_p``
    kept, and the token where the kept prefix's cumulative mass first exceeds ``u`` times
    the kept mass (the inverse of the kept distribution's CDF). Rows do not interact: on
    the CPU a row's token does not depend on the rows beside it (tested); on a GPU the
    batched kernels may round a row's sums differently by batch shape, which can move a
    draw that falls within a rounding of a boundary."""
    import torch

    n = logits.shape[0]
    out = [0] * n
    cold = [r for r in range(n) if temps[r] <= 0]
    hot = [r for r in range(n) if temps[r] > 0]
    if cold:
        for r, tok in zip(cold, torch.argmax(logits[cold], -1).tolist(), strict=True):
            out[r] = int(tok)
    if not hot:
        return out
    dev = logits.device
    x = logits[hot].float()
    temp = torch.tensor([temps[r] for r in hot], dtype=x.dtype, device=dev)[:, None]
    probs = torch.softmax(x / temp, -1)
    sorted_p, order = torch.sort(probs, -1, descending=True)
    cum = torch.cumsum(sorted_p, -1)
    tp = torch.tensor([[top_ps[r]] for r in hot], dtype=cum.dtype, device=dev)
    keep = (torch.searchsorted(cum, tp) + 1).clamp(max=cum.shape[1])  # prefix lengths
    kept = cum.gather(1, keep - 1)  # the kept mass
    u = torch.tensor([[float(torch.rand(1, generator=gens[r], dtype=torch.float64))]
                      for r in hot], dtype=cum.dtype, device=dev)  # fmt: skip
    pick = torch.minimum(torch.searchsorted(cum, u * kept, right=True), keep - 1)
    for r, tok in zip(hot, order.gather(1, pick)[:, 0].tolist(), strict=True):
        out[r] = int(tok)
    return out
