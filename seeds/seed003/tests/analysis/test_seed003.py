"""Seed 003's diagnostics with known answers: β and κ (by hand and through the pipeline on a
constructed reader), relevance lag (defined, undefined, ties), the paired and game-clustered
bootstraps, the leak check (a planted leak caught, a clean episode passed), and the report's
tables."""

from __future__ import annotations

import asyncio
import json
import math
import sqlite3

import pytest

from statelab.analysis.audit.measures import (
    budget_of,
    decision_loss,
    decompose,
    form_of,
    leave_one_chunk_out,
    relevance_lag,
)
from statelab.analysis.stats import clustered_bootstrap, paired_bootstrap
from statelab.core import LLM, Completion, GenParams
from statelab_seed003.analysis.audit import lag_of
from statelab_seed003.analysis.leaks import find_leaks, privileged_strings

# -- β and κ ------------------------------------------------------------------------------


def test_beta_and_kappa_on_a_constructed_decision():
    # four commands; the reader's log-probabilities of a* = "take carrot" under three contexts
    full = {"go east": math.log(0.1), "take carrot": math.log(0.7), "look": math.log(0.2)}
    oracle = {"go east": math.log(0.3), "take carrot": math.log(0.5), "look": math.log(0.2)}
    writer = {"go east": math.log(0.6), "take carrot": math.log(0.125), "look": math.log(0.275)}
    d = decompose(*(decision_loss(lp, "take carrot") for lp in (full, oracle, writer)))
    assert d.full == pytest.approx(-math.log(0.7))
    assert d.beta == pytest.approx(math.log(0.7 / 0.5))  # budget loss: 0.336 nats
    assert d.kappa == pytest.approx(math.log(0.5 / 0.125))  # write-time regret: log 4
    assert d.writer - d.full == pytest.approx(d.beta + d.kappa)
    # an oracle better than the full history gives a negative β (a reference, not a bound)
    assert decompose(1.0, 0.8, 2.0).beta == pytest.approx(-0.2)
    assert decision_loss(full, "not listed") is None and decision_loss(full, None) is None


# -- relevance lag --------------------------------------------------------------------------


def test_relevance_lag_is_the_distance_to_the_most_consequential_chunk():
    rl = relevance_lag(1.0, [1.2, 2.0, 1.1, 1.0])  # chunk 1 of 4: 2 steps before the decision
    assert (rl.chunk, rl.lag, rl.gain) == (1, 2, pytest.approx(1.0))
    assert relevance_lag(1.0, [1.0, 1.0, 1.7]).lag == 0  # the newest chunk: lag 0


def test_relevance_lag_is_undefined_below_half_a_nat_and_defined_at_it():
    assert relevance_lag(1.0, [1.49, 0.2, 1.3]).lag is None
    assert relevance_lag(1.0, [1.49, 0.2, 1.3]).chunk is None
    assert relevance_lag(1.0, [1.0, 1.5, 1.0]).lag == 1  # exactly 0.5 nats counts
    assert relevance_lag(1.0, []).lag is None


def test_relevance_lag_ties_go_to_the_earliest_chunk():
    rl = relevance_lag(0.0, [2.0, 0.0, 2.0, 2.0])
    assert (rl.chunk, rl.lag) == (0, 3)


def test_leave_one_chunk_out_rescoring_finds_the_recipe_chunk():
    chunks = ["you walk", "Recipe: slice the carrot", "you walk", "you walk", "a hall"]

    async def nll(kept):  # the reader is sure of a* only when the recipe is in its context
        return 0.1 if any("Recipe" in c for c in kept) else 1.4

    base, without = asyncio.run(leave_one_chunk_out(chunks, nll))
    assert base == 0.1 and without == [0.1, 1.4, 0.1, 0.1, 0.1]
    rl = relevance_lag(base, without)
    assert (rl.chunk, rl.lag) == (1, 3)


# -- bootstrap ------------------------------------------------------------------------------


def test_paired_bootstrap_on_a_known_case():
    # two games with differences 0 and 1: resampled means are 0, 0.5, 1 w.p. 1/4, 1/2, 1/4
    ci = paired_bootstrap({"g1": 1.0, "g2": 3.0}, {"g1": 1.0, "g2": 2.0})
    assert (ci.mean, ci.low, ci.high, ci.games) == (0.5, 0.0, 1.0, 2)
    same = paired_bootstrap({g: 2.0 for g in range(9)}, {g: 0.5 for g in range(9)})
    assert (same.mean, same.low, same.high) == (1.5, 1.5, 1.5)
    # games only one condition has are left out (pairing); seeded: the same interval twice
    a = {g: float(g % 3) for g in range(30)}
    assert paired_bootstrap(a, {0: 0.0, 1: 0.0}).games == 2
    assert paired_bootstrap(a) == paired_bootstrap(a)


