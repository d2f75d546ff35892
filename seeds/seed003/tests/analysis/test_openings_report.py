"""Seed 003's report section says a sealed test split was opened, and how often (a forced
second opening flagged), from the ledger ``statelab open-test`` writes."""

from __future__ import annotations

import pytest
from tests.run.test_open_test import runner, script, write_config  # noqa: F401 - the fixture

from statelab.cli import app

pytest.importorskip("textworld")


def test_the_report_says_the_split_was_opened_and_flags_a_forced_opening(
    tmp_path,
    script,  # noqa: F811
):
    path, _ = write_config(tmp_path, "sealed", "test[:1]", script)
    assert runner.invoke(app, ["open-test", str(path), "--quiet"]).exit_code == 0
    other, _ = write_config(tmp_path, "other", "test[:1]", script)
    forced = runner.invoke(app, ["open-test", str(other), "--force", "--quiet"])
    assert forced.exit_code == 0 and "opening 2 (forced)" in forced.output
    rep = runner.invoke(app, ["report", str(tmp_path / "results" / "other")])
    assert rep.exit_code == 0, rep.output
    assert "**The test split was opened**: 1 opening(s)" in rep.output
    assert "opening 2 of that split (FORCED: a second opening)" in rep.output
