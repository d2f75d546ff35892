"""ScienceWorld (seed 004): the task table against the package, seeds to variations, the
canonical text, the distilled expert, scores and validity. Envs that start a simulator (a
JVM) use two short tasks; the expert on every other task runs under ``-m slow``."""

from __future__ import annotations

from pathlib import Path

import pytest

from statelab.envs.scienceworld import (
    TASKS,
    canonical,
    distillations,
    env_class,
    inventory_items,
    simplifications,
    variation,
)

pytest.importorskip("scienceworld")

FAST = ("lifespan-longest-lived", "find-non-living-thing")


def test_the_seeds_tasks_and_budgets():
    assert len(TASKS) == 24
    budgets = {t: b for t, (b, *_) in TASKS.items()}
    assert budgets["boil"] == 100 and budgets["melt"] == 80 and budgets["grow-fruit"] == 60
    assert budgets["measure-melting-point-known-substance"] == 120
    assert {budgets[t] for t in TASKS if t.startswith("find-")} == {15}
    assert budgets["lifespan-longest-lived-then-shortest-lived"] == 12
    assert env_class("boil").max_steps == 100 and env_class("boil").name == "scienceworld/boil"


def test_seeds_map_to_the_packages_splits():
    # boil: train 0-13, dev 14-20, test 21-29
    assert [variation("boil", s) for s in (0, 8)] == [21, 29]
    assert variation("boil", 1000) == 0 and variation("boil", 1013) == 13
    assert variation("boil", 2000) == 14 and variation("boil", 2006) == 20
    assert variation("boil", 9) == 9 % 30  # past every split: seed mod variations
    splits = env_class("find-animal").splits
    assert splits["test"] == range(0, 10)  # the anchor's ten test variations per task
    assert [variation("find-animal", s) for s in splits["test"]] == list(range(225, 235))
    anchor = sum(len(env_class(t).splits["test"]) for t in TASKS)
    assert anchor == 211  # MPO's / the anchor's ScienceWorld test set


def test_the_anchors_simplifications():
    assert simplifications("boil", "anchor") == (
        "noElectricalAction,openDoors,selfWateringFlowerPots,teleportAction,openContainers"
    )
    assert "noElectricalAction" not in simplifications("power-component", "anchor")
    assert simplifications("boil", "easy") == "easy" and simplifications("boil", "none") == ""


def test_canonical_text_sorts_every_listing():
    a = (
        "This room is called the art studio. In it, you see: \n\tthe agent\n\ta table. On the"
        " table is: a bowl (containing b, a), a cup.\n\ta wood cup (containing red paint)\n"
        "\ta substance called air\nYou also see:\n\tA door to the hallway (that is open)"
    )
    b = (
        "This room is called the art studio. In it, you see: \n\ta substance called air\n"
        "\ta wood cup (containing red paint)\n\tthe agent\n\ta table. On the table is: a cup,"
        " a bowl (containing a, b).\nYou also see:\n\tA door to the hallway (that is open)"
    )
    assert canonical(a) == canonical(b)
    assert canonical(a).split("\n")[0] == "This room is called the art studio. In it, you see: "
    assert inventory_items("In your inventory, you see:\n\tan orange\n\ta seed jar\n") == (
        "an orange",
        "a seed jar",
    )


def test_distillation_teleports_drops_looks_and_waits_in_tens():
    gold = [
        "open door to hallway",
        "go to hallway",
        "open door to kitchen",
        "go to kitchen",
        "look around",
        "pick up thermometer",
        "open door to hallway",
        "close door to kitchen",
        *["examine pot", "use thermometer in inventory on pot"] * 6,
        *["wait1"] * 12,
    ]
    watch = ["examine pot", "use thermometer in inventory on pot"] * 6
    passing, waits, lean, moved, *walks, raw = distillations(gold, teleport=True)
    head = ["teleport to kitchen", "pick up thermometer", "close door to kitchen"]
    assert lean == [*head, *watch, *["wait1"] * 12]  # door openings without a move dropped
    assert waits == [*head, *watch, "wait", "wait1", "wait1"]
    # ten time-passing actions in a row are one wait: 12 watching + 12 wait1 = 2 waits + 4
    assert passing == [*head, "wait", "wait", *["wait1"] * 4]
    assert moved[:2] == ["teleport to kitchen", "look around"]
    assert walks[-1] == [a for a in gold if a != "look around"] and raw == gold
    assert distillations(gold, teleport=False)[-1] == gold


