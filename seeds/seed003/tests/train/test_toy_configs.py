"""The toy line's files (``scripts/seed003_toy.sh``, docs/seed003.md "The toy line") load as
what the script runs them as: training files as training jobs, the rest as experiments, each
naming the stores and adapters the stage before it writes."""

from __future__ import annotations

from pathlib import Path

from statelab.run.config import load_experiment
from statelab_seed003.train._config import load_config

TOY = Path(__file__).resolve().parents[4] / "configs" / "seed003" / "toy"
COLLECT = "results/seed003-toy/seed003-toy-collect/store.sqlite"


def test_the_toy_training_files_load_and_read_the_collected_store():
    reader = load_config(TOY / "reader.yaml", "reader")
    dssr = load_config(TOY / "writer_dssr.yaml", "writer")
    outcome = load_config(TOY / "writer_outcome.yaml", "writer")
    assert reader.store == dssr.store == outcome.store == COLLECT
    assert dssr.score != "outcome"  # DSSR (scored by the reader) beside OUTCOME
    assert outcome.score == "outcome" and dssr.rounds == outcome.rounds == 2


def test_the_toy_experiments_name_the_final_adapters_the_writers_link():
    for name in ("collect", "validation", "test"):
        exp = load_experiment(TOY / f"{name}.yaml")
        assert exp.name == f"seed003-toy-{name}"
    text = (TOY / "test.yaml").read_text()
    assert "seed003-toy-dssr/final" in text and "seed003-toy-outcome/final" in text
