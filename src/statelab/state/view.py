"""phi(o_t, h_{t-1}): the observation rendered in the run's format, after the history part."""

from __future__ import annotations

from collections.abc import Callable

from statelab.core import Observation
from statelab.state.formats import formatter


def observation_renderer(fmt: str) -> Callable[[Observation], str]:
    """Feedback of the last action (if any) then the state in format ``fmt``."""
    f = formatter(fmt)

    def render_obs(obs: Observation) -> str:
        state = f(obs.facts)
        return f"{obs.feedback}\n{state}" if obs.feedback else state

    return render_obs


def compose_view(history: str, current: str) -> str:
    parts = [history] if history else []
    parts.append(f"Current observation:\n{current}")
    return "\n\n".join(parts)
