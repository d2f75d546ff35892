"""Conformance check for statelab envs, in the spirit of ``gymnasium.utils.env_checker``.

``check_env(env)`` raises AssertionError naming the first broken promise of the contract.
"""

from __future__ import annotations

from typing import Any

from statelab.core import Env, Observation
from statelab.facts import formats_for, render


def _play_expert(env: Env, seed: int) -> tuple[list[str], dict[str, Any]]:
    obs, info = env.reset(seed=seed)
    policy = env.expert()
    actions: list[str] = []
    done = False
    while not done:
        action = policy.act(obs, info)
        actions.append(action)
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    return actions, info


def check_env(env: Env, seeds: tuple[int, ...] = (0, 1)) -> None:
    for attr in ("name", "max_steps", "history_len", "facts_type", "default_format", "manual"):
        assert getattr(env, attr, None) not in (None, ""), f"env lacks {attr!r}"
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        assert isinstance(obs, Observation), "reset() must return an Observation"
        assert isinstance(obs.facts, env.facts_type), "facts are not of the declared kind"
        assert "privileged" in info, "info must carry 'privileged'"
        for key in ("score", "success", "steps"):
            assert key in info, f"info lacks {key!r}"
        assert 0.0 <= info["score"] <= 1.0, "score must be normalised to [0, 1]"
        fmts = formats_for(env.facts_type)
        assert env.default_format in fmts, "default format cannot render this env"
        for f in fmts:
            assert render(f, obs.facts).strip(), f"format {f!r} renders nothing"
        # determinism: the same seed gives the same episode start
        again, _ = env.reset(seed=seed)
        assert again.text == obs.text, "reset(seed) is not deterministic"
        # an unknown action is the env's business, never a crash
        obs2, reward, terminated, truncated, info2 = env.step("xyzzy, flap your arms")
        assert isinstance(obs2, Observation) and isinstance(reward, float)
        assert info2.get("valid") is False, "an unknown action must be reported invalid"
        # the expert wins through the text interface, and replays identically
        actions, final = _play_expert(env, seed)
        assert final["success"], f"expert failed on seed {seed}"
        assert final["score"] >= env.win_score, f"a won episode must score {env.win_score:g}+"
        assert _play_expert(env, seed)[0] == actions, "expert play is not replayable"
    # the budget truncates
    env.reset(seed=seeds[0])
    truncated = False
    for _ in range(env.budget):
        _, _, terminated, truncated, _ = env.step("xyzzy")
        if terminated:
            break
    assert truncated, "the step budget must truncate the episode"
