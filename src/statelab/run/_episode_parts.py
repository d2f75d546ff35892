"""The pieces of one episode's step that are not its stages (:mod:`statelab.run.episode`):
what a step accumulates between its stages, the limits on actions and queries, and how a
step's calls become its record's rows and the episode's counts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from statelab.core import ACTING, LLM, Call, Decision, Prompt, WorldHandle, tracked_of
from statelab.llm import Role, TimedLLM, resolve_role
from statelab.run.records import EpisodeRecord, StepRecord
from statelab.run.spec import RunSpec
from statelab.state.grounding import Grounded

#: proposals a component may reject in one step before the last one goes to the env
MAX_REJECTIONS = 3
#: world-model questions an agent may ask in one step
MAX_QUERIES = 10
#: the longest action sent to an env, in characters: an env may echo what it was sent (Hanoi
#: says "You tried to <action>"), and an unparsed reply is the action, so without this cap
#: each echo could carry a whole reply (up to the model's ``max_reply``) into every later
#: prompt of a full history; no env's action comes near it
MAX_ACTION = 2048


def capped_action(d: Decision) -> Decision:
    """``d`` with its action cut to :data:`MAX_ACTION` characters (``meta["action-cut"]``:
    the length it had); ``d`` itself when it is short enough."""
    if len(d.action) <= MAX_ACTION:
        return d
    meta = {**d.meta, "action-cut": len(d.action)}
    return replace(d, action=d.action[:MAX_ACTION], meta=meta)


def call_row(c: Call) -> dict[str, Any]:
    return {
        "kind": c.kind,
        "messages": c.messages,
        "text": c.completion.text,
        "input_tokens": c.completion.usage.input_tokens,
        "output_tokens": c.completion.usage.output_tokens,
        "latency": c.completion.latency,  # 0 for a reply from the cache: no model time
        "cached": c.completion.cached,
        # a cached reply's first call's latency (None for a reply the model gave now)
        "original_latency": c.completion.original_latency,
        # how a reply was held to the admissible actions (trie, a server's form, logprob,
        # unenforced), or free generation
        "decoding": c.completion.decoding or "free",
        "cost": c.completion.cost,
        # what the model wrapper changed on the way in (reply-cut, redacted ...), if anything
        **({"flags": list(c.completion.flags)} if c.completion.flags else {}),
    }


def add_cost(ep: EpisodeRecord, calls: list[Call]) -> None:
    """Add what ``calls`` cost to the episode: the calls not served from the cache whose price
    is known (the episode's cost stays ``None`` while none is)."""
    priced = [c.completion for c in calls if c.completion.cost is not None]
    if priced:  # a priced call served from the cache costs nothing this time
        ep.cost = (ep.cost or 0.0) + sum(float(c.cost or 0.0) for c in priced if not c.cached)


def tokens(calls: Sequence[Call]) -> tuple[int, int]:
    return (
        sum(c.completion.usage.input_tokens for c in calls),
        sum(c.completion.usage.output_tokens for c in calls),
    )


@dataclass
class Step:
    """What one step accumulates between its stages."""

    view: str
    prompt: Prompt
    grounded: Grounded | None = None
    decision: Decision | None = None
    calls: list[Call] = field(default_factory=list)
    rejected: list[dict[str, str]] = field(default_factory=list)
    world: WorldHandle = field(default_factory=WorldHandle)
    #: replies answered by a component instead of the env (queries), with their answers
    exchanges: list[str] = field(default_factory=list)
    #: why the episode ends after this step (seed 004's derail rule), if it does
    stopped: str = ""
    #: how the episode ended, on its last step (:func:`~statelab.run._derail.ended`)
    ended: str = ""


def _gold(info: dict[str, Any]) -> str | None:
    tracked = tracked_of(info)
    return None if tracked is None else json.dumps(tracked, sort_keys=True, default=str)


def episode_roles(
    spec: RunSpec, llm: TimedLLM | None, writer: LLM | None, key: str
) -> dict[Role, LLM]:
    """The model serving each role (:class:`statelab.llm.Role`) of an episode: acting
    (``llm``) and writer, and the compressor and scorer the run's axes name (another role's
    model or a spec: the run's model for it, timed into the episode's model clock)."""
    if llm is None:
        return {}
    named: dict[str, LLM | None] = {ACTING: llm, "writer": writer}
    roles: dict[Role, LLM] = {Role.ACTING: llm}
    if writer is not None:
        roles[Role.WRITER] = writer
    for role in (Role.COMPRESSOR, Role.SCORER):
        got = resolve_role(getattr(spec, role.value), role, named)
        if got is not None and not any(got is m for m in named.values()):
            got = llm.sharing(got.for_episode(key))
        if got is not None:
            roles[role] = got
    return roles


def step_record(
    step: Step,
    *,
    t: int,
    info: dict[str, Any],
    observation: str,
    memory: str,
    reward: float,
    aux: list[Call],
    wall: float,
    model_s: float,
) -> StepRecord:
    """The stored row of a finished step (its decision, the env's answer, the memory after
    it, its calls: the agent's, then ``aux``, the memory writer's)."""
    d = step.decision
    assert d is not None and step.grounded is not None
    a_in, a_out = tokens(step.calls)
    x_in, x_out = tokens(aux)
    meta = dict(d.meta)
    if step.rejected:
        meta["rejected"] = step.rejected
    if step.stopped:
        meta["stopped"] = step.stopped
    if step.ended:
        meta["ended"] = step.ended
    return StepRecord(
        t=t,
        view=step.view,
        grounding=step.grounded.record,
        reply=d.reply,
        action=d.action,
        parsed=d.parsed,
        valid=bool(info.get("valid", True)),
        reward=reward,
        observation=observation,
        memory=memory,
        agent_in=a_in,
        agent_out=a_out,
        aux_in=x_in,
        aux_out=x_out,
        latency=sum(c.completion.latency for c in step.calls),
        overhead=max(0.0, wall - model_s),
        gold=_gold(info),
        calls=[call_row(c) for c in step.calls + aux],
        queries=list(step.world.asked),
        meta=meta,
        agent_calls=len(step.calls),
    )


def tally(ep: EpisodeRecord, agent: Sequence[Call], aux: Sequence[Call] = ()) -> None:
    """Add a step's calls (the agent's, then the others') to the episode's counts and cost."""
    a_in, a_out = tokens(agent)
    x_in, x_out = tokens(list(aux))
    calls = [*agent, *aux]
    ep.agent_calls += len(agent)
    ep.agent_in += a_in
    ep.agent_out += a_out
    ep.aux_in += x_in
    ep.aux_out += x_out
    ep.model_calls += sum(not c.completion.cached for c in calls)
    ep.cached_calls += sum(c.completion.cached for c in calls)
    add_cost(ep, calls)


__all__ = [
    "MAX_ACTION",
    "MAX_QUERIES",
    "MAX_REJECTIONS",
    "add_cost",
    "capped_action",
    "episode_roles",
    "step_record",
    "tally",
]
