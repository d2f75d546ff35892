"""Where the audit can score: a* at every step of a stored episode, and the sampled points.

a* is the env's expert's action from the state the episode was in, reached by replaying the
stored actions from the episode's own reset (never the stored text: the env is re-stepped). An
env declares whether its expert answers from any state (:func:`answers_anywhere`: the class
attribute ``expert_any_state``, checked by ``tests/conformance/test_expert_any_state.py``);
for one that does not (a gold path, a verified plan) a* is defined only while every action so
far was the expert's own: once the agent left that path the point is skipped and counted as
``off-path``, never guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: why a step has no scorable a* (the audit counts each)
OFF_PATH = "off-path"
NO_ANSWER = "expert-failed"
NOT_LISTED = "a*-not-listed"
NO_ACTIONS = "no-listed-actions"
SKIP_REASONS = (OFF_PATH, NO_ANSWER, NOT_LISTED, NO_ACTIONS)


def answers_anywhere(env_or_cls: Any) -> bool:
    """Whether an env's expert answers from any state (``expert_any_state``; False when the
    env does not say)."""
    cls = env_or_cls if isinstance(env_or_cls, type) else type(env_or_cls)
    return bool(getattr(cls, "expert_any_state", False))


@dataclass(frozen=True)
class Target:
    """a* at one step (None: none), or why there is none."""

    a_star: str | None
    reason: str | None = None


def expert_targets(env: Any, first_seed: int, actions: Sequence[str]) -> list[Target]:
    """a* before each of ``actions`` (the stored ones, in order), replaying them on ``env``
    from ``reset(seed=first_seed)``; the expert is asked before every step (it may keep its
    own plan), and answers are kept only where it can answer (see the module docstring)."""
    obs, info = env.reset(seed=first_seed)
    expert = env.expert()
    anywhere = answers_anywhere(env)
    on_path = True
    out: list[Target] = []
    for action in actions:
        a = _answer(env, expert, obs, info)
        if not anywhere and not on_path:
            out.append(Target(None, OFF_PATH))
        elif a is None:
            out.append(Target(None, NO_ANSWER))
        elif not obs.admissible:
            out.append(Target(None, NO_ACTIONS))
        elif a not in obs.admissible:
            out.append(Target(None, NOT_LISTED))
        else:
            out.append(Target(a))
        on_path = on_path and a == action
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    return out


def _answer(env: Any, expert: Any, obs: Any, info: Any) -> str | None:
    """The expert's action here; for an env that names a* (``optimal_action``) that a*, so
    a state with no plan (a lost game) has none rather than the expert's filler move."""
    from statelab.core import a_star_of

    if getattr(env, "optimal_action", False):
        return a_star_of(info)
    try:
        return str(expert.act(obs, info))
    except Exception:  # an expert that cannot answer here says nothing, never a guess
        return None


def sample_points(eligible: Sequence[int], points: int, how: str = "spread") -> list[int]:
    """``points`` of the ``eligible`` step indices: the first ones (``first``, seed 003's
    audit) or spread evenly from the first to the last (``spread``), in order."""
    ks = list(eligible)
    if points <= 0 or not ks:
        return []
    if how == "first" or len(ks) <= points:
        return ks[:points]
    if points == 1:
        return [ks[0]]
    picks = {round(i * (len(ks) - 1) / (points - 1)) for i in range(points)}
    return [ks[i] for i in sorted(picks)]


def skipped(targets: Sequence[Target]) -> dict[str, int]:
    """How many steps lack a scorable a*, by reason."""
    out = {r: 0 for r in SKIP_REASONS}
    for tg in targets:
        if tg.reason is not None:
            out[tg.reason] += 1
    return {r: n for r, n in out.items() if n}