def test_an_abandoned_attempt_is_cut_from_the_gold_path():
    """The gold path of melting mercury: the kitchen's freezer for rounds of watching, then
    the workshop's (the same name), where it freezes; without the first attempt the plan
    goes straight to the workshop (melt variation 24: 1.0 in 33 of 80, was 0.37 at 80)."""
    from statelab.envs._scienceworld_expert import without_retries

    watch = ["examine mercury", "use thermometer in inventory on mercury", "wait"]
    second = [
        "go to workshop",
        "open freezer",
        "move metal pot to freezer",
        "examine solid mercury",
        "pick up metal pot",
        "go to kitchen",
        "move metal pot to stove",
    ]
    gold = [
        "focus on mercury",
        "pick up metal pot",
        "open freezer",
        "move metal pot to freezer",
        *watch * 20,
        "pick up metal pot",
        *second,
    ]
    assert without_retries(gold) == ["focus on mercury", "pick up metal pot", *second]
    assert without_retries(second) == second  # nothing abandoned
    # the same move twice without a pick-up between them is no abandoned attempt
    twice = ["move metal pot to freezer", "wait", "move metal pot to freezer"]
    assert without_retries(twice) == twice


def test_self_watering_pots_need_no_watering_rounds():
    """grow-fruit variation 95 (``easy``: self-watering pots): the gold path's three watering
    rounds cut, 39 steps of its 60 (the distilled gold path needs 70)."""
    from statelab.envs._scienceworld_expert import without_watering

    water = ["activate sink", "move jug to sink", "pour jug into flower pot 1", "deactivate sink"]
    grow = ["move orange seed in seed jar to flower pot 1", "0"]
    gold = [*grow, *water, "wait1", *water, "open bee hive", *water, "focus on orange"]
    assert without_watering(gold) == [*grow, "wait1", "open bee hive", "focus on orange"]
    assert without_watering(grow) == grow


def test_the_sink_is_left_on_between_watering_rounds():
    """grow-fruit variation 101 (its pots need watering): the gold path switches the sink off
    and on between its three rounds; left on, 59 steps of its 60 (the gold path needs 63)."""
    from statelab.envs._scienceworld_expert import with_sink_left_on

    pour = ["move jug to sink", "pour jug into flower pot 1"]
    gold = ["activate sink", *pour, "deactivate sink", "wait1", "activate sink", *pour,
            "deactivate sink", "focus on orange"]  # fmt: skip
    assert with_sink_left_on(gold) == ["activate sink", *pour, "wait1", *pour,
                                       "deactivate sink", "focus on orange"]  # fmt: skip
    assert with_sink_left_on(pour) == pour


@pytest.fixture(scope="module")
def lifespan():
    from statelab.envs import make_env

    env = make_env("scienceworld/lifespan-longest-lived")
    yield env
    env.close()


def test_the_expert_wins_in_its_budget_and_the_score_is_the_best_seen(lifespan):
    obs, info = lifespan.reset(seed=0)
    assert lifespan.variation == 93 and "longest life span" in obs.goal
    # the room is the one the first look names; no action list by default
    assert obs.text.startswith(f"This room is called the {obs.facts.location}.")
    assert obs.admissible is None
    assert info["privileged"]["walkthrough"][0] == "teleport to outside"
    policy, done, rewards = lifespan.expert(), False, []
    while not done:
        obs, r, term, trunc, info = lifespan.step(policy.act(obs, info))
        rewards.append(r)
        done = term or trunc
    assert term and info["success"] and info["score"] == 1.0
    assert sum(rewards) == pytest.approx(1.0)  # rewards are the changes of the best score
    assert lifespan.steps <= lifespan.budget == 10


def test_the_authors_start_shows_the_task_description_alone():
    """``start=task`` (seed 004's configs): the first observation is the task description,
    no look around; the world model then has searched no room; the game is the same."""
    from statelab.envs import make_env
    from statelab.worldmodels.adapters import adapter_for

    env = make_env("scienceworld/lifespan-longest-lived:start=task")
    try:
        obs, info = env.reset(seed=0)
        assert obs.text == obs.goal and "longest life span" in obs.text
        assert "This room is called" not in obs.text
        ad = adapter_for(env.kind, obs)
        assert ad is not None and ad.state.rooms == {} and ad.state.location is None
        assert info["privileged"]["walkthrough"][0] == "teleport to outside"
        obs, *_ = env.step("look around")
        assert obs.text.startswith(f"This room is called the {obs.facts.location}.")
    finally:
        env.close()


