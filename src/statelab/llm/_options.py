"""The options a model spec may carry, declared once: name, type, default, help.

A spec's options follow its model name URL-query style
(``openai-compat:<url>#<model>?timeout=20&retries=1``); :func:`parse_options` reads them
into a :class:`ModelOptions` in one place, and a value the spec sets wins over the one a
caller passes (:meth:`ModelOptions.over`). Each field's ``metadata`` holds its ``help`` and
its ``check`` (the allowed range as words), so a listing prints them and a general typed
parameter mechanism can take the dataclass as it is.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from typing import Any
from urllib.parse import parse_qsl

from statelab.core import ConfigError

__all__ = [
    "CONSTRAIN",
    "MAX_BODY",
    "MAX_REPLY",
    "WRAPPER_OPTIONS",
    "ModelOptions",
    "check_honoured",
    "option_help",
    "option_lines",
    "parse_options",
]

#: the largest response body a client reads (bytes), unless a spec's ``max_body`` says
MAX_BODY = 16 * 1024 * 1024
#: the longest reply text kept (characters), unless a spec's ``max_reply`` says; a longer
#: reply is cut there and marked (``max_tokens`` is no promise a server keeps)
MAX_REPLY = 128 * 1024


def _opt(help: str, check: str, minimum: float | None = None,
         allowed: tuple[str, ...] | None = None) -> Any:  # fmt: skip
    meta = {"help": help, "check": check, "min": minimum, "allowed": allowed}
    return field(default=None, metadata=meta)


#: how a server is asked to hold a reply to the admissible choices (see
#: :mod:`statelab.llm._constrain`): ``auto`` probes the server once, ``off`` asks nothing;
#: ``score`` asks no form: the choices are scored (echo log-probabilities on the chat
#: template, ``template=``) and the likeliest is the reply (openai-compat only)
CONSTRAIN = ("auto", "off", "grammar", "choice", "regex", "json_schema", "json_object", "score")


@dataclass(frozen=True)
class ModelOptions:
    """A model's options; None: not set (the caller's value, else the backend's default)."""

    timeout: float | None = _opt(
        "seconds the whole request may take (connecting, sending, every byte of the reply); "
        "default 60",
        "> 0",
        1e-9,
    )
    retries: int | None = _opt(
        "retries of a failed request (429, 5xx, dropped connections, timeouts at most once); "
        "default 5",
        ">= 0",
        0,
    )
    concurrency: int | None = _opt(
        "requests in flight at once; default the experiment's concurrency", ">= 1", 1
    )
    max_body: int | None = _opt(
        f"the largest response body read, in bytes (default {MAX_BODY}); a larger one fails "
        "the call",
        ">= 1",
        1,
    )
    max_reply: int | None = _opt(
        f"the longest reply text kept, in characters (default {MAX_REPLY}); a longer one is "
        "cut and marked",
        ">= 1",
        1,
    )
    constrain: str | None = _opt(
        "how a reply is held to the admissible actions: auto (probe the server once), off, "
        "or one form: grammar, choice, regex, json_schema, json_object; or score (every "
        "admissible action scored by echo log-probabilities, the likeliest taken; needs "
        "template=; openai-compat only); default auto",
        "|".join(CONSTRAIN),
        allowed=CONSTRAIN,
    )
    template: str | None = _opt(
        "the model's chat template for scoring, rendered here: a llamacpp model "
        "(package or .gguf) or a transformers tokenizer folder; default none (plain text)",
        "a model",
    )
    slots: int | None = _opt(
        "the server's slots (llama.cpp server -np): each episode's prompt kinds keep their "
        "own (id_slot); default none sent",
        ">= 1",
        1,
    )
    thinking: str | None = _opt(
        "whether a model whose chat template thinks by default is told not to (vLLM/SGLang "
        "chat_template_kwargs enable_thinking=false): off (always tell it), on (never), auto "
        "(when the template= or the model's name says it thinks); default auto",
        "off|on|auto",
        allowed=("off", "on", "auto"),
    )
    api_base: str | None = _opt(
        "the server's base URL (LiteLLM's api_base: one grid may reach several servers); "
        "default the provider's own, or its environment variable",
        "an http(s) URL",
    )

    def over(self, base: ModelOptions) -> ModelOptions:
        """These options where set, ``base``'s elsewhere."""
        return ModelOptions(
            **{f.name: _first(getattr(self, f.name), getattr(base, f.name)) for f in fields(self)}
        )

    def given(self) -> dict[str, Any]:
        """The options that are set, by name."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


def _first(a: Any, b: Any) -> Any:
    return a if a is not None else b


_FIELDS = {f.name: f for f in fields(ModelOptions)}
_TYPES: dict[str, Any] = {
    "timeout": float, "constrain": str, "template": str, "thinking": str, "api_base": str,
}  # fmt: skip
# every other option is a whole number


#: the options the model wrapper honours for every backend (retries, the reply's cap)
WRAPPER_OPTIONS = frozenset({"retries", "max_reply"})


def check_honoured(spec: str, options: ModelOptions, honours: frozenset[str]) -> None:
    """A one-line ConfigError when ``options`` sets one a backend does not honour
    (``honours``: the backend's declaration; the wrapper's own are honoured by all)."""
    can = honours | WRAPPER_OPTIONS
    refused = [k for k in options.given() if k not in can]
    if refused:
        names = ", ".join(refused)
        raise ConfigError(
            f"model {spec!r}: this backend cannot honour option{'s' if len(refused) > 1 else ''}"
            f" {names}; it honours: {', '.join(k for k in _FIELDS if k in can)}"
        )


def option_help() -> list[tuple[str, str]]:
    """``(name=<check>, help)`` for every option, in declaration order."""
    return [(f"{f.name} ({f.metadata['check']})", f.metadata["help"]) for f in _FIELDS.values()]


def option_lines(honours: frozenset[str]) -> list[str]:
    """``name: allowed  help`` of every option a backend honouring ``honours`` takes (the
    model wrapper's own included), in declaration order (``statelab list model --long``)."""
    can = honours | WRAPPER_OPTIONS
    return [f"{f.name}: {f.metadata['check']}  {f.metadata['help']}"
            for f in _FIELDS.values() if f.name in can]  # fmt: skip


def parse_options(spec: str, query: str) -> ModelOptions:
    """The options of ``?timeout=10&retries=2`` (``spec`` is the public spelling, for
    one-line ConfigErrors naming the option)."""
    if not query:
        return ModelOptions()
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise ConfigError(f"model {spec!r}: options must read ?name=value&name=value") from None
    out: dict[str, Any] = {}
    for name, raw in pairs:
        f = _FIELDS.get(name)
        if f is None:
            raise ConfigError(
                f"model {spec!r}: unknown option {name!r}; allowed: {', '.join(_FIELDS)}"
            )
        if name in out:
            raise ConfigError(f"model {spec!r}: option {name!r} given twice")
        try:
            value = _TYPES.get(name, int)(raw)
        except ValueError:
            raise ConfigError(f"model {spec!r}: option {name}={raw!r} is not a number") from None
        allowed = f.metadata["allowed"]
        if allowed is not None and value not in allowed:
            raise ConfigError(f"model {spec!r}: option {name} must be one of {f.metadata['check']}")
        if isinstance(value, str) and not value.strip():
            raise ConfigError(f"model {spec!r}: option {name} is empty")
        minimum = f.metadata["min"]
        if minimum is not None and not value >= minimum:
            raise ConfigError(f"model {spec!r}: option {name} must be {f.metadata['check']}")
        out[name] = value
    return ModelOptions(**out)
