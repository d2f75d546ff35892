"""What a run's components say of themselves (spelling, label, tags, parsed arguments), as
reports read it.

The run's stored descriptions come first (``runs.components``); a run stored without them
(or without their ``args``: stores older than recorded arguments) gets what its components
give when built from the run's spellings, through their registries. Reports choose and order
rows by these tags and arguments, never by parsing spellings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from statelab.agents import AGENTS
from statelab.core import MODEL_FREE, ConfigError, Registry
from statelab.envs import ENVS
from statelab.state import HISTORIES
from statelab.state.grounding import GROUNDINGS
from statelab.worldmodels import WORLDMODELS

_REGISTRIES: dict[str, Registry[Any]] = {
    "env": ENVS,
    "agent": AGENTS,
    "history": HISTORIES,
    "grounding": GROUNDINGS,
    "worldmodel": WORLDMODELS,
}


@lru_cache(maxsize=512)
def _built(axis: str, spelling: str) -> str:
    """The description of ``spelling`` built dry, as JSON (an env builds nothing dry: its
    spelling, no tags, its parsed arguments)."""
    reg = _REGISTRIES[axis]
    try:
        if axis == "env":
            d = {"spelling": spelling, "label": spelling, "tags": [], "args": {}}
            d["args"] = reg.parse(spelling).record()
        else:
            d = reg.build(spelling).describe()
    except (ConfigError, KeyError):
        d = {"spelling": spelling, "label": spelling, "tags": [], "args": {}}
    return json.dumps(d)


def description(axis: str, spelling: Any, stored: Any = None) -> dict[str, Any]:
    """The description of the component on ``axis``: ``stored`` (a run's ``components``,
    JSON or dict) when it has one for the axis, else the built component's own; ``args``
    (the parsed arguments) from the registry when the stored one has none."""
    if isinstance(stored, str) and stored:
        stored = json.loads(stored)
    if isinstance(stored, dict) and isinstance(stored.get(axis), dict):
        out = dict(stored[axis])
        if "args" not in out and isinstance(spelling, str) and spelling not in ("", MODEL_FREE):
            out["args"] = json.loads(_built(axis, spelling))["args"]
        return out
    if not isinstance(spelling, str) or spelling in ("", MODEL_FREE):
        return {"spelling": str(spelling), "label": str(spelling), "tags": [], "args": {}}
    return dict(json.loads(_built(axis, spelling)))


def tags(axis: str, spelling: Any, stored: Any = None) -> set[str]:
    return set(description(axis, spelling, stored)["tags"])


def arguments(axis: str, spelling: Any, stored: Any = None) -> Mapping[str, Any]:
    """The parsed arguments of the component on ``axis`` (recorded, else parsed by its
    registry): e.g. an env's ``lag``, a bounded history's ``budget``."""
    return dict(description(axis, spelling, stored).get("args") or {})


def without(axis: str, spelling: str, *names: str) -> str:
    """``spelling`` with the parameters ``names`` left out, by its registry (a row key
    across budgets: ``bounded:summary:64`` -> ``bounded:summary``)."""
    try:
        return _REGISTRIES[axis].without(spelling, *names)
    except (ConfigError, KeyError):
        return spelling


def is_expert(agent: Any, stored: Any = None) -> bool:
    """Whether the run's agent is the env's expert (its ``expert`` tag)."""
    return "expert" in tags("agent", agent, stored)
