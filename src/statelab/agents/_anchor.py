"""How seed 002's authors ran their agents (StateAct's ALFWorld code), as options.

The anchor's runner differs from statelab's default prompting in five ways, each an option
here (spelled after the fields and format of ``stateact`` / ``react``, joined by ``/``):

- ``transcript``: one running transcript in exactly the few-shot examples' format: the head
  ("<manual>", "Here are N examples:", the examples, "Here is the task."), then the first
  observation, then each turn (``>`` + the turn) and the observation that answered it, blocks
  separated by a blank line; the whole text is cut to its last ``chars`` characters (16,000,
  seed 002 Appendix E.1). The run's history and view are not used: the transcript is the
  memory (the first observation, with the task, stays in it).
- ``nolist``: no admissible-action list in the prompt (and no constrained choice among it).
- ``strict``: the action is the text after the last ``action: `` of the reply (the whole
  reply when there is none), without a leading ``>``; only ``put X in Y`` / ``put X on Y`` /
  ``put X in/on Y`` is rewritten (to ``move X to Y``, the grammar's spelling). Nothing is
  matched against the admissible list; anything else goes to the env as written.
- ``repeats=N``: the episode stops when the model's output is repeated N times in a row
  after its first occurrence (the anchor's ``LIMIT_CURRENT_REPETITIONS = 5``: a 6th identical
  output in a row ends the run before it is sent).
- ``calls=N``: the episode stops at the N-th model call (the anchor's ``LIMIT = 100``: its
  loop breaks when the counter reaches 100, before the 100th output is used).

``anchor`` is all five with the anchor's values (transcript, nolist, strict, repeats=5,
calls=100, chars=16000). A stop is the decision's ``meta["stop"]``: the episode ends there,
truncated, without sending that output to the env.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from statelab.agents.example_sets import example_set_names
from statelab.core import Args, ConfigError, Param, choice, count

#: the anchor's prompt limit in characters (seed 002, Appendix E.1)
ANCHOR_CHARS = 16_000
ANCHOR_REPEATS = 5
ANCHOR_CALLS = 100


@dataclass(frozen=True)
class Options:
    """The anchor-runner options of a StateAct-family agent (all off by default)."""

    transcript: bool = False
    listed: bool = True
    strict: bool = False
    repeats: int | None = None
    calls: int | None = None
    chars: int = ANCHOR_CHARS
    #: the prompt layout: ``view`` (each step one prompt of manual, composed view and
    #: actions) or ``conversation`` (:mod:`statelab.agents._conversation`)
    prompt: str = "view"
    #: the few-shot example set the conversation opens with (:mod:`statelab.agents.example_sets`)
    examples: str | None = None

    @property
    def spelling(self) -> str:
        if self == ANCHOR:
            return "anchor"
        parts = ["transcript"] if self.transcript else []
        parts += [] if self.listed else ["nolist"]
        parts += ["strict"] if self.strict else []
        parts += [f"repeats={self.repeats}"] if self.repeats is not None else []
        parts += [f"calls={self.calls}"] if self.calls is not None else []
        parts += [f"chars={self.chars}"] if self.chars != ANCHOR_CHARS else []
        parts += [f"prompt={self.prompt}"] if self.prompt != "view" else []
        parts += [f"examples={self.examples}"] if self.examples is not None else []
        return "/".join(parts)

    @property
    def conversation(self) -> bool:
        """Whether the acting prompt is laid out as a conversation (``prompt=conversation``)."""
        return self.prompt == CONVERSATION


ANCHOR = Options(True, False, True, ANCHOR_REPEATS, ANCHOR_CALLS, ANCHOR_CHARS)


#: the anchor-runner options, as declared parameters (spelled after fields and format)
ANCHOR_PARAMS: tuple[Param, ...] = (
    Param("anchor", str, False, "all five with the anchor's values", words={"anchor": True},
          named=False),
    Param("transcript", str, False, "one running transcript in the examples' format",
          words={"transcript": True}, named=False),
    Param("listed", str, True, "the admissible actions in the prompt (nolist: none)",
          words={"nolist": False}, named=False),
    Param("strict", str, False, "the action read as the anchor reads it",
          words={"strict": True}, named=False),
    Param("repeats", count(1), None, "stop after N repetitions of an output"),
    Param("calls", count(1), None, "stop at the N-th model call"),
    Param("chars", count(1), ANCHOR_CHARS, "the transcript cut to its last N characters"),
)  # fmt: skip
_FIELDS = ("transcript", "listed", "strict", "repeats", "calls", "chars", "prompt", "examples")
CONVERSATION = "conversation"
#: the prompt layout and its example set, options of react, reflact and stateact
PROMPT_PARAMS: tuple[Param, ...] = (
    Param("prompt", choice("view", CONVERSATION), "view",
          "the acting prompt: view (each step manual, view and actions) or conversation (a "
          "multi-turn conversation opening with one example; no action list)"),
    Param("examples", str, None,
          "the example set the conversation opens with (none: only a world model's)"),
)  # fmt: skip


def anchor_options(args: Args) -> Options:
    """The options ``args`` give: ``anchor``'s values (or none), then each option given.
    An example set is honoured only by the conversation layout, and must be registered."""
    base = ANCHOR if args.get("anchor") else Options()
    options = replace(base, **{k: args[k] for k in _FIELDS if k in args.given})
    if options.examples is not None:
        if not options.conversation:
            raise ConfigError(
                f"examples={options.examples} needs prompt=conversation (the view layout "
                "takes its examples from the env's train split)"
            )
        known = example_set_names()
        if options.examples not in known:
            raise ConfigError(
                f"unknown example set {options.examples!r}; registered: "
                f"{', '.join(known) or 'none (a plugin registers them)'}"
            )
    return options


_PUT = re.compile(r"^put (?P<o>.+?) (?:in/on|in|on) (?P<r>.+)$")
SEP = "action: "


def strict_action(reply: str) -> str:
    """The anchor's reading of a reply: after the last ``action: `` (else all of it), a
    leading ``>`` dropped, ``put X in/on Y`` rewritten; nothing else changed."""
    text = reply.split(SEP)[-1] if SEP in reply else reply
    text = text.strip()
    if text.startswith(">"):
        text = text[1:].strip()
    m = _PUT.match(text)
    return f"move {m['o']} to {m['r']}" if m else text


class Limits:
    """An episode's counters for ``repeats`` and ``calls``: :meth:`see` is given every model
    output in order and answers the reason to stop, or None."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.calls = 0
        self.same = 0
        self.previous: str | None = None

    def see(self, output: str) -> str | None:
        o = self.options
        self.calls += 1
        if o.calls is not None and self.calls >= o.calls:
            return f"reached the model-call limit ({o.calls})"
        key = output.strip()
        self.same = self.same + 1 if key == self.previous else 0
        self.previous = key
        if o.repeats is not None and self.same >= o.repeats:
            return f"the same output {o.repeats + 1} times in a row"
        return None


def cut(text: str, chars: int) -> str:
    """The last ``chars`` characters of a prompt (the anchor's truncation)."""
    return text if len(text) <= chars else text[-chars:]
