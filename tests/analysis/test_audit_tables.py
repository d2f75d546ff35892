"""The audit's tables and the state accuracy of written states, on constructed data with
known answers, and the report's audit section recomputed from the stored points."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from statelab.analysis.audit.stateacc import score_text, text_accuracy
from statelab.analysis.audit.tables import markdown, step_bin, summary


def _points(rows):
    cols = ["env", "label", "seed", "k", "nll_own", "nll_full", "nll_oracle", "nll_readtime",
            "beta", "kappa", "lost", "rel_lag", "rel_gain"]  # fmt: skip
    return pd.DataFrame(rows, columns=cols)


def test_step_bins():
    assert [step_bin(k) for k in (0, 4, 5, 9, 10, 19, 20, 99)] == [
        "0–4", "0–4", "5–9", "5–9", "10–19", "10–19", "20+", "20+"]  # fmt: skip


def test_summary_pools_points_and_clusters_by_game():
    nan = math.nan
    df = _points([
        ("e", "r", 1, 0, 2.0, 1.0, nan, 1.0, 0.0, 1.0, 1.0, 2, 0.9),
        ("e", "r", 1, 5, 4.0, 1.0, nan, 1.0, 0.0, 3.0, 3.0, None, 0.1),
        ("e", "r", 2, 0, 3.0, 1.0, nan, 1.0, 0.0, 2.0, 2.0, 4, 0.7),
    ])  # fmt: skip
    (row,) = summary(df, ["env", "label"]).to_dict("records")
    assert (row["points"], row["games"]) == (3, 2)
    assert row["kappa"].mean == pytest.approx(2.0) and row["kappa"].games == 2
    assert row["kappa"].points == 3 and 1.0 <= row["kappa"].low <= 2.0 <= row["kappa"].high <= 3.0
    assert row["nll_own"] == pytest.approx(3.0) and math.isnan(row["nll_oracle"])
    assert row["rel_lag"] == 3.0 and row["rel_defined"] == "2/3"
    text = markdown(summary(df.assign(label="a | b"), ["env", "label"])[["label", "kappa"]])
    assert text.splitlines()[2].startswith("| a \\| b | 2.00 [")  # a label's bar escaped


GOLD = {"location": "fridge 1", "inventory": ["apple 1"], "visited": ["table 1", "fridge 1"]}


def test_a_free_text_state_is_read_by_mention():
    places, items = {"fridge 1", "table 1", "sink 1"}, {"apple 1", "mug 2"}
    right = score_text("Went to table 1, now at fridge 1 holding apple 1.", GOLD, places, items)
    assert right == {"location": 1.0, "visited": 1.0, "inventory": 1.0}
    # the place named last is not the location; the mug is not held; sink 1 was not visited
    wrong = score_text("At fridge 1, then sink 1; holding apple 1 and mug 2.", GOLD, places, items)
    assert wrong == {"location": 0.0, "visited": 0.0, "inventory": 0.0}
    # an env without places (Textcraft) scores the inventory only
    assert score_text("4 oak planks", {"inventory": ["4 oak planks"]}, set(), {"4 oak planks"}) \
        == {"inventory": 1.0}  # fmt: skip


def test_text_accuracy_compares_step_t_with_the_gold_after_step_t_minus_1():
    g0 = {"location": "table 1", "inventory": [], "visited": ["table 1"]}
    steps = pd.DataFrame({
        "run": ["r"] * 3, "seed": [0] * 3, "t": [1, 2, 3],
        "memory": ["", "I am at table 1.", "I am at table 1 with apple 1."],
        "gold": [json.dumps(g0), json.dumps(GOLD), json.dumps(GOLD)],
    })  # fmt: skip
    (row,) = text_accuracy(steps, "memory").to_dict("records")
    # step 2 vs g0: all right; step 3 vs GOLD: the location (table 1 named last) wrong,
    # visited right (table 1, the current fridge 1 left out of both), inventory right
    assert row["scored"] == 2
    assert (row["location"], row["visited"], row["inventory"]) == (0.5, 1.0, 1.0)
    assert row["accuracy"] == pytest.approx(5 / 6)


class _Store:
    """The two reads written_state_accuracy makes, over constructed frames."""

    def __init__(self, runs: pd.DataFrame, steps: pd.DataFrame) -> None:
        self.runs, self.steps = runs, steps

    def runs_frame(self) -> pd.DataFrame:
        return self.runs

    def episode_frames(self, name, columns=None, where=None, *, present=(), size=5000):
        assert name == "steps" and where["rollout"] == 0 and tuple(present) == ("gold",)
        mine = self.steps[self.steps["run"].isin(where["run"]) & self.steps["gold"].notna()]
        yield mine[[c for c in columns if c in mine.columns]]


def test_written_states_are_scored_by_source_stateact_fields_and_a_summary():
    from statelab.analysis.agentmetrics import state_accuracy
    from statelab.analysis.audit.stateacc import written_state_accuracy

    g0 = {"location": "table 1", "inventory": [], "visited": ["table 1"]}
    gold = [json.dumps(g0), json.dumps(GOLD), json.dumps(GOLD)]
    replies = ["", "Current Location: table 1\nCurrent Inventory: nothing\nAction: x",
               "Current Location: sink 1\nCurrent Inventory: apple 1\nAction: y"]  # fmt: skip
    steps = pd.DataFrame({
        "run": ["s"] * 3 + ["m"] * 3, "seed": [0] * 6, "t": [1, 2, 3] * 2,
        "reply": replies + [""] * 3, "grounding": [""] * 6,
        "memory": [""] * 3 + ["", "I am at table 1.", "I am at table 1 with apple 1."],
        "gold": gold * 2,
    })  # fmt: skip
    agent = "stateact:goal+state+thought"
    runs = pd.DataFrame({
        "run": ["s", "m"], "label": ["stateact", "summary"], "env": ["household"] * 2,
        "agent": [agent, "act"], "tags": [("tracks-state", "needs-model"), ("needs-model",)],
        "components": [{"history": {"tags": []}}, {"history": {"tags": ["needs-model"]}}],
    })  # fmt: skip
    got = {r["source"]: r for r in written_state_accuracy(_Store(runs, steps)).to_dict("records")}
    assert set(got) == {"reply", "memory"}
    want = state_accuracy(pd.DataFrame({"run": ["s"], "seed": [0], "agent": [agent]}),
                          steps[steps["run"] == "s"])  # fmt: skip
    assert got["reply"]["accuracy"] == pytest.approx(float(want["accuracy"].iloc[0]))
    assert got["reply"]["label"] == "stateact" and got["reply"]["scored"] == 2
    assert got["memory"]["accuracy"] == pytest.approx(5 / 6)  # as text_accuracy's test
