"""Seed 001's observation (``zoom:anchor``): the close-up spans rows -1 ... +10 and columns
-5 ... +5 with relative tick labels; on vision backends two images and no text grid."""

from __future__ import annotations

import asyncio

from tests.agents.test_anchor import FnLLM

from statelab.core import GenParams, Observation, Prompt, StepContext
from statelab.facts import TrafficFacts
from statelab.facts.traffic import anchor_views
from statelab.state.grounding import make_grounding

FACTS = TrafficFacts(25, (5, 5), (24, 24), ((15, 5), (4, 0), (3, 5), (6, 11), (9, 9)), 10)


def test_anchor_close_up_spans_rows_minus1_to_plus10_and_columns_pm5():
    text, wide, close = anchor_views(FACTS, scale=4)
    rows = text.splitlines()
    assert rows[0].split() == [f"{d:+d}" for d in range(-5, 6)]
    body = {int(r.split()[0]): r.split()[1:] for r in rows[1:13]}
    assert sorted(body) == list(range(-1, 11)) and all(len(r) == 11 for r in body.values())
    assert body[0][5] == "A"
    assert body[10][5] == "C"  # (15, 5): ten rows below, a centred 7x7 would miss it
    assert body[-1][0] == "C"  # (4, 0): one row above, five columns left
    assert body[4][9] == "C"  # (9, 9)
    cars = sum(row.count("C") for row in body.values())
    assert cars == 3  # (3, 5) is two rows above and (6, 11) six columns right: outside
    assert close.shape == (12 * 4 + 28, 11 * 4 + 28, 3) and wide.shape == (25 * 12, 25 * 12, 3)
    assert "(5, 5)" not in text and "(24, 24)" not in text  # no absolute coordinates


def _apply(llm_vision: bool):
    g = make_grounding("zoom:anchor", GenParams())
    obs = Observation("grid", FACTS, None, "reach the target")
    prompt = Prompt("MANUAL", "ASCII WINDOW", None, goal="reach the target")
    llm = FnLLM(lambda m, n: "")
    llm.vision = llm_vision
    return asyncio.run(g.apply(StepContext.for_prompt(prompt, obs), llm)).prompt


def test_vision_backends_get_two_images_and_no_text_grid():
    p = _apply(True)
    assert len(p.images) == 2 and "ASCII WINDOW" not in p.view
    assert "CLOSE-UP" in p.view and "reach the target" in p.view
    t = _apply(False)
    assert t.images == () and "ASCII WINDOW" in t.view and "+10" in t.view


def test_close_up_image_has_tick_labels():
    """The close-up image is the 12 x 11 cells (32 px) below a 28 px margin of column labels
    and right of a 28 px margin of row labels: each label is dark ink centred on its cell,
    the labels differ from each other, and the cells themselves are the unlabelled raster."""
    from statelab.facts.traffic import raster

    _, _, close = anchor_views(FACTS, scale=32)
    m, s = 28, 32
    assert close.shape == (m + 12 * s, m + 11 * s, 3)
    full = raster(25, FACTS.agent, FACTS.target, FACTS.cars, half=10, scale=s, show_target=True)
    assert (close[m:, m:] == full[4 * s : 16 * s, 0 : 11 * s]).all()  # rows 4-15, columns 0-10
    assert (close[:m, :m] == 255).all()  # the corner is blank
    ink = close.min(axis=2) < 100
    cols = [close[:m, m + j * s : m + (j + 1) * s] for j in range(11)]  # -5 ... +5
    rows = [close[m + i * s : m + (i + 1) * s, :m] for i in range(12)]  # -1 ... +10
    for j in range(11):
        assert ink[:m, m + j * s : m + (j + 1) * s].any(), f"column {j - 5:+d} has no label"
    for i in range(12):
        assert ink[m + i * s : m + (i + 1) * s, :m].any(), f"row {i - 1:+d} has no label"
    assert len({p.tobytes() for p in cols}) == 11  # eleven different column labels
    assert len({p.tobytes() for p in rows}) == 12  # twelve different row labels
