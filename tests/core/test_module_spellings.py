"""A ``module:name`` spelling names a component, never any callable (issue 36 item 1): the
attribute must be a registered factory of the axis or a class of the axis's base, so a
config's ``history: shutil:rmtree:<dir>`` or ``builtins:print`` is refused in one line when
the config is read, by ``run --dry-run`` and ``run`` alike, and nothing of it is called; a
plugin's ``module:Class`` still works."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from statelab.cli import app
from statelab.core import ConfigError
from statelab.state import HISTORIES
from statelab.worldmodels import WORLDMODELS

runner = CliRunner()
PLUGIN = "tests.conformance.plugins.oracle_world"


def _config(tmp: Path, **grid: Any) -> Path:
    script = tmp / "replies.json"
    script.write_text(json.dumps(["Action: Move the top disk of rod A to the top of rod C"]))
    data = {
        "name": "e", "model": f"scripted:{script}", "seeds": [0], "max_steps": 2,
        "out": str(tmp / "out"), "cache": None, "grid": {"env": ["hanoi"], **grid},
    }  # fmt: skip
    path = tmp / "e.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    folder = tmp_path / "precious"
    folder.mkdir()
    (folder / "keep.txt").write_text("still here\n")
    return folder


@pytest.mark.parametrize("dry", [["--dry-run"], []], ids=["dry-run", "run"])
def test_rmtree_in_a_config_is_refused_in_one_line_and_deletes_nothing(
    tmp_path: Path, victim: Path, dry: list[str]
) -> None:
    config = _config(tmp_path, history=[f"shutil:rmtree:{victim}"])
    for _ in range(2):  # a second run (a resume) refuses it again
        res = runner.invoke(app, ["run", str(config), "--quiet", *dry])
        assert res.exit_code == 2, res.output
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and "shutil:rmtree" in lines[0], res.stderr
        assert "not a history component" in lines[0]
        assert (victim / "keep.txt").read_text() == "still here\n"


def test_builtins_print_is_refused_and_never_called(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ConfigError, match="not a history component") as e:
        HISTORIES.check("builtins:print:hello-from-a-config")
    assert "\n" not in str(e.value)
    assert "hello-from-a-config" not in capsys.readouterr().out
    with pytest.raises(ConfigError, match="not a worldmodel component"):
        WORLDMODELS.check("os:getcwd")
    with pytest.raises(ConfigError, match="not a worldmodel component"):
        WORLDMODELS.check("shutil:Error")  # a class, but no world model


@pytest.fixture
def plugin() -> Iterator[None]:
    import importlib

    mod = importlib.import_module(PLUGIN)
    if not mod.registered():  # an earlier test unregistered it: register it again
        importlib.reload(mod)
    yield
    for name in (f"{PLUGIN}:OracleWorld", "oracle-world"):
        WORLDMODELS.unregister(name)


def test_a_plugin_class_and_a_registered_factory_still_work(tmp_path: Path, plugin: None) -> None:
    world = WORLDMODELS.build(f"{PLUGIN}:OracleWorld")
    assert type(world).__name__ == "OracleWorld"
    # the factory the module registers, named by its attribute: used under its registered name
    assert type(WORLDMODELS.build(f"{PLUGIN}:_factory")).__name__ == "OracleWorld"
    assert WORLDMODELS.split(f"{PLUGIN}:_factory") == ("oracle-world", None)
    config = _config(tmp_path, worldmodel=[f"{PLUGIN}:OracleWorld"])
    res = runner.invoke(app, ["run", str(config), "--quiet", "--dry-run"])
    assert res.exit_code == 0, res.output + res.stderr
