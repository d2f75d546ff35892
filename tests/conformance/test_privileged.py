"""A component not tagged ``reads-privileged`` cannot reach the env's privileged view.

A test env puts a unique secret in ``info["privileged"]`` only; a test agent walks
everything reachable from its :class:`StepContext` (and its model) and records whether the
secret is anywhere. A plain agent never finds it; the ``expert`` agent (tagged
``reads-privileged``) does, on the same env. Functions (closures), classes and modules are
not walked: a component that digs through closures is not playing by the contract.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import types
import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import pytest

from statelab.agents import AGENTS, ExpertAgent
from statelab.core import LLM, Agent, Decision, Env, Observation, StepContext
from statelab.envs import ENVS, register_env
from statelab.envs import _registry as env_registry
from statelab.facts import TextFacts
from statelab.llm import ScriptedLLM
from statelab.run.episode import run_episode
from statelab.run.spec import RunSpec

SECRET = f"secret-{uuid.uuid4().hex}"
ENV = f"secret-room-{uuid.uuid4().hex[:8]}"
GYM_ID = f"statelab-test/SecretRoom{uuid.uuid4().hex[:8]}-v0"
PROBE = f"probe-{uuid.uuid4().hex[:8]}"


class _Expert:
    def act(self, obs: Observation, info: dict[str, Any]) -> str:
        return str(info["privileged"]["password"])


class SecretRoom(Env):
    """Say the password (only the privileged view knows it) to win."""

    name = ENV
    max_steps = 3
    history_len = 3
    facts_type: ClassVar[type] = TextFacts
    default_format = "natural"
    manual = "Say the password to leave the room."

    def _obs(self, feedback: str = "") -> Observation:
        text = f"{feedback} A locked room.".strip()
        return Observation(text, TextFacts(text), ("wait", "knock"), "leave", feedback=feedback)

    def _info(self, valid: bool = True) -> dict[str, Any]:  # type: ignore[override]
        info = super()._info(
            {"valid": valid, "privileged": {"password": SECRET, "facts": TextFacts(SECRET)}}
        )
        return info

    def _reset(self, rng_seed: int | None, options: dict[str, Any]) -> tuple[Observation, dict]:
        self.out = False
        return self._obs(), {}

    def _step(self, action: str) -> tuple[Observation, float, bool, dict[str, Any]]:
        self.out = action == SECRET
        return (
            self._obs("The door opens." if self.out else "Nothing."),
            float(self.out),
            self.out,
            {},
        )

    def success(self) -> bool:
        return self.out

    def expert(self) -> _Expert:
        return _Expert()


_SKIP = (types.ModuleType, types.BuiltinFunctionType, type)


def reaches(root: Any, secret: str, limit: int = 100_000) -> bool:
    """Whether ``secret`` is in any string reachable from ``root`` (attributes, slots,
    dataclass fields, mappings, sequences, sets, and what functions close over or bound
    methods are bound to), modules, classes and module globals aside."""
    seen: set[int] = set()
    todo = [root]
    while todo and len(seen) < limit:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, _SKIP):
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            if secret in obj:
                return True
            continue
        if isinstance(obj, (bytes, bytearray)):
            if secret.encode() in obj:
                return True
            continue
        if isinstance(obj, (int, float, complex, bool)) or obj is None:
            continue
        if isinstance(obj, types.MethodType):
            todo.extend((obj.__self__, obj.__func__))
            continue
        if isinstance(obj, types.FunctionType):
            cells = obj.__closure__ or ()
            for cell in cells:
                with contextlib.suppress(ValueError):  # an empty cell
                    todo.append(cell.cell_contents)
            todo.extend(obj.__defaults__ or ())
            todo.extend((obj.__kwdefaults__ or {}).values())
            continue
        if isinstance(obj, Mapping):
            todo.extend(obj.keys())
            todo.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            todo.extend(obj)
        if dataclasses.is_dataclass(obj):
            todo.extend(getattr(obj, f.name, None) for f in dataclasses.fields(obj))
        todo.extend(vars(obj).values() if hasattr(obj, "__dict__") else ())
        for cls in type(obj).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                if isinstance(slot, str) and hasattr(obj, slot):
                    todo.append(getattr(obj, slot))
    assert len(seen) < limit, "walked too far: raise the limit"
    return False


class Probe(Agent):
    """Walks its context and its model; then waits (it never wins)."""

    found: ClassVar[list[bool]] = []

    async def decide(self, ctx: StepContext, llm: LLM | None) -> Decision:
        Probe.found.append(reaches((ctx, llm), SECRET))
        # the walk does go deep: it finds the observation's text through the context
        assert reaches((ctx, llm), "A locked room.")
        return Decision("wait", "Action: wait")


@pytest.fixture
def secret_env():
    register_env(ENV, SecretRoom, GYM_ID)
    AGENTS.register(PROBE, "probe (test)")(lambda arg, ctx: Probe())
    Probe.found.clear()
    yield ENV
    AGENTS.unregister(PROBE)
    ENVS.unregister(ENV)
    env_registry.ENV_CLASSES.pop(ENV, None)
    env_registry.GYM_IDS.pop(ENV, None)
    gym.registry.pop(GYM_ID, None)


def test_the_walker_finds_what_is_there():
    @dataclasses.dataclass(frozen=True)
    class Box:
        inner: Any

    class Slotted:
        __slots__ = ("x",)

        def __init__(self) -> None:
            self.x = {"k": [Box(types.MappingProxyType({"deep": (SECRET,)}))]}

    cyclic: list[Any] = []
    cyclic.append(cyclic)
    assert reaches(Slotted(), SECRET)
    assert not reaches((cyclic, Box(None), print, types), SECRET)


def test_a_plain_agent_cannot_reach_the_privileged_view(secret_env):
    spec = RunSpec.make(env=secret_env, model="scripted:x", agent=PROBE, format="natural")
    ep = asyncio.run(run_episode(spec, 0, ScriptedLLM(["Action: wait"])))
    assert ep.steps == SecretRoom.max_steps and not ep.success
    assert Probe.found == [False] * SecretRoom.max_steps
    # nor does the secret leak into anything the run stores of its steps
    assert not reaches(ep.trajectory, SECRET)


def test_the_expert_reaches_it(secret_env, monkeypatch):
    found: list[bool] = []
    decide = ExpertAgent.decide

    async def walking(self: ExpertAgent, ctx: StepContext, llm: LLM | None) -> Decision:
        found.append(reaches((ctx, llm), SECRET))
        return await decide(self, ctx, llm)

    monkeypatch.setattr(ExpertAgent, "decide", walking)
    spec = RunSpec.make(env=secret_env, model="-", agent="expert", format="natural")
    ep = asyncio.run(run_episode(spec, 0, None))
    assert found == [True] and ep.success
    assert "reads-privileged" in AGENTS.tags("expert")
