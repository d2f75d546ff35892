"""Every registered env (read from :data:`statelab.envs.ENVS` at collection time) keeps the
env contract: Gymnasium's own checker, ours, determinism from a seed, the expert winning
through the text interface, and a reset that clears everything."""

from __future__ import annotations

import warnings

import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from tests.conformance._registries import ENV_NAMES, HEAVY_ENVS, SLOW_ENVS, first, needs

from statelab.core import Env
from statelab.envs import make_env
from statelab.envs.checker import check_env

#: envs that fail Gymnasium's checker for a defect of theirs (not of text spaces); strict, so
#: the fix shows: remove the entry with it
GYM_CHECK_DEFECTS: dict[str, str] = {}


def _params(names: list[str]) -> list[object]:
    """One param per env; the slow ones marked ``slow`` (the project's default
    ``-m 'not slow'`` leaves them out; ``-m slow`` runs them) and the known defects strict
    xfails."""
    out: list[object] = []
    for n in names:
        marks = [pytest.mark.slow] if n in SLOW_ENVS or n in HEAVY_ENVS else []
        if n in GYM_CHECK_DEFECTS:
            marks.append(pytest.mark.xfail(strict=True, reason=GYM_CHECK_DEFECTS[n]))
        out.append(pytest.param(n, marks=marks))
    return out


def _env(name: str) -> Env:
    pkg = needs(name)
    if pkg:
        pytest.importorskip(pkg)
    return make_env(name)


def _play(env: Env, seed: int, actions: list[str]) -> list[tuple[object, ...]]:
    """Observations, rewards and info scores of ``actions`` played from ``reset(seed)``."""
    obs, info = env.reset(seed=seed)
    out: list[tuple[object, ...]] = [(obs.text, obs.facts, obs.admissible, info["score"])]
    for a in actions:
        obs, reward, term, trunc, info = env.step(a)
        out.append((obs.text, obs.facts, reward, term, trunc, info["score"], info.get("valid")))
        if term or trunc:
            break
    return out


def _some_actions(name: str, seed: int, n: int = 4) -> list[str]:
    """A few actions from the seed's start: the expert's first move, admissible ones when the
    env lists them, and an unknown one."""
    env, obs, info = first(name, seed)
    policy = env.expert()
    acts = [policy.act(obs, info)]
    if obs.admissible:
        acts += list(obs.admissible[: n - 2])
    return [*acts, "xyzzy"]


#: every env; the heavy ones (ScienceWorld's other tasks) only under ``-m slow``
ALL = [*ENV_NAMES, *(pytest.param(n, marks=pytest.mark.slow) for n in HEAVY_ENVS)]


@pytest.mark.parametrize("name", _params([*ENV_NAMES, *HEAVY_ENVS]))
def test_gymnasium_env_checker(name):
    """Gymnasium's checker applies to text envs: ObservationSpace contains Observation
    objects and the action space is gymnasium.spaces.Text. (Its render check is skipped:
    render_mode is not part of our contract; the text *is* the rendering.)"""
    env = _env(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gym_check_env(env, skip_render_check=True)


@pytest.mark.parametrize("name", ALL)
def test_statelab_env_checker(name):
    check_env(_env(name), seeds=(0,))


@pytest.mark.parametrize("name", ALL)
def test_same_seed_same_actions_same_episode(name):
    a, b = _env(name), _env(name)
    actions = _some_actions(name, 3)
    assert _play(a, 3, actions) == _play(b, 3, actions)


#: envs whose expert loses the seed this test plays, known and documented (docs/seed004.md):
#: the package's gold path fails on replay on these variations, so the seed-004 configs leave
#: them out. find-living-thing's variation 226 wins when played alone and lost after the
#: other tests' loads in one process (a 2026-11-30 slow run): not yet explained, so not
#: strict. (grow-fruit's variation 95 wins since the expert drops the watering of
#: self-watering pots: 1.0 in 39 of 60.)
EXPERT_LOSES = {
    "scienceworld/find-living-thing": (False, "variation 226: a bee leaves the inventory"),
}


def _expert_case(p: object) -> object:
    name = getattr(p, "values", (p,))[0]
    if name not in EXPERT_LOSES:
        return p
    strict, why = EXPERT_LOSES[name]
    xfail = pytest.mark.xfail(strict=strict, reason=why)
    return pytest.param(name, marks=[pytest.mark.slow, xfail])


EXPERT_CASES = [_expert_case(p) for p in ALL]


@pytest.mark.parametrize("name", EXPERT_CASES)
def test_the_expert_wins_through_the_text_interface(name):
    env = _env(name)
    seeds = (1,) if name in SLOW_ENVS else (1, 2)
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        policy = env.expert()
        done = False
        while not done:
            action = policy.act(obs, info)
            assert isinstance(action, str) and action
            obs, _, term, trunc, info = env.step(action)
            done = term or trunc
        assert info["success"] and info["score"] >= env.win_score, f"expert lost seed {seed}"
        assert env.steps <= env.budget


@pytest.mark.parametrize("name", ALL)
def test_reset_clears_everything(name):
    env = _env(name)
    _play(env, 5, _some_actions(name, 5))
    obs, info = env.reset(seed=0)
    _, fresh_obs, fresh_info = first(name, 0)  # a fresh env's first observation
    assert env.steps == 0 and info["steps"] == 0
    assert (obs.text, obs.facts, obs.admissible, obs.goal) == (
        fresh_obs.text,
        fresh_obs.facts,
        fresh_obs.admissible,
        fresh_obs.goal,
    )
    assert info["score"] == fresh_info["score"] and info["success"] == fresh_info["success"]
