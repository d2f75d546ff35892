"""Seed 004's configs run the authors' setup: Figure 5 plays Zipf-placed games with the
world models given the same Zipf prior, and its base rows carry the derail rule."""

from pathlib import Path

from statelab.envs import make_env
from statelab.run.config import load_experiment
from statelab.worldmodels import WORLDMODELS

FIG5 = Path(__file__).parents[3] / "configs" / "seed004" / "fig5_zipf_priors.yaml"


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


def test_figure_3_babyai_keeps_the_last_16_observations_on_the_authors_levels():
    """BabyAI's Fig. 3 rows: the four tasks, levels 0-24 (BALROG's, tests/envs), the last 16
    steps (the authors' prompt_max_obs), budget 64, the derail rule in the base rows; the
    other Fig. 3 config keeps the full history and no BabyAI."""
    root = FIG5.parent
    exp = load_experiment(root / "fig3_babyai.yaml")
    runs = [r for r in exp.runs() if r.uses_model]
    assert {r.env for r in runs} == {
        "babyai/goto", "babyai/pickup", "babyai/pickup-seq-goto", "babyai/putnext"
    }  # fmt: skip
    assert {r.history for r in runs} == {"window:16"}
    assert {r.worldmodel for r in runs} == {"none:derail", "belief", "walle", "bbwm"}
    assert exp.seeds == list(range(25)) and exp.rollouts == 3
    assert all(exp.budget(r.env) == 64 for r in runs)
    rest = load_experiment(root / "fig3_benchmarks.yaml")
    assert not any(r.env.startswith("babyai") for r in rest.runs())
    assert {r.history for r in rest.runs() if r.uses_model} == {"full"}
