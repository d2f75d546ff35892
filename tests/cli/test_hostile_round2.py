"""Issue 23, the smaller items: deeply nested YAML is one config line (not RecursionError);
`statelab envs | head -1` exits quietly; an env whose package or program is missing names its
install command (play, run, envs); `--dry-run` checks the cache path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from statelab.cli import app
from statelab.core import ConfigError
from statelab.envs import _registry as env_registry
from statelab.envs import missing_needs
from statelab.run.config import MAX_NESTING, _depth, safe_yaml

cli = CliRunner()
SRC = str(Path(__file__).parents[2] / "src")


def _config(tmp: Path, extra: str = "") -> Path:
    script = tmp / "r.json"
    script.write_text('["x"]')
    path = tmp / "c.yaml"
    path.write_text(
        f"name: c\nmodel: scripted:{script}\nseeds: [0]\ngrid: {{env: [hanoi]}}\n"
        f"out: {tmp / 'res'}\n{extra}"
    )
    return path


@pytest.mark.parametrize(
    "text",
    [
        "[" * 5000 + "]" * 5000,  # the YAML reader's own recursion
        "a: " + "{b: " * 600 + "1" + "}" * 600,
        "a: &a [*a]",  # a list that holds itself
    ],
)
def test_deeply_nested_yaml_is_one_config_line(tmp_path, text):
    with pytest.raises(ConfigError, match=f"nested more than {MAX_NESTING} levels"):
        safe_yaml(text, "x.yaml")
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    for args in (
        ["run", str(path)],
        ["run", str(_config(tmp_path)), "--set", f"notes={text}"],
        ["tune", str(path)],
    ):
        res = cli.invoke(app, args)
        assert res.exit_code == 2, res.output
        assert "nested more than" in res.output and "RecursionError" not in res.output
        assert len(res.output.strip().splitlines()) == 1


def test_nesting_is_counted_once_per_node_and_a_config_passes():
    bomb = "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )  # 9**9 leaves if walked naively
    assert _depth(safe_yaml(bomb, "bomb")) == 10
    assert _depth({"grid": {"env": ["hanoi"]}, "seeds": [0]}) == 3


def test_a_closed_pipe_ends_the_command_quietly():
    proc = subprocess.Popen(
        [sys.executable, "-m", "statelab", "envs"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": SRC},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line (`| head -0`)
    err = proc.stderr.read().decode()
    assert proc.wait(120) == 0
    assert err == ""


@pytest.fixture
def no_textworld(monkeypatch):
    """As if the games extra were not installed: textworld and scienceworld do not import,
    and there is no java."""
    for m in ("textworld", "scienceworld", "alfworld"):
        monkeypatch.setitem(sys.modules, m, None)
    real = env_registry.shutil.which
    monkeypatch.setattr(env_registry.shutil, "which", lambda p: None if p == "java" else real(p))


def test_an_env_not_installed_names_its_install_command(no_textworld, tmp_path):
    assert "pip install 'statelab[games]'" in (missing_needs("cooking") or "")
    sw = missing_needs("scienceworld/boil") or ""
    assert "scienceworld" in sw and "java" in sw and "openjdk" in sw
    assert "alfworld" in (missing_needs("household") or "")
    assert missing_needs("hanoi") is None
    for env in ("cooking", "scienceworld/boil", "household"):
        res = cli.invoke(app, ["play", env, "--expert"])
        assert res.exit_code == 2, res.output
        line = res.output.strip()
        assert "\n" not in line and "pip install" in line and "internal error" not in line
    listing = cli.invoke(app, ["envs"])
    assert listing.exit_code == 0
    rows = {r.split()[0]: r for r in listing.stdout.splitlines()}
    cooking = next(r for k, r in rows.items() if k.startswith("cooking"))
    assert "needs textworld" in cooking and "pip install" in cooking
    assert "needs" not in next(r for k, r in rows.items() if k.startswith("hanoi"))
    # a run refuses in one line before playing any episode
    res = cli.invoke(app, ["run", str(_config(tmp_path)), "--set", "grid.env=[cooking]"])
    assert res.exit_code == 2 and "pip install" in res.output


def test_dry_run_checks_the_cache_path(tmp_path):
    config = _config(tmp_path)
    (tmp_path / "adir").mkdir()
    (tmp_path / "notes.txt").write_text("not a database")
    (tmp_path / "afile").write_text("")
    bad = {
        str(tmp_path / "adir"): "is a folder",
        str(tmp_path / "notes.txt"): "not a response cache",
        str(tmp_path / "afile" / "c.sqlite"): "is not a folder",
        "/proc/statelab-cache.sqlite": "cannot create a file in /proc",
    }
    for path, why in bad.items():
        res = cli.invoke(app, ["run", str(config), "--dry-run", "--set", f"cache={path}"])
        assert res.exit_code == 2, (path, res.output)
        assert why in res.output, (path, res.output)
    ok = cli.invoke(app, ["run", str(config), "--dry-run", "--set", f"cache={tmp_path}/c.sqlite"])
    assert ok.exit_code == 0, ok.output
    assert not (tmp_path / "c.sqlite").exists()  # a dry run writes nothing