def test_an_unparsed_action_is_invalid_and_a_wrong_focus_fails_for_good(lifespan):
    obs, info = lifespan.reset(seed=0)
    obs, r, term, _, info = lifespan.step("xyzzy, flap your arms")
    assert info["valid"] is False and obs.text.startswith("No known action") and r == 0.0
    lifespan.step("teleport to outside")
    assert lifespan.step("look around")[0].facts.location == "outside"
    # focusing on something that is not an animal ends the task: the score stays the best seen
    obs, r, term, _, info = lifespan.step("focus on air")
    assert term and not info["success"] and info["score"] == pytest.approx(lifespan.score())
    assert info["privileged"]["raw_score"] < 0 <= info["score"]


def test_the_simulator_goes_back_to_the_pool_and_is_reused():
    from statelab.envs import _scienceworld_server as server
    from statelab.envs import make_env

    env = make_env("scienceworld/find-non-living-thing")
    env.reset(seed=0)
    sw = env._sim.sw if env._sim else None
    before = server.idle()
    env.close()
    assert server.idle() == min(before + 1, server.MAX_IDLE)
    again = make_env("scienceworld/find-non-living-thing")
    again.reset(seed=1)
    assert again._sim is not None and again._sim.sw is sw  # no new JVM
    again.close()


def _config_tasks() -> list[str]:
    """The ScienceWorld tasks the seed-004 configs name."""
    import yaml

    tasks: set[str] = set()
    for path in (Path(__file__).parents[2] / "configs" / "seed004").glob("*.yaml"):
        envs = yaml.safe_load(path.read_text()).get("grid", {}).get("env", [])
        tasks |= {e.split(":")[0].split("/", 1)[1] for e in envs if e.startswith("scienceworld/")}
    return sorted(tasks)


CONFIG_TASKS = _config_tasks()


def _play_expert(task: str, seed: int = 0) -> str:
    from typer.testing import CliRunner

    from statelab.cli import app

    res = CliRunner().invoke(app, ["play", f"scienceworld/{task}", "--expert", "--seed", str(seed)])
    assert res.exit_code == 0, res.output
    return res.output.strip().splitlines()[-1]


#: the expert on the anchor's test episodes, one line each (benchmarks/scienceworld_expert.py)
RECORD = Path(__file__).parents[2] / "benchmarks" / "scienceworld_expert.jsonl"


def _record() -> dict[tuple[str, int], dict]:
    """The latest record of each (task, seed)."""
    import json

    rows = [json.loads(line) for line in RECORD.read_text().splitlines() if line.strip()]
    return {(r["task"], r["seed"]): r for r in rows}


def _config_episodes(name: str) -> set[tuple[str, int]]:
    from statelab.run.config import load_experiment

    exp = load_experiment(Path(__file__).parents[2] / "configs" / "seed004" / f"{name}.yaml")
    return {
        (env.split(":")[0].split("/", 1)[1], seed)
        for env in exp.grid.env
        if env.startswith("scienceworld/")
        for seed in exp.env_seeds(env)
    }


def test_the_record_holds_the_anchors_211_episodes_and_the_configs_play_them():
    """The record holds one line per episode of the anchor's test set (every task's test
    split: 211), each a success by the anchor's and MPO's rule (a score of at least 70 within
    the task's budget); the seed-004 configs play exactly those episodes."""
    from statelab.envs.scienceworld import TASKS, env_class

    rows = [line for line in RECORD.read_text().splitlines() if line.strip()]
    record = _record()
    expected = {(t, s) for t in TASKS for s in env_class(t).splits["test"]}
    assert len(rows) == len(record) == len(expected) == 211 and set(record) == expected
    assert all(r["won"] == (r["score"] >= 0.7 and r["steps"] <= r["budget"])
               for r in record.values())  # fmt: skip
    won = {k for k, r in record.items() if r["won"]}
    assert won == expected
    for name in ("fig3_benchmarks", "fig4_memory_vs_belief"):
        assert _config_episodes(name) == won