def test_the_paired_bootstrap_interval_covers_what_a_normal_approximation_gives():
    d = {g: float(x) for g, x in enumerate([0, 1] * 50)}  # mean 0.5, SE 0.05
    ci = paired_bootstrap(d)
    assert ci.low == pytest.approx(0.5 - 1.96 * 0.05, abs=0.015)
    assert ci.high == pytest.approx(0.5 + 1.96 * 0.05, abs=0.015)


def test_clustered_bootstrap_resamples_whole_games():
    # game A: 100 write points of 0; game B: one of 1. Drawing games: AA -> 0, AB -> 1/101,
    # BB -> 1, so the interval spans [0, 1]; resampling points would give a narrow one.
    ci = clustered_bootstrap({"A": [0.0] * 100, "B": [1.0]})
    assert ci.mean == pytest.approx(1 / 101)
    assert (ci.low, ci.high, ci.games, ci.points) == (0.0, 1.0, 2, 101)
    paired = clustered_bootstrap({"A": [1.0, 1.0], "B": [3.0]}, {"A": [0.0], "B": [1.0, 1.0]})
    assert paired.mean == pytest.approx(5 / 3 - 2 / 3)


# -- the leak check ------------------------------------------------------------------------

PRIV = {
    "recipe": "Recipe #1\n\nIngredients:\ncarrot\n\nDirections:\nslice the carrot\n  fry the "
    "carrot\n  prepare meal",
    "where": {"carrot": "in the fridge (kitchen)", "knife": "on the counter (kitchen)"},
    "a_star": "open fridge",
    "policy": ("open fridge", "take carrot from fridge", "prepare meal"),
}


def test_privileged_strings_of_a_cooking_view():
    s = privileged_strings(PRIV)
    assert {"slice the carrot", "fry the carrot", "carrot in the fridge"} <= set(s)
    assert "take carrot from fridge" in s and "look" not in s


def test_find_leaks_flags_only_what_was_not_observed_yet():
    observed = "You see a fridge holding a carrot.\nopen fridge\nlook"
    prompt = "Your state: carrot in the fridge. Next: OPEN   FRIDGE"
    assert find_leaks(prompt, observed, privileged_strings(PRIV)) == ["carrot in the fridge"]
    after_reveal = observed + "\nDirections: slice the carrot"
    assert find_leaks("keep: slice the carrot", after_reveal, privileged_strings(PRIV)) == []
    assert find_leaks("keep: slice the carrot", observed, privileged_strings(PRIV)) == [
        "slice the carrot"
    ]


def test_spellings():
    assert lag_of("cooking:lag=40") == 40 and lag_of("cooking") == 0 and lag_of("cooking:10") == 10
    assert lag_of("hanoi") is None
    assert budget_of("bounded:summary:128") == 128 and budget_of("full") is None
    assert budget_of("oracle-readtime:64:2") == 64 and budget_of("oracle-readtime:256") == 256
    assert form_of("oracle-readtime:64:2") == "oracle-readtime" == form_of("oracle-readtime:64")
    assert form_of("bounded:summary:64") == "bounded:summary"


# -- the pipeline on a stored cooking episode ---------------------------------------------------

textworld = pytest.importorskip("textworld")


class Reader(LLM):
    """A constructed reader: a* (any command of the game's optimal plan) gets 3 nats when the
    prompt holds KEY (the recipe's first direction); completions cycle through ``replies``."""

    model_id = "constructed-reader"

    def __init__(self, key: str, plan: tuple[str, ...], replies: list[str]) -> None:
        self.key, self.plan, self.replies, self.n = key, set(plan), replies, 0

    async def complete(self, messages, params: GenParams) -> Completion:
        self.n += 1
        return Completion(self.replies[(self.n - 1) % len(self.replies)])

    async def score(self, messages, continuations):
        s = 3.0 if self.key in messages[-1]["content"] else 0.0
        return [s if c.split(". ", 1)[1] in self.plan else 0.0 for c in continuations]

    def count_tokens(self, text: str) -> int:
        return len(text.split())


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    from statelab.envs import make_env
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync

    env = make_env("cooking:lag=2")
    _, info = env.reset(seed=1)
    priv = info["privileged"]
    key = priv["recipe"].split("Directions:")[1].strip().splitlines()[0].strip()
    reader = Reader(key, priv["policy"], ["I walked around.", f"Recipe: {key}."])
    tmp = tmp_path_factory.mktemp("s003")
    exp = parse_experiment(
        {
            "name": "diag",
            "model": "scripted:unused",
            "seeds": [1],
            "grid": {"env": ["cooking:lag=2"], "agent": ["reader"],
                     "history": ["full", "last-k:64", "oracle-readtime:64"]},
            "out": str(tmp / "results"),
            "cache": None,
            "max_steps": 2,
            "expert": False,
            "random": False,
        }
    )  # fmt: skip
    assert run_sync(exp, progress=None, llm_factory=lambda s: reader).failed == 0
    return exp, reader, info


