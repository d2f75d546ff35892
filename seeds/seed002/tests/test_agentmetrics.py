import json
import math

import pandas as pd
import pytest

from statelab.analysis.agentmetrics import (
    avg_steps_solved,
    bucket_of,
    length_buckets,
    parse_state,
    state_accuracy,
    state_accuracy_by,
    success_rate,
    tracks_state,
)
from statelab.run.records import EpisodeRecord, StepRecord
from statelab.run.store import Store
from statelab_seed002.agents_table import ablation_markdown, agent_metrics, agent_table, row_label


def gold(loc, inv, visited):
    return json.dumps({"location": loc, "inventory": inv, "visited": visited})


def turn(loc=None, inv=None, visited=None, action="look"):
    lines = [">goal: g"]
    if visited is not None:
        lines.append(f"locations visited: {visited}")
    if loc is not None:
        lines.append(f"current location: {loc}")
    if inv is not None:
        lines.append(f"current inventory: {inv}")
    return "\n".join([*lines, "thought: None", f"action: {action}"])


G1 = gold("table 1", [], ["table 1"])
G2 = gold("table 1", ["apple 1"], ["table 1"])
G3 = gold("fridge 1", ["apple 1"], ["table 1", "fridge 1"])
STEPS = pd.DataFrame(
    [
        # A: stateact in a household; 3 scored replies, 6 of 9 fields right
        ("A", 0, 1, turn("None", "None", "None"), G1),
        ("A", 0, 2, turn("Table 1.", "None", "None"), G2),  # 3/3 against G1
        ("A", 0, 3, turn("table 1", "an apple 1", "countertop 1"), G3),  # 2/3 against G2
        ("A", 0, 4, turn(None, "apple 1, mug 1", "table 1"), G3),  # 1/3 against G3
        # B: react writes no state
        ("B", 0, 1, "thought: t\naction: look", G1),
        ("B", 0, 2, "thought: t\naction: look", G1),
        # C: JSON state, all right
        ("C", 0, 1, ">{}", gold("fridge 1", [], ["fridge 1"])),
        (
            "C",
            0,
            2,
            '>{"goal": "g", "locations_visited": null, "current_location": "fridge 1",'
            ' "current_inventory": null, "action": "look"}',
            G1,
        ),
        # D: Textcraft-like (no places): only the inventory is scored
        ("D", 0, 1, turn(inv="Unknown"), gold(None, ["1 stick"], [])),
        ("D", 0, 2, turn(inv="1 stick"), gold(None, ["1 stick", "4 oak planks"], [])),
        ("D", 0, 3, turn(inv="4 oak planks, 1 stick"), gold(None, [], [])),
    ],
    columns=["run", "seed", "t", "reply", "gold"],
)
EPISODES = pd.DataFrame(
    [
        ("A", 0, "stateact", "done", 1, 4),
        ("B", 0, "react", "done", 0, 2),
        ("C", 0, "stateact:goal+state/json", "done", 1, 2),
        ("D", 0, "stateact", "done", 0, 3),
    ],
    columns=["run", "seed", "agent", "status", "success", "steps"],
)


def test_parse_state_text_and_json():
    assert parse_state(turn("The Fridge 1", "a mug 1 and an apple 2", "None")) == {
        "location": "fridge 1",
        "inventory": frozenset({"mug 1", "apple 2"}),
        "visited": frozenset(),
    }
    js = '>{"current_location": "sinkbasin 1", "current_inventory": ["egg 2"]}'
    assert parse_state(js) == {"location": "sinkbasin 1", "inventory": frozenset({"egg 2"})}
    assert parse_state("thought: t\naction: look") == {}


