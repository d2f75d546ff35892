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

from statelab.agents import AGENTS
from statelab.core import TAGS, ConfigError, PrivilegedView, Transition, describe, frozen_view
from statelab.envs import make_env
from statelab.run.axes import AXES, BY_NAME, check_value, env_context
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
    obj = None
    for env in ENVS_HERE:  # the first env the component serves (zoom, tools: traffic only)
        try:
            obj = reg.build(spelled, build_context(env))
            break
        except ConfigError:
            continue
    assert obj is not None, f"{axis} {spelled!r} serves no registered env"
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


def _ground(name: str, env: str) -> tuple[Any, ...]:
    """A freshly built grounding ``name`` applied to ``env``'s first step context."""
    g = GROUNDINGS.build(spelling("grounding", name), build_context(env))
    got = run(g.apply(step_context(env, g.tags), GoldenLLM(constrained=False)))
    return got.prompt, got.record


def _decide(name: str, env: str, constrained: bool = False) -> tuple[Any, ...]:
    """A freshly built agent ``name`` deciding ``env``'s first step."""
    agent = AGENTS.build(spelling("agent", name), build_context(env))
    d = run(agent.decide(step_context(env, agent.tags), GoldenLLM(constrained)))
    assert isinstance(d.action, str)
    return d.action, d.reply, d.parsed


@pytest.mark.parametrize("name", GROUNDINGS.names())
def test_a_grounding_applies_the_same_way_to_the_same_context(name):
    def attempt(env: str) -> None:
        assert _ground(name, env) == _ground(name, env), f"{name} on {env}"

    _applicable(f"grounding {name!r}", ENVS_HERE, attempt)


AGENT_CASES = [(n, mode) for n in AGENTS.names() for mode in (False, True)]


@pytest.mark.parametrize(
    ("name", "constrained"),
    AGENT_CASES,
    ids=[f"{n}-{'constrained' if c else 'free'}" for n, c in AGENT_CASES],
)
def test_an_agent_decides_the_same_way_in_the_same_context(name, constrained):
    def attempt(env: str) -> None:
        assert _decide(name, env, constrained) == _decide(name, env, constrained), env

    _applicable(f"agent {name!r}", ENVS_HERE, attempt)


#: components accepted at load for envs they then refuse at their first step (every episode
#: fails): a defect of the config check, reported; strict, so a fix shows (remove the entry)
LOAD_GAPS: dict[tuple[str, str], str] = {}
RUNTIME = {"grounding": _ground, "agent": _decide}


def _known_gap(axis: str, name: str) -> Any:
    marks = []
    if (axis, name) in LOAD_GAPS:
        marks = [pytest.mark.xfail(strict=True, reason=LOAD_GAPS[(axis, name)])]
    return pytest.param(axis, name, id=f"{axis}/{name}", marks=marks)


LOAD_CASES = [_known_gap(a, n) for a in RUNTIME for n in BY_NAME[a].registry.names()]


@pytest.mark.parametrize(("axis", "name"), LOAD_CASES)
def test_what_a_component_refuses_at_run_time_is_refused_at_load(axis, name):
    """A config pairing a component with an env it cannot serve is refused when read, in
    one line (``check_value``), not by every episode failing at its first step."""
    for env in ENVS_HERE:
        try:
            RUNTIME[axis](name, env)
        except ConfigError as e:
            with pytest.raises(ConfigError):
                check_value(axis, spelling(axis, name), env)
            assert "\n" not in str(e)


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