def test_audit_gives_known_beta_kappa_and_relevance_lag_on_a_constructed_reader(stored):
    from statelab_seed003.analysis.audit import audit_cooking
    from statelab_seed003.analysis.measures import AUDIT_TABLE

    exp, reader, info = stored
    got = audit_cooking(exp, llm=reader, points=1, relevance=True)
    assert got["points"] == 3 and got["leaks"] == 0 and got["failed"] == []  # a point per run
    db = sqlite3.connect(exp.out_dir / "store.sqlite")
    db.row_factory = sqlite3.Row
    rows = {r["history"]: dict(r) for r in db.execute(f"SELECT * FROM {AUDIT_TABLE}")}
    db.close()
    n = len(info["prelude"])  # chunks of the full history before the first decision
    # first decision: 4 commands, a* the only one of the plan among them
    sure, unsure = math.log(1 + 3 * math.exp(-3)), math.log(4)
    last_k = rows["last-k:64"]
    assert last_k["nll_full"] == pytest.approx(sure)  # the full history holds the cookbook
    assert last_k["nll_oracle"] == pytest.approx(sure)  # the best sample holds the recipe
    assert last_k["nll_writer"] == pytest.approx(unsure, abs=1e-5)  # 64 words of filler: no recipe
    assert last_k["beta"] == pytest.approx(0.0)
    assert last_k["kappa"] == pytest.approx(unsure - sure, abs=1e-5)
    assert last_k["rewrites"] == 2  # F' = 2 filler writes since the reveal
    # leave-one-chunk-out: the cookbook chunk (the reveal) is the one that matters
    reveal = info["privileged"]["phase_a"]["reveal"]
    assert last_k["rel_chunk"] == reveal and last_k["rel_is_reveal"] == 1
    assert last_k["rel_lag"] == n - 1 - reveal == 2
    # the read-time oracle run (replayed without its memory: its writes score) is at κ = 0
    readtime = rows["oracle-readtime:64"]
    assert readtime["nll_writer"] == pytest.approx(sure, abs=1e-5)
    assert readtime["kappa"] == pytest.approx(0.0, abs=1e-5)
    assert rows["full"]["beta"] is None
    assert rows["full"]["nll_writer"] == pytest.approx(sure, abs=1e-5)


def _plant(path, run: str, text: str) -> None:
    """Add ``text`` to the last message of the first call of seed 1's step 1 (its messages
    are texts of the store's ``texts`` table: the planted one is a new text)."""
    from statelab.run._texts import TextWriter
    from statelab.run.store import Store

    st = Store(path, readonly=False)
    try:
        (call,) = [c for c in st.episode_calls(run, 1, 0) if (c["t"], c["i"]) == (1, 0)]
        planted = json.loads(call["messages"])
        planted[-1]["content"] += text
        refs = ",".join(TextWriter(st.db).put(json.dumps(m), "planted") for m in planted)
        st.db.execute(
            "UPDATE calls SET messages_ref=? WHERE run=? AND seed=1 AND t=1 AND i=0", (refs, run)
        )
    finally:
        st.close()


def test_the_leak_check_passes_a_clean_episode_and_catches_a_planted_leak(stored):
    from statelab.run.store import Store
    from statelab_seed003.analysis.leaks import _norm, leak_check

    exp, _, info = stored
    path = exp.out_dir / "store.sqlite"
    st = Store(path)
    run = st.rows("runs", ["run"], {"history": "last-k:64"})[0]["run"]
    st.close()
    assert leak_check(path, run, 1) == []
    seen = _norm(" ".join(o.text + " " + " ".join(o.admissible) for _, o in info["prelude"]))
    secret = next(s for s in privileged_strings(info["privileged"]) if _norm(s) not in seen)
    _plant(path, run, f"\nHint: {secret}")
    assert leak_check(path, run, 1) == [{"t": 1, "call": 0, "secret": secret}]