def test_state_accuracy_on_a_hand_made_trace():
    per_ep = state_accuracy(EPISODES, STEPS).set_index("run")
    a = per_ep.loc["A"]
    assert a.scored == 3
    assert a.location == pytest.approx(2 / 3) and a.inventory == pytest.approx(2 / 3)
    assert a.visited == pytest.approx(2 / 3) and a.accuracy == pytest.approx(6 / 9)
    assert per_ep.loc["B"].scored == 0 and math.isnan(per_ep.loc["B"].accuracy)
    assert per_ep.loc["C"].accuracy == 1.0
    d = per_ep.loc["D"]
    assert d.inventory == 1.0 and math.isnan(d.location) and d.accuracy == 1.0
    by_agent = state_accuracy_by(EPISODES, STEPS, "agent").set_index("agent")
    assert by_agent.loc["stateact", "accuracy"] == pytest.approx((6 / 9 + 1.0) / 2)


def test_unknown_agents_are_scored_on_the_fields_they_write():
    ep = EPISODES.drop(columns=["agent"])
    per_ep = state_accuracy(ep, STEPS).set_index("run")
    assert per_ep.loc["A"].accuracy == pytest.approx(6 / 9)
    assert tracks_state("adapt:stateact:goal+state@3") is True
    assert tracks_state("adapt") is False and tracks_state("tools") is None


LENGTHS = pd.DataFrame(
    {
        "run": ["r"] * 7,
        "status": ["done"] * 7,
        "steps": [5, 10, 11, 25, 45, 50, 60],
        "success": [True, True, False, True, True, False, False],
    }
)


def test_length_buckets_on_hand_made_data():
    assert [bucket_of(s) for s in (1, 10, 11, 40, 41, 50, 51)] == [
        "0-10",
        "0-10",
        "10-20",
        "30-40",
        "40-50",
        "40-50",
        "50+",
    ]
    b = length_buckets(LENGTHS).set_index("bucket")
    assert list(b.index) == ["0-10", "10-20", "20-30", "30-40", "40-50", "50+"]
    assert list(b["n"]) == [2, 1, 1, 0, 2, 1] and list(b["solved"]) == [2, 0, 1, 0, 1, 0]
    assert b.loc["40-50", "success"] == 0.5 and math.isnan(b.loc["30-40", "success"])
    assert "50+" not in set(length_buckets(LENGTHS[LENGTHS.steps <= 50])["bucket"])


def test_success_and_average_steps_of_solved_episodes():
    s = success_rate(LENGTHS).iloc[0]
    assert (s.n, s.success) == (7, pytest.approx(4 / 7))
    a = avg_steps_solved(LENGTHS).iloc[0]
    assert (a.solved, a.avg_steps) == (4, pytest.approx((5 + 10 + 25 + 45) / 4))
    none = avg_steps_solved(LENGTHS.assign(success=False)).iloc[0]
    assert none.solved == 0 and math.isnan(none.avg_steps)


def test_ablation_table_rows_follow_table_6():
    agents = ["stateact", "adapt:stateact", "stateact:goal+thought", "react", "stateact:none"]
    ep = pd.DataFrame(
        {
            "run": agents,
            "seed": 0,
            "agent": agents,
            "status": "done",
            "success": [1, 1, 0, 0, 1],
            "steps": [19, 30, 40, 50, 23],
        }
    )
    table = agent_table(ep)
    assert list(table["agent"]) == [
        "stateact:none",
        "react",
        "stateact:goal+thought",
        "stateact",
        "adapt:stateact",
    ]
    assert list(table["row"]) == [
        "Act",
        "Thought+Act (ReAct)",
        "Goal+Thought+Act",
        "Goal+State+Thought+Act",
        "ADaPT + Goal+State+Thought+Act",
    ]
    md = ablation_markdown(table)
    assert "| agent | row | n | success % | avg steps (solved) | state acc % |" in md
    calls = ablation_markdown(agent_table(ep.assign(agent_calls=[38, 30, 40, 50, 23])))
    assert "| stateact | Goal+State+Thought+Act | 1 | 100.0 | 19.00 | 38.00 | – |" in calls
    assert "| stateact | Goal+State+Thought+Act | 1 | 100.0 | 19.00 | – |" in md
    assert row_label("react:json") == "Thought+Act (ReAct) (json)"