def test_the_episodes_the_expert_wins_short_of_full_marks_are_the_explained_ones():
    """identify-life-stages-1 variations 9-12: the fourth life stage first exists after 32
    actions (each action advances the life cycle one tick, a ``wait`` no more), so the
    shortest full-marks win is 33 steps against the task's budget of 30 (MPO's, which the
    authors read); each scores 0.95 in 30, a success (docs/seed004.md). Every other episode
    scores 1.0."""
    record = _record()
    short = {k: r for k, r in record.items() if not r["perfect"]}
    assert set(short) == {("identify-life-stages-1", s) for s in range(4)}
    assert all(r["score"] == 0.95 and r["steps"] == r["budget"] == 30 and r["won"]
               for r in short.values())  # fmt: skip
    assert all(r["score"] == 1.0 for k, r in record.items() if k not in short)


#: fixed episodes (issue 20, item 15): the expert wins each through `statelab play`
FIXED = [
    ("melt", 3),  # mercury: straight to the workshop's freezer
    ("identify-life-stages-1", 4),  # the brown bear's three stages in 24 of 30
    ("find-living-thing", 1),  # the focus search
    ("grow-fruit", 8),  # v101: the sink left on between watering rounds, 59 of 60
]


@pytest.mark.slow
@pytest.mark.parametrize(("task", "seed"), FIXED)
def test_statelab_play_expert_wins_a_fixed_episode(task, seed):
    assert _play_expert(task, seed).split()[0] in ("score=1", "score=1.0")


@pytest.mark.parametrize("task", [t for t in FAST if t in CONFIG_TASKS])
def test_statelab_play_expert_scores_100_on_a_config_task(task):
    assert _play_expert(task).split()[0] in ("score=1", "score=1.0")


@pytest.mark.slow
@pytest.mark.parametrize("task", [t for t in CONFIG_TASKS if t not in FAST])
def test_statelab_play_expert_scores_100_on_every_config_task(task):
    """``statelab play scienceworld/<task> --expert`` scores 1.0 on seed 0."""
    assert _play_expert(task).split()[0] in ("score=1", "score=1.0")


# -- the validity oracle (seed 004's oracle WALL-E) -----------------------------------------------
PROBES = ("fly to the moon", "look at", "pick up", "0", "focus on agent", "open door to kitchen")


def _play_plan(env, seed, probe):
    """The expert's plan from a fresh load: every observation, reward, validity and raw score,
    asking the oracle about the next action and about every probe before each step when
    ``probe`` (what it answered is returned beside what the env did)."""
    obs, info = env.reset(seed=seed)
    seen, asked = [obs.text], []
    for action in list(info["privileged"]["gold"]):
        if probe:
            asked.append((env.would_accept(action), [env.would_accept(p) for p in PROBES]))
        obs, r, term, trunc, info = env.step(action)
        seen.append((obs.text, r, info["valid"], info["privileged"]["raw_score"]))
        if term or trunc:
            break
    return seen, asked, env.score()


@pytest.mark.parametrize("task", ["lifespan-longest-lived", "find-living-thing"])
def test_asking_the_oracle_never_changes_the_trajectory(task):
    """find-living-thing has bees (the simulator's random draws move them): any draw or tick
    the oracle made would show."""
    from statelab.envs import make_env

    env = make_env(f"scienceworld/{task}")
    try:
        plain, _, s0 = _play_plan(env, 0, probe=False)
        probed, asked, s1 = _play_plan(env, 0, probe=True)
        assert probed == plain and s1 == s0 == 1.0
        # the oracle said yes to every action of the plan, which the env accepted
        assert all(ok for ok, _ in asked) and all(v for _, _, v, _ in plain[1:])
        # and no to input no action matches
        assert not any(answers[0] for _, answers in asked)
    finally:
        env.close()


def test_the_oracle_rejects_and_accepts_as_the_env_would(lifespan):
    lifespan.reset(seed=0)
    assert lifespan.would_accept("xyzzy, flap your arms") is False
    assert lifespan.would_accept("look around") is True
    assert lifespan.would_accept("teleport to outside.") is True  # the env's own clean-up
    # what it said is what the env does
    obs, _, _, _, info = lifespan.step("xyzzy, flap your arms")
    assert info["valid"] is False
    obs, _, _, _, info = lifespan.step("teleport to outside")
    assert info["valid"] is True and obs.facts.location == "outside"
