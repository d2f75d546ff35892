"""Figure 2 (seed 003): within-write-point Spearman ρ of each score with the outcome, on
constructed candidates with known outcomes."""

from __future__ import annotations

import json
import math

import pytest
from scipy.stats import spearmanr

from statelab_seed003.analysis.fig2 import (
    figure2,
    point_rho,
    read_points,
    spearman,
    table,
    write_figure2,
)


def cand(outcome, rec: dict[int, float | None], win: dict[int, float | None]) -> dict:
    return {
        "text": "x",
        "recursive_k": {str(k): v for k, v in rec.items()},
        "window_k": {str(k): v for k, v in win.items()},
        "outcome": outcome,
    }


def point(seed: int, cands: list[dict], ks=(1, 4)) -> dict:
    return {"run": "r", "seed": seed, "phase": "b", "j": 0, "ks": list(ks), "candidates": cands}


def test_spearman_is_one_for_a_monotone_score_minus_one_reversed_and_ties_as_scipy():
    outcomes = [0.0, 1.0, 2.0, 5.0]
    assert spearman([1.0, 2.0, 3.0, 40.0], outcomes) == pytest.approx(1.0)
    assert spearman([9.0, 3.0, 2.0, -1.0], outcomes) == pytest.approx(-1.0)
    tied_x, tied_y = [1.0, 1.0, 2.0, 3.0, 3.0], [0.0, 1.0, 1.0, 2.0, 4.0]
    assert spearman(tied_x, tied_y) == pytest.approx(spearmanr(tied_x, tied_y).statistic)
    # constant on either side, or one pair: no ρ (scipy gives nan)
    assert spearman([1.0, 1.0, 1.0], [0.0, 1.0, 2.0]) is None
    assert spearman([0.0, 1.0], [3.0, 3.0]) is None and spearman([1.0], [1.0]) is None


def test_a_point_correlates_the_negated_loss_with_the_outcome():
    # lower loss, higher return: the recursive score predicts (ρ = +1), the window score is
    # reversed (ρ = -1); at K = 4 the window has a tie and one candidate without S_4
    p = point(0, [
        cand(0.0, {1: 3.0, 4: 2.0}, {1: 0.1, 4: 0.5}),
        cand(1.0, {1: 2.0, 4: 1.0}, {1: 0.2, 4: 0.5}),
        cand(3.0, {1: 1.0, 4: 0.5}, {1: 0.3, 4: None}),
    ])  # fmt: skip
    assert point_rho(p, "recursive", 1) == pytest.approx(1.0)
    assert point_rho(p, "window", 1) == pytest.approx(-1.0)
    assert point_rho(p, "window", 4) is None  # two candidates left, tied scores


def test_figure2_averages_points_and_clusters_by_game():
    up = [cand(o, {1: -o, 4: -o}, {1: o, 4: 1.0}) for o in (0.0, 1.0, 2.0)]
    mixed = [cand(o, {1: s, 4: -o}, {1: -o, 4: 1.0})
             for o, s in ((0.0, 0.0), (1.0, -2.0), (2.0, -1.0))]  # fmt: skip
    flat = [cand(1.0, {1: 0.0, 4: 0.0}, {1: 0.0, 4: 0.0}) for _ in range(3)]
    no_outcome = [{**c, "outcome": None} for c in up]
    points = [point(0, up), point(0, mixed), point(1, up), point(2, flat), point(3, no_outcome)]
    cells = {(c.form, c.k): c for c in figure2(points)}
    assert set(cells) == {("recursive", 1), ("recursive", 4), ("window", 1), ("window", 4)}
    rec1 = cells[("recursive", 1)]
    # ρ: up +1 (twice), mixed +0.5, flat undefined; the no-outcome point is not scored
    assert (rec1.defined, rec1.points, rec1.rho.games) == (3, 4, 2)
    assert rec1.rho.mean == pytest.approx((1.0 + 0.5 + 1.0) / 3)
    assert rec1.rho.low <= rec1.rho.mean <= rec1.rho.high <= 1.0
    assert cells[("recursive", 4)].rho.mean == pytest.approx(1.0)
    assert cells[("window", 1)].rho.mean == pytest.approx((-1.0 + 1.0 - 1.0) / 3)  # up, mixed, up
    w4 = cells[("window", 4)]  # a constant window score: no point has a ρ
    assert w4.defined == 0 and math.isnan(w4.rho.mean)
    assert "| recursive | 1 | 0.83 [" in table(list(cells.values()))
    assert "| window | 4 | – | 0 / 4 | 0 |" in table(list(cells.values()))


def test_write_figure2_writes_table_plot_and_json(tmp_path):
    up = [cand(o, {1: -o}, {1: o}) for o in (0.0, 1.0, 2.0)]
    src = tmp_path / "scores_round0.jsonl"
    src.write_text("\n".join(json.dumps(point(s, up, ks=(1,))) for s in (0, 1)) + "\n")
    got = write_figure2(read_points([src]), tmp_path / "out")
    assert {(c["form"], c["rho"], c["defined"]) for c in got["cells"]} == {
        ("recursive", 1.0, 2), ("window", -1.0, 2)
    }  # fmt: skip
    assert (tmp_path / "out" / "fig2.png").stat().st_size > 1000
    assert json.loads((tmp_path / "out" / "fig2.json").read_text()) == got
    assert "recursive" in (tmp_path / "out" / "fig2.md").read_text()
