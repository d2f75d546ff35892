"""Reader DAgger (seed 003, Appendix B) on a cheap env with scripted readers, so every label
is known: iteration 0 clones a* on the logged episodes; iteration 1 adds the states the
iteration-0 reader visited itself, each labelled with a* from that state; every iteration is
checked online and the acceptance bar (80% of the eval games) is applied to the last one."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import pytest

from statelab.core import Env, Observation
from statelab.envs import ENVS, register_env
from statelab.envs import _registry as env_registry
from statelab.facts import TextFacts
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab_seed003.train._config import ReaderConfig
from statelab_seed003.train.pipeline import train_reader
from statelab_seed003.train.reader import BAR, acceptance

GOAL = 4


class _Expert:
    def act(self, obs: Observation, info: dict[str, Any]) -> str:
        return str(info["privileged"]["a_star"])


class Line(Env):
    """A line of cells 0..4: start at 2, win at 4; a* is always 'go right'."""

    name = "line"
    max_steps = 3
    history_len = 8
    facts_type: ClassVar[type] = TextFacts
    default_format = "natural"
    manual = "Walk to the end of the line."
    optimal_action = True
    static_actions = False

    def _obs(self) -> Observation:
        text = f"You are at {self.pos}."
        return Observation(text, TextFacts(text), ("go left", "go right"), "reach the end")

    def _priv(self) -> dict[str, Any]:
        return {"privileged": {"a_star": "go right"}}

    def _reset(self, rng_seed: int | None, options: dict[str, Any]) -> tuple[Observation, dict]:
        self.pos = 2
        return self._obs(), self._priv()

    def _step(self, action: str) -> tuple[Observation, float, bool, dict[str, Any]]:
        self.pos = max(0, self.pos + (1 if action == "go right" else -1))
        return self._obs(), float(self.pos == GOAL), self.pos == GOAL, self._priv()

    def success(self) -> bool:
        return self.pos == GOAL

    def expert(self) -> _Expert:
        return _Expert()


@pytest.fixture
def line_env():
    name = f"line-{uuid.uuid4().hex[:8]}"
    gym_id = f"statelab-test/Line{uuid.uuid4().hex[:8]}-v0"
    register_env(name, Line, gym_id)
    yield name
    ENVS.unregister(name)
    env_registry.ENV_CLASSES.pop(name, None)
    env_registry.GYM_IDS.pop(name, None)
    gym.registry.pop(gym_id, None)


@dataclass
class _Res:
    steps: int
    losses: list[float]
    seconds: float = 0.0


class ScriptedFit:
    """Stands in for LoRA SFT: records each iteration's examples; the "trained" reader of
    iteration i always says ``moves[i]`` (a scripted model file in the adapter folder)."""

    def __init__(self, moves: list[str]) -> None:
        self.moves = moves
        self.seen: list[list[tuple[list, str]]] = []

    def __call__(self, examples, out, **kw) -> _Res:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "replies.json").write_text(json.dumps([self.moves[len(self.seen)]]))
        self.seen.append(list(examples))
        return _Res(steps=1, losses=[0.0])


def _logged(tmp_path: Path, env: str) -> Path:
    script = tmp_path / "right.json"
    script.write_text('["go right"]')
    exp = parse_experiment({
        "name": "logged", "model": f"scripted:{script}", "seeds": [0], "max_steps": 3,
        "grid": {"env": [env], "agent": ["reader"]}, "out": str(tmp_path), "cache": None,
        "expert": False, "random": False,
    })  # fmt: skip
    run_sync(exp, progress=None)
    return exp.out_dir / "store.sqlite"


def _user(example) -> str:
    return example[0][-1]["content"]


def test_dagger_aggregates_the_readers_own_states_labelled_by_the_expert(tmp_path, line_env):
    store = _logged(tmp_path, line_env)
    cfg = ReaderConfig.model_validate({
        "name": "r", "store": str(store), "out": str(tmp_path / "train"),
        "eval": {"env": [line_env], "seeds": [0], "max_steps": 3},
        "dagger": {"iterations": 1, "env": [line_env], "seeds": [0], "max_steps": 3,
                   "writer": "acting"},
    })  # fmt: skip
    fit = ScriptedFit(["go left", "go right"])  # iteration 0 goes the wrong way
    summary = train_reader(cfg, fit=fit, model_of=lambda d: f"scripted:{d}/replies.json")
    first, second = fit.seen
    # iteration 0: the logged episode's two states (at 2, at 3), both labelled a*
    assert [e[1] for e in first] == ["2. go right"] * 2
    assert ["You are at 2." in _user(e) for e in first] == [True, False]
    assert "You are at 3." in _user(first[1])
    # iteration 1: those, plus the three states the iteration-0 reader visited (2, 1, 0)
    assert second[:2] == first
    added = second[2:]
    assert [e[1] for e in added] == ["2. go right"] * 3
    assert [next(p for p in range(5) if f"You are at {p}." in _user(e)) for e in added] == [
        2, 1, 0,
    ]  # fmt: skip
    it0, it1 = summary["iterations"]
    assert (it0["examples"], it1["examples"], it1["added"], it1["collected"]) == (2, 5, 3, 1)
    assert it0["acceptance"] == acceptance(0, 1)
    assert it0["acceptance"]["accepted"] is False and it0["acceptance"]["short_by"] == 1
    assert it1["acceptance"]["accepted"] is True and summary["acceptance"] == it1["acceptance"]
    written = json.loads((tmp_path / "train" / "r" / "summary.json").read_text())
    assert written["acceptance"]["won"] == 1
    # the last iteration is the reader written (and the one a later config names)
    reader = tmp_path / "train" / "r" / "reader" / "replies.json"
    assert json.loads(reader.read_text()) == ["go right"]


@pytest.mark.parametrize(
    ("won", "of", "accepted", "short_by"),
    [(44, 45, True, 0), (35, 45, False, 1), (36, 45, True, 0), (0, 0, False, 0), (8, 10, True, 0)],
)
def test_the_bar_is_the_seeds(won, of, accepted, short_by):
    """R1: 44/45 (97.8%) meets the bar; Phi-4-mini: 35/45 (77.8%) misses by one game."""
    got = acceptance(won, of)
    assert BAR == 0.8
    assert (got["accepted"], got["short_by"]) == (accepted, short_by)


def test_the_shipped_reader_configs_run_dagger_with_the_bar_r1_and_r2():
    from statelab_seed003.train._config import load_config

    here = Path(__file__).parents[4] / "configs" / "seed003"
    r1 = load_config(here / "train_reader.yaml", "reader")
    r2 = load_config(here / "train_reader_r2.yaml", "reader")
    assert isinstance(r1, ReaderConfig) and isinstance(r2, ReaderConfig)
    for cfg in (r1, r2):
        assert cfg.dagger is not None and cfg.dagger.iterations == 2 and cfg.bar == BAR
        assert cfg.eval is not None
    assert r1.base != r2.base and r1.name != r2.name  # a second reader, its own adapter
    # the readers' states are written by the untrained base of R1 (the seed's wiring)
    assert r1.dagger.writer == "base" and r2.dagger.writer == r1.base
