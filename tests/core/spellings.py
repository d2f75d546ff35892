"""Every component spelling the configs, the docs and the README use, and a fingerprint of
what each builds to (its label, tags and the values it was built with).

``tests/core/spellings_before.json`` holds the fingerprints the code gave before the
spellings were parsed in the registry (this module run as a script against commit 2244910,
where an env's kwargs came from its factory's own parser); ``test_spellings.py`` checks that
every spelling still builds to the same.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
#: the axes whose spellings are components built by statelab (model and writer specs are
#: the model backends' own grammar)
AXES = ("env", "agent", "history", "format", "grounding", "worldmodel")
_TICKED = re.compile(r"`([^`\s]+)`")
_YAML_LINE = re.compile(r"^\s*(?:-\s*)?(" + "|".join(AXES) + r")\s*:\s*(\S.*)$")


def _registries() -> dict[str, Any]:
    from statelab.agents import AGENTS
    from statelab.envs import ENVS
    from statelab.state import FORMATS, HISTORIES
    from statelab.state.grounding import GROUNDINGS
    from statelab.worldmodels import WORLDMODELS

    return {
        "env": ENVS,
        "agent": AGENTS,
        "history": HISTORIES,
        "format": FORMATS,
        "grounding": GROUNDINGS,
        "worldmodel": WORLDMODELS,
    }


#: spellings of every grammar corner the configs and docs do not write
EXTRA: dict[str, tuple[str, ...]] = {
    "env": (
        "hanoi:4", "hanoi:4+feedback=off", "hanoi:disks=3", "hanoi:feedback=on+disks=2",
        "babyai/goto:dists=8", "messenger:2", "cooking:10", "household:clean",
        "household:heat+placement=zipf+rooms=alfred", "household:type=cool",
        "scienceworld/boil:simplify=easy+admissible=on",
    ),
    "agent": (
        "act:grammar", "act:free", "tools:cc", "tools:cc+think", "tools:cc+long", "tools:short",
        "tools:k=7+n=1000+seed=3+cars=10+think=64", "tools:cc+visible+random", "tools:kin",
        "plan", "plan:3+think", "plan:think", "plan:5+think=64", "stateact:thought+goal",
        "stateact:none", "stateact:", "stateact:all", "stateact:state+goal/json",
        "stateact:goal/nolist/calls=7", "stateact:goal/anchor/chars=8000",
        "stateact:thought/transcript/strict/repeats=3", "react:json", "react:text",
        "react:original", "react:jsonreact", "react:original/anchor/calls=50",
        "adapt", "adapt:react@3", "adapt:stateact:goal+thought/json@3,20",
        "adapt:react:original/anchor@2,10", "reflact:json", "reflact:text",
    ),
    "history": ("window:1", "oracle-readtime:64:8", "last-k:8", "bounded:slots:4096"),
    "grounding": ("zoom", "zoom:text", "zoom:image", "zoom:3", "zoom:anchor", "zoom:anchor-text"),
    "worldmodel": ("none:derail", "belief:uniform", "walle:zipf", "bbwm"),
}  # fmt: skip


def _config_spellings() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {a: set(EXTRA.get(a, ())) for a in AXES}
    for path in sorted((ROOT / "configs").rglob("*.yaml")):
        data = yaml.safe_load(path.read_text()) or {}
        for axis, values in (data.get("grid") or {}).items():
            if axis in out:
                out[axis].update(str(v) for v in (values if isinstance(values, list) else [values]))
        out["format"].discard("default")  # the env's own format: not a component
        for axis, value in (data.get("baseline") or {}).items():
            if axis in out:
                out[axis].add(str(value))
    return out


def _doc_candidates() -> set[str]:
    texts = [p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))]
    texts.append((ROOT / "README.md").read_text())
    found: set[str] = set()
    for text in texts:
        found.update(_TICKED.findall(text))
        for line in text.splitlines():
            m = _YAML_LINE.match(line)
            if not m:
                continue
            value = m.group(2).split("#")[0].strip()
            try:
                parsed = yaml.safe_load(value)
            except yaml.YAMLError:
                continue
            for v in parsed if isinstance(parsed, list) else [parsed]:
                if isinstance(v, str):
                    found.add(v)
    return {s.strip("\"',") for s in found}


def collect() -> dict[str, list[str]]:
    """Every spelling by axis: all those of the configs, and those of the docs and README
    that a registry of the axis knows by name and builds."""
    regs = _registries()
    out = _config_spellings()
    for cand in _doc_candidates():
        for axis, reg in regs.items():
            if cand in reg and cand not in out[axis]:
                try:
                    reg.build(cand)
                except Exception:  # a doc's grammar sketch ("window:k"), not a spelling
                    continue
                out[axis].add(cand)
    return {a: sorted(v) for a, v in out.items()}


def _plain(value: Any, depth: int = 0) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, tuple | list):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, frozenset | set):
        return sorted(str(v) for v in value)
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in sorted(value.items(), key=str)}
    if isinstance(value, range):
        return [value.start, value.stop, value.step]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return {f.name: _plain(getattr(value, f.name), depth + 1) for f in fields}
    if depth < 2 and hasattr(value, "__dict__") and not callable(value):
        return {"__type__": type(value).__name__, **_attrs(value, depth + 1)}
    return f"<{type(value).__name__}>"


def _attrs(obj: Any, depth: int) -> dict[str, Any]:
    return {
        k: _plain(v, depth)
        for k, v in sorted(vars(obj).items())
        if not k.startswith("_") and k not in ("args", "spelling")
    }


def _env_kwargs(spelling: str) -> dict[str, Any]:
    """The constructor kwargs an env spelling parses to (built without loading the env)."""
    from statelab.envs import env_kwargs

    return env_kwargs(spelling)


def fingerprint(axis: str, spelling: str) -> dict[str, Any]:
    """What ``spelling`` builds to on ``axis``: label, tags and its public attributes."""
    from statelab.core import ConfigError

    reg = _registries()[axis]
    if axis == "env":
        return {"kwargs": _plain(_env_kwargs(spelling))}
    try:
        obj = reg.build(spelling)
    except ConfigError:  # it needs something outside (a trained adapter's directory)
        return {"refused": True}
    if axis == "format":
        return {"name": getattr(obj, "__name__", "")}
    return {
        "type": type(obj).__name__,
        "label": obj.label,
        "tags": sorted(obj.tags),
        "attrs": _attrs(obj, 0),
    }


def fingerprints() -> dict[str, dict[str, Any]]:
    return {a: {s: fingerprint(a, s) for s in spellings} for a, spellings in collect().items()}


if __name__ == "__main__":
    json.dump(fingerprints(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
