"""Seed 004's three runs on BabyAI: every rollout replays the seed's own BALROG level (the
authors' three runs replay the same 25 levels), with sampling seeds of its own."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from statelab.run.config import load_experiment
from statelab.run.episode import Episode
from statelab.run.seeding import replay_sampling_seed, single

CONFIG = Path(__file__).parents[2] / "configs" / "seed004" / "fig3_babyai.yaml"


def _layout(ep: Episode) -> tuple[str, tuple[int, ...], str]:
    """(mission, agent x, y, direction, SHA-1 of the grid) of the episode's level."""
    env = ep.c.env
    env.reset(seed=ep.env_seed)
    lv = env.level  # type: ignore[attr-defined]
    grid = np.asarray(lv.grid.encode(), dtype=np.uint8)
    agent = (int(lv.agent_pos[0]), int(lv.agent_pos[1]), int(lv.agent_dir))
    return lv.mission, agent, hashlib.sha1(grid.tobytes()).hexdigest()


def _runs(replay: bool) -> list:
    exp = load_experiment(CONFIG, [f"replay={str(replay).lower()}"])
    return [r for r in exp.runs() if r.worldmodel == "belief" and r.agent == "react"]


def test_the_seed004_babyai_config_replays_each_level_in_its_three_runs():
    exp = load_experiment(CONFIG)
    assert exp.replay and exp.n_rollouts("babyai/goto") == 3
    runs = _runs(True)
    assert len(runs) == 4 and all(r.replay for r in runs)  # one per task
    for spec in runs:
        for seed in (0, 7, 24):
            eps = [Episode(spec, seed, None, rollout=r) for r in range(3)]
            assert [e.env_seed for e in eps] == [seed] * 3
            layouts = {_layout(e) for e in eps}
            assert len(layouts) == 1, (spec.env, seed)
            # the sampling differs: each rollout's model calls get seeds of their own
            assert len({e._sampling_seed("act") for e in eps}) == 3


def test_without_replay_rollouts_play_other_levels_and_keep_their_run_keys():
    replayed, plain = _runs(True), _runs(False)
    exp = load_experiment(CONFIG, ["replay=false"])
    for a, b in zip(replayed, plain, strict=True):
        assert a.key != b.key and a.axes_values == b.axes_values  # another run in the store
        seeding = exp.seeding(b.env)
        eps = [Episode(b, 3, None, rollout=r, seeds=seeding.of(3, r)) for r in range(3)]
        got = [e.env_seed for e in eps]
        assert got[0] == 3 and len(set(got)) == 3  # no other config seed's level either
        assert not set(got[1:]) & set(exp.env_seeds(b.env))
        assert len({_layout(e) for e in eps}) == 3
        # rollout 0 is the same episode either way (its level and its sampling)
        first = Episode(a, 3, None)
        assert _layout(first) == _layout(eps[0])
        assert first._sampling_seed("act") == eps[0]._sampling_seed("act")


def test_sampling_seed_is_the_env_seed_unless_a_rollout_replays():
    assert replay_sampling_seed(5, 0) == 5
    assert len({replay_sampling_seed(5, r) for r in range(3)}) == 3
    assert single("babyai/goto", 5, 2, replay=True).env_seed == 5
    plain = single("babyai/goto", 5, 2)
    assert plain.env_seed not in (5, 5002) and plain.sampling_seed == plain.env_seed


def test_a_stored_replayed_run_replays_as_one():
    """The store's spec of a replayed run gives back the same run (key and replay)."""
    from statelab.run.components import spec_dict
    from statelab.run.replay import spec_of

    spec = _runs(True)[0]
    again = spec_of({"spec": spec_dict(spec)})
    assert again.replay and again.key == spec.key
    plain = _runs(False)[0]
    assert "replay" not in spec_dict(plain) and spec_of({"spec": spec_dict(plain)}) == plain
