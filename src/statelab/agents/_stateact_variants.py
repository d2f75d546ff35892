"""The ablation axis of :mod:`statelab.agents.stateact`: which fields a turn writes and in
which format (:class:`Variant`, spelled ``stateact[:<fields>][/<format>]``), the spelling's
parameters, what ``state`` expands to for an observation's facts, and how the prompt's head
describes a turn."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from statelab.agents._anchor import ANCHOR_PARAMS, PROMPT_PARAMS
from statelab.agents._turn import render_turn
from statelab.core import Args, Param, Params, choice
from statelab.facts import TextFacts

FIELDS = ("goal", "state", "thought")
FORMATS = ("text", "json")
LOCATION_KEYS = ("locations visited", "current location", "current inventory")
INVENTORY_KEYS = ("current inventory",)
GENERIC_KEYS = ("current state",)
#: the seed's labels of the eight ablation rows (Table 6), by field set
ROW_LABELS = {
    (): "Act",
    ("thought",): "Thought+Act (ReAct)",
    ("state",): "State+Act",
    ("state", "thought"): "State+Thought+Act",
    ("goal",): "Goal+Act",
    ("goal", "thought"): "Goal+Thought+Act",
    ("goal", "state"): "Goal+State+Act",
    ("goal", "state", "thought"): "Goal+State+Thought+Act",
}
DESCRIBE = {
    "goal": "the goal of the task, in your own words",
    "locations visited": "the places you have been to so far",
    "current location": "where you are now",
    "current inventory": "what you are carrying",
    "current state": "the current state of the environment, as far as the goal needs it",
    "reflection": "where you are now relative to the goal: what is done, what is missing",
    "thought": "your reasoning about what to do next",
    "action": "the next action, exactly as the environment accepts it",
}


@dataclass(frozen=True)
class Variant:
    """One point of the ablation axis: the fields written, and the turn's format."""

    fields: tuple[str, ...] = FIELDS
    state_format: str = "text"

    @property
    def spelling(self) -> str:
        body = "+".join(self.fields) or "none"
        return f"stateact:{body}" + ("/json" if self.state_format == "json" else "")

    @property
    def label(self) -> str:
        return ROW_LABELS[self.fields] + (" (json)" if self.state_format == "json" else "")

    def keys(self, state_keys: tuple[str, ...]) -> tuple[str, ...]:
        """The output keys of one turn, in order, ending with ``action``."""
        out: list[str] = []
        if "goal" in self.fields:
            out.append("goal")
        if "state" in self.fields:
            out.extend(state_keys)
        if "thought" in self.fields:
            out.append("thought")
        return (*out, "action")


def _fields(spec: str) -> tuple[str, ...]:
    """``all``, ``none``/empty, or fields joined by ``+`` (each once), in the seed's order."""
    if spec in ("", "none"):
        return ()
    if spec == "all":
        return FIELDS
    parts = spec.split("+")
    if any(p not in FIELDS for p in parts) or len(set(parts)) != len(parts):
        raise ValueError("fields are goal, state, thought joined by '+', each once")
    return tuple(f for f in FIELDS if f in parts)


_fields.spelled = "goal+state+thought|none|all"  # type: ignore[attr-defined]

#: the parameters of ``stateact`` (``<fields>[/<format>][/<option>...]``)
PARAMS = Params(
    (
        Param("fields", _fields, FIELDS, "the fields written before the action",
              positional=True, named=False),
        Param("format", choice(*FORMATS), "text", "the turn as 'key: value' lines or JSON",
              positional=True, named=False),
        *ANCHOR_PARAMS,
        *PROMPT_PARAMS,
    ),
    sep="/",
)  # fmt: skip


def variant_of(args: Args) -> Variant:
    """The :class:`Variant` of ``stateact``'s parsed arguments."""
    return Variant(tuple(args["fields"]), args["format"])


def eight_variants() -> list[Variant]:
    """Seed 002's eight ablation rows, in Table 6's order."""
    return [Variant(fields) for fields in ROW_LABELS]


def state_keys_for(facts: Any) -> tuple[str, ...]:
    """What ``state`` expands to for this observation's facts (see the module doc)."""
    if isinstance(facts, TextFacts):
        return LOCATION_KEYS if facts.location is not None else INVENTORY_KEYS
    return GENERIC_KEYS


def format_spec(keys: tuple[str, ...], fmt: str, listed: bool) -> str:
    """The static description of a turn, for the head of the prompt."""
    desc = dict(DESCRIBE)
    if listed:
        desc["action"] = "the next action, one of the available actions"
    if fmt == "json":
        shape = render_turn({k: f"<{desc[k]}>" for k in keys}, keys, "json")
        how = "At every step, write your turn as one JSON object with these keys, in this order"
        empty = "Write null for an empty value."
    else:
        shape = render_turn({k: f"<{desc[k]}>" for k in keys}, keys, "text")
        how = "At every step, write your turn as one 'key: value' line per field, in this order"
        empty = "Write None for an empty value."
    return f"{how}, starting with '>', and stop after the action:\n{shape}\n{empty}"


def instruction(keys: tuple[str, ...], fmt: str) -> str:
    shape = "one JSON object" if fmt == "json" else "one 'key: value' line each"
    return f"Write your next turn ({', '.join(keys)}; {shape}), starting with '>'."
