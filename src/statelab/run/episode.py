"""One episode as its stages (DESIGN.md, 'One episode, as data'):

    compose -> ground -> decide -> validate -> step -> update -> record

Components are built once per episode from the run's spelling on each axis; the loop talks
to them through one protocol (``reset``, ``answer``, ``validate``, ``after_step``) and typed,
read-only contexts. Only components tagged ``reads-privileged`` see the privileged view.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from statelab.core import (
    FORMAT_ERROR,
    LLM,
    Call,
    Component,
    Observation,
    PrivilegedView,
    Prompt,
    StepContext,
    Transition,
    WorldHandle,
    frozen_view,
)
from statelab.envs import env_class
from statelab.llm import TimedLLM, serving
from statelab.run._derail import Derail, ended
from statelab.run._envcall import EnvCallError, blamed, call_timeout, env_call
from statelab.run._episode_parts import (
    MAX_QUERIES,
    MAX_REJECTIONS,
    Step,
    call_row,
    capped_action,
    episode_roles,
    step_record,
    tally,
    tokens,
)
from statelab.run._live import STEP_HOOK
from statelab.run.components import Components, prelude_transitions, reads_privileged
from statelab.run.limits import first_limit
from statelab.run.records import DONE, FAILED, TRUNCATED, EpisodeRecord, StepRecord
from statelab.run.seeding import SCHEME, EpisodeSeeds, single
from statelab.run.spec import RunSpec
from statelab.state import call_seed, compose_view


class Episode:
    """One episode of ``spec`` with ``seed``; :meth:`play` runs the stages until done.

    ``seeds`` are the episode's env and sampling seeds, as the experiment's
    :class:`~statelab.run.seeding.Seeding` assigns them (default: those of a run of ``seed``
    alone: rollout 0 plays the seed itself, a further one an instance of its own, or with
    the spec's ``replay`` the seed's own with sampling seeds of its own);
    ``writer`` is the model that writes the memory (default: the acting model). ``texts``
    (:meth:`statelab.run.store.Store.text_sink`) stores each step's texts as the step is
    recorded, leaving their keys in the record, and a store's sink also stages the steps
    that are final (the record's :class:`~statelab.run.records.Trajectory`): memory flat in
    the episode's length."""

    def __init__(
        self,
        spec: RunSpec,
        seed: int,
        llm: LLM | None,
        *,
        writer: LLM | None = None,
        rollout: int = 0,
        seeds: EpisodeSeeds | None = None,
        texts: Callable[[StepRecord], None] | None = None,
    ) -> None:
        self.spec, self.seed, self.rollout = spec, seed, rollout
        self.texts = texts
        seeds = seeds or single(spec.env, seed, rollout, spec.replay)
        self.env_seed, sampling = seeds.env_seed, seeds.sampling_seed
        self.c = Components.build(spec, sampling)
        key = f"{spec.key}/{seed}/{rollout}"
        self.llm = TimedLLM(llm.for_episode(key)) if llm is not None else None
        self.writer = (
            self.llm if writer is None or writer is llm else TimedLLM(writer.for_episode(key))
        )
        self.roles = episode_roles(spec, self.llm, self.writer, key)
        self.expert = self.c.env.expert()
        self.record = EpisodeRecord(
            run=spec.key, seed=seed, rollout=rollout, env_seed=self.env_seed,
            sampling_seed=sampling, seeding=SCHEME, status=DONE,
        )  # fmt: skip
        staged = getattr(texts, "trajectory", None)
        if callable(staged):  # a store's sink: the final steps wait in its temp tables
            self.record.trajectory = staged()
        self.obs: Observation
        self.info: dict[str, Any] = {}
        self.state: Any = None
        self.history = ""
        self._call_base = sampling
        #: seed 004's derail rule (the world model's limit), the prelude's writer calls not
        #: yet recorded (they go with the first step), and when the episode began
        self.derail = Derail(self.c.world.derail_limit)
        self.pending: list[Call] = []
        self.started = time.perf_counter()

    # -- views -----------------------------------------------------------------------------
    def privileged_for(self, component: Any) -> PrivilegedView | None:
        if not reads_privileged(component):
            return None
        return PrivilegedView(frozen_view(self.info), self.expert)

    def context(self, component: Any, step: Step) -> StepContext:
        return StepContext(
            observation=self.obs,
            prompt=step.prompt,
            step=self.c.env.steps,
            seed=self.seed,
            env=self.spec.env,
            last_valid=bool(self.info.get("valid", True)),
            rejected=tuple(r["feedback"] for r in step.rejected),
            world=step.world,
            privileged=self.privileged_for(component),
            sampling=self._call_base,
            task_family=type(self.c.env).task_family,
            task=self.c.env.current_task(),
        )

    def _sampling_seed(self, kind: str) -> int:
        return call_seed(self._call_base, self.c.env.steps, kind)

    # -- the stages ------------------------------------------------------------------------
    def compose(self) -> Step:
        """phi(o_t, h_{t-1}) and the prompt [manual ; phi ; actions]."""
        goal = self.obs.goal
        if goal.strip().rstrip(".") in self.c.env.manual:  # the manual says it already
            goal = ""
        view = compose_view(self.history, self.c.render_obs(self.obs), goal)
        hooked = self.c.hooked()
        notes = [n for c in hooked if (n := c.instructions())]
        actions = self.obs.admissible
        extras = [a for c in hooked for a in c.extra_actions()]
        if extras and actions is not None:
            actions = (*actions, *(a for a in extras if a not in actions))
        prompt = Prompt(
            manual="\n\n".join([self.c.env.manual, *notes]),
            view=view,
            actions=actions,
            goal=self.obs.goal,
            seed=self._sampling_seed("act"),
            static_actions=type(self.c.env).static_actions,
        )
        step = Step(view, prompt)
        answerers = [c for c in self.c.hooked() if type(c).answer is not Component.answer]
        step.world = WorldHandle([(c, self.context(c, step)) for c in answerers], MAX_QUERIES)
        return step

    async def ground(self, step: Step) -> None:
        g = await self.c.grounding.apply(self.context(self.c.grounding, step), self.llm)
        step.grounded, step.prompt = g, g.prompt
        step.calls += g.calls  # a drawn map is the acting agent's own work

    async def decide(self, step: Step) -> None:
        d = await self.c.agent.decide(self.context(self.c.agent, step), self.llm)
        step.decision = d = capped_action(d)
        step.calls += d.calls

    async def env(self, what: str, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        """``fn(*args, **kw)``, an env call, off the event loop with the env's deadline (the
        validate stage runs components' code too: only its deadline and oracle blame the env)."""
        call = functools.partial(fn, *args, **kw)
        deadline = call_timeout(self.c.env, what)
        return await env_call(what, call, deadline, blame=what != "validate", env=self.c.env)

    def validate(self, step: Step) -> str | None:
        """The first rejection of the proposed action by any component, else None."""
        assert step.decision is not None
        env = self.c.env
        oracle = blamed(env.would_accept) if env.has_oracle() else None
        for comp in self.c.hooked():
            ctx = replace(self.context(comp, step), oracle=oracle)
            feedback = comp.validate(step.decision.action, ctx)
            if feedback:
                return feedback
        return None

    def intercept(self, step: Step) -> str | None:
        """The first component's answer to the proposed action in place of the env."""
        assert step.decision is not None
        for comp in self.c.hooked():
            answer = comp.intercept(step.decision.action, self.context(comp, step))
            if answer is not None:
                return answer
        return None

    async def decide_valid(self, step: Step) -> None:
        """*decide*, then *validate*: a rejected proposal is decided again with the
        feedback shown as the action's observation (no env step), at most the world model's
        ``max_rejections`` (else :data:`MAX_REJECTIONS`) times in a row. An action a component
        answers itself (a world-model query) costs no env step: it is stored with its answer
        in the step's queries, the answer is shown as the next observation, and the agent
        decides again; after the world model's ``derail_limit`` (else :data:`MAX_QUERIES`)
        such actions in a row the last one goes on (to the env, which refuses it) and, with
        a derail limit, the episode ends after this step."""
        await self.decide(step)
        rejections = queries = 0
        derail = self.c.world.derail_limit
        while True:
            assert step.decision is not None
            d = step.decision
            if not d.action.strip():  # no action at all: a format error, neither a query nor
                break  # a proposal a world model could check; the env step records it
            answer = self.intercept(step)
            if answer is not None:
                queries += 1
                step.world.asked.append({"query": d.action, "answer": answer})
                step.exchanges.append(f"{d.reply}\nObservation: {answer}")
                if queries >= (derail or MAX_QUERIES):
                    if derail:
                        step.stopped = f"{derail} consecutive world-model queries"
                    break
                note = f"You took action: {d.action}\nObservation: {answer}"
                step.prompt = replace(step.prompt, view=f"{step.prompt.view}\n\n{note}")
                await self.decide(step)
                continue
            if rejections >= (self.c.world.max_rejections or MAX_REJECTIONS):
                break
            # with the env's action oracle, validating is an env call (off the event loop)
            has_oracle = getattr(self.c.env, "would_accept", None) is not None
            feedback = (
                await self.env("validate", self.validate, step)
                if has_oracle
                else (self.validate(step))
            )
            if feedback is None:
                break
            rejections += 1
            step.rejected.append({"action": d.action, "feedback": feedback})
            # the rejection is the world model's observation of the action: no env step
            step.exchanges.append(f"{d.reply}\nObservation: {feedback}")
            note = f"You took action: {d.action}\nObservation: {feedback}"
            step.prompt = replace(step.prompt, view=f"{step.prompt.view}\n\n{note}")
            await self.decide(step)
        if step.exchanges and not step.stopped:
            assert step.decision is not None
            said = "\n".join([*step.exchanges, step.decision.reply])
            step.decision = replace(step.decision, reply=said)

    async def step_env(self, action: str) -> tuple[float, bool, bool]:
        got = await self.env("step", self.c.env.step, action)
        self.obs, reward, terminated, truncated, self.info = got
        return float(reward), terminated, truncated

    async def update(
        self, step: Step, reward: float, terminated: bool, truncated: bool
    ) -> list[Call]:
        """The memory writer writes the new state; every component sees the transition."""
        assert step.decision is not None
        tr = Transition(
            t=self.c.env.steps,
            action=step.decision.action,
            reply=step.decision.reply,
            reward=reward,
            observation=self.obs,
            terminated=terminated,
            truncated=truncated,
            valid=bool(self.info.get("valid", True)),
        )
        mem = self.c.memory
        self.state, calls = await mem.write(
            self.state, replace(tr, privileged=self.privileged_for(mem)), self.writer
        )
        self.history = mem.render(self.state)  # rendered once: this record, the next prompt
        for comp in self.c.hooked():
            comp.after_step(replace(tr, privileged=self.privileged_for(comp)))
        return calls

    def record_step(
        self, step: Step, reward: float, aux: list[Call], wall: float, model_s: float
    ) -> None:
        """Append the finished step to the episode's record and count its calls."""
        ep = self.record
        ep.trajectory.append(
            step_record(
                step, t=self.c.env.steps, info=self.info, observation=self.obs.text,
                memory=self.history, reward=reward, aux=aux, wall=wall, model_s=model_s,
            )
        )  # fmt: skip
        ep.trajectory[-1].env_state = self.c.env.fingerprint()
        ep.reward += reward
        tally(ep, step.calls, aux)

    def stopped(self, step: Step) -> bool:
        """Whether the agent ended the episode (``meta["stop"]``: e.g. seed 002's anchor stops
        after repeated outputs or at a model-call limit). The output is not sent to the env;
        the reason and the step's calls join the last recorded step, and the episode ends
        ``done`` (reason ``stopped``: the agent's protocol, not a cut). A stop before any
        step is ignored (there is nothing to end)."""
        d = step.decision
        ep = self.record
        if d is None or not d.meta.get("stop") or not ep.trajectory:
            return False
        last = ep.trajectory[-1]
        last.meta["stop"] = d.meta["stop"]
        ep.reason = "stopped"
        last.calls += [call_row(c) for c in step.calls]
        a_in, a_out = tokens(step.calls)
        last.agent_in += a_in
        last.agent_out += a_out
        last.agent_calls += len(step.calls)
        tally(ep, step.calls)
        return True

    def _model_seconds(self) -> float:
        models = {id(m): m for m in (self.llm, self.writer) if m is not None}
        return sum(m.seconds for m in models.values())

    async def write_prelude(self) -> list[Call]:
        """The memory writes the env's scripted steps before the first decision (seed 003's
        Phase A, ``info["prelude"]``); their calls are recorded with the first step."""
        mem, calls = self.c.memory, []
        for tr in prelude_transitions(self.info):
            tr = replace(tr, privileged=self.privileged_for(mem))
            self.state, got = await mem.write(self.state, tr, self.writer)
            calls += got
        return calls

    # -- the loop --------------------------------------------------------------------------
    async def play(self) -> EpisodeRecord:
        """Play the episode, each role's model serving its role (:func:`statelab.llm.serving`)."""
        with serving(self.roles):
            return await self._play()

    async def _play(self) -> EpisodeRecord:
        await self.begin()
        while not await self.play_step():
            pass
        return self.finish()

    async def begin(self) -> None:
        """Reset the env, reset every component, and write the prelude into the memory."""
        self.started = time.perf_counter()
        self.obs, self.info = await self.env("reset", self.c.env.reset, seed=self.env_seed)
        self.record.start_state = self.c.env.fingerprint()
        first = self.compose()
        for comp in self.c.hooked():
            comp.reset(self.context(comp, first))
        self.state = self.c.memory.init(self.obs, self.privileged_for(self.c.memory))
        self.pending = await self.write_prelude()
        self.history = self.c.memory.render(self.state)

    async def play_step(self) -> bool:
        """One step through every stage (compose, ground, decide and validate, step the env,
        update, record), the derail rule, the live-progress hook and the per-episode limits;
        whether the episode ends with it (an agent's stop records no step). An episode that
        ends says why in its record's ``reason``: the env ended it (``terminated``), the rule
        or a component stopped it (``stopped``), its step budget did (``max_steps``), or a
        per-episode limit cut it (status ``truncated``, the limit's name)."""
        t0 = time.perf_counter()
        model_before = self._model_seconds()
        step = self.compose()
        await self.ground(step)
        await self.decide_valid(step)
        assert step.decision is not None
        if self.stopped(step):
            return True
        reward, terminated, truncated = await self.step_env(step.decision.action)
        aux = await self.update(step, reward, terminated, truncated)
        action = step.decision.action
        kind = self.c.env.outcome(self.info) if action.strip() else FORMAT_ERROR
        step.stopped = step.stopped or self.derail.see(kind)
        aux, self.pending = self.pending + aux, []  # the prelude's writes go with the first step
        done = terminated or truncated or bool(step.stopped)
        if done and self.derail.limit:  # seed 004's runs say how each episode ended
            step.ended = ended(step.stopped, self.info, terminated)
        model_s = self._model_seconds() - model_before
        self.record_step(step, reward, aux, time.perf_counter() - t0, model_s)
        if self.texts is not None:  # the step's texts into the store now, their keys kept
            await asyncio.to_thread(self.texts, self.record.trajectory[-1])
        hook = STEP_HOOK.get()
        if hook is not None:  # live progress: the step this episode is at, its tokens so far
            hook(len(self.record.trajectory), self.record)
        if done:
            why = "stopped" if step.stopped and not terminated else ""
            self.record.reason = "terminated" if terminated else why or "max_steps"
            return True
        hit = first_limit(self.spec.limits, self.record, time.perf_counter() - self.started)
        if hit is not None:  # cut: scored as it stands; which limit, also on the last step
            self.record.status, self.record.reason = TRUNCATED, hit[0]
            self.record.trajectory[-1].meta["stopped"] = hit[1]
        return hit is not None

    def finish(self) -> EpisodeRecord:
        """The episode's record, with its outcome, steps, time and components."""
        ep = self.record
        ep.score = float(self.info["score"])
        ep.success = bool(self.info["success"])
        ep.steps = self.c.env.steps
        ep.wall_s = time.perf_counter() - self.started
        ep.components = self.c.describe()
        return ep

    def failed(self) -> EpisodeRecord:
        """The record of an episode an error ended: status ``failed``, unscored, with the
        steps it played before the error (the step in progress is lost), their counts, its
        time and components; the caller gives the error."""
        ep = self.record
        ep.status, ep.score, ep.success = FAILED, 0.0, False
        ep.steps = len(ep.trajectory)
        ep.wall_s = time.perf_counter() - self.started
        with contextlib.suppress(Exception):  # what failed may be the components themselves
            ep.components = self.c.describe()
        return ep


async def attempt_episode(
    spec: RunSpec,
    seed: int,
    llm: LLM | None,
    *,
    writer: LLM | None = None,
    rollout: int = 0,
    seeds: EpisodeSeeds | None = None,
    texts: Callable[[StepRecord], None] | None = None,
) -> tuple[EpisodeRecord, Exception | None]:
    """Play one episode of ``spec`` with ``seed``: its record and None; or, when an error
    ends it, its :meth:`Episode.failed` record (the steps played before the error kept; none
    when the episode could not be built) and the error. Every env call, the env's
    construction included, runs off the event loop with a deadline; an env's error is an
    :class:`EnvCallError`. ``texts`` stores each step's texts as it is made
    (:class:`Episode`)."""
    build = functools.partial(
        Episode, spec, seed, llm, writer=writer, rollout=rollout, seeds=seeds, texts=texts
    )
    # building the env (a game generated, a simulator started) is an env call too: off the
    # event loop, with the env class's deadline; only the deadline blames the env
    cls = env_class(spec.env)
    deadline = call_timeout(cls, "build")
    try:
        episode = await env_call("construction", build, deadline, blame=False, env=cls)
    except Exception as e:
        return EpisodeRecord(run=spec.key, seed=seed, rollout=rollout, status=FAILED), e
    try:
        return await episode.play(), None
    except Exception as e:  # the steps played so far are the failure's record
        return episode.failed(), e
    finally:
        with contextlib.suppress(EnvCallError):  # the env gives back what it holds (a JVM)
            await episode.env("close", episode.c.env.close)


async def run_episode(
    spec: RunSpec,
    seed: int,
    llm: LLM | None,
    *,
    writer: LLM | None = None,
    rollout: int = 0,
    seeds: EpisodeSeeds | None = None,
) -> EpisodeRecord:
    """Play one episode of ``spec`` with ``seed`` (rollout ``rollout``, with ``seeds`` as
    :class:`Episode` takes them; :func:`attempt_episode`); model errors propagate to the
    caller, and so do env errors, as :class:`EnvCallError`."""
    ep, error = await attempt_episode(
        spec, seed, llm, writer=writer, rollout=rollout, seeds=seeds
    )
    if error is not None:
        raise error
    return ep
