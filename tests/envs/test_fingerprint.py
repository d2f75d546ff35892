"""``Env.fingerprint()`` (issue 33): a short hash of the instance state, equal for equal
states (a loop revisits one; seeds that start alike share one), different where hidden state
differs; recorded by the runner at reset and after every step."""

from __future__ import annotations

import json
from pathlib import Path

from statelab.core import fingerprint_of
from statelab.envs import make_env
from statelab.envs.messenger import MessengerEnv
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store

AB = "Move the top disk of rod A to the top of rod B"
BA = "Move the top disk of rod B to the top of rod A"


def test_hanoi_a_move_undone_revisits_the_start_state() -> None:
    env = make_env("hanoi")
    env.reset(seed=0)
    start = env.fingerprint()
    assert len(start) == 16
    env.step(AB)
    moved = env.fingerprint()
    env.step(BA)
    assert moved != start and env.fingerprint() == start
    env.step("Move the top disk of rod C to the top of rod A")  # invalid: nothing moves
    assert env.fingerprint() == start
    env.reset(seed=7)
    assert env.fingerprint() == start  # every Hanoi seed starts from one state


def test_messenger_roles_are_part_of_the_state_the_view_does_not_show() -> None:
    """Same grid, same entities, same first view; the enemy chases in one and stands still
    in the other: two instances, two fingerprints."""
    place = {"agent": (5, 5), "enemy": (0, 0), "message": (9, 0), "goal": (9, 9)}
    still = {"enemy": "immovable", "message": "immovable", "goal": "immovable"}
    a, b = MessengerEnv(), MessengerEnv()
    obs_a, _ = a.reset(seed=0, options={"positions": place, "movement": still})
    obs_b, _ = b.reset(
        seed=0, options={"positions": place, "movement": {**still, "enemy": "chaser"}}
    )
    assert obs_a.text == obs_b.text and a.fingerprint() != b.fingerprint()


def test_fingerprint_of_is_canonical() -> None:
    assert fingerprint_of({"b": {3, 1, 2}, "a": (1, 2.5)}) == fingerprint_of(
        {"a": [1, 2.5], "b": {2, 3, 1}}
    )
    assert fingerprint_of(("x", 1)) != fingerprint_of(("x", 2))


def test_the_runner_records_the_start_and_every_step_state(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([f"Action: {AB}", f"Action: {BA}"]))
    exp = parse_experiment({
        "name": "fp", "random": False, "model": f"scripted:{script}", "seeds": [0, 1],
        "grid": {"env": ["hanoi"], "history": ["full"], "format": ["tagged-list"]},
        "out": str(tmp_path / "results"), "cache": None, "max_steps": 4,
    })  # fmt: skip
    run_sync(exp, progress=None)
    store = Store(tmp_path / "results" / "fp" / "store.sqlite")
    try:
        eps, steps = store.table("episodes"), store.table("steps").sort_values(["seed", "t"])
    finally:
        store.close()
    assert eps["start_state"].nunique() == 1 and eps["start_state"].str.len().eq(16).all()
    played = steps[(steps["seed"] == 0) & (steps["action"].isin([AB, BA]))]
    (run,) = {r for r, g in played.groupby("run") if len(g) == 4}  # the scripted run
    first = steps[(steps["seed"] == 0) & (steps["run"] == run)]["env_state"].tolist()
    start = eps["start_state"].iloc[0]
    # A->B, B->A (back at the start), then the script's last reply again: refused, unmoved
    assert len(first) == 4 and first[0] != start and first[1:] == [start] * 3
