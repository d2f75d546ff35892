"""The lab stands without the seeds' packages: with every ``statelab_seed*`` package hidden
(unimportable, its entry point gone), ``statelab envs`` lists the same envs, ``statelab list``
and a report's section registry work, and only the seeds' own additions are missing."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

PROBE = textwrap.dedent(
    """
    import importlib.abc, importlib.metadata, json, sys
    HIDE = {hide!r}
    if HIDE:
        class Hide(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0].startswith("statelab_seed"):
                    raise ModuleNotFoundError(f"hidden: {{name}}")
                return None
        sys.meta_path.insert(0, Hide())
        real = importlib.metadata.entry_points
        def entry_points(**kw):
            eps = real(**kw)
            if kw.get("group") == "statelab.plugins":
                return importlib.metadata.EntryPoints(
                    e for e in eps if not e.value.startswith("statelab_seed"))
            return eps
        importlib.metadata.entry_points = entry_points
    from typer.testing import CliRunner
    from statelab.analysis.sections import ordered
    from statelab.cli import app
    from statelab.cli.groups import command_groups
    from statelab.envs import ENVS
    r = CliRunner()
    envs = r.invoke(app, ["envs"])
    listing = r.invoke(app, ["list"])
    print(json.dumps({{
        "envs_rc": envs.exit_code, "envs": envs.stdout, "env_names": sorted(ENVS.names()),
        "list_rc": listing.exit_code, "sections": [s.name for s in ordered()],
        "groups": [g.name for g in command_groups()],
        "seed_modules": sorted(m for m in sys.modules if m.startswith("statelab_seed")),
    }}))
    """
)


def _probe(hide: bool) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE.format(hide=hide)], capture_output=True,
                         text=True, timeout=300, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_lab_without_the_seed_packages_lists_every_env_and_reports():
    full, bare = _probe(False), _probe(True)
    assert bare["seed_modules"] == []
    assert bare["envs_rc"] == 0 and bare["list_rc"] == 0
    # every env is the lab's: the same names and the same listing with or without the seeds
    assert bare["env_names"] == full["env_names"] and len(bare["env_names"]) > 10
    assert bare["envs"] == full["envs"]
    # the lab's own sections remain; the seeds' are theirs
    seeds = {"seed001-table1", "seed002-agents", "seed003-diagnostics"}
    assert seeds <= set(full["sections"])
    assert set(bare["sections"]) == set(full["sections"]) - seeds
    assert {"audit", "state-accuracy", "reward-within-budget"} <= set(bare["sections"])
    assert "seed003" in full["groups"] and "seed003" not in bare["groups"]
