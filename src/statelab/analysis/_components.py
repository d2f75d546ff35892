"""What a run's components say of themselves (spelling, label, tags), as reports read it.

The run's stored descriptions come first (``runs.components``); a run stored without them
gets the descriptions its components give when built from the run's spellings. Reports choose
and order rows by these tags and labels, never by parsing spellings.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from statelab.core import ConfigError, Registry
from statelab.run.axes import COMPONENT_AXES

#: the registries of the axes that build a component (the table of axes says which)
_REGISTRIES: dict[str, Registry[Any]] = {a.name: a.registry for a in COMPONENT_AXES}


@lru_cache(maxsize=512)
def _built(axis: str, spelling: str) -> tuple[str, str, tuple[str, ...]]:
    try:
        d = _REGISTRIES[axis].build(spelling).describe()
    except (ConfigError, KeyError):
        return spelling, spelling, ()
    return d["spelling"], d["label"], tuple(d["tags"])


def description(axis: str, spelling: Any, stored: Any = None) -> dict[str, Any]:
    """The description of the component on ``axis``: ``stored`` (a run's ``components``,
    JSON or dict) when it has one for the axis, else the built component's own."""
    if isinstance(stored, str) and stored:
        stored = json.loads(stored)
    if isinstance(stored, dict) and isinstance(stored.get(axis), dict):
        return dict(stored[axis])
    if not isinstance(spelling, str) or spelling in ("", "-"):
        return {"spelling": str(spelling), "label": str(spelling), "tags": []}
    s, label, tags = _built(axis, spelling)
    return {"spelling": s, "label": label, "tags": list(tags)}


def tags(axis: str, spelling: Any, stored: Any = None) -> set[str]:
    return set(description(axis, spelling, stored)["tags"])
