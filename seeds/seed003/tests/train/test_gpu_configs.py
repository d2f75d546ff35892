"""The seed-scale (one GPU) configs load without downloading anything and carry the seed's
values; LoRA target modules an architecture lacks are refused (tiny configs built here);
scripts/setup's ``gpu`` extra, read from its dry run (nothing installed)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from statelab.core import ConfigError
from statelab_seed003.train._config import load_config

ROOT = Path(__file__).parents[4]
HERE = ROOT / "configs" / "seed003"
QWEN = ("q_proj", "k_proj", "v_proj", "o_proj")


def test_the_seed_scale_training_files_load_with_the_seeds_values():
    w = load_config(HERE / "train_writer_a4_gpu.yaml", "writer")
    assert (w.candidates, w.k, w.ks, w.arm, w.phases, w.rounds) == (12, 12, [1, 4, 12], "a4",
                                                                    ["a", "b"], 4)  # fmt: skip
    main = load_config(HERE / "train_writer_gpu.yaml", "writer")  # the main line: every point
    assert main.model_dump(exclude={"name", "arm"}) == w.model_dump(exclude={"name", "arm"})
    assert (main.arm, main.name) == ("main", "seed003-writer-gpu")
    assert (w.budget, w.gap, w.points, w.concurrency) == (128, 0.3, 4, 64)
    assert w.serve is not None and w.serve.url == "http://127.0.0.1:8000/v1" and w.serve.load
    h = w.hyper_()
    assert (h.epochs, h.batch_size * h.grad_accum, h.sft_weight, h.target_modules) == (
        2, 8, 0.5, QWEN)  # fmt: skip
    assert w.base == "hf:models/Qwen3-4B" and "#seed003-reader?" in w.reader
    r1 = load_config(HERE / "train_reader_gpu.yaml", "reader")
    r2 = load_config(HERE / "train_reader_r2_gpu.yaml", "reader")
    assert r1.hyper_().target_modules == QWEN
    assert r2.hyper_().target_modules == ("qkv_proj", "o_proj")  # Phi-4's fused layout
    assert r2.base == "hf:models/Phi-4-mini-instruct"
    for r in (r1, r2):
        assert r.dagger is not None and r.dagger.iterations == 2 and r.bar == 0.8
        assert r.eval is not None and r.eval.seeds == list(range(1000, 1045))  # 45 games
        assert r.seeds == list(range(40)) and r.dagger.seeds == list(range(40, 100))
    assert r2.dagger is not None and r2.dagger.writer == "hf:models/Qwen3-4B"  # R1's writer


def test_the_seed_scale_experiments_expand_to_their_runs():
    from statelab.run.config import load_experiment

    collect = load_experiment(HERE / "train_collect_gpu.yaml")
    assert len(collect.runs()) == 4 * 9 and len(collect.env_seeds("cooking:lag=0")) == 240
    diag = load_experiment(HERE / "diagnostic_gpu.yaml")
    assert len(diag.runs()) == 4 * 16 + 4 * 2  # the 16 histories at 4 lags, the reference rows
    assert len({r.history for r in diag.runs() if r.uses_model}) == 16
    assert len(diag.env_seeds("cooking:lag=0")) == 45 and diag.concurrency == 64


def _tiny(tmp_path: Path, kind: str) -> Path:
    transformers = pytest.importorskip("transformers")
    small = {"vocab_size": 32, "hidden_size": 16, "intermediate_size": 32,
             "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
             "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}  # fmt: skip
    cfg = (transformers.Phi3Config if kind == "phi3" else transformers.Qwen3Config)(**small)
    folder = tmp_path / kind
    cfg.save_pretrained(folder)
    return folder


def test_target_modules_the_architecture_lacks_are_refused(tmp_path):
    from statelab_seed003.train.trainers import check_targets_of

    qwen, phi = _tiny(tmp_path, "qwen3"), _tiny(tmp_path, "phi3")
    check_targets_of(qwen, QWEN)
    check_targets_of(phi, ["qkv_proj", "o_proj", "gate_up_proj", "down_proj"])
    with pytest.raises(ConfigError, match=r"\['qkv_proj'\] are not layers of Qwen3ForCausalLM"):
        check_targets_of(qwen, ["qkv_proj"])
    with pytest.raises(ConfigError) as e:
        check_targets_of(phi, ["q_proj", "v_proj", "o_proj"])
    assert "['q_proj', 'v_proj'] are not layers of Phi3ForCausalLM" in str(e.value)
    assert "its linear layers: down_proj, gate_up_proj, lm_head, o_proj, qkv_proj" in str(e.value)


def test_a_training_file_with_a_missing_target_is_refused_when_loaded(tmp_path):
    phi = _tiny(tmp_path, "phi3")
    cfg = tmp_path / "w.yaml"
    cfg.write_text(f"name: w\nstore: s\nreader: r\nbase: hf:{phi}\n"
                   "hyper: {target_modules: [q_proj, v_proj]}\n")  # fmt: skip
    with pytest.raises(ConfigError, match="not layers of Phi3ForCausalLM"):
        load_config(cfg, "writer")
    cfg.write_text(f"name: w\nstore: s\nreader: r\nbase: hf:{phi}\n"
                   "hyper: {target_modules: [qkv_proj]}\n")  # fmt: skip
    assert load_config(cfg, "writer").hyper_().target_modules == ("qkv_proj",)


# -- scripts/setup ----------------------------------------------------------------------------


def _setup(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """scripts/setup run from a copy (its own folder: no .venv of the checkout touched)."""
    (tmp_path / "scripts").mkdir(exist_ok=True)
    shutil.copy(ROOT / "scripts" / "setup", tmp_path / "scripts" / "setup")
    env = {**os.environ, "STATELAB_WHEEL_CACHE": str(tmp_path / "wheels")}
    return subprocess.run(["bash", str(tmp_path / "scripts" / "setup"), *args], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=60)  # fmt: skip


def _plan(out: str) -> list[str]:
    return [line.removeprefix("would run: ") for line in out.splitlines()]


def test_setup_gpu_installs_the_gpu_extra_instead_of_the_cpu_torch(tmp_path):
    got = _setup(tmp_path, "--dry-run", "local,dev,gpu")
    assert got.returncode == 0, got.stderr
    plan = _plan(got.stdout)
    assert plan[0].endswith("-m venv .venv")
    assert ".venv/bin/python -m pip uninstall -q -y torch" in plan  # a +cpu torch goes first
    install = [p for p in plan if " -e " in p]
    assert len(install) == 1 and install[0].endswith("-e .\\[local\\,dev\\,gpu\\]")
    assert "torch.version.cuda" in plan[-1]  # checked to be a CUDA build
    assert not (tmp_path / ".venv").exists()  # a dry run runs nothing


def test_setup_keeps_the_default_path_and_refuses_train_with_gpu(tmp_path):
    plain = _plan(_setup(tmp_path, "--dry-run").stdout)
    assert next(p for p in plain if " -e " in p).endswith("-e .\\[local\\]")
    assert not any("uninstall" in p or "torch" in p for p in plain)
    ci = _plan(_setup(tmp_path, "--dry-run", "local,dev,train").stdout)
    assert next(p for p in ci if " -e " in p).endswith("-e .\\[local\\,dev\\,train\\]")
    assert not any("uninstall" in p for p in ci)
    both = _setup(tmp_path, "--dry-run", "train,gpu")
    assert both.returncode == 2 and "'gpu' replaces 'train'" in both.stderr


def test_the_gpu_extra_is_the_train_extra_with_pypis_torch():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]  # fmt: skip
    assert extras["train"][0] == "torch==2.13.0+cpu" and extras["gpu"][0] == "torch==2.13.0"
    assert extras["gpu"][1:] == extras["train"][1:]


def test_epochs_replace_steps_and_batches_accumulate(tmp_path):
    from statelab_seed003.train.trainers import Hyper, _common

    by_steps = _common(Hyper(steps=6), tmp_path)
    assert by_steps["max_steps"] == 6 and "num_train_epochs" not in by_steps
    assert by_steps["gradient_accumulation_steps"] == 1
    by_epochs = _common(Hyper(epochs=2, batch_size=4, grad_accum=2), tmp_path)
    assert by_epochs["max_steps"] == -1 and by_epochs["num_train_epochs"] == 2
    assert by_epochs["per_device_train_batch_size"] * by_epochs["gradient_accumulation_steps"] == 8
