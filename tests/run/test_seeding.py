"""Every (seed, rollout) pair of a run is an episode of its own (issue 33 items 1, 2): its own
instance, or with replay (or a split too small) its seed's with a sampling stream of its
own; split draws never collide; stores seeded before keep their seeds, are never extended
with the new ones, and the report warns about their colliding episodes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from statelab.core import ConfigError
from statelab.envs import env_class
from statelab.run.config import load_experiment, parse_experiment
from statelab.run.runner import run_sync
from statelab.run.seeding import SCHEME, seeding_for, single, stored_seeds


def _pairs(seeding) -> list[tuple[int, int]]:
    return [(x.env_seed, x.sampling_seed) for x in seeding.episodes.values()]


def test_seed_0s_rollouts_are_not_other_seeds_episodes() -> None:
    """Seed 000's Table 3: before, seed 0's rollouts 1-9 were seeds 1-9's rollout 0 (100
    Hanoi episodes on 91 pairs, 200 Messenger ones on 181)."""
    exp = load_experiment(Path(__file__).parents[2] / "configs/seed000/table3_granularity.yaml")
    hanoi, messenger = (exp.seeding(e) for e in exp.grid.env)
    assert len(set(_pairs(hanoi))) == 100 and len(set(_pairs(messenger))) == 200
    assert hanoi.of(0, 1) != hanoi.of(1, 0) and hanoi.of(1, 0).env_seed == 1
    firsts = {s for s in range(10)}
    assert not {hanoi.of(s, r).env_seed for s in range(10) for r in range(1, 10)} & firsts
    test = env_class("messenger").splits["test"]
    drawn = [messenger.of(s, r).env_seed for s in range(10) for r in range(1, 20)]
    assert all(e in test for e in drawn) and len(set(drawn)) == 190
    assert not set(drawn) & firsts  # no config seed's instance either


def test_a_split_large_enough_deals_distinct_unused_instances() -> None:
    test = env_class("household").splits["test"]
    s = seeding_for("household", tuple(test[:20]), 3)
    envs = [x.env_seed for x in s.episodes.values()]
    assert len(set(envs)) == 60 and set(envs) <= set(test) and not s.notes
    assert all(x.sampling_seed == x.env_seed for x in s.episodes.values())
    # a seed added later keeps the earlier seeds' draws (unless it was one of them)
    more = seeding_for("household", (*test[:20], test[-1]), 3)
    if test[-1] not in envs:
        assert all(more.of(k, r) == s.of(k, r) for k in test[:20] for r in range(3))


def test_a_split_too_small_replays_its_seeds_and_says_so_in_one_line() -> None:
    exp = parse_experiment({"name": "x", "seeds": "test", "rollouts": 3,
                            "grid": {"env": ["household"]}})  # fmt: skip
    s = exp.seeding("household")
    assert len(set(_pairs(s))) == 402  # before: 402 episodes on 134 pairs
    assert {x.env_seed for x in s.episodes.values()} == set(env_class("household").splits["test"])
    (note,) = exp.notes()
    assert "\n" not in note and "'test' has 0 instances besides the 134 seeds" in note
    assert "replay their seed's instance with sampling seeds of their own" in note
    for env, n, r in (("messenger", 864, 3), ("cooking", 90, 5)):  # before: 864, 90 pairs
        got = seeding_for(env, tuple(env_class(env).splits["test"]), r)
        assert len(set(_pairs(got))) == n * r and got.notes


def test_rollouts_of_a_seed_outside_every_split_stay_outside_them() -> None:
    cls = env_class("cooking")
    s = seeding_for("cooking", (5000, 5001), 4)
    envs = [x.env_seed for x in s.episodes.values()]
    assert len(set(envs)) == 8
    assert not any(e in r for e in envs for r in cls.splits.values())  # never a test game
    assert single("cooking", 5000, 2) == s.of(5000, 2)  # a seed's own, whatever the others


def test_replay_keeps_the_seed_with_a_stream_per_rollout() -> None:
    s = seeding_for("hanoi", (0, 1), 3, replay=True)
    assert {x.env_seed for x in s.episodes.values()} == {0, 1}
    assert len(set(_pairs(s))) == 6 and s.of(1, 0).sampling_seed == 1


def test_a_scheme_1_episode_keeps_its_stored_seeds() -> None:
    assert stored_seeds("hanoi", 0, 1, False, 1, None).sampling_seed == 1  # as stored
    assert stored_seeds("hanoi", 0, 1, False, None, None).env_seed == 1  # scheme 1's formula
    assert stored_seeds("hanoi", 0, 1, False, 42, 7).sampling_seed == 7


# -- stores ----------------------------------------------------------------------------------
def _exp(tmp: Path, seeds: list[int], env: str = "hanoi", name: str = "s") -> object:
    script = tmp / "r.json"
    script.write_text(json.dumps(["Action: Move the top disk of rod A to the top of rod C"]))
    return parse_experiment({
        "name": name, "model": f"scripted:{script}", "seeds": seeds, "rollouts": 2,
        "grid": {"env": [env], "history": ["full"]}, "out": str(tmp / "results"),
        "cache": None, "max_steps": 2, "expert": False,
    })  # fmt: skip


def _db(exp) -> sqlite3.Connection:
    return sqlite3.connect(exp.out_dir / "store.sqlite")


def test_episodes_record_their_seeds_and_scheme(tmp_path: Path) -> None:
    exp = _exp(tmp_path, [0, 1])
    assert run_sync(exp, progress=None).failed == 0
    with _db(exp) as db:
        rows = db.execute("SELECT seed, rollout, env_seed, sampling_seed, seeding FROM episodes"
                          " ORDER BY run, seed, rollout").fetchall()  # fmt: skip
    sd = exp.seeding("hanoi")
    assert rows and all(r[4] == SCHEME for r in rows)
    assert all((r[2], r[3]) == (sd.of(r[0], r[1]).env_seed, sd.of(r[0], r[1]).sampling_seed)
               for r in rows)  # fmt: skip


def test_an_old_run_is_not_extended_with_new_seeding(tmp_path: Path) -> None:
    exp = _exp(tmp_path, [0, 1])
    assert run_sync(exp, progress=None).failed == 0
    with _db(exp) as db:  # as a store of scheme 1 holds them, one episode still to play
        db.execute("UPDATE episodes SET env_seed = CASE WHEN rollout = 0 THEN seed ELSE"
                   " seed * 1000 + rollout END, sampling_seed = NULL,"
                   " seeding = NULL")  # fmt: skip
        db.execute("DELETE FROM episodes WHERE seed = 1 AND rollout = 1")
    with pytest.raises(ConfigError, match="seeded by an earlier statelab") as e:
        run_sync(exp, progress=None)
    assert "\n" not in str(e.value) and "new out folder" in str(e.value)


def test_a_finished_old_run_reports_with_a_warning_on_its_colliding_episodes(tmp_path: Path):
    from statelab.analysis.reporting import make_report

    exp = _exp(tmp_path, [0, 1])
    assert run_sync(exp, progress=None).failed == 0
    fresh = make_report(exp.out_dir / "store.sqlite", tmp_path / "r0")
    assert "shared (env seed, sampling seed)" not in fresh.markdown
    with _db(exp) as db:  # scheme 1 on Hanoi: seed 0's rollout 1 is seed 1's rollout 0
        db.execute("UPDATE episodes SET env_seed = CASE WHEN rollout = 0 THEN seed ELSE"
                   " seed * 1000 + rollout END, sampling_seed = NULL,"
                   " seeding = NULL")  # fmt: skip
    assert run_sync(exp, progress=None).skipped == 8  # nothing left to play: no refusal
    got = make_report(exp.out_dir / "store.sqlite", tmp_path / "r1").markdown
    lines = [x for x in got.splitlines() if "shared (env seed, sampling seed)" in x]
    assert len(lines) == 1 and "2 episodes on shared" in lines[0]
    assert "not independent units" in lines[0]


def test_changed_seeds_do_not_mix_two_assignments_in_a_run(tmp_path: Path) -> None:
    exp = _exp(tmp_path, [0, 1], env="messenger")
    assert run_sync(exp, progress=None).failed == 0
    taken = exp.seeding("messenger").of(0, 1).env_seed  # now a config seed: dealt again
    more = _exp(tmp_path, [0, 1, taken], env="messenger")
    assert more.seeding("messenger").of(0, 1).env_seed != taken
    with pytest.raises(ConfigError, match="seed 0 rollout 1 is stored on env seed") as e:
        run_sync(more, progress=None)
    assert "\n" not in str(e.value)
