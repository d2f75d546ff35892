"""Many runs against one baseline: p values adjusted (Holm by default, Benjamini-Hochberg as
an option), with known answers, and the table saying which."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tests.analysis.test_report import _episode, make_episodes

from statelab.analysis import summarise, to_json, to_markdown
from statelab.analysis.stats import adjust_p, min_adjusted_p


def test_holm_and_bh_known_answers() -> None:
    p = [0.01, 0.04, 0.03]
    # Holm: sorted 0.01, 0.03, 0.04 times 3, 2, 1 = 0.03, 0.06, 0.04 -> monotone 0.03, 0.06, 0.06
    assert adjust_p(p, "holm") == pytest.approx([0.03, 0.06, 0.06])
    # BH: 0.01 * 3/1, 0.03 * 3/2, 0.04 * 3/3 = 0.03, 0.045, 0.04 -> from the top 0.03, 0.04, 0.04
    assert adjust_p(p, "bh") == pytest.approx([0.03, 0.04, 0.04])
    assert adjust_p(p, "none") == pytest.approx(p)
    assert adjust_p([0.5, 0.9], "holm") == pytest.approx([1.0, 1.0])  # capped at 1
    assert adjust_p([], "holm").size == 0
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        adjust_p([1.5], "holm")
    with pytest.raises(ValueError, match="method"):
        adjust_p([0.1], "bonferroni")  # type: ignore[arg-type]


def test_holm_by_default_unmarks_what_one_test_alone_would_mark() -> None:
    """summary's exact sign-flip p is 2/64 (six pairs, all better); two runs are compared
    with the baseline, so Holm doubles the smaller p: 0.0625, not significant."""
    episodes = make_episodes()
    raw = summarise(episodes, {"history": "full"}, adjust="none")
    holm = summarise(episodes, {"history": "full"})
    bh = summarise(episodes, {"history": "full"}, adjust="bh")
    row = {name: s.set_index("run").loc["hanoi/summary"] for name, s in
           [("raw", raw), ("holm", holm), ("bh", bh)]}  # fmt: skip
    other = raw.set_index("run").loc["hanoi/oracle", "p"]
    assert row["raw"]["p"] == pytest.approx(2 / 64) and bool(row["raw"]["sig"])
    assert holm.attrs["n_tests"] == 2 and holm.attrs["adjust"] == "holm"
    assert row["holm"]["p_adj"] == pytest.approx(2 * 2 / 64) and not bool(row["holm"]["sig"])
    want_bh = adjust_p(np.array([2 / 64, other]), "bh")[0]
    assert row["bh"]["p_adj"] == pytest.approx(want_bh)
    assert bool(row["bh"]["sig"]) == bool(want_bh < 0.05)
    md = to_markdown(holm, "T")
    # 2 x 2/64 = 0.0625: no Holm p below 0.05 exists at 6 pairs over 2 comparisons
    assert "(6 pairs; Holm 0.0625; n too small for Holm p<0.05 over 2 comparisons)" in md
    assert "adjusted over the 2 comparisons of this table by Holm's step-down" in md
    assert "*" not in md.split("\n\n")[1].replace("`*`", "")  # no starred cell
    assert to_json(holm)["test"]["adjust"] == "holm"
    assert "Benjamini-Hochberg" in to_markdown(bh, "T")


def test_the_random_floor_is_a_reference_row_next_to_the_expert() -> None:
    episodes = make_episodes()
    floor = episodes[episodes["run"] == "hanoi/expert"].assign(
        run="hanoi/random", agent="random", score=0.4, success=False
    )
    summary = summarise(pd.concat([episodes, floor]), {"history": "full"}, adjust="none")
    assert list(summary["run"])[-2:] == ["hanoi/random", "hanoi/expert"]
    rnd = summary.set_index("run").loc["hanoi/random"]
    assert rnd["role"] == "floor" and np.isnan(rnd["p"])
    full = summary.set_index("run").loc["hanoi/full"]
    assert full["floor_run"] == "hanoi/random"
    assert full["floor_diff"] == pytest.approx(0.0)  # full averages 0.4, as the floor
    md = to_markdown(summary, "T")
    assert "| random floor |" in md and "Random floor: uniform over the admissible" in md


def test_min_adjusted_p_known_answers() -> None:
    assert min_adjusted_p([2 / 128] * 4, "holm") == pytest.approx([0.0625] * 4)
    assert min_adjusted_p([2 / 256] * 4, "holm") == pytest.approx([0.03125] * 4)  # 8 pairs
    # mixed designs: never below the own least p, nor below m x the family's least
    assert min_adjusted_p([2 / 64, 0.5], "holm") == pytest.approx([0.0625, 0.5])
    assert min_adjusted_p([2 / 128] * 4, "bh") == pytest.approx([2 / 128] * 4)
    assert min_adjusted_p([0.3, 0.4, 0.5], "holm") == pytest.approx([0.9, 0.9, 0.9])
    assert min_adjusted_p([0.4, 0.5, 0.6], "holm") == pytest.approx([1.0, 1.0, 1.0])  # capped


def _four_better_on_seven_seeds() -> pd.DataFrame:
    rows = []
    for seed in range(7):
        rows.append(_episode("hanoi/full", "full", seed, 0.1 + 0.05 * seed))
        for k, history in enumerate(["summary", "window:2", "window:4", "window:8"]):
            score = 0.1 + 0.05 * seed + 0.1 * (k + 1)
            rows.append(_episode(f"hanoi/{history}", history, seed, score))
    return pd.DataFrame(rows)


def test_the_p_column_says_when_no_holm_mark_can_exist() -> None:
    """Issue 33: 4 runs against one baseline, each better on every one of 7 seeds: p 2/128 =
    0.0156 each (below 0.05, so the unadjusted note says nothing), Holm 4 x 0.0156 = 0.0625
    at best: no `*` can exist at 7 pairs over 4 comparisons, and the p cell says so."""
    holm = summarise(_four_better_on_seven_seeds(), {"history": "full"})
    compared = holm[holm["run"] != "hanoi/full"]
    assert list(compared["p"]) == pytest.approx([2 / 128] * 4)
    assert list(compared["p_adj"]) == pytest.approx([0.0625] * 4)
    assert list(compared["min_p_adj"]) == pytest.approx([0.0625] * 4)
    assert not compared["sig"].any()
    md = to_markdown(holm, "T")
    cell = "0.0156 (7 pairs; Holm 0.0625; n too small for Holm p<0.05 over 4 comparisons)"
    assert md.count(cell) == 4
    assert "Holm multiplies the smallest p by 4" in md
    # unadjusted, or at 8 pairs, a mark is possible and no note is printed
    raw = to_markdown(summarise(_four_better_on_seven_seeds(), {"history": "full"},
                                adjust="none"), "T")  # fmt: skip
    assert "n too small" not in raw
    eight = _four_better_on_seven_seeds()
    eight = pd.concat([eight, eight[eight["seed"] == 6].assign(seed=7)])
    md8 = to_markdown(summarise(eight, {"history": "full"}), "T")
    assert "n too small" not in md8 and "Holm 0.0312" in md8
