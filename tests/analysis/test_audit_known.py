"""Known answers for the general audit on two envs other than cooking (issue 26): a rolling
summary that keeps the fact the reader needs at some writes and drops it at others, read by
a constructed reader whose NLLs are known in closed form. κ is unsure − sure at exactly the
points whose summary dropped the fact, and 0 where it kept it; the full history and the
read-time oracle hold it; leaving out the chunk that holds it costs the whole difference."""

from __future__ import annotations

import math
import sqlite3

import pytest

from statelab.core import LLM, Completion, GenParams
from statelab.state.history import SUMMARY_SYSTEM
from statelab.state.readtime import COMPRESSOR_SYSTEM

#: the summary writes (1-based) that keep the fact; the others drop it
KEPT = {1, 2, 4}
BOOST = 3.0


class World(LLM):
    """Acting model, summary writer, compressor and reader in one. The agent plays ``path``;
    write i keeps KEY iff i in KEPT; the compressor's samples alternate KEY / nothing; the
    reader gives a* (the path's action at the step whose observation ends the prompt's
    view) BOOST nats when KEY is in the prompt."""

    model_id = "constructed-world"
    constrained = False

    def __init__(self, key: str, path: list[str], renders: list[str]) -> None:
        self.key, self.path, self.renders = key, path, renders
        self.acted = self.wrote = self.compressed = 0
        pad = " ".join(["and"] * len(key.split()))
        self.keep, self.drop = f"I saw {key} here.", f"I walked around {pad} there."

    async def complete(self, messages, params: GenParams) -> Completion:
        system = messages[0]["content"]
        if system == SUMMARY_SYSTEM:
            self.wrote += 1
            return Completion(self.keep if self.wrote in KEPT else self.drop)
        if system == COMPRESSOR_SYSTEM:
            self.compressed += 1
            return Completion(f"Remember: {self.key}" if self.compressed % 2 else "Nothing.")
        self.acted += 1
        return Completion(self.path[self.acted - 1])

    def a_star(self, content: str) -> str | None:
        head = content.split("\n\nCommands:")[0]
        ends = [k for k, r in enumerate(self.renders) if head.endswith(r)]
        return self.path[ends[0]] if len(ends) == 1 else None

    async def score(self, messages, continuations):
        content = messages[-1]["content"]
        s = BOOST if self.key in content else 0.0
        star = self.a_star(content)
        return [s if c.split(". ", 1)[1] == star else 0.0 for c in continuations]

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def _path(name: str, seed: int, most: int) -> tuple[list[str], list[str]]:
    """The expert's actions from the reset and the rendered observation before each."""
    from statelab.envs import make_env
    from statelab.run.axes import env_context

    env = make_env(name)
    render = env_context(name, fmt="natural", seed=seed, dry=False).render_obs
    obs, info = env.reset(seed=seed)
    expert, path, renders = env.expert(), [], []
    for _ in range(most):
        renders.append(render(obs))
        path.append(expert.act(obs, info))
        obs, _, term, trunc, info = env.step(path[-1])
        if term or trunc:
            break
    return path, renders


def _stored(tmp, name: str, seed: int, most: int):
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync

    path, renders = _path(name, seed, most)
    # what the first action revealed (the full history's first chunk): a line of it seen
    # nowhere else (one line: a summary is written on one line)
    others = [r for k, r in enumerate(renders) if k != 1]
    key = max((ln for ln in renders[1].splitlines() if all(ln not in r for r in others)), key=len)
    assert len(set(renders)) == len(renders)  # the reader tells the steps apart
    world = World(key, path, renders)
    exp = parse_experiment(
        {"name": "known", "model": "scripted:unused", "seeds": [seed],
         "grid": {"env": [name], "agent": ["act"], "history": ["summary"],
                  "format": ["natural"]},
         "out": str(tmp / "results"), "cache": None, "max_steps": len(path),
         "expert": False, "random": False}
    )  # fmt: skip
    assert run_sync(exp, progress=None, llm_factory=lambda s: world).failed == 0
    return exp, world, renders


