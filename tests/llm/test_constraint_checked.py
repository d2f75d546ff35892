"""A constraint is checked on every reply, not trusted after the probe (issue 32 item 4): a
server that passes the probe and then ignores the grammar or schema has its off-choice
replies stored as ``decoding=violated``, and the report warns with their count per run."""

from __future__ import annotations

import asyncio

import pytest
from tests.llm._standins import StandIn

from statelab.analysis.reporting import make_report
from statelab.core import GenParams
from statelab.llm import _constrain as constrain
from statelab.llm import make_llm
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store


@pytest.fixture(autouse=True)
def _fresh():
    constrain.forget()
    yield
    constrain.forget()


@pytest.mark.parametrize("form", ["grammar", "json_schema"])
def test_replies_outside_the_constraint_are_stored_violated_and_warned(tmp_path, form):
    server = StandIn(form, probe_only=True)
    try:
        exp = parse_experiment({
            "name": "viol", "seeds": [0], "max_steps": 10, "out": str(tmp_path / "r"),
            "grid": {"env": ["hanoi"], "history": ["full"],
                     "model": [f"openai-compat:{server.url}#m"]},
            "cache": None, "expert": False, "random": False, "concurrency": 1,
        })  # fmt: skip
        res = run_sync(exp, progress=None)
    finally:
        server.close()
    assert res.done == 1 and res.failed == 0
    store_path = exp.out_dir / "store.sqlite"
    calls = Store(store_path).table("calls")
    assert len(calls) == 10
    assert list(calls["decoding"]) == ["violated"] * 10  # before: the probed form, 10 of 10
    report = make_report(store_path, tmp_path / "report")
    assert "10 of 10 replies to a choice came back outside the constraint" in report.markdown


def test_replies_held_to_the_constraint_keep_their_form(tmp_path):
    server = StandIn("grammar")
    try:
        llm = make_llm(f"openai-compat:{server.url}#m")
        params = GenParams(choices=("left", "right"), choice_prefix="Action: ")
        done = asyncio.run(llm.complete([{"role": "user", "content": "go"}], params))
    finally:
        server.close()
    assert (done.text, done.decoding) == ("Action: right", "grammar")
