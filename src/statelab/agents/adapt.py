"""``adapt``: ADaPT's as-needed decomposition (Prasad et al. 2024) around any base agent.

Spelling: ``adapt[:<base agent>][@<d_max>[,<steps>]]``, e.g. ``adapt:stateact``,
``adapt:react@3``, ``adapt:stateact:goal+thought/json@2,20``. The base is any agent spelling
(default ``react``, ADaPT's own executor); ``d_max`` defaults to 2 (seed 002, Table 4) and
``steps``, the executor's step budget per attempt, to 40 (the StateAct code's ``max_runs``).

The controller, as in ADaPT: ``run(task, depth)`` lets the executor (the base agent) act on
``task``; the executor ends an attempt by taking the action ``task completed`` or ``task
failed`` (or by writing it in a turn whose action is None), and an attempt also fails when its
step budget runs out or after ``patience`` invalid actions in a row. On failure, when
``depth < d_max``, the model is asked for a plan: sub-tasks ``Step k: ...`` joined by an
``Execution order`` of AND (all, in order, stop at the first failure) or OR (stop at the first
success); each sub-task is run at ``depth + 1``. The root is depth 1, so ``d_max = 1`` is the
base agent alone. The root task's success is the env's: the executor's claim of completing it
counts as a failure while the episode goes on.

Our loop takes one env action per :meth:`decide`, so the recursion is an explicit stack kept
per episode (:meth:`reset`): a decision may close attempts and ask for plans (model calls of
kind ``plan``, recorded in the decision) before the executor's next env action. When the
whole tree is spent and the episode still runs, the base agent keeps acting on the task.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field, replace
from typing import Any

from statelab.agents._parse import norm
from statelab.agents._turn import is_empty, parse_turn
from statelab.core import (
    LLM,
    Agent,
    Call,
    ConfigError,
    Decision,
    GenParams,
    Param,
    Params,
    Prompt,
    StepContext,
    count,
)

CONTROLS = ("task completed", "task failed")
D_MAX = 2
STEPS = 40
PATIENCE = 8
MAX_SUBTASKS = 8
PLAN_SYSTEM = "You are a helpful assistant who breaks a task into simpler sub-tasks."
PLAN_INSTRUCTION = (
    'The task "{task}" was not accomplished: the attempt failed or ran out of steps. Break it '
    "into a few simpler sub-tasks that together accomplish it. Write one line per sub-task, "
    '"Step 1: <sub-task>", "Step 2: <sub-task>", ..., then one line "Execution order: '
    '(Step 1 AND Step 2 ...)": use AND when every sub-task is needed, in order; use OR when '
    "any one of them is enough."
)
_STEP = re.compile(r"^\s*(?:[-*#]\s*)?step\s*(\d+)\s*[:.)-]\s*(.+)$", re.IGNORECASE)
_ORDER = re.compile(r"execution\s+order\s*[:：]\s*(.*)$", re.IGNORECASE | re.MULTILINE)


def _base(spelling: str) -> str:
    return spelling or "react"


_base.spelled = "agent"  # type: ignore[attr-defined]

#: the parameters of ``adapt`` (``[<base agent>][@<d_max>[,<steps>]]``)
PARAMS = Params(
    (
        Param("base", _base, "react", "the executor: any agent spelling"),
        Param("d_max", count(1), D_MAX, "the deepest decomposition (1: the base alone)"),
        Param("steps", count(1), STEPS, "the executor's step budget per attempt"),
    ),
    pattern=r"(?P<base>.*?)(?:@(?P<d_max>[^@,]*)(?:,(?P<steps>[^@,]*))?)?",
)


@dataclass(frozen=True)
class Plan:
    """A decomposition: its sub-tasks, in order, and how they combine (AND / OR)."""

    subtasks: tuple[str, ...]
    op: str = "AND"


def parse_plan(text: str) -> Plan:
    """Sub-tasks from ``Step k: ...`` lines; the operator from the ``Execution order`` line
    (OR only when it says OR and not AND; AND otherwise, as ADaPT's parser falls back)."""
    steps = [
        s for line in text.splitlines() if (m := _STEP.match(line)) and (s := m.group(2).strip())
    ]
    steps = [s for s in steps if not s.lower().startswith("execution order")][:MAX_SUBTASKS]
    order = _ORDER.search(text)
    words = set(re.findall(r"\b(AND|OR)\b", order.group(1))) if order else set()
    return Plan(tuple(steps), "OR" if words == {"OR"} else "AND")


@dataclass
class Node:
    """One task of the recursion: its executor attempt, then its plan when it failed."""

    task: str
    depth: int
    steps: int = 0
    invalid: int = 0
    plan: Plan | None = None
    child: int = 0
    log: list[str] = field(default_factory=list)


def control_of(decision: Decision) -> str | None:
    """``task completed`` / ``task failed`` when the executor declared the attempt over."""
    action = norm(decision.action)
    for c in CONTROLS:
        if action == c or action.startswith(c + " "):
            return c
    if is_empty(parse_turn(decision.reply).action) or not action:
        said = norm(decision.reply)
        for c in CONTROLS:
            if c in said:
                return c
    return None


class AdaptAgent(Agent):
    """ADaPT around ``base``; ``d_max`` bounds the depth, ``steps`` each executor attempt."""

    name = "adapt"

    def __init__(
        self,
        base: Agent,
        params: GenParams,
        d_max: int = D_MAX,
        steps: int = STEPS,
        patience: int = PATIENCE,
    ) -> None:
        self.base = base
        self.params = params
        self.tags = frozenset(base.tags | {"decomposes"})
        self.label = f"ADaPT + {base.label or base.spelling or base.name}"
        self.d_max = d_max
        self.budget = steps
        self.patience = patience
        self.reset()

    @property
    def needs_model(self) -> bool:
        return "needs-model" in self.base.tags

    def reset(self, ctx: Any = None) -> None:
        self.base.reset(ctx)
        self.stack: list[Node] = []
        self.started = False
        #: (depth, task, outcome) of every finished attempt, for inspection and tests
        self.history: list[tuple[int, str, str]] = []
        self.max_depth_seen = 0

    # -- the executor's view ----------------------------------------------------------------
    def sub_prompt(self, prompt: Prompt, node: Node) -> Prompt:
        note = (
            f"Current task (depth {node.depth} of at most {self.d_max}): {node.task}\n"
            'When the current task is done, take the action "task completed"; if you cannot '
            'do it, take the action "task failed".'
        )
        actions = None if prompt.actions is None else (*prompt.actions, *CONTROLS)
        return replace(prompt, view=f"{prompt.view}\n\n{note}", actions=actions)

    async def decide(self, ctx: StepContext, llm: LLM | None) -> Decision:
        prompt = ctx.prompt
        if llm is None and self.needs_model:
            raise ConfigError("agent 'adapt' needs a model")
        if not self.started:
            self.started = True
            self.stack = [Node(prompt.goal or "solve the task", 1)]
            self.max_depth_seen = 1
        elif self.stack and not ctx.last_valid:
            self.stack[-1].invalid += 1
        elif self.stack:
            self.stack[-1].invalid = 0
        calls: list[Call] = []
        for _ in range(10_000):  # each turn closes an attempt or returns; the tree is finite
            if not self.stack:
                break
            node = self.stack[-1]
            if node.steps >= self.budget or node.invalid >= self.patience:
                calls += await self._close(node, False, prompt, llm)
                continue
            d = await self.base.decide(replace(ctx, prompt=self.sub_prompt(prompt, node)), llm)
            verdict = control_of(d)
            if verdict is None:
                node.steps += 1
                d.calls[:0] = calls
                return d
            calls += d.calls
            ok = verdict == CONTROLS[0] and node.depth > 1
            calls += await self._close(node, ok, prompt, llm)
        d = await self.base.decide(ctx, llm)
        d.calls[:0] = calls
        return d

    # -- the controller ---------------------------------------------------------------------
    async def _close(self, node: Node, ok: bool, prompt: Prompt, llm: LLM | None) -> list[Call]:
        """End ``node``'s current attempt; plan on failure if depth allows, else report up."""
        self.history.append((node.depth, node.task, "success" if ok else "failure"))
        calls: list[Call] = []
        if not ok and node.plan is None and node.depth < self.d_max and llm is not None:
            plan, call = await self._plan(node, prompt, llm)
            calls.append(call)
            if plan.subtasks:
                node.plan = plan
                self._push(Node(plan.subtasks[0], node.depth + 1))
                return calls
        self.stack.pop()
        while self.stack:
            parent = self.stack[-1]
            assert parent.plan is not None
            more = parent.child + 1 < len(parent.plan.subtasks)
            if (parent.plan.op == "AND") == ok and more:
                parent.child += 1
                self._push(Node(parent.plan.subtasks[parent.child], parent.depth + 1))
                return calls
            # AND: done when one fails or all succeeded; OR: when one succeeded or all failed
            self.history.append((parent.depth, parent.task, "success" if ok else "failure"))
            self.stack.pop()
        return calls

    def _push(self, node: Node) -> None:
        self.stack.append(node)
        self.max_depth_seen = max(self.max_depth_seen, node.depth)

    async def _plan(self, node: Node, prompt: Prompt, llm: LLM) -> tuple[Plan, Call]:
        user = f"{prompt.view}\n\n{PLAN_INSTRUCTION.format(task=node.task)}"
        msgs = [
            {"role": "system", "content": f"{PLAN_SYSTEM}\n\n{prompt.manual}"},
            {"role": "user", "content": user},
        ]
        seed = zlib.crc32(f"{prompt.seed}:plan:{node.depth}:{node.task}".encode()) & 0x7FFFFFFF
        params = replace(
            self.params, seed=seed, stop=(), max_tokens=max(self.params.max_tokens, 400)
        )
        completion = await llm.complete(msgs, params)
        return parse_plan(completion.text), Call("plan", msgs, completion)


__all__ = ["CONTROLS", "PARAMS", "AdaptAgent", "Node", "Plan", "control_of", "parse_plan"]
