"""Constrained choice on OpenAI-compatible servers: the forms a server may take, and the probe
that finds, once per server, the one it enforces.

A request whose ``GenParams.choices`` are set must come back as ``prefix + one choice``. The
servers say so in different ways (:data:`FORMS`, tried in this order):

- ``grammar``: a GBNF grammar in the request's ``grammar`` field (llama.cpp's server and
  llama-cpp-python's): ``root ::= "<prefix>" ("<choice 1>" | ...)``;
- ``choice``: vLLM's structured outputs, ``structured_outputs: {"choice": [...]}`` (the full
  replies, prefix included; vLLM removed the older ``guided_choice``);
- ``regex``: vLLM's ``structured_outputs: {"regex": ...}`` (the replies, escaped, as
  alternatives);
- ``json_schema``: ``response_format: {"type": "json_schema", ...}`` with an object whose one
  property ``action`` is an enum of the choices (OpenAI, vLLM, SGLang, Ollama, llama.cpp's
  server); the reply ``{"action": "<choice>"}`` is read back into ``prefix + choice``;
- ``json_object``: the same schema as ``response_format: {"type": "json_object", "schema":
  ...}``, the form llama-cpp-python's server takes.

:func:`probe` sends each form a question no model answers by chance (reply ``Answer: `` and
one of two made-up words) and takes the first form whose reply is one of them; a server that
rejects a form (HTTP 4xx) or ignores it (a free reply) is asked the next. Where none works,
the requests go unconstrained (:data:`NONE`: the agent parses the free reply, as before) and
one log line says so. The result is kept per server (base URL and model) for the process,
and in a JSON file when ``STATELAB_SERVER_PROBES`` names one (a later run against the same
server asks nothing).

A probe is trusted once, never for good: every reply to a choice is checked by the model
wrapper (:func:`held`), whichever backend sent it, and one that is not ``prefix + choice``
is stored as :data:`VIOLATED` instead of the form it was sent with.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statelab.core import loads_json

__all__ = [
    "FORMS",
    "NONE",
    "VIOLATED",
    "Form",
    "apply",
    "decode",
    "forget",
    "held",
    "probe",
    "remembered",
    "sampling",
]

log = logging.getLogger(__name__)

#: the constrained forms, in the order the probe tries them
FORMS = ("grammar", "choice", "regex", "json_schema", "json_object")
#: no form works: replies are free text, mapped onto an action by the agent
NONE = "unenforced"
#: a reply that came back outside the constraint it was sent with: the probe found the form
#: held once, and each reply is checked again (:func:`held`, by the model wrapper)
VIOLATED = "violated"
#: the JSON file holding probe results across processes (optional)
ENV_FILE = "STATELAB_SERVER_PROBES"

_PROBE_PREFIX = "Answer: "
_PROBE_CHOICES = ("qzvex", "wumbrak")
_PROBE_MESSAGES = [{"role": "user", "content": "Reply with one word."}]

Form = str
_memory: dict[str, Form] = {}
_lock = threading.Lock()


def _gbnf(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def grammar(prefix: str, choices: tuple[str, ...]) -> str:
    """The GBNF grammar of ``prefix + one of choices``."""
    alts = " | ".join(_gbnf(c) for c in choices)
    head = f"{_gbnf(prefix)} " if prefix else ""
    return f"root ::= {head}({alts})"


# ``-`` and ``/`` are literal outside a bracket in every dialect; escaping them is not: an
# older xgrammar regex converter misreads ``\-`` (it reads the character after an unknown
# escape), so they are left as they are.
_REGEX_SPECIAL = set("\\^$.|?*+()[]{}")


def regex(prefix: str, choices: tuple[str, ...]) -> str:
    """A regular expression matching exactly ``prefix + one of choices``."""

    def esc(s: str) -> str:
        return "".join("\\" + c if c in _REGEX_SPECIAL else c for c in s)

    return esc(prefix) + "(" + "|".join(esc(c) for c in choices) + ")"


def schema(choices: tuple[str, ...]) -> dict[str, Any]:
    """The JSON schema of ``{"action": <one of choices>}``."""
    return {
        "type": "object",
        "properties": {"action": {"type": "string", "enum": list(choices)}},
        "required": ["action"],
        "additionalProperties": False,
    }


def apply(form: Form, body: dict[str, Any], prefix: str, choices: tuple[str, ...]) -> None:
    """Put ``form``'s constraint for ``prefix + choice`` into a chat request ``body``."""
    full = [prefix + c for c in choices]
    if form == "grammar":
        body["grammar"] = grammar(prefix, choices)
    elif form == "choice":
        body["structured_outputs"] = {"choice": full}
    elif form == "regex":
        body["structured_outputs"] = {"regex": regex(prefix, choices)}
    elif form == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "action", "schema": schema(choices), "strict": True},
        }
    elif form == "json_object":
        body["response_format"] = {"type": "json_object", "schema": schema(choices)}
    else:
        return
    body.pop("stop", None)  # the constraint ends the reply; a stop could cut a JSON reply


