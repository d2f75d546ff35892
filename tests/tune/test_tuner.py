"""``statelab tune`` on a store: paired seeds in the store, the plan's episodes and no more,
resume after a kill, episodes of an experiment reused, the winner as an experiment file."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from statelab.cli import app
from statelab.core import LLM, Completion, ConfigError, GenParams, Message, Usage
from statelab.run.config import load_experiment, parse_experiment
from statelab.run.runner import run_sync
from statelab.run.store import Store
from statelab.tune.report import write
from statelab.tune.search import load_search, parse_search
from statelab.tune.tuner import schedule, tune

MOVE = "Action: Move the top disk of rod A to the top of rod C"


class Counting(LLM):
    model_id = "counting"
    max_concurrency = 4

    def __init__(self, calls: list[int]) -> None:
        self.calls = calls

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        self.calls[0] += 1
        return Completion(MOVE, Usage(10, 5))


def search(tmp: Path, **over):
    data = {
        "name": "t",
        "model": "scripted:x",  # never built: the tests pass a factory
        "envs": ["hanoi"],
        "space": {
            "format": ["tagged-list", "natural", "dict-list"],
            "history": ["full", "window:2"],
        },
        "seeds": [0, 1, 2, 3, 4, 5],
        "budget": 24,
        "max_steps": 3,
        "out": str(tmp / "results"),
        "cache": None,
    }
    data.update(over)
    return parse_search(data)


def counted(calls: list[int]):
    return lambda spec: Counting(calls)


def episodes(s) -> list[tuple[str, int]]:
    store = Store(Path(s.out) / s.name / "store.sqlite")
    try:
        eps = store.table("episodes")
    finally:
        store.close()
    return sorted(zip(eps["run"], eps["seed"].astype(int), strict=True))


def test_plan_of_six_candidates_and_its_cost(tmp_path):
    rounds = schedule(search(tmp_path / "unused"))
    # 2 rounds: 6 x 2 seeds (12), then 2 x 4 more (seeds capped at the 6 there are)
    assert [(r.candidates, r.seeds, r.keep) for r in rounds] == [(6, 2, 2), (2, 6, 2)]


def test_tune_plays_the_plan_on_paired_seeds_and_no_more(tmp_path):
    s = search(tmp_path)
    calls = [0]
    t = tune(s, progress=None, llm_factory=counted(calls))
    assert t.played == t.planned == 6 * 2 + 2 * 4 == 20 and t.reused == 0
    assert t.full_grid == 36
    got = episodes(s)
    assert len(got) == 20
    by_run: dict[str, list[int]] = {}
    for run, seed in got:
        by_run.setdefault(run, []).append(seed)
    finalists = [c for c in s.candidates() if t.halving.cut_after(c) == 1]
    assert len(finalists) == 2
    for c in s.candidates():
        (spec,) = s.specs(c)
        assert by_run[spec.key] == ([0, 1, 2, 3, 4, 5] if c in finalists else [0, 1])
    assert calls[0] > 0


def test_killed_tune_resumes_and_replays_nothing(tmp_path):
    full_calls = [0]
    fresh = tune(search(tmp_path / "fresh"), progress=None, llm_factory=counted(full_calls))
    s = search(tmp_path / "killed")
    rounds = schedule(s)
    first, second = [0], [0]
    # killed after round 1: a prefix of the plan
    t1 = tune(s, progress=None, llm_factory=counted(first), rounds=rounds[:1])
    assert t1.played == 12
    t2 = tune(s, progress=None, llm_factory=counted(second))
    assert t2.reused == 12 and t2.played == 8
    assert first[0] + second[0] == full_calls[0]  # every model call made exactly once
    assert t2.halving.winner == fresh.halving.winner
    # once more: everything is in the store
    third = [0]
    t3 = tune(s, progress=None, llm_factory=counted(third))
    assert t3.played == 0 and third[0] == 0 and t3.reused == 20


def test_episodes_of_an_experiment_of_the_same_name_are_reused(tmp_path):
    s = search(tmp_path)
    exp = parse_experiment(
        {
            "name": "t",
            "model": "scripted:x",
            "seeds": [0, 1, 2],
            "grid": {"env": ["hanoi"], "format": ["natural"], "history": ["window:2"]},
            "max_steps": 3,
            "expert": False,
            "random": False,
            "out": s.out,
            "cache": None,
        }
    )
    run_sync(exp, progress=None, llm_factory=counted([0]))
    t = tune(s, progress=None, llm_factory=counted([0]))
    # round 1 reuses seeds 0, 1 of that run (and round 2 its seed 2 if it goes on)
    cand = (("history", "window:2"), ("format", "natural"))
    assert t.reused == (3 if t.halving.cut_after(cand) == 1 else 2)
    assert t.played == 20 - t.reused


def test_outputs_report_plot_and_a_winner_statelab_run_takes(tmp_path):
    s = search(tmp_path, baseline={"format": "tagged-list", "history": "full"})
    t = tune(s, progress=None, llm_factory=counted([0]))
    paths = write(t, tmp_path / "out")
    text = paths["report"].read_text()
    assert "the full grid is 36" in text and "Indistinguishable from the best" in text
    assert "baseline" in text
    # every candidate scores the same: round 1 cut 6 tied candidates by their order
    assert "Round 1's cut went through a tie: 6 candidates at 0.333" in text
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    exp = load_experiment(paths["winner"])
    (winner,) = s.specs(t.halving.winner)
    assert winner.key in {r.key for r in exp.runs()}
    # the winner's experiment shares the tune's store: its finished episodes are reused
    res = run_sync(exp, progress=None, llm_factory=counted([0]))
    assert res.skipped == 6


def test_search_file_errors_are_one_line(tmp_path):
    with pytest.raises(ConfigError, match=r"^search error: unknown key 'spce'; allowed here: "):
        search(tmp_path, spce=1)
    with pytest.raises(ConfigError, match=r"space.format: unknown format 'nope'"):
        search(tmp_path, space={"format": ["nope"]})
    with pytest.raises(ConfigError, match=r"budget: 5 episodes cannot give"):
        tune(search(tmp_path, budget=5), progress=None, llm_factory=counted([0]))
    with pytest.raises(ConfigError, match=r"baseline.history: 'summary' is not in space.history"):
        search(tmp_path, baseline={"format": "natural", "history": "summary"})


def test_configs_tune_file_loads():
    s = load_search(Path(__file__).parents[2] / "configs" / "tune" / "hanoi_formats.yaml")
    assert len(s.candidates()) == 12
    rounds = schedule(s)
    assert sum(r.new_episodes for r in rounds) <= s.budget


def test_cli_tune_writes_its_files(tmp_path, monkeypatch):
    script = tmp_path / "replies.json"
    script.write_text(f'["{MOVE}"]')
    yml = tmp_path / "search.yaml"
    yml.write_text(
        f"name: c\nmodel: scripted:{script}\nenvs: [hanoi]\n"
        "space: {history: [full, 'window:2']}\nseeds: [0, 1, 2]\nbudget: 6\nmax_steps: 2\n"
        f"out: {tmp_path / 'results'}\ncache: null\n"
    )
    res = CliRunner().invoke(app, ["tune", str(yml), "--quiet"])
    assert res.exit_code == 0, res.output
    assert "winner history=" in res.output and "played 6" in res.output
    assert (tmp_path / "results" / "c" / "tune" / "winner.yaml").is_file()


def test_score_per_1k_tokens_objective(tmp_path):
    # every episode: 3 steps of one 15-token call, the smallest disk moved to rod C (1/3)
    s = search(tmp_path, objective="score_per_1k_tokens")
    t = tune(s, progress=None, llm_factory=counted([0]))
    for vals in t.halving.values:
        for v in vals.values():
            assert v == pytest.approx([1000 * (1 / 3) / 45] * v.size)


def test_cli_tune_bad_search_is_one_line_exit_2(tmp_path):
    res = CliRunner().invoke(app, ["tune", str(tmp_path / "nope.yaml")])
    assert (
        res.exit_code == 2
        and res.output.strip() == f"error: no such search file: {tmp_path}/nope.yaml"
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: b\nenvs: [hanoi]\nspace: {history: [full]}\nbudget: 1\nbogus: 1\n")
    res = CliRunner().invoke(app, ["tune", str(bad)])
    assert res.exit_code == 2 and res.output.count("\n") == 1
    assert "unknown key 'bogus'" in res.output


def test_several_envs_a_seed_costs_one_episode_per_env_and_scores_average(tmp_path):
    s = search(
        tmp_path,
        envs=["hanoi", "hanoi:4"],
        space={"history": ["full", "window:2"]},
        seeds=[0, 1, 2],
        budget=12,
    )
    (r,) = schedule(s)  # two candidates: one round, the finalists
    assert (r.candidates, r.seeds) == (2, 3)
    t = tune(s, progress=None, llm_factory=counted([0]))
    assert t.played == t.planned == 12 and t.full_grid == 12
    # the one move A->C puts 1 of 3 disks, and 1 of 4, on rod C
    for v in t.halving.values[0].values():
        assert v == pytest.approx([(1 / 3 + 1 / 4) / 2] * 3)


def test_tune_prints_its_spending_first_and_writes_it_in_tune_md(tmp_path):
    s = search(tmp_path)
    said = io.StringIO()
    t = tune(s, progress=said, llm_factory=counted([0]))
    first = said.getvalue().splitlines()[0]
    assert first == (
        "tune t: plan: 2 rounds, 6 -> 2 candidates on 2, 6 seeds: 20 of the 24-episode budget;"
        " 4 unspent: round 2 plays all 6 seeds of the pool (more seeds would let it spend more)"
    )
    paths = write(t, tmp_path / "out")
    assert "- plan: 2 rounds, 6 -> 2 candidates" in paths["report"].read_text()


def test_a_finished_episode_without_a_score_counts_zero_never_nan(tmp_path):
    """Issue 33: an unscored finished episode gave NaN in the ranking (NaN sorts anywhere,
    and the finalists' paired test refused it); it counts 0, as a failed one does."""
    s = search(tmp_path)
    tune(s, progress=None, llm_factory=counted([0]))
    path = Path(s.out) / s.name / "store.sqlite"
    db = sqlite3.connect(path)
    (run,) = db.execute("SELECT run FROM episodes WHERE seed = 0 ORDER BY run LIMIT 1").fetchone()
    db.execute("UPDATE episodes SET score = NULL WHERE run = ? AND seed = 0", (run,))
    db.commit()
    db.close()
    again = tune(s, progress=None, llm_factory=counted([0]))
    assert again.played == 0
    for vals in again.halving.values:
        for v in vals.values():
            assert np.isfinite(v).all()
    first = again.halving.values[0]
    zeroed = [c for c, v in first.items() if v[0] == 0.0]
    assert len(zeroed) == 1 and first[zeroed[0]][1] == pytest.approx(1 / 3)
