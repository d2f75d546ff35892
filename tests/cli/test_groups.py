"""A plugin's command group: mounted under its name, old names as aliases that say where they
moved."""

import typer
from typer.testing import CliRunner

from statelab.cli import app
from statelab.cli import groups as groups_mod


def test_a_registered_group_runs_under_its_name_and_its_alias_says_where_it_moved(monkeypatch):
    demo = typer.Typer()

    @demo.command()
    def hello(name: str = typer.Option("world")) -> None:
        """Say hello."""
        typer.echo(f"hello {name}")

    @demo.command()
    def other() -> None:
        """Another command (a group of two keeps its names)."""

    group = groups_mod.CommandGroup("demo", demo, {"hi": "hello"})
    monkeypatch.setitem(groups_mod._GROUPS, "demo", group)
    runner = CliRunner()
    r = runner.invoke(app, ["demo", "hello", "--name", "lab"])
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == "hello lab"
    r = runner.invoke(app, ["hi", "--name", "old"])
    assert r.exit_code == 0, r.output
    assert "hello old" in r.stdout
    assert "`statelab hi` moved to `statelab demo hello`" in r.stderr
    top = runner.invoke(app, ["--help"])
    assert "demo" in top.stdout and " hi " not in top.stdout  # the alias is hidden


def test_a_group_name_registers_once():
    a, b = typer.Typer(), typer.Typer()
    groups_mod.register_group("x-once", a)
    groups_mod.register_group("x-once", a)  # the same app again: a no-op
    try:
        groups_mod.register_group("x-once", b)
    except ValueError as e:
        assert "twice" in str(e)
    else:
        raise AssertionError("a second app under one name was accepted")
    finally:
        groups_mod._GROUPS.pop("x-once", None)
