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
    assert checked >= 20
