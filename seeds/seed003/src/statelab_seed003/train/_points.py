"""Where a DSSR write point stands in its episode: the decisions its score looks ahead to and
the logged steps between (shared by :mod:`.dssr` and :mod:`._dssr_batch`)."""

from __future__ import annotations

from statelab.core import Transition
from statelab_seed003.train.data import Trajectory

#: per-decision losses of a candidate: (Phase-B steps after the write, loss in nats)
Losses = tuple[tuple[int, float], ...]


def start_step(phase: str, j: int) -> int:
    """The Phase-B step index the write at ``(phase, j)`` stands after (-1: before Phase B)."""
    return -1 if phase == "a" else j


def horizon_steps(traj: Trajectory, j: int, horizon: int, phase: str = "b") -> list[int]:
    """The decision steps within the look-ahead ``horizon`` (K) of write point ``(phase, j)``."""
    points = traj.decision_points()
    s = start_step(phase, j)
    return [k for k in points if s < k <= s + horizon]


def prelude_after_point(traj: Trajectory, j: int, phase: str) -> list[Transition]:
    return list(traj.prelude[j + 1 :]) if phase == "a" else []


def window_view(traj: Trajectory, rendered: str, j: int, k: int, phase: str = "b") -> str:
    """The candidate unchanged, then the raw steps logged after it and before decision k."""
    trs = prelude_after_point(traj, j, phase)
    trs += [traj.steps[i].transition for i in range(start_step(phase, j) + 1, k)]
    raw = [f"> {tr.action}\n{traj.render_obs(tr.observation)}" for tr in trs]
    if not raw:
        return rendered
    return f"{rendered}\n\nSteps since:\n" + "\n".join(raw)
