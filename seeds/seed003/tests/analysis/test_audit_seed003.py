"""On a cooking store the general audit and seed 003's give the same numbers (issue 26)."""

from __future__ import annotations

import math
import sqlite3

import pytest

textworld = pytest.importorskip("textworld")

from seeds.seed003.tests.analysis.test_seed003 import Reader, stored  # noqa: E402,F401 - the shared store fixture


def _rows(exp, table):
    db = sqlite3.connect(exp.out_dir / "store.sqlite")
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute(f"SELECT * FROM {table}")]
    finally:
        db.close()


def test_the_general_audit_gives_seed_003s_numbers_on_a_cooking_store(stored):  # noqa: F811
    from statelab.analysis.audit import POINTS_TABLE, audit_sufficiency
    from statelab_seed003.analysis.audit import audit_cooking as audit003
    from statelab_seed003.analysis.measures import AUDIT_TABLE

    exp, reader, _info = stored
    audit003(exp, llm=reader, points=1, relevance=True)
    got = audit_sufficiency(exp, llm=reader, points=1, how="first", relevance=True, samples=8,
                           say=lambda s: None)  # fmt: skip
    assert got["failed"] == [] and got["points"] == 3
    old = {r["history"]: r for r in _rows(exp, AUDIT_TABLE)}
    new = {r["history"]: r for r in _rows(exp, POINTS_TABLE)}
    assert set(old) == set(new) == {"full", "last-k:64", "oracle-readtime:64"}
    for history, o in old.items():
        n = new[history]
        assert n["t"] == o["t"] and n["a_star"] == o["a_star"]
        pairs = [("nll_own", "nll_writer"), ("nll_full", "nll_full"), ("rel_lag", "rel_lag"),
                 ("rel_chunk", "rel_chunk")]  # fmt: skip
        if o["budget"] is not None:  # seed 003 has no read-time oracle for unbudgeted rows
            pairs += [("nll_readtime", "nll_oracle"), ("beta", "beta"), ("kappa", "kappa")]
        for a, b in pairs:
            if o[b] is None:
                assert n[a] is None, (history, a)
            else:
                assert n[a] == pytest.approx(o[b], abs=1e-9), (history, a)
    # the constructed reader's known values, through the general audit too
    sure, unsure = math.log(1 + 3 * math.exp(-3)), math.log(4)
    assert new["last-k:64"]["kappa"] == pytest.approx(unsure - sure, abs=1e-5)
    assert new["last-k:64"]["lost"] == pytest.approx(unsure - sure, abs=1e-5)


def test_a_second_audit_scores_nothing_again(stored):  # noqa: F811
    from statelab.analysis.audit import POINTS_TABLE, audit_sufficiency

    exp, reader, _info = stored
    audit_sufficiency(exp, llm=reader, points=1, how="first", say=lambda s: None)
    before = len(_rows(exp, POINTS_TABLE))
    calls = []
    orig = reader.score

    async def counted(messages, continuations):
        calls.append(1)
        return await orig(messages, continuations)

    reader.score = counted
    try:
        again = audit_sufficiency(exp, llm=reader, points=1, how="first", say=lambda s: None)
    finally:
        del reader.score
    assert again["points"] == 0 and calls == [] and len(_rows(exp, POINTS_TABLE)) == before


class PromptBlind(Reader):
    """A reader whose log-likelihoods ignore the prompt (a stand-in scorer): whatever the
    view, the same NLL of a*, so every δ is equal and κ = 0 exactly; it writes the hindsight
    compressions as the fixture's reader does."""

    model_id = "prompt-blind"

    async def score(self, messages, continuations):
        return [float(len(c) % 5) for c in continuations]


def test_a_named_reader_rescores_delta_w_so_a_prompt_blind_one_gives_kappa_0(stored):  # noqa: F811
    """Before issue 32.9, δ_W came from the acting model's stored log-probs whoever
    ``--reader`` named: κ mixed two models (−1.53 here, +83.07 on a real store)."""
    from statelab_seed003.analysis.audit import audit_cooking as audit003
    from statelab_seed003.analysis.measures import AUDIT_TABLE

    exp, reader, _info = stored
    blind = PromptBlind(reader.key, tuple(reader.plan), reader.replies)
    got = audit003(exp, reader="prompt-blind", llm=blind, points=1)
    assert got["failed"] == [] and got["points"] == 3
    rows = {r["history"]: r for r in _rows(exp, AUDIT_TABLE)}
    assert rows["last-k:64"]["kappa"] == 0.0  # exactly (before: log 4 - the blind NLL)
    assert rows["last-k:64"]["nll_writer"] == rows["last-k:64"]["nll_oracle"]
    assert rows["full"]["nll_writer"] == rows["full"]["nll_full"]
    # the read-time oracle's own state cannot be re-simulated for another reader: no δ_W
    assert rows["oracle-readtime:64"]["nll_writer"] is None
    assert rows["oracle-readtime:64"]["kappa"] is None


def test_the_plugin_registers_its_audit_kind_and_auto_picks_it_on_cooking_runs():
    from statelab.analysis.audit.kinds import resolve_kind
    from statelab.run.config import parse_experiment
    from statelab_seed003.analysis.audit import AUDIT_KIND

    def exp(env: str) -> object:
        return parse_experiment({"name": "k", "model": "scripted:x", "seeds": [0],
                                 "grid": {"env": [env], "agent": ["act"], "history": ["full"]},
                                 "expert": False, "random": False})  # fmt: skip

    assert resolve_kind("seed003", exp("hanoi")) is AUDIT_KIND
    assert resolve_kind("auto", exp("cooking:lag=10")) is AUDIT_KIND
    assert resolve_kind("auto", exp("hanoi")).name == "general"
