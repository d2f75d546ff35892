"""``reflact``: reflect on the state relative to the goal, then act (Kim et al. 2025, as seed
004 runs it beside ReAct).

ReAct's thought is free reasoning about what to do next; ReflAct's step instead writes a
*reflection* that grounds the decision in the current state and the goal ("I am at X,
holding Y; the goal needs Z, which is still missing"), then the action. It is the StateAct
family's turn with one field, ``reflection``, before the action:

    >reflection: <where I am relative to the goal>
    action: <action>

Everything else (one call per step, the cut after the action line, constrained choice of the
action on backends that offer it, few-shot examples whose reflections are templated from the
expert's traces) is StateAct's.
"""

from __future__ import annotations

from typing import Any

from statelab.agents._anchor import PROMPT_PARAMS, Options
from statelab.agents._stateact_variants import Variant
from statelab.agents.stateact import StateActAgent
from statelab.core import GenParams, Param, Params, choice

_FORMS = choice("text", "json")


def _form(value: str) -> str:
    return _FORMS(value or "text")  # ``reflact:/prompt=conversation``: the text form


_form.spelled = _FORMS.spelled  # type: ignore[attr-defined]

#: the parameters of ``reflact`` (``[text|json][/prompt=view|conversation][/examples=<set>]``)
PARAMS = Params(
    (
        Param("format", _form, "text", "the turn as text lines or JSON", positional=True,
              named=False),
        *PROMPT_PARAMS,
    ),
    sep="/",
)  # fmt: skip


class ReflActAgent(StateActAgent):
    """ReflAct: each turn a reflection on where the agent stands relative to the goal, then
    the action (a StateAct variant with the ``reflection`` field; ``reflact:json``)."""

    name = "reflact"

    def __init__(
        self,
        params: GenParams,
        state_format: str = "text",
        shots: int = 2,
        options: Options | None = None,
    ) -> None:
        super().__init__(params, Variant((), state_format), shots, options)
        self.label = "ReflAct" + (" (json)" if state_format == "json" else "")
        if self.options.spelling:
            self.label += f" [{self.options.spelling}]"
        self.tags = frozenset(
            {"needs-model", "structured-turns", "thinks"}
            | ({"json-turns"} if state_format == "json" else set())
        )

    def keys(self, obs: Any = None) -> tuple[str, ...]:
        return ("reflection", "action")


__all__ = ["PARAMS", "ReflActAgent"]
