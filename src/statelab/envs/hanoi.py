"""Tower of Hanoi as SmartPlay plays it (seed 000, section 3.3; Table 2: 30 steps, history 30).

Rules: three rods A, B, C; disks 0 (smallest) .. n-1 start on A, largest at the bottom; move
one top disk at a time, never onto a smaller disk; the goal is the whole stack on C.

Rewards follow SmartPlay: +100 when the goal is reached (the episode ends), -1 for an illegal
or unrecognised action (the state is unchanged), 0 otherwise.

Score (normalised to [0, 1]) follows SmartPlay too: the number of disks on rod C divided by
n, read at the last step. A solved puzzle scores 1; partial progress counts every disk that
sits on C, so 1 of 3 disks on C scores 0.33 whatever the other rods hold.

The manual carries what SmartPlay's does, in our words: the rods and disks, the start and the
objective, the three rules, a worked example of which moves are legal, the start and goal
configurations (bottom left, top right). The action list follows it in every prompt.

Text: "Current configuration:" and the rods at reset; after a step "You tried to <action>."
first, as SmartPlay writes it. With ``feedback=on`` (the default, ``hanoi:feedback=on``) one
more sentence says what came of it ("The move succeeded." / "That move is illegal: ...;
nothing changed." / "That is not a valid action; nothing changed."); SmartPlay has no such
line, and ``hanoi:feedback=off`` leaves it out (the seed-000 configs do). Spellings: ``hanoi``,
``hanoi:4`` (disks), ``hanoi:feedback=off``, ``hanoi:4+feedback=off``, ``hanoi:disks=4``.

One known difference stays: a reply that names none of the six actions is an illegal move
here (-1, nothing moves, "You tried to <reply>."); SmartPlay runs action 0 (A to B) instead.
"""

from __future__ import annotations

from collections import deque
from itertools import permutations
from typing import Any, ClassVar

import numpy as np

from statelab.core import Env, Observation, count, on_off
from statelab.envs._draw import PALETTE
from statelab.envs._options import Option, option_parser
from statelab.envs._registry import register_env
from statelab.facts import PegFacts, render

NAMES = ("A", "B", "C")
ACTIONS: tuple[str, ...] = tuple(
    f"Move the top disk of rod {a} to the top of rod {b}" for a, b in permutations(NAMES, 2)
)

Pegs = tuple[tuple[int, ...], ...]


def tagged_list(pegs: Pegs) -> str:
    """SmartPlay's rendering: one line per rod, bottom to top (the ``tagged-list`` format)."""
    return render("tagged-list", PegFacts(pegs, NAMES))


def parse_action(action: str) -> tuple[int, int] | None:
    """The (source, target) rod indices of one of the six actions, matched loosely."""
    norm = " ".join(action.strip().rstrip(".").lower().split())
    for i, a in enumerate(ACTIONS):
        if norm == a.lower():
            src, dst = list(permutations(range(3), 2))[i]
            return src, dst
    return None


def legal(pegs: Pegs, src: int, dst: int) -> str | None:
    """None when the move is legal, else the reason it is not."""
    if not pegs[src]:
        return f"rod {NAMES[src]} is empty"
    if pegs[dst] and pegs[dst][-1] < pegs[src][-1]:
        return (
            f"disk {pegs[src][-1]} cannot be placed on the smaller disk {pegs[dst][-1]}"
            f" on rod {NAMES[dst]}"
        )
    return None


def apply(pegs: Pegs, src: int, dst: int) -> Pegs:
    new = [list(p) for p in pegs]
    new[dst].append(new[src].pop())
    return tuple(tuple(p) for p in new)


def goal_pegs(n: int) -> Pegs:
    return ((), (), tuple(range(n - 1, -1, -1)))


