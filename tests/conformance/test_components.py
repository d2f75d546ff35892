"""Every registered component on every axis (read from the registries at collection time):
a bad argument is refused at load with one line; a built component says its spelling, label
and tags; the same inputs give the same output (formats, histories, groundings, agents,
world models)."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from typing import Any

import pytest
from tests.conformance._registries import (
    COMPONENT_AXES,
    ENV_NAMES,
    FREE_FORM_AXES,
    SLOW_ENVS,
    build_context,
    component_ids,
    first,
    needs,
    spelling,
    step_context,
)
from tests.golden._golden import GoldenLLM

from statelab.core import TAGS, ConfigError, PrivilegedView, Transition, describe, frozen_view
from statelab.envs import make_env
from statelab.run.axes import AXES, BY_NAME, env_context
from statelab.state import FORMATS, HISTORIES, supports
from statelab.state.grounding import GROUNDINGS
from statelab.worldmodels import WORLDMODELS


def _importable(pkg: str | None) -> bool:
    import importlib.util

    return pkg is None or importlib.util.find_spec(pkg) is not None


#: envs the per-component loops use: every registered one whose optional package is here
ENVS_HERE = [e for e in ENV_NAMES if _importable(needs(e))]
#: envs cheap to step (histories play a few steps in each)
FAST_ENVS = [e for e in ENVS_HERE if e not in SLOW_ENVS]
BAD = "@@bad@@"


def _ids(pairs: list[tuple[str, str]]) -> list[str]:
    return [f"{a}/{n}" for a, n in pairs]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- refusing a bad argument ------------------------------------------------------------------
CHECKED = [(a.name, n) for a in AXES if a.name not in FREE_FORM_AXES for n in a.registry.names()]


@pytest.mark.parametrize(("axis", "name"), CHECKED, ids=_ids(CHECKED))
def test_a_bad_argument_is_refused_in_one_line(axis, name):
    with pytest.raises(ConfigError) as err:
        BY_NAME[axis].registry.check(f"{name}:{BAD}")
    msg = str(err.value)
    assert "\n" not in msg and msg.strip(), repr(msg)
    assert BAD in msg or name in msg, f"the message names neither the value nor {name!r}: {msg}"


@pytest.mark.parametrize("axis", sorted(FREE_FORM_AXES))
def test_free_form_axes_refuse_unknown_names_in_one_line(axis):
    assert axis in BY_NAME, f"FREE_FORM_AXES names {axis!r}, which is no axis"
    with pytest.raises(ConfigError) as err:
        BY_NAME[axis].check(f"{BAD}:x", env_context("hanoi"))
    assert "\n" not in str(err.value)


# -- self-description ---------------------------------------------------------------------
def _check_description(obj: Any, spelled: str, registered: frozenset[str]) -> None:
    d = describe(obj)
    assert d["spelling"] == spelled
    assert isinstance(d["label"], str) and d["label"].strip()
    assert set(d["tags"]) <= set(TAGS), f"unknown tags {set(d['tags']) - set(TAGS)}"
    assert registered <= set(d["tags"]), "the tags registered with the name are on it"


@pytest.mark.parametrize(("axis", "name"), component_ids(), ids=_ids(component_ids()))
def test_a_built_component_carries_spelling_label_and_tags(axis, name):
    reg = BY_NAME[axis].registry
    spelled = spelling(axis, name)
    try:
        obj = reg.build(spelled, build_context("hanoi"))
    except ConfigError:  # a format that cannot render hanoi: build it for an env it can
        obj = reg.build(spelled, build_context(_env_for_format(name)))
    _check_description(obj, spelled, reg.tags(name))


@pytest.mark.parametrize("name", ENV_NAMES)
def test_a_built_env_carries_spelling_label_and_tags(name):
    from statelab.envs import ENVS

    _check_description(make_env(name), name, ENVS.tags(name))


# -- the same inputs give the same output -------------------------------------------------
def _env_for_format(fmt: str) -> str:
    return next(e for e in ENVS_HERE if supports(fmt, type(first(e)[0]).facts_type))


@pytest.mark.parametrize("name", FORMATS.names())
def test_a_format_renders_each_env_it_supports_the_same_way(name):
    envs = [e for e in ENVS_HERE if supports(name, type(first(e)[0]).facts_type)]
    assert envs, f"format {name!r} renders no registered env"
    for env in envs:
        facts = first(env)[1].facts
        a = FORMATS.build(name, build_context(env))
        b = FORMATS.build(name, build_context(env))
        text = a(facts)
        assert isinstance(text, str) and text.strip(), f"{name} renders nothing for {env}"
        assert b(facts) == text == a(facts), f"{name} on {env}"


_TRANSITIONS: dict[str, Any] = {}


def _transitions(env: str, steps: int = 3) -> tuple[Any, dict[str, Any], list[Transition]]:
    """The first observation, info and a few expert transitions of ``env`` (seed 0), with
    the privileged view on every transition (dropped for components that may not read it)."""
    if env not in _TRANSITIONS:
        e = make_env(env)
        obs0, info0 = e.reset(seed=0)
        policy, obs, info, out = e.expert(), obs0, info0, []
        for t in range(1, steps + 1):
            action = policy.act(obs, info)
            obs, reward, term, trunc, info = e.step(action)
            view = PrivilegedView(frozen_view(info), policy)
            valid = bool(info.get("valid", True))
            out.append(
                Transition(t, action, f"Action: {action}", reward, obs, term, trunc, valid, view)
            )
            if term or trunc:
                break
        _TRANSITIONS[env] = (obs0, info0, out)
    return _TRANSITIONS[env]


async def _write_all(memory: Any, env: str, privileged: bool) -> list[tuple[Any, str]]:
    obs0, info0, transitions = _transitions(env)
    e = first(env)[0]
    state = memory.init(
        obs0, PrivilegedView(frozen_view(info0), e.expert()) if privileged else None
    )
    out = [(state, memory.render(state))]
    writer = GoldenLLM(constrained=False)
    for tr in transitions:
        before, snapshot = state, copy.deepcopy(state)
        tr = tr if privileged else dataclasses.replace(tr, privileged=None)
        state, _ = await memory.write(state, tr, writer)
        assert before == snapshot, "write() changed the state it was given"
        out.append((state, memory.render(state)))
    return out


@pytest.mark.parametrize("name", HISTORIES.names())
def test_a_history_writes_the_same_states_and_renders_from_the_same_transitions(name):
    spelled = spelling("history", name)
    for env in FAST_ENVS:
        ctx = build_context(env)
        a, b = HISTORIES.build(spelled, ctx), HISTORIES.build(spelled, ctx)
        priv = "reads-privileged" in a.tags
        got_a, got_b = run(_write_all(a, env, priv)), run(_write_all(b, env, priv))
        assert len(got_a) > 1
        for (sa, ra), (sb, rb) in zip(got_a, got_b, strict=True):
            assert sa == sb and ra == rb, f"{name} on {env}"
            assert isinstance(ra, str)
            hash(sa)  # an immutable value: hashable (frozen dataclass, tuple, str ...)


#: component -> the envs it applied to (read by the report of this test run)
APPLIED: dict[str, list[str]] = {}


def _applicable(component: str, envs: list[str], attempt: Any) -> list[str]:
    """The envs ``attempt(env)`` works on; a ConfigError says the component does not apply
    to that env (an image grounding on an env without images). At least one must."""
    ok = []
    for env in envs:
        try:
            attempt(env)
        except ConfigError:
            continue
        ok.append(env)
    APPLIED[component] = ok
    assert ok, f"{component} applies to no registered env"
    return ok


@pytest.mark.parametrize("name", GROUNDINGS.names())
def test_a_grounding_applies_the_same_way_to_the_same_context(name):
    spelled = spelling("grounding", name)

    def attempt(env: str) -> None:
        ctx_b = build_context(env)
        a, b = GROUNDINGS.build(spelled, ctx_b), GROUNDINGS.build(spelled, ctx_b)
        ctx = step_context(env, a.tags)
        ga = run(a.apply(ctx, GoldenLLM(constrained=False)))
        gb = run(b.apply(ctx, GoldenLLM(constrained=False)))
        assert (ga.prompt, ga.record) == (gb.prompt, gb.record), f"{name} on {env}"

    _applicable(f"grounding {name!r}", ENVS_HERE, attempt)


AGENT_CASES = [(n, mode) for n in BY_NAME["agent"].registry.names() for mode in (False, True)]


@pytest.mark.parametrize(
    ("name", "constrained"),
    AGENT_CASES,
    ids=[f"{n}-{'constrained' if c else 'free'}" for n, c in AGENT_CASES],
)
def test_an_agent_decides_the_same_way_in_the_same_context(name, constrained):
    reg = BY_NAME["agent"].registry
    spelled = spelling("agent", name)

    def attempt(env: str) -> None:
        ctx_b = build_context(env)
        a, b = reg.build(spelled, ctx_b), reg.build(spelled, ctx_b)
        da = run(a.decide(step_context(env, a.tags), GoldenLLM(constrained)))
        db = run(b.decide(step_context(env, b.tags), GoldenLLM(constrained)))
        assert isinstance(da.action, str)
        assert (da.action, da.reply, da.parsed) == (db.action, db.reply, db.parsed), env

    _applicable(f"agent {name!r}", ENVS_HERE, attempt)


@pytest.mark.parametrize("name", WORLDMODELS.names())
def test_a_world_model_answers_and_validates_the_same_way(name):
    spelled = spelling("worldmodel", name)

    def attempt(env: str) -> None:
        ctx_b = build_context(env)
        a, b = WORLDMODELS.build(spelled, ctx_b), WORLDMODELS.build(spelled, ctx_b)
        ctx = step_context(env, a.tags)
        a.reset(ctx)
        b.reset(ctx)
        for q in ("where is the key?", "what happens if I go north?"):
            assert a.answer(q, ctx) == b.answer(q, ctx)
        for action in (*(ctx.admissible or ())[:5], "xyzzy"):
            assert a.validate(action, ctx) == b.validate(action, ctx)

    _applicable(f"worldmodel {name!r}", ENVS_HERE, attempt)


def test_every_component_axis_is_covered():
    """A new axis joins these tests or is named in FREE_FORM_AXES with why."""
    covered = {"env", *FREE_FORM_AXES, *(a.name for a in COMPONENT_AXES)}
    assert covered == {a.name for a in AXES}
    tested_here = {"agent", "history", "format", "grounding", "worldmodel"}
    assert {a.name for a in COMPONENT_AXES} == tested_here, "add determinism tests for it"
