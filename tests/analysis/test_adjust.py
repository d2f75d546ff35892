"""Many runs against one baseline: p values adjusted (Holm by default, Benjamini-Hochberg as
an option), with known answers, and the table saying which."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tests.analysis.test_report import make_episodes

from statelab.analysis import summarise, to_json, to_markdown
from statelab.analysis.stats import adjust_p


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
    assert "(6 pairs; Holm 0.0625)" in md
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