@pytest.mark.parametrize(("name", "seed", "most"), [("household", 3, 6), ("messenger", 3, 6)])
def test_kappa_is_positive_exactly_where_the_summary_dropped_the_fact(tmp_path, name, seed, most):
    if name == "household":
        pytest.importorskip("textworld")
    from statelab.analysis.audit import POINTS_TABLE, audit_sufficiency

    exp, world, renders = _stored(tmp_path, name, seed, most)
    got = audit_sufficiency(exp, llm=world, points=99, how="first", relevance=True, samples=2,
                           say=lambda s: None)  # fmt: skip
    assert got["failed"] == [] and got["skipped"] == {} and got["points"] == len(renders)
    db = sqlite3.connect(exp.out_dir / "store.sqlite")
    db.row_factory = sqlite3.Row
    rows = {r["k"]: dict(r) for r in db.execute(f"SELECT * FROM {POINTS_TABLE}")}
    db.close()
    assert sorted(rows) == list(range(len(renders)))
    dropped = []
    for k, r in rows.items():
        n = r["n_actions"]
        sure, unsure = math.log(1 + (n - 1) * math.exp(-BOOST)), math.log(n)
        assert r["a_star"] == world.path[k]
        if k == 0:  # nothing revealed yet, and nothing written: no state to compress
            assert r["nll_full"] == pytest.approx(unsure) and r["kappa"] is None
            continue
        assert r["nll_full"] == pytest.approx(sure)  # the full history holds the fact
        assert r["nll_readtime"] == pytest.approx(sure)  # the best compression holds it
        assert r["beta"] == pytest.approx(0.0, abs=1e-9)
        lost = k >= 2 and k not in KEPT  # memory of decision k = summary write k
        want = unsure - sure if lost else 0.0
        assert r["kappa"] == pytest.approx(want, abs=1e-9), k
        assert r["lost"] == pytest.approx(want, abs=1e-9), k
        dropped += [k] if r["kappa"] > 1e-6 else []
        if k >= 2:  # the fact's chunk (the first) is the one that matters, k - 1 steps back
            assert (r["rel_chunk"], r["rel_lag"]) == (0, k - 1)
            assert r["rel_gain"] == pytest.approx(unsure - sure)
    assert dropped == [k for k in range(2, len(renders)) if k not in KEPT]
    assert dropped  # the constructed episode has dropping points


def test_the_report_prints_the_audit_and_the_written_states_accuracy(tmp_path):
    """The report's audit section shows κ as recomputed from the stored points (game-
    clustered interval), and the state-accuracy section scores the summary run's memory."""
    from statelab.analysis.audit import POINTS_TABLE, audit_sufficiency
    from statelab.analysis.audit.stateacc import text_accuracy, written_state_accuracy
    from statelab.analysis.reporting import make_report
    from statelab.analysis.stats import clustered_bootstrap
    from statelab.run.store import Store

    pytest.importorskip("textworld")
    from statelab.analysis.audit import plan_cost

    exp, world, renders = _stored(tmp_path, "household", 3, 6)
    path = exp.out_dir / "store.sqlite"
    st = Store(path, readonly=True)
    before = plan_cost(st, 99, 2, False, "constructed-world")
    st.close()
    n = len(renders)  # one episode: every step a point, 3 + 2 scorings and 2 samples each
    assert (before.episodes, before.points, before.scorings, before.completions) == (
        1, n, 5 * n, 2 * n)  # fmt: skip
    printed: list[str] = []
    audit_sufficiency(exp, llm=world, reader="constructed-world", points=99, how="first",
                     samples=2, say=printed.append)  # fmt: skip
    assert printed == [before.line()]
    st = Store(path, readonly=True)
    after = plan_cost(st, 99, 2, False, "constructed-world")
    st.close()
    assert (after.episodes, after.points) == (0, 0)  # nothing left: a rerun scores nothing
    st = Store(path, readonly=True)
    try:
        pts = st.rows(POINTS_TABLE)
        acc = written_state_accuracy(st)
        steps = st.table("steps", ["run", "seed", "t", "memory", "gold"])
    finally:
        st.close()
    kappas = {1: [float(p["kappa"]) for p in pts if p["kappa"] is not None]}
    want = clustered_bootstrap(kappas).text()
    md = make_report(path, tmp_path / "report").markdown
    section = md.split("## Decision sufficiency (statelab audit)")[1].split("\n### ")[0]
    (line,) = [ln for ln in section.splitlines() if ln.startswith("| household |")]
    assert want in line
    # the summary run writes its memory: scored against the tracked truth, as text_accuracy
    (row,) = acc.to_dict("records")
    per = text_accuracy(steps[steps["gold"].notna()], "memory")
    assert row["source"] == "memory" and row["scored"] == int(per["scored"].sum())
    assert row["accuracy"] == pytest.approx(float(per["accuracy"].mean()))
    assert "## State accuracy of written states" in md


