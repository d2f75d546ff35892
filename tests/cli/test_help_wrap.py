"""Issue 37: help is wrapped by paragraph, at the terminal's width, never where the
docstring's own lines broke."""

from __future__ import annotations

from typer.testing import CliRunner

from statelab.cli import app
from statelab.cli._errors import reflow


def test_a_paragraph_is_one_line_and_list_items_and_code_stay() -> None:
    doc = "A sentence\nbroken.\n\n- an item\n  carried on\n- another\n\n    code  x\n    more"
    want = "A sentence broken.\n\n- an item carried on\n- another\n\n    code  x\n    more"
    assert reflow(doc) == want


def test_the_command_list_breaks_only_at_the_terminal_width() -> None:
    out = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "220"}).output
    # view's docstring breaks after "each episode's"; at 220 columns the sentence is whole
    assert "runs x seeds by score, each episode's steps, prompts and memories" in out
    narrow = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "220"}).output
    assert "Run (or resume) an experiment; finished episodes are never run twice." in narrow
