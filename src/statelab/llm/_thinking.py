"""Thinking models told not to think, and the reasoning a reply leaks stripped from a state.

Some chat templates think by default: Qwen3's hybrid models open every reply with a
``<think>...</think>`` block unless the template is rendered with ``enable_thinking=False``
(vLLM and SGLang pass a request's ``chat_template_kwargs`` to the template). A memory writer
or a reader must not think: a B-token state that holds reasoning is not the state the seed
measures, and a reader scored after an open ``<think>`` is scored on another prompt. So:

- **local templates** (the ``hf:`` and ``llamacpp:`` backends, and a server's scoring
  template, ``?template=``): the template text is at hand, so a template that mentions
  ``enable_thinking`` is rendered with ``enable_thinking=False`` unless the call asks for the
  model's own reasoning (``GenParams.reasoning``: ``tools:native``). A template that does not
  mention it is rendered exactly as before (SmolLM2's: no prompt changes).
- **servers** (``openai-compat:``): nothing is probed. The option ``?thinking=off`` sends
  ``chat_template_kwargs: {"enable_thinking": false}`` with every chat request that does not ask
  for reasoning; ``?thinking=on`` never sends it (the model's own default); left unset
  (``auto``) it is sent when the spelling says the model thinks: the scoring template
  (``?template=``) mentions ``enable_thinking``, or the model's name is one of
  :data:`THINKS_BY_DEFAULT` (Qwen3's hybrid models: ``Qwen3-4B``, not ``Qwen3-4B-Instruct-2507``).
- **leaks**: :func:`strip_thinking` removes a ``<think>...</think>`` block (or an unclosed
  one: the reply ran out inside it) from a written state; the bounded writers count the
  writes they stripped (``WrittenState.thoughts``).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "KWARG",
    "THINKING",
    "THINKS_BY_DEFAULT",
    "name_thinks",
    "server_fields",
    "strip_thinking",
    "template_kwargs",
    "template_thinks",
]

#: the chat-template variable that switches thinking (Qwen3, and templates written like it)
KWARG = "enable_thinking"
#: the values of a server spec's ``thinking`` option (unset: auto)
THINKING = ("off", "on")
#: model names (a server's model, or a hub id) whose template thinks unless told not to:
#: Qwen3's hybrid releases; the 2507 ``Instruct`` models never think, ``Thinking`` ones always
THINKS_BY_DEFAULT = re.compile(r"qwen3(?!.*(?:instruct|thinking))", re.IGNORECASE)

_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.IGNORECASE | re.DOTALL)
#: a closing tag with no opening one: the template put ``<think>`` in the prompt
_CLOSE_ONLY = re.compile(r"\A.*?</think>", re.IGNORECASE | re.DOTALL)


def template_thinks(template: str | None) -> bool:
    """Whether a chat template's text takes the ``enable_thinking`` switch."""
    return bool(template) and KWARG in str(template)


def template_kwargs(template: str | None, reasoning: bool = False) -> dict[str, Any]:
    """The keyword arguments a local render passes the template: ``enable_thinking`` set to
    ``reasoning`` where the template takes it, nothing otherwise."""
    return {KWARG: bool(reasoning)} if template_thinks(template) else {}


def name_thinks(model: str) -> bool:
    """Whether a model's name says its template thinks by default (:data:`THINKS_BY_DEFAULT`)."""
    return bool(THINKS_BY_DEFAULT.search(model.rsplit("/", 1)[-1]))


def server_fields(thinks: bool, reasoning: bool) -> dict[str, Any]:
    """The chat request's fields for a model that ``thinks`` by default: asking it not to,
    unless the call asks for reasoning (the reasoning fields are the caller's then)."""
    if not thinks or reasoning:
        return {}
    return {"chat_template_kwargs": {KWARG: False}}


def strip_thinking(text: str) -> tuple[str, bool]:
    """``text`` without its ``<think>...</think>`` blocks (an unclosed block runs to the end;
    a lone ``</think>`` ends reasoning the prompt opened), and whether any was there."""
    out, n = _BLOCK.subn("", text)
    if "</think>" in out.lower():
        out, m = _CLOSE_ONLY.subn("", out, count=1)
        n += m
    return (out.strip(), True) if n else (text, False)
