"""phi(o_t, h_{t-1}): the observation rendered in the run's format, after the history part."""

from __future__ import annotations

from collections.abc import Callable

from statelab.core import Observation
from statelab.facts import formatter


def observation_renderer(fmt: str) -> Callable[[Observation], str]:
    """Feedback of the last action (if any) then the state in format ``fmt``.

    Feedback the rendered state already says (text envs, where the state *is* the game's
    text: household, Textcraft) is not repeated.
    """
    f = formatter(fmt)

    def render_obs(obs: Observation) -> str:
        state = f(obs.facts)
        feedback = (obs.feedback or "").strip()
        if not feedback or feedback in state:
            return state
        return f"{feedback}\n{state}"

    return render_obs


def goal_line(goal: str) -> str:
    """The goal as the view writes it."""
    return f"Your task is to: {goal.strip()}"


def compose_view(history: str, current: str, goal: str = "") -> str:
    """The history part, then the current observation; the goal leads the view whenever
    neither says it (every agent on every env sees its goal at every step)."""
    parts = [history] if history else []
    parts.append(f"Current observation:\n{current}")
    view = "\n\n".join(parts)
    goal = goal.strip()
    if goal and goal.rstrip(".") not in view:
        view = f"{goal_line(goal)}\n\n{view}"
    return view
