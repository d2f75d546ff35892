"""``oracle-readtime:B``: seed 003's read-time oracle, the hindsight reference of the decision
loss decomposition (section 3, Appendix C).

Before every decision it compresses the *full* history (every raw step so far, the env's
scripted prelude included) in one shot into a state of at most B tokens, drawing
:data:`SAMPLES` = 8 compressions from the model, and keeps the one under which the reader's
negative log-likelihood of the optimal command a* (``privileged["a_star"]``) is lowest. The
compressor sees the history, the current observation and the commands the reader must choose
among, never a* itself: the hindsight is in the selection (the seed's "best of eight by reader
NLL"), so the oracle cannot simply write the answer into the state.

The reader NLL is computed exactly as the ``reader`` agent decides: the same prompt
(manual; goal, the state rendered as a bounded writer's state, the current observation; the
labelled commands) and every option scored, log-softmax normalised over the options
(:func:`reader_prompt` mirrors ``statelab.agents.reader.reader_messages``; a test holds them
equal).

*Roles* (:class:`statelab.llm.Role`): the compressions are written by the episode's
``COMPRESSOR`` model (the ``compressor`` axis: the memory's writer by default) and scored by
its ``SCORER`` (the ``scorer`` axis: the acting model, i.e. the reader, by default): the
seed's wiring, where the untrained base model compresses and the frozen reader picks by its
own NLL. Outside an episode (a replay, a training roll-forward) both are the model passed.

It reads privileged data (a*), so it is tagged ``reads-privileged`` and, like
``oracle-bounded``, is a reference row: never shown to a writer and never used to train one.

Choices where the seed is silent (docs/seed003.md, Diagnostics):

- compressions are drawn only where a decision follows: after every agent step that does not
  end the episode, and after the *last* prelude step (the prelude's length is in the
  privileged view); other steps are only appended to the raw history (no decision reads
  them);
- ``oracle-readtime:B:n`` draws n samples instead of 8 (only to make CPU runs affordable;
  the seed's reference is n = 8);
- samples use temperature 1.0, top-p 0.95, seed ``call_seed(seed, t, "readtime-<i>")``;
- a sample over B tokens is cut to its longest word prefix within B (as the writers are);
- ties in NLL go to the earliest sample; where a* is unknown (an env without ``a_star``) or
  not among the listed commands, the first sample is kept and ``nll`` is ``None``;
- the compressor is shown the newest steps that fit its context (the model's
  ``context_tokens``, less the rest of the prompt, the reply's room and a margin for the
  chat template: :meth:`ReadTimeOracle.history_room`); a model that does not say its
  context is shown at most :data:`CONTEXT_TOKENS` (the goal is always in the prompt).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from statelab.core import (
    LLM,
    Args,
    BuildContext,
    Call,
    CompleteRequest,
    ConfigError,
    GenParams,
    Memory,
    Message,
    Observation,
    Param,
    Params,
    PrivilegedView,
    ScoreRequest,
    Transition,
    a_star_of,
    count,
    prelude_of,
)
from statelab.state.bounded import BUDGET, fit
from statelab.state.history import HISTORIES, RenderObs, call_seed, step_text
from statelab.state.view import compose_view

#: hindsight compressions drawn per decision (the seed's eight)
SAMPLES = 8
#: tokens of raw history shown to a compressor that does not say its context length
CONTEXT_TOKENS = 6000
#: tokens kept free for the chat template's own tokens around the messages
TEMPLATE_MARGIN = 64
#: the reader's instruction (the same words as ``statelab.agents.reader.INSTRUCTION``)
READER_INSTRUCTION = "Reply with the number and the text of the best next command."

COMPRESSOR_SYSTEM = (
    "You compress an agent's whole history into a short written state. The agent will see "
    "only your state and its current observation when it chooses its next command."
)


def labelled(actions: tuple[str, ...]) -> list[str]:
    """``"1. go north"``, ... (the reader's options, as listed and as scored)."""
    return [f"{i}. {a}" for i, a in enumerate(actions, start=1)]


def reader_prompt(manual: str, goal: str, view: str, actions: tuple[str, ...]) -> list[Message]:
    """The reader's messages for ``view`` (the ``reader`` agent's prompt, word for word)."""
    listed = "\n".join(labelled(actions))
    user = f"Goal: {goal}\n\n{view}\n\nCommands:\n{listed}\n\n{READER_INSTRUCTION}"
    return [{"role": "system", "content": manual}, {"role": "user", "content": user}]


def log_softmax(scores: list[float]) -> list[float]:
    """Normalised log-probabilities of ``scores`` (log-likelihoods of the choices)."""
    top = max(scores)
    log_z = top + math.log(sum(math.exp(s - top) for s in scores))
    return [s - log_z for s in scores]


async def reader_nll(
    model: LLM, messages: list[Message], actions: tuple[str, ...], a_star: str
) -> float | None:
    """The reader's NLL (nats) of ``a_star`` among ``actions`` given ``messages``; ``None``
    when a* is not listed."""
    if a_star not in actions:
        return None
    logprobs = log_softmax(list(await model.score(messages, labelled(actions))))
    return -logprobs[actions.index(a_star)]


def state_header(budget: int, text: str) -> str:
    """How a bounded state is shown to the reader (as ``bounded:<form>:B`` renders it)."""
    return f"Your state (at most {budget} tokens):\n{text}" if text else ""


@dataclass(frozen=True)
class ReadTimeState:
    """The state of ``oracle-readtime``: the full history and the compression chosen."""

    goal: str
    #: every raw step so far (the full history), oldest first
    steps: tuple[str, ...] = ()
    #: the chosen compression, and the reader's NLL of a* under it (None: a* unknown)
    text: str = ""
    nll: float | None = None
    #: the NLLs of all the samples of the last compression, in sampling order
    nlls: tuple[float | None, ...] = ()
    #: prelude steps written so far, and writes so far
    prelude: int = 0
    t: int = 0


class ReadTimeOracle(Memory[ReadTimeState]):
    """Best of 8 hindsight compressions of the full history by reader NLL of a*."""

    name = "oracle-readtime"
    tags = frozenset({"reads-privileged", "needs-model"})

    def __init__(
        self,
        render_obs: RenderObs,
        budget: int,
        manual: str = "",
        seed: int = 0,
        samples: int = SAMPLES,
    ) -> None:
        self.render_obs = render_obs
        self.budget = budget
        self.manual = manual
        self.seed = seed
        self.samples = samples
        self.params = GenParams(temperature=1.0, top_p=0.95, max_tokens=budget + 32)

    def init(self, obs: Observation, privileged: PrivilegedView | None) -> ReadTimeState:
        return ReadTimeState(goal=obs.goal)

    # -- the pieces a diagnostic reuses ---------------------------------------------------
    def view_goal(self, goal: str) -> str:
        """The goal line of the view ('' when the manual says it already, as the loop does)."""
        return "" if goal.strip().rstrip(".") in self.manual else goal

    def messages_for(self, state_text: str, obs: Observation) -> list[Message]:
        """The reader's prompt with ``state_text`` as its state."""
        view = compose_view(
            state_header(self.budget, state_text), self.render_obs(obs), self.view_goal(obs.goal)
        )
        return reader_prompt(self.manual, obs.goal, view, obs.admissible or ())

    def _compressor_prompt(self, goal: str, history: str, obs: Observation) -> list[Message]:
        commands = "\n".join(labelled(obs.admissible or ())) or "(free text)"
        user = (
            f"Goal: {goal}\n\nThe whole history so far:\n{history}\n\n"
            f"Current observation:\n{self.render_obs(obs)}\n\n"
            f"The agent must now choose one of these commands:\n{commands}\n\n"
            f"Write the state that lets the agent choose best, in at most {self.budget} "
            "tokens: keep what this decision and the rest of the task need. "
            "Reply with the state only."
        )
        return [{"role": "system", "content": COMPRESSOR_SYSTEM}, {"role": "user", "content": user}]

    def history_room(self, goal: str, obs: Observation, model: Any) -> int:
        """Tokens of raw history the compressor ``model`` is shown at most: its context
        (``context_tokens``) less the prompt around the history, the reply's
        ``max_tokens`` and :data:`TEMPLATE_MARGIN`; :data:`CONTEXT_TOKENS` for a model that
        does not say its context."""
        ctx = getattr(model, "context_tokens", None)
        if not isinstance(ctx, int):
            return CONTEXT_TOKENS
        rest = sum(model.count_tokens(m["content"]) for m in self._compressor_prompt(goal, "", obs))
        return max(0, ctx - rest - self.params.max_tokens - TEMPLATE_MARGIN)

    def compressor_messages(
        self, goal: str, steps: tuple[str, ...], obs: Observation, model: Any
    ) -> list[Message]:
        """The compressor's prompt: the newest steps that fit the model's room, the current
        observation and the commands (never a*)."""
        room = self.history_room(goal, obs, model)
        kept: list[str] = []
        used = 0
        for s in reversed(steps):
            n = model.count_tokens(s)
            if used + n > room and kept:
                break
            kept.append(s)
            used += n
        cut = len(steps) - len(kept)
        history = "\n".join(reversed(kept))
        if cut:
            history = f"({cut} earlier steps not shown)\n{history}"
        return self._compressor_prompt(goal, history, obs)

    async def best(
        self,
        goal: str,
        steps: tuple[str, ...],
        obs: Observation,
        a_star: str | None,
        model: LLM,
        t: int,
        *,
        compressor: LLM | None = None,
    ) -> tuple[str, float | None, tuple[float | None, ...], list[Call]]:
        """The best of :attr:`samples` compressions by ``model``'s NLL of a* (the scorer: the
        reader), written by ``compressor`` (default: ``model``): (text, its NLL, every
        sample's NLL, the compressor calls). Each sample is cut to B by the compressor's
        tokenizer, as a writer's state is by its writer's."""
        writer = compressor if compressor is not None else model
        msgs = self.compressor_messages(goal, steps, obs, writer)
        texts: list[str] = []
        calls: list[Call] = []
        # the samples in one batch, the scorings in another: the same requests as one by one
        seeds = [call_seed(self.seed, t, f"readtime-{i}") for i in range(self.samples)]
        reqs = [CompleteRequest(msgs, replace(self.params, seed=s)) for s in seeds]
        for completion in await writer.complete_many(reqs):
            text, _ = fit(completion.text.strip(), self.budget, writer.count_tokens)
            texts.append(text)
            calls.append(Call("readtime-write", msgs, completion))
        nlls: list[float | None] = [None] * len(texts)
        actions = obs.admissible or ()
        if a_star is not None and a_star in actions:
            asked = [ScoreRequest(self.messages_for(x, obs), labelled(actions)) for x in texts]
            for i, scores in enumerate(await model.score_many(asked)):
                nlls[i] = -log_softmax(list(scores))[actions.index(a_star)]
        scored = [(v, i) for i, v in enumerate(nlls) if v is not None]
        pick = min(scored)[1] if scored else 0
        return texts[pick], nlls[pick], tuple(nlls), calls

    # -- the memory contract --------------------------------------------------------------
    async def write(
        self, state: ReadTimeState, transition: Transition, model: LLM | None
    ) -> tuple[ReadTimeState, list[Call]]:
        tr, priv = transition, transition.privileged
        if priv is None:
            raise ConfigError(f"history {self.spelling!r} needs the privileged view (a*)")
        if model is None:
            raise ConfigError(f"history {self.spelling!r} needs a model (compressor and reader)")
        t = state.t + 1
        step = step_text(t, tr.action, tr.reward, self.render_obs(tr.observation), tr.reply)
        steps = (*state.steps, step)
        prelude = state.prelude + (tr.t == 0)
        grown = replace(state, steps=steps, prelude=prelude, t=t)
        if tr.terminated or tr.truncated:
            return grown, []  # the episode is over: no decision reads this state
        if tr.t == 0 and prelude < len(prelude_of(priv.info)):
            return grown, []  # more scripted steps follow before any decision
        from statelab.llm import Role, role_model

        compressor = role_model(Role.COMPRESSOR, model)
        scorer = role_model(Role.SCORER, model)
        assert compressor is not None and scorer is not None
        text, nll, nlls, calls = await self.best(
            state.goal, steps, tr.observation, a_star_of(priv.info), scorer, t,
            compressor=compressor,
        )  # fmt: skip
        return replace(grown, text=text, nll=nll, nlls=nlls), calls

    def render(self, state: ReadTimeState) -> str:
        return state_header(self.budget, state.text)


@HISTORIES.register(
    "oracle-readtime",
    "oracle-readtime:<B>[:<samples>]",
    tags=("reads-privileged", "needs-model"),
    params=Params(
        (
            Param("budget", BUDGET, help="the token budget B"),
            Param("samples", count(1, 64), SAMPLES, "candidate states sampled per step"),
        ),
        pattern=r"(?P<budget>[^:]*)(?::(?P<samples>.*))?",
    ),
)
def _oracle_readtime(args: Args, c: BuildContext) -> Memory:
    return ReadTimeOracle(c.render_obs, args.budget, c.manual, c.seed, args.samples)
