"""Seed 004's configs run the authors' setup: Figure 5 plays Zipf-placed games with the
world models given the same Zipf prior, and its base rows carry the derail rule."""

from pathlib import Path

from statelab.envs import make_env
from statelab.run.config import load_experiment
from statelab.worldmodels import WORLDMODELS

FIG5 = Path(__file__).parents[2] / "configs" / "seed004" / "fig5_zipf_priors.yaml"


def test_figure_5_plays_zipf_placed_games_with_zipf_world_models():
    exp = load_experiment(FIG5)
    runs = [r for r in exp.runs() if r.uses_model]  # not the expert, not the random floor
    assert runs and {r.env for r in runs} == {"household:placement=zipf"}
    env = make_env("household:placement=zipf")
    assert env.placement == "zipf" and env.starts == "alfworld"
    models = {r.worldmodel for r in runs}
    assert models == {"none:derail", "belief:zipf", "belief-noprob:zipf"}
    for spelling in models - {"none:derail"}:
        assert WORLDMODELS.build(spelling).prior == "zipf"
    assert WORLDMODELS.build("none:derail").derail_limit == 10
    assert exp.budget("household:placement=zipf") == 30
