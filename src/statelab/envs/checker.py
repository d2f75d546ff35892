"""Conformance check for statelab envs, in the spirit of ``gymnasium.utils.env_checker``.

``check_env(env)`` raises AssertionError naming the first broken promise of the contract,
including a capability the env uses without declaring it (or declares and does not keep),
and returns the env's :class:`EnvReport`: the optional capabilities it offers, and the
features runs on it lack for each one it does not (``capability_report(cls)`` gives the same
without playing; ``statelab envs --capabilities`` prints it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from statelab.core import (
    CAPABILITIES,
    Env,
    Observation,
    prelude_of,
    tracked_of,
)
from statelab.core._env import A_STAR, PRELUDE, TASK_TYPE, TRACKED
from statelab.facts import formats_for, render


@dataclass(frozen=True)
class EnvReport:
    """The optional capabilities of one env class: what it offers and what it lacks."""

    name: str
    #: the names of the capabilities offered, in :data:`~statelab.core.CAPABILITIES` order
    offers: tuple[str, ...]
    #: capability not offered -> the features a run on the env lacks without it
    lacks: dict[str, str] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The report as text lines (``+ name: what it offers`` / ``- name: what runs on
        the env lack without it``)."""
        by_name = {c.name: c for c in CAPABILITIES}
        out = [f"{self.name}:"]
        out += [f"  + {n}: {by_name[n].help}" for n in self.offers]
        out += [f"  - {n}: {why}" for n, why in self.lacks.items()]
        return out


def capability_report(cls: type[Env], name: str | None = None) -> EnvReport:
    """Which optional capabilities env class ``cls`` declares (no env is built or played);
    ``name``: the config name to report it under (default: the class's)."""
    offered = cls.capabilities()
    return EnvReport(
        name=name or str(cls.name),
        offers=tuple(c.name for c in CAPABILITIES if offered[c.name]),
        lacks={c.name: c.lacking for c in CAPABILITIES if not offered[c.name]},
    )


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


def _declared(flag: bool, present: bool, what: str, attr: str) -> None:
    assert present or not flag, f"the env declares {attr} but {what} is missing"
    assert flag or not present, f"{what} is filled but the env does not declare {attr}"


def check_capabilities(env: Env, obs: Observation, info: dict[str, Any]) -> None:
    """The env keeps what it declares after a reset (``obs``, ``info``), and fills no key
    the spine reads without declaring it."""
    cls = type(env)
    priv = info.get("privileged", {})
    _declared(cls.tracks_state, TRACKED in priv, "info['privileged']['tracked']", "tracks_state")
    if cls.tracks_state:
        tracked = tracked_of(info)
        assert isinstance(tracked, Mapping), "privileged 'tracked' must be a mapping"
        missing = {"location", "inventory", "visited"} - set(tracked)
        assert not missing, f"privileged 'tracked' lacks {sorted(missing)}"
    _declared(cls.task_types, TASK_TYPE in priv, "info['privileged']['task_type']", "task_types")
    _declared(cls.optimal_action, A_STAR in priv, "info['privileged']['a_star']", "optimal_action")
    _declared(cls.scripted_prelude, PRELUDE in info, "info['prelude']", "scripted_prelude")
    for step in prelude_of(info):
        action, seen = step
        assert isinstance(action, str) and isinstance(seen, Observation), "bad prelude step"
    assert isinstance(cls.kind, str), "kind must be a string ('' for none)"
    assert isinstance(cls.task_family, str), "task_family must be a string ('' for none)"
    task = env.current_task()
    assert task is None or isinstance(task, str), "current_task() must be a string or None"
    ranges = list(cls.splits.values())
    for i, a in enumerate(ranges):
        for b in ranges[i + 1 :]:
            assert not set(a) & set(b), "the env's splits overlap"
    assert set(cls.sealed_splits) <= set(cls.splits), "a sealed split is not a split"
    if cls.has_oracle():
        first = env.expert().act(obs, info)
        assert env.would_accept(first) is True, "the oracle refuses the expert's first action"
    assert callable(getattr(env.fewshot_expert(), "act", None)), "fewshot_expert is no policy"


def check_env(env: Env, seeds: tuple[int, ...] = (0, 1)) -> EnvReport:
    """Check ``env`` keeps the contract on ``seeds``; its capability report."""
    for attr in ("name", "max_steps", "history_len", "facts_type", "default_format", "manual"):
        assert getattr(env, attr, None) not in (None, ""), f"env lacks {attr!r}"
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        assert isinstance(obs, Observation), "reset() must return an Observation"
        assert isinstance(obs.facts, env.facts_type), "facts are not of the declared kind"
        assert "privileged" in info, "info must carry 'privileged'"
        assert isinstance(info["privileged"].get("facts"), env.facts_type), (
            "info['privileged'] must hold 'facts', the true state of the declared kind "
            "(oracle-summary renders it)"
        )
        for key in ("score", "success", "steps"):
            assert key in info, f"info lacks {key!r}"
        assert 0.0 <= info["score"] <= 1.0, "score must be normalised to [0, 1]"
        check_capabilities(env, obs, info)
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
    return capability_report(type(env))