def shortest_solution(pegs: Pegs) -> list[int]:
    """Indices into ACTIONS of a shortest move sequence from ``pegs`` to the goal (BFS)."""
    goal = goal_pegs(sum(len(p) for p in pegs))
    moves = list(permutations(range(3), 2))
    prev: dict[Pegs, tuple[Pegs, int] | None] = {pegs: None}
    queue = deque([pegs])
    while queue:
        cur = queue.popleft()
        if cur == goal:
            path: list[int] = []
            node = cur
            while (link := prev[node]) is not None:
                node, a = link
                path.append(a)
            return path[::-1]
        for a, (s, d) in enumerate(moves):
            if legal(cur, s, d) is None:
                nxt = apply(cur, s, d)
                if nxt not in prev:
                    prev[nxt] = (cur, a)
                    queue.append(nxt)
    raise ValueError(f"no solution from {pegs}")  # unreachable for valid configurations


def oracle_map(pegs: Pegs) -> str:
    """The ground-truth map in the seed's VoT style (seed 000, section 3.2)."""
    lines = []
    for name, disks in zip(NAMES, pegs, strict=True):
        line = f"Rod {name}: [{', '.join(map(str, disks))}]"
        if len(disks) > 1:
            line += f"  (top is {disks[-1]}, bottom is {disks[0]})"
        lines.append(line)
    return "\n".join(lines)


def draw(pegs: Pegs, n: int) -> np.ndarray:
    """A side view as RGB: three labelled rods on a base, disks as numbered coloured bars."""
    from PIL import Image, ImageDraw

    rod_w, disk_h = 40 + 24 * n, 22
    w, h = 3 * rod_w + 20, (n + 2) * disk_h + 50
    img = Image.new("RGB", (w, h), (255, 255, 255))
    d = ImageDraw.Draw(img)
    base_y = h - 30
    d.rectangle([5, base_y, w - 5, base_y + 6], fill=(90, 60, 40))
    for r, disks in enumerate(pegs):
        cx = 10 + r * rod_w + rod_w // 2
        d.rectangle([cx - 3, base_y - (n + 1) * disk_h, cx + 3, base_y], fill=(140, 140, 140))
        d.text((cx - 4, base_y + 10), NAMES[r], fill=(0, 0, 0))
        for level, disk in enumerate(disks):
            half = 14 + 12 * disk
            y1 = base_y - level * disk_h
            d.rectangle(
                [cx - half, y1 - disk_h + 2, cx + half, y1 - 1],
                fill=PALETTE[disk % len(PALETTE)],
                outline=(0, 0, 0),
            )
            d.text((cx - 3, y1 - disk_h + 6), str(disk), fill=(255, 255, 255))
    return np.asarray(img, dtype=np.uint8)


def manual(n: int) -> str:
    """The rules as SmartPlay's manual gives them (our wording, the same information): rods,
    disks, start and objective, the three rules, a worked legality example, the start and goal
    configurations. The action list follows in the prompt."""
    start = tagged_list((tuple(range(n - 1, -1, -1)), (), ()))
    goal = tagged_list(goal_pegs(n))
    example = tagged_list(((0,), (1,), (2,)))
    return (
        "You are playing the Tower of Hanoi.\n"
        f"There are three rods, A, B and C, and {n} disks of different sizes, numbered 0 to "
        f"{n - 1} from the smallest to the largest; any disk can go onto any rod. At the start "
        "all disks are stacked on rod A by decreasing size, the largest at the bottom and the "
        "smallest on top. Your goal is to move the whole stack to rod C, obeying these rules:\n"
        "- Move only one disk at a time.\n"
        "- A move takes the top disk of one rod and places it on top of the disks of another "
        "rod, or on an empty rod.\n"
        "- A disk may never be placed on top of a smaller disk.\n"
        "A configuration lists each rod's disks from bottom (left) to top (right). A worked "
        "example: which moves from rod B are legal here?\n"
        f"{example}\n"
        "The top disk of B is disk 1. It may move to C, whose top disk 2 is bigger, but not to "
        "A, whose top disk 0 is smaller.\n"
        f"The starting configuration is:\n{start}\n"
        f"The goal configuration is:\n{goal}\n"
        "(bottom on the left, top on the right)."
    )


class HanoiExpert:
    """Optimal play from whatever configuration the episode is in (BFS over configurations)."""

    def act(self, obs: Observation, info: dict[str, Any]) -> str:
        pegs = info["privileged"]["pegs"]
        plan = shortest_solution(pegs)
        return ACTIONS[plan[0]] if plan else ACTIONS[0]


