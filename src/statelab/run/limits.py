"""Limits per episode (``limits:`` in a config): wall-clock seconds, tokens and dollars.

An episode that reaches a limit ends after the step that reached it, with the status
``truncated`` and the limit's name as its ``reason`` (an episode its step budget ends is
``done``: that is the env's protocol); it is scored as it stands at the cut (the env's score
at its last step), and its last step's ``meta["stopped"]`` says which limit ended it
(``"limit: tokens 2,000 reached (2,113)"``). The limits are
checked between steps, so a single model call is never cut (its own ``timeout`` bounds it);
``tokens`` counts every model token of the episode (acting and auxiliary, in and out);
``dollars`` the cost of its calls where the backend knows the price
(:attr:`statelab.core.Completion.cost`, :mod:`statelab.llm._pricing`): a ``dollars`` limit
over a model whose calls are not priced is refused when the config is read, and so is a
limit given as ``true``/``false`` (not read as 1). A limit is part of the run's key:
episodes played under another limit are another run.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from statelab.run.records import EpisodeRecord


class Limits(BaseModel):
    """``limits: {wall_s: 600, tokens: 200000, dollars: 0.50}``; each one optional."""

    model_config = ConfigDict(extra="forbid")
    wall_s: float | None = Field(None, gt=0, le=7 * 24 * 3600)
    tokens: int | None = Field(None, ge=1)
    dollars: float | None = Field(None, gt=0)

    @field_validator("wall_s", "tokens", "dollars", mode="before")
    @classmethod
    def _no_booleans(cls, v: Any) -> Any:
        if isinstance(v, bool):
            raise ValueError(f"a number, not {str(v).lower()}")
        return v

    def given(self) -> dict[str, Any]:
        """The limits set, by name (the form a run's spec and key hold)."""
        return {k: v for k, v in self.model_dump().items() if v is not None}


def first_limit(
    limits: dict[str, Any] | None, ep: EpisodeRecord, wall_s: float
) -> tuple[str, str] | None:
    """The first of ``limits`` the episode has reached after ``wall_s`` seconds: its name
    (``wall_s``, ``tokens``, ``dollars``: the truncated episode's ``reason``) and the line
    saying so (its last step's ``meta["stopped"]``); None if none is reached."""
    if not limits:
        return None
    tokens = ep.agent_in + ep.agent_out + ep.aux_in + ep.aux_out
    used: dict[str, float] = {"wall_s": wall_s, "tokens": tokens}
    if ep.cost is not None:
        used["dollars"] = ep.cost
    for name, fmt in (("wall_s", ",.1f"), ("tokens", ",.0f"), ("dollars", ",.4f")):
        cap = limits.get(name)
        if cap is not None and name in used and used[name] >= cap:
            return name, f"limit: {name} {cap:{fmt}} reached ({used[name]:{fmt}})"
    return None


def limit_reached(limits: dict[str, Any] | None, ep: EpisodeRecord, wall_s: float) -> str:
    """The line of :func:`first_limit` ("" if no limit is reached)."""
    got = first_limit(limits, ep, wall_s)
    return got[1] if got else ""
