"""What the conformance tests read from the registries at collection time, and the few
documented exceptions. A component registered without tests of its own is still tested here:
its name is read from its registry, never listed by hand."""

from __future__ import annotations

import functools
from typing import Any

from statelab.core import BuildContext, Env, Observation
from statelab.envs import ENVS, make_env
from statelab.run.axes import AXES

#: envs whose runs are slow (a reset takes ~0.5 s) or need an optional package
SLOW_ENVS = {"household": "textworld", "cooking": "textworld"}
#: ScienceWorld tasks each hold a simulator (a JVM: 3.4 s to start, 280 MB) and verify the
#: expert's plan at reset: the shortest task is tested by default (also by the per-component
#: loops), the other 23 only by the env tests under ``-m slow``
SCIENCEWORLD_DEFAULT = ("scienceworld/lifespan-longest-lived",)
HEAVY_ENVS = {
    n: "scienceworld"
    for n in ENVS.names()
    if n.startswith("scienceworld/") and n not in SCIENCEWORLD_DEFAULT
}
SLOW_ENVS.update({n: "scienceworld" for n in SCIENCEWORLD_DEFAULT})
#: the registered env names (an env taking options is tested under its bare name), less the
#: heavy ones
ENV_NAMES: list[str] = [n for n in ENVS.names() if n not in HEAVY_ENVS]

#: axes whose argument is free-form by design: a model spec is a path, a URL or a package
#: name, which only loading the model checks (``llamacpp:<path>``, ``openai-compat:<url>#m``,
#: ``scripted:<file>``); the writer axis names models too. Their unknown *names* are still
#: refused in one line.
FREE_FORM_AXES = {
    "model": "the argument is a model path, URL or package: checked when the model loads",
    "writer": "a model spec (see 'model'), or 'acting'",
    "compressor": "a model spec (see 'model'), or another role: 'acting', 'writer'",
    "scorer": "a model spec (see 'model'), or another role: 'acting', 'writer'",
}

#: a valid spelling of each component that cannot be built bare (its argument is required)
EXAMPLES: dict[tuple[str, str], str] = {
    ("history", "window"): "window:2",
    ("history", "last-k"): "last-k:64",
    ("history", "bounded"): "bounded:summary:64",
    ("history", "oracle-bounded"): "oracle-bounded:64",
    ("history", "oracle-readtime"): "oracle-readtime:64",
}

#: the component axes (everything but env, model and writer) with their registries
COMPONENT_AXES = [a for a in AXES if a.name not in ("env", *FREE_FORM_AXES)]


def spelling(axis: str, name: str) -> str:
    return EXAMPLES.get((axis, name), name)


def component_ids() -> list[tuple[str, str]]:
    """(axis, name) of every registered component on the component axes."""
    return [(a.name, n) for a in COMPONENT_AXES for n in a.registry.names()]


def needs(env: str) -> str | None:
    """The optional package ``env`` needs, if any."""
    return SLOW_ENVS.get(env) or HEAVY_ENVS.get(env)


def build_context(env: str, fmt: str | None = None, seed: int = 0) -> BuildContext:
    """A (non-dry) build context for ``env`` as the episode builds it."""
    from statelab.run.axes import env_context

    return env_context(env, fmt=fmt, seed=seed, dry=False)


@functools.cache
def first(env: str, seed: int = 0) -> tuple[Env, Observation, dict[str, Any]]:
    """An env reset with ``seed`` (images on), its first observation and info (cached: some
    envs take a while to reset). Callers must not step the env: it is closed once reset, so
    the cache holds no process (a ScienceWorld env would keep its JVM, ~0.5-1 GB, for the
    whole session: the slow suite's 24 tasks filled 23 GiB)."""
    e = make_env(env)
    e.want_image = True
    obs, info = e.reset(seed=seed)
    e.close()
    return e, obs, info


def step_context(env: str, tags: frozenset[str] | set[str], seed: int = 0) -> Any:
    """The first step's context of ``env`` as the episode builds it (empty history, the
    env's default format); the privileged view (with a fresh expert) only for a component
    tagged ``reads-privileged``."""
    from statelab.core import PrivilegedView, Prompt, StepContext, frozen_view
    from statelab.state import call_seed, compose_view

    e, obs, info = first(env, seed)
    prompt = Prompt(
        manual=e.manual,
        view=compose_view("", build_context(env).render_obs(obs)),
        actions=obs.admissible,
        goal=obs.goal,
        seed=call_seed(seed, 0, "act"),
        static_actions=type(e).static_actions,
    )
    privileged = (
        PrivilegedView(frozen_view(info), e.expert()) if "reads-privileged" in tags else None
    )
    return StepContext(obs, prompt, 0, seed, env, privileged=privileged)