def sampling(form: Form) -> dict[str, Any]:
    """Sampling fields for the server family a form reveals: a server that takes a GBNF
    ``grammar`` is llama.cpp's or llama-cpp-python's, whose repeat penalty (1.1 in
    llama-cpp-python's server) is set to the embedded backend's 1.0, so that the same GGUF
    gives the same replies served and embedded. Other servers get nothing extra."""
    return {"repeat_penalty": 1.0} if form == "grammar" else {}


def decode(form: Form, text: str, prefix: str, choices: tuple[str, ...]) -> str:
    """The reply as ``prefix + choice`` (a JSON form's object read back); a reply that is
    not one (a server that did not hold to it) is returned as it came, for the agent."""
    if form in ("json_schema", "json_object"):
        try:
            value = loads_json(text)
        except ValueError:
            return text
        action = value.get("action") if isinstance(value, dict) else None
        return prefix + action if isinstance(action, str) and action in choices else text
    return text


def held(text: str, prefix: str, choices: tuple[str, ...]) -> bool:
    """Whether ``text`` is ``prefix + one of choices``, as a constrained reply must be (a
    JSON form's reply read back by :func:`decode` first)."""
    return any(text == prefix + c for c in choices)


def _key(base_url: str, model: str) -> str:
    return f"{base_url}#{model}"


def _file() -> Path | None:
    name = os.environ.get(ENV_FILE)
    return Path(name) if name else None


#: the most of the probes file read (a few bytes a server; a larger file is not one of ours)
MAX_PROBES_FILE = 1 << 20


def _read_file(path: Path) -> dict[str, Any]:
    """The probes file's forms; nothing from a file that is not a regular one (``/dev/full``
    reads forever), is larger than :data:`MAX_PROBES_FILE`, or is not a JSON object."""
    try:
        if not path.is_file():
            return {}
        with path.open("rb") as f:
            raw = f.read(MAX_PROBES_FILE + 1)
        if len(raw) > MAX_PROBES_FILE:
            return {}
        data = loads_json(raw)
    except (OSError, ValueError, MemoryError):
        return {}
    return data if isinstance(data, dict) else {}


def remembered(base_url: str, model: str) -> Form | None:
    """The form found for this server before (this process, or the probes file)."""
    key = _key(base_url, model)
    with _lock:
        if key in _memory:
            return _memory[key]
    path = _file()
    found = _read_file(path).get(key) if path else None
    if found in (*FORMS, NONE):
        with _lock:
            _memory[key] = found
        return str(found)
    return None


def _remember(base_url: str, model: str, form: Form) -> None:
    key = _key(base_url, model)
    with _lock:
        _memory[key] = form
        path = _file()
        if path is None:
            return
        data = _read_file(path)
        data[key] = form
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
            tmp.replace(path)
        except OSError as e:
            log.warning("cannot write the server probes file %s: %s", path, e)


def forget(base_url: str | None = None, model: str | None = None) -> None:
    """Drop what this process remembers (one server's, or every server's) probe result."""
    with _lock:
        if base_url is None:
            _memory.clear()
        else:
            _memory.pop(_key(base_url, model or ""), None)


@dataclass(frozen=True)
class ProbeReply:
    """What one probe request came back with: its text, or the HTTP status refusing it."""

    text: str | None
    status: int | None = None


#: sends a chat request body (no ``model`` field needed) and returns the reply
Send = Callable[[dict[str, Any]], Awaitable[ProbeReply]]


async def probe(base_url: str, model: str, send: Send, forms: tuple[Form, ...] = FORMS) -> Form:
    """The first of ``forms`` this server enforces (or :data:`NONE`), remembered."""
    found = remembered(base_url, model)
    if found is not None:
        return found
    tried = []
    for form in forms:
        body: dict[str, Any] = {
            "messages": _PROBE_MESSAGES,
            "temperature": 0.0,
            "max_tokens": 24,
        }
        apply(form, body, _PROBE_PREFIX, _PROBE_CHOICES)
        reply = await send(body)
        if reply.text is not None:
            text = decode(form, reply.text, _PROBE_PREFIX, _PROBE_CHOICES)
            if text in {_PROBE_PREFIX + c for c in _PROBE_CHOICES}:
                _remember(base_url, model, form)
                log.info("%s#%s holds replies to a choice by %s", base_url, model, form)
                return form
            tried.append(f"{form}: ignored")
        else:
            tried.append(f"{form}: HTTP {reply.status}")
    log.warning(
        "%s#%s enforces none of %s (%s): its replies are free text, mapped onto an action",
        base_url, model, ", ".join(forms), "; ".join(tried),
    )  # fmt: skip
    _remember(base_url, model, NONE)
    return NONE