def test_report_hook_appends_the_table(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    axes = dict(env="rooms", model="m", agent="stateact", history="full", format="n", grounding="-")
    store.save_run("A", "stateact", axes, {})
    ep = EpisodeRecord(run="A", seed=0, status="done", success=True, steps=4, agent_calls=6)
    for t, reply, g in STEPS[STEPS.run == "A"][["t", "reply", "gold"]].itertuples(index=False):
        ep.trajectory.append(
            StepRecord(t, "", "", reply, "look", True, True, 0.0, "", "", 0, 0, 0, 0, 0.0, 0.0, g)
        )
    store.commit_episode(ep)
    store.close()
    text, files = agent_metrics(tmp_path / "s.sqlite", tmp_path)
    assert text.startswith("### Agent variants (seed 002)")
    assert "| stateact | Goal+State+Thought+Act | 1 | 100.0 | 4.00 | 6.00 | 66.7 |" in text
    assert json.loads(files["agent_metrics"].read_text())[0]["agent"] == "stateact"


def test_model_calls_column_recomputed_from_raw_episodes(tmp_path):
    """The anchor counts steps as model calls (its ``num_of_steps`` is the call counter).
    Three real episodes of ``react:original/anchor`` on household, committed to a store: two
    solved rollouts of seed 0 (one thinks before every action: 2 calls a step; one does not)
    and a failed one that repeats ``look`` until the anchor's repetition stop (6 calls, 5
    steps). ``avg_calls`` is the mean over the solved episodes, rollouts each counted once;
    the failed one is left out, as for ``avg_steps``."""
    pytest.importorskip("alfworld")
    import asyncio

    from tests.agents.test_anchor import FnLLM

    from statelab.envs.household import HouseholdEnv
    from statelab.run.config import Sampling
    from statelab.run.episode import run_episode
    from statelab.run.seeding import single
    from statelab.run.spec import RunSpec

    spec = RunSpec.make(env="household", model="fn", agent="react:original/anchor",
                        history="full", format="default", grounding="none",
                        params=Sampling().model_dump(), max_steps=30)  # fmt: skip

    def walk(rollout: int) -> list[str]:
        _, info = HouseholdEnv().reset(seed=single("household", 0, rollout).env_seed)
        return list(info["privileged"]["walkthrough"])

    w0, w1 = walk(0), walk(1)
    thinking = [x for a in w0 for x in ("think: next", a)]
    episodes = [
        asyncio.run(run_episode(spec, 0, FnLLM(lambda m, n: thinking[n - 1]), rollout=0)),
        asyncio.run(run_episode(spec, 0, FnLLM(lambda m, n: w1[n - 1]), rollout=1)),
        asyncio.run(run_episode(spec, 1, FnLLM(lambda m, n: "look"), rollout=0)),
    ]
    assert [e.success for e in episodes] == [True, True, False]
    assert [e.agent_calls for e in episodes] == [2 * len(w0), len(w1), 6]
    assert [e.steps for e in episodes] == [len(w0), len(w1), 5]
    store = Store(tmp_path / "s.sqlite")
    store.save_run(spec.key, "react", dict(env="household", model="fn", agent=spec.agent,
                   history="full", format="default", grounding="none"), {})  # fmt: skip
    for ep in episodes:
        store.commit_episode(ep)
    store.close()
    text, files = agent_metrics(tmp_path / "s.sqlite", tmp_path)
    row = json.loads(files["agent_metrics"].read_text())[0]
    assert (row["n"], row["solved"]) == (3, 2)
    assert row["avg_calls"] == pytest.approx((2 * len(w0) + len(w1)) / 2)
    assert row["avg_steps"] == pytest.approx((len(w0) + len(w1)) / 2)
    assert "avg model calls (solved; the anchor's steps)" in text