def test_no_read_time_oracle_for_an_unbudgeted_state_over_max_budget(tmp_path):
    """With ``max_budget`` below the summary's size no compression is drawn: κ and β are
    undefined, δ own, δ full and lost vs full are as before."""
    from statelab.analysis.audit import POINTS_TABLE, audit_sufficiency

    exp, world, renders = _stored(tmp_path, "messenger", 3, 6)
    audit_sufficiency(exp, llm=world, points=99, how="first", samples=2, max_budget=1,
                     say=lambda s: None)  # fmt: skip
    assert world.compressed == 0
    db = sqlite3.connect(exp.out_dir / "store.sqlite")
    db.row_factory = sqlite3.Row
    rows = {r["k"]: dict(r) for r in db.execute(f"SELECT * FROM {POINTS_TABLE}")}
    db.close()
    for k in range(2, len(renders)):
        r, n = rows[k], rows[k]["n_actions"]
        sure, unsure = math.log(1 + (n - 1) * math.exp(-BOOST)), math.log(n)
        assert r["nll_readtime"] is None and r["kappa"] is None and r["beta"] is None
        want = unsure - sure if k not in KEPT else 0.0
        assert r["lost"] == pytest.approx(want, abs=1e-9)


def test_an_oracle_summary_run_is_scored_under_its_own_state_equal_to_the_true_one(tmp_path):
    """(a) of an ``oracle-summary`` run is its own state, replayed (its agent's model tag does
    not make it a model-written memory): the same text as (c), so the same NLL."""
    from statelab.analysis.audit import POINTS_TABLE, audit_sufficiency
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync

    path, renders = _path("messenger", 3, 4)
    world = World("never-in-a-prompt", path, renders)
    exp = parse_experiment(
        {"name": "oracle", "model": "scripted:unused", "seeds": [3],
         "grid": {"env": ["messenger"], "agent": ["act"], "history": ["oracle-summary"],
                  "format": ["natural"]},
         "out": str(tmp_path / "results"), "cache": None, "max_steps": len(path),
         "expert": False, "random": False}
    )  # fmt: skip
    assert run_sync(exp, progress=None, llm_factory=lambda s: world).failed == 0
    audit_sufficiency(exp, llm=world, points=99, how="first", samples=2, say=lambda s: None)
    db = sqlite3.connect(exp.out_dir / "store.sqlite")
    db.row_factory = sqlite3.Row
    rows = [dict(r) for r in db.execute(f"SELECT * FROM {POINTS_TABLE}")]
    db.close()
    assert len(rows) == len(path)
    for r in rows:
        assert r["nll_own"] is not None and r["nll_oracle"] is not None
        assert r["nll_own"] == pytest.approx(r["nll_oracle"], abs=1e-12)
