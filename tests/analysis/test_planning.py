"""``analysis/planning.py``: a plan's inputs from a pilot store (its paired differences as the
report pairs them, Holm's count, tokens and dollars per episode from the stored calls) or a
stated distribution, and every setting refused in one line when it cannot be honoured."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from tests.analysis._pilot import CALLS, SCORES, STEPS, build_pilot

from statelab.analysis.plan_report import plan_markdown, write_plan
from statelab.analysis.planning import make_plan, read_pilot, stated_scores
from statelab.core import ConfigError
from statelab.run.store import Store


def _no_price(model: str, n_in: int, n_out: int) -> float | None:
    raise AssertionError(f"nothing here has a price table: {model}")


def _pooled_sd() -> float:
    """Each comparison's differences centred, scaled by sqrt(n / (n - 1)), pooled."""
    base = np.array(SCORES["full"])
    resid = []
    for run in ("summary", "oracle-summary"):
        d = np.array(SCORES[run]) - base
        resid += list((d - d.mean()) * math.sqrt(len(d) / (len(d) - 1)))
    r = np.array(resid)
    return float(np.sqrt(np.mean((r - r.mean()) ** 2)))


def test_a_pilot_gives_its_comparisons_scatter_and_appetite(tmp_path: Path) -> None:
    pilot = read_pilot(build_pilot(tmp_path / "store.sqlite"), price=_no_price)
    assert pilot.comparisons == 2 and pilot.seeds == 8  # Holm over summary, oracle-summary
    assert pilot.noise.kind == "bootstrap" and pilot.noise.sd == pytest.approx(_pooled_sd())
    runs = {r.run: r for r in pilot.runs}
    assert set(runs) == set(SCORES)
    assert runs["full"].tokens_in == 2075 * STEPS and runs["full"].tokens_out == 15 * STEPS
    assert runs["summary"].tokens_in == (616 + 400) * STEPS  # the writer's calls count too
    assert runs["expert"].tokens_in == 0 and runs["expert"].dollars == 0.0
    assert runs["full"].dollars is None and "no price table covers it" in runs["full"].why
    normal = read_pilot(tmp_path / "store.sqlite", noise="normal", price=_no_price)
    assert normal.noise.kind == "normal" and normal.noise.sd == pytest.approx(_pooled_sd())


def test_a_priced_model_costs_its_calls_and_the_plan_scales_them(tmp_path: Path) -> None:
    path = build_pilot(tmp_path / "store.sqlite", model="openai:gpt-4o-mini")
    seen: set[str] = set()

    def price(model: str, n_in: int, n_out: int) -> float:
        seen.add(model)
        return n_in * 1e-6 + n_out * 4e-6

    pilot = read_pilot(path, price=price)
    assert seen == {"gpt-4o-mini"}  # the name its backend declares (LLM.price_name)
    runs = {r.run: r for r in pilot.runs}
    per_ep = sum(a * 1e-6 + b * 4e-6 for a, b in CALLS["summary"]) * STEPS
    assert runs["summary"].dollars == pytest.approx(per_ep)
    plan = make_plan(pilot, [0.3], sims=300)
    row = plan.rows[0]
    n = row.needed.seeds
    assert n is not None and row.episodes == 5 * n  # five runs, one episode a seed
    tokens = sum(sum(a for a, _ in CALLS[r]) for r in CALLS) * STEPS * n
    assert row.tokens_in == pytest.approx(tokens)
    want = n * sum(sum(a * 1e-6 + b * 4e-6 for a, b in CALLS[r]) * STEPS for r in CALLS)
    assert row.dollars == pytest.approx(want)
    md = plan_markdown(plan)
    assert f"| 0.3 | {n} |" in md and f"{want:,.2f}" in md and "Holm over 2" in md


def test_litellm_prices_the_pilots_model_from_its_own_table(tmp_path: Path) -> None:
    litellm = pytest.importorskip("litellm", reason="needs the litellm extra")
    pilot = read_pilot(build_pilot(tmp_path / "s.sqlite", model="openai:gpt-4o-mini"))
    p = litellm.model_cost["gpt-4o-mini"]
    full = {r.run: r for r in pilot.runs}["full"]
    want = STEPS * (2075 * p["input_cost_per_token"] + 15 * p["output_cost_per_token"])
    assert full.dollars == pytest.approx(want) and full.dollars > 0


def test_an_unpriced_model_is_said_and_never_guessed(tmp_path: Path) -> None:
    path = build_pilot(tmp_path / "store.sqlite", model="litellm:openai/statelab-no-such")
    plan = make_plan(read_pilot(path, price=lambda m, a, b: None), [0.3], sims=200)
    assert plan.rows[0].dollars is None
    md = plan_markdown(plan)
    assert "LiteLLM's price table does not price openai/statelab-no-such" in md
    assert "| – |" in md


def test_a_stated_distribution(tmp_path: Path) -> None:
    normal = stated_scores("mean=0.4,sd=0.2", comparisons=3)
    assert normal.noise.sd == pytest.approx(0.2 * math.sqrt(2)) and normal.comparisons == 3
    listed = stated_scores("0.2, 0.5, 0.4, 0.6")
    s = np.array([0.2, 0.5, 0.4, 0.6])
    assert listed.noise.sd == pytest.approx(math.sqrt(2) * s.std())  # two independent draws
    plan = make_plan(normal, [0.2], sims=300)
    n = plan.rows[0].needed.seeds
    assert n is not None and plan.rows[0].episodes == 4 * n and plan.rows[0].dollars is None
    files = write_plan(plan, tmp_path / "plan")
    assert (
        files["plot"].read_bytes()[:4] == b"\x89PNG" and "| 0.2 |" in files["markdown"].read_text()
    )


@pytest.mark.parametrize(
    ("spelled", "says"),
    [
        ("mean=0.4", "give sd=S"),
        ("mean=0.4,sd=0.2,n=3", "'n=3'"),
        ("mean=1.4,sd=0.2", "outside the score's range"),
        ("mean=0.1,sd=0.4", "an SD in [0, 0.3]"),
        ("0.5", "at least two scores"),
        ("0.5,abc", "'abc' is not a number"),
        ("0.5,1.5", "outside the range [0, 1]"),
    ],
)
def test_a_stated_distribution_it_cannot_honour_is_refused(spelled: str, says: str) -> None:
    with pytest.raises(ConfigError, match=None) as err:
        stated_scores(spelled)
    assert says in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"adjust": "bh"}, "plan holm or none"),
        ({"deltas": [0.7]}, "past the score's top"),
        ({"deltas": [0.0]}, "in (0, 1]"),
        ({"power": 1.0}, "--power and --alpha"),
        ({"comparisons": 0}, "at least 1"),
        ({"sims": 10}, "at least 100"),
    ],
)
def test_a_setting_it_cannot_honour_is_refused(kwargs: dict, says: str) -> None:
    with pytest.raises(ConfigError) as err:
        make_plan(stated_scores("mean=0.4,sd=0.2"), **kwargs)
    assert says in str(err.value)


def test_a_pilot_without_comparisons_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    store = Store(path)
    store.save_experiment("nobase", {})
    store.close()
    with pytest.raises(ConfigError, match="no finished episodes"):
        read_pilot(path)
    build_pilot(tmp_path / "b" / "store.sqlite")
    store = Store(tmp_path / "b" / "store.sqlite")
    store.save_experiment("pilot", {"baseline": None})
    store.close()
    with pytest.raises(ConfigError, match="names no baseline"):
        read_pilot(tmp_path / "b" / "store.sqlite")
