"""The moving-car grid of seed 001 (section 3 and appendix A.2).

A ``size`` x ``size`` grid (25 by default); cells are (row, column), (0, 0) top-left. The agent
starts in the top-left corner and must reach a fixed target in the bottom-right corner.
``n_cars`` cars (25) start on uniform cells (never the start or the target; two may share a
cell), move up one row per time step and wrap from the top row to the bottom row. The agent
does not wrap; a move into the edge is absorbed. A collision is a car entering the agent's
cell, or the agent and a car swapping cells, on the same step (the rules live in
:mod:`statelab.envs.traffic_world`, shared with the expert and the geodesic sampler).

The agent sees the square window of half-size 10 around itself. Each decision (one
``step``) commits five primitive actions executed open-loop, written as five letters over
W (wait), U, D, L, R (``"DRDRD"``) or as five words (``"down right down right down"``);
anything else is an invalid action: ``info["valid"]`` is False, nothing moves, and it still
counts as a decision. There is no admissible list (``Observation.admissible`` is None); the
primitives are ``env.primitives``.

An episode succeeds as soon as the agent stands on the target at any primitive step, and
fails on a collision (a collision on the step that reaches the target is a collision) or
after 30 decisions. Reward: +1 on the step that reaches the target, 0 otherwise. Score: 1 on
success, 0 otherwise (there is no partial credit).

Privileged info: every car, the primitive time, the generator state after the reset, the
full :class:`~statelab.envs.traffic_world.TrafficState`, and ``facts`` with every car visible
(for the oracle summary). The expert plans a geodesic with all cars known (breadth-first
search over (cell, time mod size)) and plays its next five actions.
"""

from __future__ import annotations

import copy
import re
from typing import Any, ClassVar

import numpy as np

from statelab.core import Env, Observation
from statelab.envs._registry import register_env
from statelab.envs.traffic_world import (
    PRIMITIVES,
    TOOL_LEN,
    TrafficState,
    best_effort,
    collides,
    move_agent,
    move_cars,
    random_cars,
    replay,
    shortest_path,
    visible_cars,
)
from statelab.facts import render
from statelab.facts.traffic import Cell, TrafficFacts, raster

WORDS: dict[str, str] = {
    **{p.lower(): p for p in PRIMITIVES},
    "wait": "W",
    "stay": "W",
    "hold": "W",
    "up": "U",
    "down": "D",
    "left": "L",
    "right": "R",
}
NAMES = {"W": "wait", "U": "up", "D": "down", "L": "left", "R": "right"}


def parse_command(action: str) -> str | None:
    """Five primitive actions as letters (``"DRDRD"``), or None when ``action`` is not five
    letters over W/U/D/L/R nor five such words separated by spaces or commas."""
    text = action.strip().strip("\"'`").strip().rstrip(".").strip()
    if re.fullmatch(r"[WUDLRwudlr]{5}", text):
        return text.upper()
    words = [w for w in re.split(r"[\s,;]+", text.lower()) if w]
    if len(words) != TOOL_LEN or any(w not in WORDS for w in words):
        return None
    return "".join(WORDS[w] for w in words)


class TrafficExpert:
    """Full information: the next five actions of a geodesic through the moving cars.

    The geodesic is planned once and followed while the world is where the plan said it
    would be; any surprise (another player moved, a fresh episode) triggers a new plan."""

    def __init__(self) -> None:
        self._plan = ""
        self._expect: TrafficState | None = None

    def act(self, obs: Observation, info: dict[str, Any]) -> str:
        state: TrafficState = info["privileged"]["state"]
        if state != self._expect or not self._plan:
            path = shortest_path(state.size, state.cars, state.agent, state.target)
            self._plan = path if path is not None else ""
        if not self._plan:  # no way through: survive as long as possible
            move = best_effort(state.size, state.cars, state.agent, state.target, TOOL_LEN)
        else:
            move = (self._plan[:TOOL_LEN] + "W" * TOOL_LEN)[:TOOL_LEN]
        self._plan = self._plan[TOOL_LEN:]
        self._expect = replay(state, move).state
        return move


