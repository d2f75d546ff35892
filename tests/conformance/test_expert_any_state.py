"""An env that claims its expert answers from any state (``expert_any_state``) keeps the
claim: after a random prefix of admissible actions (an agent's wandering off the expert's
path), the expert, given the env's whole budget again, still wins, and every action it
plays is admissible where the env lists them. The audit trusts the claim to take a* off the
expert's own path (statelab.analysis.audit.points); a gold-path expert that claims it fails
this check (the last test)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from tests.conformance._registries import ENV_NAMES, HEAVY_ENVS, SLOW_ENVS, needs

from statelab.analysis.audit import answers_anywhere
from statelab.envs import env_class, make_env

#: prefix lengths tried (each from its own seeded draw)
PREFIXES = (3, 8)


def _claiming() -> list[object]:
    out: list[object] = []
    for n in ENV_NAMES:
        if not answers_anywhere(env_class(n)):
            continue
        marks = [pytest.mark.slow] if n in SLOW_ENVS or n in HEAVY_ENVS else []
        out.append(pytest.param(n, marks=marks))
    return out


def _random_prefix(env: Any, seed: int, n: int, rng: random.Random) -> tuple[Any, Any] | None:
    """Reset and play ``n`` random admissible actions (random text where none are listed);
    None when the prefix ended the episode."""
    obs, info = env.reset(seed=seed)
    for _ in range(n):
        action = rng.choice(obs.admissible) if obs.admissible else rng.choice(["W", "N", "x"])
        obs, _, term, trunc, info = env.step(action)
        if term or trunc:
            return None
    return obs, info


def expert_from_prefix(env: Any, seed: int, n: int, expert: Any = None) -> str | None:
    """Why the expert fails from a random ``n``-step prefix of ``seed`` (None: it won, or the
    prefix ended the episode first); ``expert`` replaces the env's own (for the last test)."""
    rng = random.Random(seed * 1000 + n)
    start = _random_prefix(env, seed, n, rng)
    if start is None:
        return None
    obs, info = start
    policy = expert or env.expert()
    env.budget = env.steps + type(env).max_steps  # the whole budget again, after the prefix
    done = False
    while not done:
        action = policy.act(obs, info)
        if obs.admissible and action not in obs.admissible:
            return f"seed {seed}, prefix {n}: {action!r} is not admissible"
        obs, _, term, trunc, info = env.step(action)
        done = term or trunc
    if not info["success"]:
        return f"seed {seed}, prefix {n}: the expert did not win from the prefix"
    return None


@pytest.mark.parametrize("name", _claiming())
def test_an_expert_that_claims_any_state_wins_from_random_prefixes(name):
    pkg = needs(name)
    if pkg:
        pytest.importorskip(pkg)
    env = make_env(name)
    seeds = (1,) if name in SLOW_ENVS else (1, 2)
    failures = [w for s in seeds for n in PREFIXES if (w := expert_from_prefix(env, s, n))]
    assert failures == []


def test_the_check_catches_a_gold_path_expert_that_claims_any_state():
    """A Hanoi expert that replays its reset-time plan (a gold path) does not win from a
    random prefix: the check reports it (the conformance test fails on any prefix)."""
    from statelab.envs.hanoi import ACTIONS, shortest_solution

    class GoldPath:
        def __init__(self, pegs: Any) -> None:
            self.plan = [ACTIONS[i] for i in shortest_solution(pegs)]

        def act(self, obs: Any, info: dict[str, Any]) -> str:
            return self.plan.pop(0) if self.plan else ACTIONS[0]

    env = make_env("hanoi")
    _, info = env.reset(seed=1)
    gold = GoldPath(info["privileged"]["pegs"])
    assert expert_from_prefix(env, 1, 0, gold) is None  # on its own path it wins
    caught = [expert_from_prefix(env, 1, n, GoldPath(info["privileged"]["pegs"]))
              for n in PREFIXES]  # fmt: skip
    assert any(caught), caught  # the conformance test fails on any failing prefix
    assert expert_from_prefix(env, 1, PREFIXES[0]) is None  # the real expert replans
