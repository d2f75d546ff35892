"""The options of ``tools`` and ``plan`` (seed 001), declared as parameters: the registry
parses ``tools:cc+think=256`` into them; :func:`options_of` makes the agent's
:class:`Options` of the parsed values. The spellings are described in
:mod:`statelab.agents.tools`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from statelab.core import Args, Param, Params, count

DEFAULT_THINK_TOKENS = 1024


@dataclass(frozen=True)
class Options:
    """One spelling of ``tools`` or ``plan`` (see the module docstring)."""

    kind: str
    collision_check: bool = False
    form: str | None = None
    thinking: bool = False
    think_tokens: int = DEFAULT_THINK_TOKENS
    k: int = 5
    n: int = 250
    seed: int = 0
    cars: int = 25
    #: the anchor's decision form: a JSON object, structured output constrained to the tools
    json: bool = False
    #: geodesics planned with the cars visible from the start only (default: every car)
    visible: bool = False
    #: ties between geodesics: "frontier" (seed 001's code) or "random"
    ties: str = "frontier"
    #: explain closing speeds in the prompt (seed 001's prompt without the collision check)
    kinematics: bool = False
    #: an unreadable plan waits (time passes, cars move), as seed 001's code; else it goes
    #: to the env as written and is refused (nothing moves)
    wait_invalid: bool = False
    #: ``think=native``: "thinking" is the model's own reasoning mode (seed 001's thinking
    #: rows), not a rationale it is asked to write
    native: bool = False

    @property
    def description_form(self) -> str:
        return self.form or ("short" if self.collision_check else "long")


#: ``think=native``: the reply's room for the model's own reasoning (seed 001's code sends
#: no limit; a server caps it by its context)
NATIVE_THINK_TOKENS = 32768


def _think(value: str) -> int | str:
    if value == "native":
        return value
    if not value.isdigit() or int(value) < 1:
        raise ValueError("expected a positive number of tokens or native")
    return int(value)


_think.spelled = "int >= 1|native"  # type: ignore[attr-defined]


def _flag(name: str, word: str, help: str, value: Any = True, default: Any = False) -> Param:
    return Param(name, str, default, help, words={word: value}, named=False)


#: ``think`` (a rationale, 1024 tokens), ``think=N`` (N tokens) or ``think=native``
THINK = Param(
    "think", _think, None, "reasoning before the choice: think, think=N tokens, think=native",
    words={"think": DEFAULT_THINK_TOKENS},
)
KIN = _flag("kinematics", "kin", "the prompt explains closing speeds (seed 001's prompt)")
#: the parameters of ``tools`` (see the module docstring)
TOOLS_PARAMS = Params(
    (
        _flag("collision_check", "cc", "offer only the tools a collision check finds safe"),
        Param(
            "form", str, None, "tool descriptions (default: short with cc, else long)",
            words={"short": "short", "long": "long"}, named=False,
        ),
        THINK,
        _flag("json", "json", "the decision as one JSON object (structured output)"),
        _flag("visible", "visible", "geodesics planned with the cars visible from their start"),
        _flag("ties", "random", "ties between geodesics broken at random", "random", "frontier"),
        KIN,
        Param("k", count(1), 5, "tools in the library (K medoids)"),
        Param("n", count(1), 250, "geodesics sampled"),
        Param("seed", count(0), 0, "the geodesics' sampling seed"),
        Param("cars", count(1), 25, "cars of the grid the geodesics are sampled in"),
    )
)  # fmt: skip
#: the parameters of ``plan``
PLAN_PARAMS = Params(
    (
        Param("k", count(1), 5, "primitive actions proposed per decision", positional=True),
        THINK,
        KIN,
        _flag("wait_invalid", "wait", "an unreadable plan waits (seed 001's code)"),
    )
)


def options_of(kind: str, args: Args) -> Options:
    """The :class:`Options` of ``tools`` or ``plan`` built with ``args`` (their parsed
    parameters)."""
    think = args["think"]
    fields = {k: v for k, v in args.items() if k in Options.__dataclass_fields__}
    return Options(
        kind,
        **fields,
        thinking=think is not None,
        native=think == "native",
        think_tokens=(
            NATIVE_THINK_TOKENS if think == "native" else think or DEFAULT_THINK_TOKENS
        ),
    )