class TrafficEnv(Env):
    name: ClassVar[str] = "traffic"
    #: the expert answers from any state, off its own path too:
    #: a geodesic replanned from the current cars
    expert_any_state: ClassVar[bool] = True
    max_steps: ClassVar[int] = 30
    history_len: ClassVar[int] = 30
    facts_type: ClassVar[type] = TrafficFacts
    default_format: ClassVar[str] = "symbolic"
    lists_actions: ClassVar[bool] = False  # no admissible list: no random floor row
    primitives: ClassVar[tuple[str, ...]] = PRIMITIVES

    def __init__(
        self,
        size: int = 25,
        n_cars: int = 25,
        half: int = 10,
        start: Cell = (0, 0),
        target: Cell | None = None,
        zoom_half: int = 3,
        max_steps: int | None = None,
    ) -> None:
        super().__init__(max_steps=max_steps)
        if size < 2 or not 0 <= n_cars <= size * size - 2:
            raise ValueError(
                f"need size >= 2 and 0 <= n_cars <= size*size - 2 (got {size}, {n_cars})"
            )
        self.size, self.n_cars, self.half, self.zoom_half = size, n_cars, half, zoom_half
        self.start: Cell = start
        self.target: Cell = target if target is not None else (size - 1, size - 1)
        self.agent: Cell = start
        self.cars: tuple[Cell, ...] = ()
        self.time = 0
        self.reached = False
        self.crashed = False
        self._text = ""
        self._rng_state: dict[str, Any] = {}
        self.goal = f"Reach the target cell at {self.target} without being hit by a car."
        self.manual = self._manual()

    def _manual(self) -> str:
        n, h = self.size, self.half
        return (
            f"You move on a {n}x{n} grid of cells. A cell is (row, column): (0, 0) is the "
            "top-left cell, row numbers grow downward and column numbers to the right.\n"
            "Cars move up one row every time step; a car leaving the top row reappears on the "
            "bottom row, in the same column. You do not wrap around: a move into the edge of "
            "the grid leaves you where you are.\n"
            f"You see only the cells within {h} rows and {h} columns of you; cars elsewhere "
            "are hidden, not absent.\n"
            "You are hit if a car moves into your cell, or if you and a car swap cells, on the "
            "same time step. Being hit ends the episode in failure.\n"
            "Each command is five actions, executed one per time step without stopping to "
            "look: W (wait), U (up), D (down), L (left), R (right). Write them as five letters, "
            "for example DRDRD, or as five words, for example: down right down right down.\n"
            f"Map legend: A you, T target, C car, # outside the grid, . free cell.\n"
            f"Goal: {self.goal} Standing on the target at any time step wins; you have "
            f"{self.budget} commands."
        )

    # -- state ------------------------------------------------------------------------------
    @property
    def state(self) -> TrafficState:
        """The simulation state (all cars), for the collision check and planners."""
        return TrafficState(self.size, self.agent, self.target, self.cars, self.half)

    def facts(self, full: bool = False) -> TrafficFacts:
        """What the agent sees now; ``full`` shows every car (the oracle's view)."""
        state = self.state
        cars = state.cars if full else visible_cars(state)
        half = max(self.half, self.size - 1) if full else self.half
        return TrafficFacts(
            self.size, self.agent, self.target, tuple(sorted(set(cars))), half, self.steps
        )

    # -- Env ------------------------------------------------------------------------------
    def _reset(
        self, rng_seed: int | None, options: dict[str, Any]
    ) -> tuple[Observation, dict[str, Any]]:
        self.agent = tuple(options.get("agent", self.start))
        self.time, self.reached, self.crashed = 0, False, False
        if "cars" in options:
            self.cars = tuple((int(r), int(c)) for r, c in options["cars"])
        else:
            self.cars = random_cars(
                self.np_random, self.size, self.n_cars, (self.agent, self.target)
            )
        self._rng_state = dict(self.np_random.bit_generator.state)
        return self._observe(""), self._privileged()

    def _step(self, action: str) -> tuple[Observation, float, bool, dict[str, Any]]:
        letters = parse_command(action)
        if letters is None:
            said = action.strip() or "(nothing)"
            feedback = (
                f"'{said}' is not a valid command: give five actions as letters over W, U, D, "
                "L, R (e.g. DRDRD) or as five words. Nothing moved."
            )
            return self._observe(feedback), 0.0, False, self._privileged(valid=False)
        absorbed = 0
        event = ""
        for i, a in enumerate(letters, 1):
            new_agent, new_cars = (
                move_agent(self.agent, a, self.size),
                move_cars(self.cars, self.size),
            )
            absorbed += a != "W" and new_agent == self.agent
            hit = collides(self.agent, new_agent, self.cars, new_cars)
            self.agent, self.cars, self.time = new_agent, new_cars, self.time + 1
            if hit:
                self.crashed = True
                event = f" A car hit you at {self.agent} on action {i} of {TOOL_LEN}."
                break
            if self.agent == self.target:
                self.reached = True
                event = f" You reached the target {self.target} on action {i} of {TOOL_LEN}."
                break
        words = ", ".join(NAMES[a] for a in letters)
        feedback = f"You executed {letters} ({words}).{event}"
        if absorbed:
            feedback += f" {absorbed} move(s) into the edge of the grid were absorbed."
        if not event:
            feedback += f" You are now at {self.agent}."
        done = self.reached or self.crashed
        return self._observe(feedback), (1.0 if self.reached else 0.0), done, self._privileged()

    def _observe(self, feedback: str) -> Observation:
        f = self.facts()
        text = (feedback + "\n" if feedback else "") + render(self.default_format, f)
        self._text = text
        return Observation(
            text=text,
            facts=f,
            admissible=None,
            goal=self.goal,
            feedback=feedback,
        )

    def _privileged(self, valid: bool = True) -> dict[str, Any]:
        return {
            "valid": valid,
            "privileged": {
                "size": self.size,
                "agent": self.agent,
                "target": self.target,
                "cars": self.cars,
                "time": self.time,
                "state": self.state,
                "rng_state": copy.deepcopy(self._rng_state),
                "facts": self.facts(full=True),
            },
        }

    def success(self) -> bool:
        return self.reached

    def expert(self) -> TrafficExpert:
        return TrafficExpert()

    # -- pictures (seed 001, figure 1) ------------------------------------------------------
    def render_rgb(self) -> np.ndarray:
        """What the agent sees (``Observation.image`` when a run grounds in images)."""
        return self.render_window()

    def render_full(self, scale: int = 12) -> np.ndarray:
        """The whole grid with every car (what the agent cannot see)."""
        return raster(self.size, self.agent, self.target, self.cars, scale=scale)

    def render_window(self, scale: int = 12) -> np.ndarray:
        """The agent's observation: the grid with cells outside its window grey."""
        return raster(self.size, self.agent, self.target, self.cars, half=self.half, scale=scale)

    def render_zoom(self, half: int | None = None, scale: int = 32) -> np.ndarray:
        """The agent-centred close-up of the observation, at a higher resolution."""
        crop = self.zoom_half if half is None else half
        return raster(
            self.size, self.agent, self.target, self.cars, half=self.half, crop=crop, scale=scale
        )


register_env("traffic", TrafficEnv, "statelab/Traffic-v0")
