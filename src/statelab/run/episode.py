"""One episode: the loop of DESIGN.md's 'One episode, as data'."""

from __future__ import annotations

import json
import time
from typing import Any

from statelab.agents import make_agent
from statelab.core import LLM, Call, Completion, GenParams, Message, Prompt
from statelab.envs import make_env
from statelab.run.config import RunSpec
from statelab.run.store import EpisodeRecord, StepRecord
from statelab.state import call_seed, compose_view, make_memory, observation_renderer
from statelab.state.grounding import make_grounding


class TimedLLM(LLM):
    """Counts wall time and calls spent in the model, to separate statelab's own overhead."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.constrained = inner.constrained
        self.vision = inner.vision
        self.max_concurrency = inner.max_concurrency
        self.seconds = 0.0

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        start = time.perf_counter()
        try:
            return await self.inner.complete(messages, params)
        finally:
            self.seconds += time.perf_counter() - start

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        start = time.perf_counter()
        try:
            return await self.inner.score(messages, continuations)
        finally:
            self.seconds += time.perf_counter() - start

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)


def _gold(info: dict[str, Any]) -> str | None:
    tracked = info.get("privileged", {}).get("tracked")
    return None if tracked is None else json.dumps(tracked, sort_keys=True, default=str)


def _call_row(c: Call) -> dict[str, Any]:
    return {
        "kind": c.kind,
        "messages": c.messages,
        "text": c.completion.text,
        "input_tokens": c.completion.usage.input_tokens,
        "output_tokens": c.completion.usage.output_tokens,
        "latency": c.completion.latency,
        "cached": c.completion.cached,
    }


async def run_episode(spec: RunSpec, seed: int, llm: LLM | None) -> EpisodeRecord:
    """Play one episode of ``spec`` with ``seed``; model errors propagate to the caller."""
    started = time.perf_counter()
    env = make_env(spec.env, max_steps=spec.max_steps)
    params = GenParams(**spec.params) if spec.params else GenParams()
    agent = make_agent(spec.agent, params)
    grounding = make_grounding(spec.grounding, params)
    env.want_image = grounding.needs_vision
    timed = TimedLLM(llm) if llm is not None else None
    render_obs = observation_renderer(spec.format)
    obs, info = env.reset(seed=seed)
    memory = make_memory(
        spec.history, render_obs, env.manual, seed, history_len=type(env).history_len, params=params
    )
    memory.reset(obs, info)
    agent.reset()
    expert = env.expert()
    ep = EpisodeRecord(run=spec.key, seed=seed, status="done")
    done = False
    while not done:
        t0 = time.perf_counter()
        model_before = timed.seconds if timed else 0.0
        view = compose_view(memory.render(), render_obs(obs))
        prompt = Prompt(
            manual=env.manual,
            view=view,
            actions=obs.admissible,
            goal=obs.goal,
            seed=call_seed(seed, env.steps, "act"),
            static_actions=type(env).static_actions,
        )
        grounded = await grounding.apply(prompt, obs, info, timed)
        decision = await agent.decide(
            grounded.prompt, timed, obs=obs, info=info, expert=expert, env=spec.env
        )
        decision.calls[:0] = grounded.calls  # a drawn map is the acting agent's own work
        obs, reward, terminated, truncated, info = env.step(decision.action)
        aux_calls = await memory.update(
            obs, decision.action, reward, info, timed, reply=decision.reply
        )
        done = terminated or truncated
        calls = decision.calls + aux_calls
        a_in = sum(c.completion.usage.input_tokens for c in decision.calls)
        a_out = sum(c.completion.usage.output_tokens for c in decision.calls)
        x_in = sum(c.completion.usage.input_tokens for c in aux_calls)
        x_out = sum(c.completion.usage.output_tokens for c in aux_calls)
        wall = time.perf_counter() - t0
        model_s = (timed.seconds - model_before) if timed else 0.0
        ep.trajectory.append(
            StepRecord(
                t=env.steps,
                view=view,
                grounding=grounded.record,
                reply=decision.reply,
                action=decision.action,
                parsed=decision.parsed,
                valid=bool(info.get("valid", True)),
                reward=float(reward),
                observation=obs.text,
                memory=memory.render(),
                agent_in=a_in,
                agent_out=a_out,
                aux_in=x_in,
                aux_out=x_out,
                latency=sum(c.completion.latency for c in decision.calls),
                overhead=max(0.0, wall - model_s),
                gold=_gold(info),
                calls=[_call_row(c) for c in calls],
                queries=decision.queries,
            )
        )
        ep.reward += float(reward)
        ep.agent_calls += len(decision.calls)
        ep.agent_in += a_in
        ep.agent_out += a_out
        ep.aux_in += x_in
        ep.aux_out += x_out
        ep.model_calls += sum(not c.completion.cached for c in calls)
        ep.cached_calls += sum(c.completion.cached for c in calls)
    ep.score = float(info["score"])
    ep.success = bool(info["success"])
    ep.steps = env.steps
    ep.wall_s = time.perf_counter() - started
    return ep