def test_the_report_shows_tables_1_and_5_and_fig_6(stored):
    from statelab.analysis.reporting import make_report
    from statelab_seed003.analysis.audit import audit_cooking

    exp, reader, _ = stored
    audit_cooking(exp, llm=reader, points=2, relevance=False)
    rep = make_report(exp.out_dir / "store.sqlite", exp.out_dir / "report")
    md = rep.markdown
    assert "Table 5: success (%) and κ by lag and budget" in md
    assert "Table 1: success (%) and mean κ by lag at B = 64" in md
    assert "| last-k | 64 | 1 |" in md
    assert "The test split was not opened" in md
    assert "Provenance: model scripted:unused" in md
    assert rep.files["seed003_fig6"].is_file()


def test_a_report_after_a_killed_audit_says_its_audit_tables_are_partial(stored):
    """Issue 23: an audit killed part way keeps the episodes it did; the report says the κ and
    β tables are partial (how many of how many), until an audit finishes."""
    from statelab.analysis.reporting import make_report
    from statelab_seed003.analysis.audit import audit_cooking

    exp, reader, _ = stored

    class Killed(Reader):
        """Scores the first episode's points, then the process 'dies' (KeyboardInterrupt)."""

        calls = 0

        async def score(self, messages, continuations):
            Killed.calls += 1
            if Killed.calls > 1:
                raise KeyboardInterrupt
            return await super().score(messages, continuations)

    killed = Killed(reader.key, tuple(reader.plan), reader.replies)
    with pytest.raises(KeyboardInterrupt):
        audit_cooking(exp, llm=killed, points=1, relevance=False)
    md = make_report(exp.out_dir / "store.sqlite", exp.out_dir / "report").markdown
    assert "**Partial audit**: the last `statelab audit`" in md
    assert "did not finish: it audited 0 of 3 episodes" in md
    audit_cooking(exp, llm=reader, points=1, relevance=False)
    md = make_report(exp.out_dir / "store.sqlite", exp.out_dir / "report").markdown
    assert "Partial audit" not in md


def test_a_killed_audit_resumes_without_rescoring_the_points_it_stored(stored):
    """Issue 36 item 2: each point is stored as it is scored, so an audit killed mid-episode
    keeps them, and the next audit resumes it: the stored points are not scored again (before,
    a rerun scored every point from the start: as many scorer calls as a whole audit)."""
    from statelab.analysis.reporting import make_report
    from statelab_seed003.analysis.audit import audit_cooking
    from statelab_seed003.analysis.measures import AUDIT_TABLE

    exp, reader, _ = stored

    class Counting(Reader):
        """Counts its scorer calls; the process 'dies' at call ``die`` (KeyboardInterrupt)."""

        def __init__(self, die: int | None = None) -> None:
            super().__init__(reader.key, tuple(reader.plan), reader.replies)
            self.scored, self.die = 0, die

        async def score(self, messages, continuations):
            if self.die is not None and self.scored + 1 >= self.die:
                raise KeyboardInterrupt
            self.scored += 1
            return await super().score(messages, continuations)

    def points() -> list[tuple]:
        db = sqlite3.connect(exp.out_dir / "store.sqlite")
        try:
            return sorted(db.execute(f"SELECT run, seed, t, nll_full FROM {AUDIT_TABLE}"))
        finally:
            db.close()

    whole = Counting()
    audit_cooking(exp, llm=whole, points=2, relevance=False)
    everything = points()
    assert len(everything) == 6 and whole.scored > 4  # 3 runs' 2 points each
    killed = Counting(die=whole.scored // 2 + 1)
    with pytest.raises(KeyboardInterrupt):
        audit_cooking(exp, llm=killed, points=2, relevance=False)
    assert killed.scored == whole.scored // 2
    resumed = Counting()
    audit_cooking(exp, llm=resumed, points=2, relevance=False)
    # only what the kill lost is scored again: the points it stored are kept, not rescored
    assert resumed.scored < whole.scored
    assert resumed.scored >= whole.scored - killed.scored
    assert points() == everything  # every point once, the same values
    md = make_report(exp.out_dir / "store.sqlite", exp.out_dir / "report").markdown
    assert "Partial audit" not in md