class HanoiEnv(Env):
    name: ClassVar[str] = "hanoi"
    #: the expert answers from any state, off its own path too:
    #: BFS over configurations from the current pegs
    expert_any_state: ClassVar[bool] = True
    max_steps: ClassVar[int] = 30
    history_len: ClassVar[int] = 30
    facts_type: ClassVar[type] = PegFacts
    privileged_map: ClassVar[bool] = True
    default_format: ClassVar[str] = "tagged-list"
    static_actions: ClassVar[bool] = True

    def __init__(
        self, n_disks: int = 3, max_steps: int | None = None, feedback: bool = True
    ) -> None:
        super().__init__(max_steps=max_steps)
        if not 1 <= n_disks <= 10:
            raise ValueError(f"n_disks must be between 1 and 10, got {n_disks}")
        self.n = n_disks
        #: whether a step's text says what came of the move (SmartPlay's does not)
        self.feedback = feedback
        self.pegs: Pegs = ((), (), ())
        self.goal = f"Move all {n_disks} disks to rod C, largest at the bottom, smallest on top."
        self.manual = manual(n_disks)

    # -- Env ------------------------------------------------------------------------------
    def _reset(
        self, rng_seed: int | None, options: dict[str, Any]
    ) -> tuple[Observation, dict[str, Any]]:
        start = options.get("pegs")
        self.pegs = (
            tuple(tuple(p) for p in start)
            if start is not None
            else (tuple(range(self.n - 1, -1, -1)), (), ())
        )
        return self._observe(""), self._privileged()

    def _step(self, action: str) -> tuple[Observation, float, bool, dict[str, Any]]:
        move = parse_action(action)
        if move is None:
            tried = f"You tried to {action.strip() or '(nothing)'}."
            said = self._said(tried, "That is not a valid action; nothing changed.")
            return self._observe(said), -1.0, False, self._privileged(valid=False)
        src, dst = move
        reason = legal(self.pegs, src, dst)
        tried = f"You tried to {ACTIONS[list(permutations(range(3), 2)).index(move)].lower()}."
        if reason is not None:
            said = self._said(tried, f"That move is illegal: {reason}; nothing changed.")
            return self._observe(said), -1.0, False, self._privileged(valid=False)
        self.pegs = apply(self.pegs, src, dst)
        solved = self.success()
        said = self._said(tried, "The move succeeded.")
        return self._observe(said), (100.0 if solved else 0.0), solved, self._privileged()

    def _said(self, tried: str, outcome: str) -> str:
        """SmartPlay's "You tried to ..." and, with ``feedback`` on, what came of it."""
        return f"{tried} {outcome}" if self.feedback else tried

    def _observe(self, feedback: str) -> Observation:
        text = (
            (feedback + " " if feedback else "")
            + "Current configuration:\n"
            + tagged_list(self.pegs)
        )
        self._text = text
        return Observation(
            text=text,
            facts=PegFacts(self.pegs, NAMES),
            admissible=ACTIONS,
            goal=self.goal,
            feedback=feedback,
        )

    def _privileged(self, valid: bool = True) -> dict[str, Any]:
        return {
            "valid": valid,
            "privileged": {
                "pegs": self.pegs,
                "facts": PegFacts(self.pegs, NAMES),
                "map": oracle_map(self.pegs),
            },
        }

    def render_rgb(self) -> np.ndarray:
        return draw(self.pegs, self.n)

    def score(self) -> float:
        return len(self.pegs[2]) / self.n

    def success(self) -> bool:
        return self.pegs == goal_pegs(self.n)

    def expert(self) -> HanoiExpert:
        return HanoiExpert()


OPTIONS = {
    "disks": Option("n_disks", count(1, 10), "disks=N"),
    "feedback": Option("feedback", on_off, "feedback=on|off"),
}

register_env(
    "hanoi",
    HanoiEnv,
    "statelab/Hanoi-v0",
    "hanoi[:<disks>][+feedback=on|off]",
    option_parser("hanoi", OPTIONS, positional="disks"),
)
