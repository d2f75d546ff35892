"""Every number the report prints, recomputed from raw episodes with known answers.

A Hanoi experiment with 3 rollouts per seed: a baseline run (one acting call per env step), a
VoT-like run (two acting calls per env step: the drawn map, then the action) with a failed
rollout, a finished rollout without a score, a seed whose every rollout failed and a seed
whose every rollout finished without a score, a run with a single seed, and the expert. The
expected figures are computed here by plain loops over the episode table (per episode, then
per seed, then over seeds), independently of :mod:`statelab.analysis`; a few are checked
against literal hand-computed values, and against the wrong figures the report used to print.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Iterable
from typing import Any

import pandas as pd
import pytest

from statelab.analysis import summarise, to_json, to_markdown

NAN = float("nan")
THIRD = 1 / 3
ROLLOUTS = 3
# success[seed][rollout] per run; a success scores 1, a failure 1/3 (the Hanoi lattice)
BASE_SUCCESS = [[1, 1, 1], [1, 1, 1], [1, 1, 0], [1, 0, 1], [0, 0, 1]]  # 11 of 15
VOT_SUCCESS = [[1, 1, 1], [1, 1, 1], [1, 1, 1], [1, 1, 1], [1, 1, 0]]
VOT_FAILED = {(2, 1)}  # (seed, rollout): the model errored; the seed still counts
VOT_NO_SCORE = {(3, 2)}  # finished, but the env returned no score
VOT_FAILED_SEED, VOT_UNSCORED_SEED = 5, 6  # every rollout failed / finished without a score


def _ep(run: str, grounding: str, grp: int, r: int, **kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "run": run,
        "env": "hanoi",
        "model": "phi4",
        "agent": "react",
        "history": "full",
        "format": "tagged-list",
        "grounding": grounding,
        "seed": 1000 * grp + r,  # the episode's own seed; grp is the config seed
        "grp": grp,
        "status": "done",
        "error": None,
    }
    row.update(kw)
    return row


def _acting(success: int, grp: int, r: int, calls_per_step: int, per_step: int) -> dict[str, Any]:
    steps = 10 + 5 * r + grp
    return {
        "score": 1.0 if success else THIRD,
        "success": bool(success),
        "steps": steps,
        "agent_calls": calls_per_step * steps,
        "agent_in": steps * (per_step + 100 * grp + 10 * r),
        "agent_out": steps * 40 * calls_per_step,
        "aux_in": 0,
        "aux_out": 0,
    }


def raw_episodes() -> pd.DataFrame:
    rows = []
    for g, seed in enumerate(BASE_SUCCESS):
        for r, s in enumerate(seed):
            rows.append(_ep("base", "none", g, r, **_acting(s, g, r, 1, 1000)))
    for g, seed in enumerate(VOT_SUCCESS):
        for r, s in enumerate(seed):
            row = _ep("vot", "vot", g, r, **_acting(s, g, r, 2, 2089))
            if (g, r) in VOT_FAILED:
                row.update(status="failed", error="ModelError: timeout", score=0.0)
            if (g, r) in VOT_NO_SCORE:
                row.update(score=NAN)
            rows.append(row)
    for r in range(ROLLOUTS):
        failed = _ep("vot", "vot", VOT_FAILED_SEED, r, **_acting(0, 5, r, 2, 2089))
        rows.append({**failed, "status": "failed", "error": "ModelError: 500", "score": 0.0})
        unscored = _ep("vot", "vot", VOT_UNSCORED_SEED, r, **_acting(1, 6, r, 2, 2089))
        rows.append({**unscored, "score": None})
    for r, s in enumerate([1, 0, 0]):  # one seed only
        rows.append(_ep("image", "image", 0, r, **_acting(s, 0, r, 1, 3000)))
    for g in range(5):
        for r in range(ROLLOUTS):
            rows.append(
                _ep(
                    "expert",
                    "-",
                    g,
                    r,
                    model="-",
                    agent="expert",
                    history="-",
                    format="-",
                    score=1.0,
                    success=True,
                    steps=7,
                    agent_calls=0,
                    agent_in=0,
                    agent_out=0,
                    aux_in=0,
                    aux_out=0,
                )
            )
    return pd.DataFrame(rows)


# --- the expected figures, by plain loops ------------------------------------------------


def _scored(eps: pd.DataFrame, run: str) -> dict[int, list[dict[str, Any]]]:
    """Seed -> that run's finished episodes with a score (failed and NaN-scored left out)."""
    out: dict[int, list[dict[str, Any]]] = {}
    for rec in eps[eps["run"] == run].to_dict("records"):
        score = rec["score"]
        if rec["status"] == "done" and score is not None and not math.isnan(score):
            out.setdefault(int(rec["grp"]), []).append(rec)
    return out


def _seed_then_mean(seeds: dict[int, list[dict[str, Any]]], f: Any) -> float:
    return statistics.fmean(statistics.fmean(f(e) for e in eps) for eps in seeds.values())


def expected(eps: pd.DataFrame, run: str) -> dict[str, Any]:
    seeds = _scored(eps, run)
    means = [statistics.fmean(e["score"] for e in s) for s in seeds.values()]
    return {
        "seed_means": dict(zip(seeds, means, strict=True)),
        "n": len(seeds),
        "mean": statistics.fmean(means),
        "sd": statistics.stdev(means) if len(means) > 1 else NAN,
        "success": _seed_then_mean(seeds, lambda e: float(e["success"])),
        "in_step": _seed_then_mean(seeds, lambda e: e["agent_in"] / e["steps"]),
        "in_call": _seed_then_mean(seeds, lambda e: e["agent_in"] / e["agent_calls"]),
        "out_step": _seed_then_mean(seeds, lambda e: e["agent_out"] / e["steps"]),
        "per_1k": _seed_then_mean(
            seeds, lambda e: 1000 * e["score"] / (e["agent_in"] / e["steps"])
        ),
    }


def exact_sign_flip_p(diffs: Iterable[float]) -> float:
    """Two-sided exact sign-flip p by enumerating every sign pattern."""
    d = list(diffs)
    observed = statistics.fmean(d)
    stats = [
        statistics.fmean(s * x for s, x in zip(signs, d, strict=True))
        for signs in itertools.product((1, -1), repeat=len(d))
    ]
    eps = 1e-12
    upper = sum(t >= observed - eps for t in stats) / len(stats)
    lower = sum(t <= observed + eps for t in stats) / len(stats)
    return min(1.0, 2 * min(upper, lower))


# --- fixtures and helpers ----------------------------------------------------------------


@pytest.fixture(scope="module")
def episodes() -> pd.DataFrame:
    return raw_episodes()


@pytest.fixture(scope="module")
def summary(episodes: pd.DataFrame) -> pd.DataFrame:
    return summarise(episodes, {"grounding": "none"})


def _row(summary: pd.DataFrame, run: str) -> dict[str, Any]:
    rows = summary[summary["run"] == run].to_dict("records")
    assert len(rows) == 1
    return rows[0]


def _table(md: str) -> list[dict[str, str]]:
    lines = [ln for ln in md.splitlines() if ln.startswith("|")]
    cells = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]
    header, _sep, *rows = cells
    return [dict(zip(header, r, strict=True)) for r in rows]


@pytest.fixture(scope="module")
def printed(summary: pd.DataFrame) -> dict[str, dict[str, str]]:
    """The Markdown table's cells, keyed by the grounding column."""
    return {r["Grounding"]: r for r in _table(to_markdown(summary, "Hanoi, 3 rollouts"))}


# --- 1: success over episodes, not "any success per seed" ----------------------------------


def test_success_is_the_share_of_successful_episodes(
    episodes: pd.DataFrame, summary: pd.DataFrame
) -> None:
    base, vot = _row(summary, "base"), _row(summary, "vot")
    assert base["success_rate"] == pytest.approx(11 / 15)  # was 1.00: every seed had a success
    assert base["success_rate"] == pytest.approx(expected(episodes, "base")["success"])
    # vot: seeds 2 and 3 have two scored rollouts each; per seed, then over the five seeds
    assert vot["success_rate"] == pytest.approx((1 + 1 + 1 + 1 + 2 / 3) / 5)
    assert vot["success_rate"] == pytest.approx(expected(episodes, "vot")["success"])
    assert _row(summary, "image")["success_rate"] == pytest.approx(1 / 3)


def test_score_mean_sd_over_seed_means(episodes: pd.DataFrame, summary: pd.DataFrame) -> None:
    for run in ("base", "vot", "image"):
        row, want = _row(summary, run), expected(episodes, run)
        assert row["n"] == want["n"]
        assert row["mean"] == pytest.approx(want["mean"])
        if want["n"] > 1:
            assert row["sd"] == pytest.approx(want["sd"])  # sample SD (ddof = 1)
        else:
            assert math.isnan(row["sd"])
    assert _row(summary, "base")["mean"] == pytest.approx((11 + 4 * THIRD) / 15)


# --- 3 and 4: tokens per env step, and Fig. 1 per episode ----------------------------------


def test_tokens_per_env_step_and_per_call(episodes: pd.DataFrame, summary: pd.DataFrame) -> None:
    for run in ("base", "vot", "image"):
        row, want = _row(summary, run), expected(episodes, run)
        assert row["in_per_step"] == pytest.approx(want["in_step"])
        assert row["in_per_call"] == pytest.approx(want["in_call"])
        assert row["out_per_step"] == pytest.approx(want["out_step"])
    vot = _row(summary, "vot")
    # two acting calls per env step: per step is twice per call (1,045 vs 2,089 in the issue)
    assert vot["in_per_step"] == pytest.approx(2 * vot["in_per_call"])
    assert vot["in_per_step"] > 2089
    base = _row(summary, "base")
    assert base["in_per_step"] == pytest.approx(base["in_per_call"])


def test_score_per_1k_is_per_episode_then_averaged(
    episodes: pd.DataFrame, summary: pd.DataFrame
) -> None:
    for run in ("base", "vot", "image"):
        assert _row(summary, run)["score_per_1k_in"] == pytest.approx(
            expected(episodes, run)["per_1k"]
        )
    # not the old ratio of averages: a seed's mean score over its pooled tokens per call
    base = _scored(episodes, "base")
    pooled = statistics.fmean(
        1000
        * statistics.fmean(e["score"] for e in eps)
        / (sum(e["agent_in"] for e in eps) / sum(e["agent_calls"] for e in eps))
        for eps in base.values()
    )
    assert _row(summary, "base")["score_per_1k_in"] != pytest.approx(pooled, rel=1e-3)
    # nor per call for VoT, which made it look twice as cheap
    assert _row(summary, "vot")["score_per_1k_in"] == pytest.approx(
        expected(episodes, "vot")["per_1k"]
    )


# --- 5: units, failures, NaN scores, n = 1, the expert --------------------------------------


def test_n_and_failed_count_seeds_episodes_count_episodes(summary: pd.DataFrame) -> None:
    vot = _row(summary, "vot")
    assert (vot["n"], vot["failed"], vot["unscored"]) == (5, 1, 1)
    # 15 + 3 + 3 episodes: 13 scored, 1 + 3 failed, 1 + 3 without a score
    assert (vot["episodes"], vot["episodes_failed"], vot["episodes_unscored"]) == (13, 4, 4)
    base = _row(summary, "base")
    assert (base["n"], base["failed"], base["episodes"], base["episodes_failed"]) == (5, 0, 15, 0)


def test_test_over_shared_seeds_with_exact_p(episodes: pd.DataFrame, summary: pd.DataFrame) -> None:
    vot, base = expected(episodes, "vot")["seed_means"], expected(episodes, "base")["seed_means"]
    shared = sorted(set(vot) & set(base))
    assert shared == [0, 1, 2, 3, 4]
    diffs = [vot[s] - base[s] for s in shared]
    row = _row(summary, "vot")
    assert row["paired"] and row["n_test"] == 5
    assert row["diff"] == pytest.approx(statistics.fmean(diffs))
    assert row["p"] == pytest.approx(exact_sign_flip_p(diffs))
    assert row["min_p"] == pytest.approx(2 / 2 ** sum(d != 0 for d in diffs))
    assert not row["sig"]  # 5 pairs: no p below 0.0625 exists
    assert row["ci_low"] <= row["diff"] <= row["ci_high"]
    image = _row(summary, "image")  # one seed: no test
    assert not image["paired"] and math.isnan(image["p"]) and not image["sig"]


def test_printed_table_matches_the_recomputed_numbers(
    episodes: pd.DataFrame, summary: pd.DataFrame, printed: dict[str, dict[str, str]]
) -> None:
    for grounding, run in (("none", "base"), ("vot", "vot"), ("image", "image")):
        cells, want = printed[grounding], expected(episodes, run)
        sd = "–" if want["n"] == 1 else f"{want['sd']:.2f}"
        assert cells["Score mean (SD)"].rstrip("*") == f"{want['mean']:.2f} ({sd})"
        assert cells["Success"] == f"{want['success']:.2f}"
        assert cells["In tok/step"] == f"{want['in_step']:,.0f}"
        assert cells["In tok/call"] == f"{want['in_call']:,.0f}"
        assert cells["Out tok/step"] == f"{want['out_step']:,.0f}"
        assert cells["Score/1k in"] == f"{want['per_1k']:.3f}"
    assert printed["none"]["Success"] == "0.73"  # 11/15, not 1.00
    assert printed["image"]["Score mean (SD)"] == "0.56 (–)"  # n = 1: no sample SD
    assert printed["vot"]["n"] == "5 (+1 failed, +1 no score)"
    assert printed["vot"]["Episodes"] == "13 (+4 failed, +4 no score)"
    assert printed["none"]["Episodes"] == "15"
    vot = _row(summary, "vot")
    assert printed["vot"]["p (pairs)"] == (f"{vot['p']:.3g} (5 pairs; n too small for p<0.05)")
    assert printed["vot"]["Δ vs baseline [95% CI]"].startswith(f"{vot['diff']:+.2f} [")
    assert printed["image"]["p (pairs)"] == "– (unpaired, 1 vs 5 seeds; needs 2)"
    assert printed["none"]["Δ vs baseline [95% CI]"] == "baseline"


def test_expert_is_labelled_privileged(printed: dict[str, dict[str, str]]) -> None:
    expert = printed["-"]
    assert expert["Agent"] == "privileged expert"
    assert expert["In tok/step"] == "–" and expert["Score/1k in"] == "–"
    assert expert["Score mean (SD)"] == "1.00 (0.00)" and expert["n"] == "5"


def test_nan_scores_do_not_crash_and_json_is_valid(summary: pd.DataFrame) -> None:
    payload = to_json(summary)
    runs = {r["run"]: r for r in payload["runs"]}
    assert runs["image"]["sd"] is None and runs["vot"]["unscored"] == 1
    assert payload["test"]["name"] == "permutation"
    assert runs["vot"]["test"] == "sign-flip (exact)"
    only_nan = raw_episodes()
    only_nan = only_nan[only_nan["run"] == "vot"].assign(score=NAN)
    row = summarise(only_nan, None).iloc[0]
    # seeds 2 and 5 had a failed rollout; seeds 0, 1, 3, 4 and 6 only unscored ones
    assert (row["n"], row["failed"], row["unscored"]) == (0, 2, 5) and math.isnan(row["mean"])
    md = to_markdown(summarise(only_nan, None), "all NaN")
    assert "| 0 (+2 failed, +5 no score) |" in md


def test_bootstrap_option_marks_by_the_interval(episodes: pd.DataFrame) -> None:
    boot = summarise(episodes, {"grounding": "none"}, test="bootstrap")
    row = _row(boot, "vot")
    assert row["test"] == "bootstrap"
    assert row["sig"] == (row["ci_low"] > 0 or row["ci_high"] < 0)
    assert "percentile bootstrap interval" in to_markdown(boot, "t")
    with pytest.raises(ValueError, match="test must be"):
        summarise(episodes, None, test="t-test")  # type: ignore[arg-type]


# --- 6: how episodes ended: done, truncated by a limit, failed (issue 32 item 6) -----------


def ended_episodes() -> pd.DataFrame:
    """Two runs of four seeds: ``cut`` has two episodes truncated by ``wall_s`` (after 8 and 4
    of 10 steps, scored as they stand) and one failed; ``full`` played every episode to its
    end (one by its step budget)."""
    rows = []
    cut = [  # (status, reason, steps, score)
        ("done", "terminated", 6, 1.0),
        ("truncated", "wall_s", 8, THIRD),
        ("truncated", "wall_s", 4, 0.0),
        ("failed", "model", 3, 0.0),
    ]
    for g, (status, reason, steps, score) in enumerate(cut):
        row = _ep("cut", "none", g, 0, **_acting(score == 1.0, g, 0, 1, 1000))
        error = "ModelError: timeout" if status == "failed" else None
        row.update(status=status, reason=reason, steps=steps, score=score, error=error)
        rows.append(row)
    for g in range(4):
        row = _ep("full", "image", g, 0, **_acting(g % 2, g, 0, 1, 1000))
        row.update(reason="max_steps" if g == 3 else "terminated")
        rows.append(row)
    return pd.DataFrame(rows)


def _ends_by_loop(eps: pd.DataFrame, run: str) -> dict[str, Any]:
    got = {"done": 0, "truncated": 0, "failed": 0, "at": []}
    for rec in eps[eps["run"] == run].to_dict("records"):
        kind = rec["status"] if rec["status"] in ("done", "truncated") else "failed"
        got[kind] += 1
        if kind == "truncated":
            got["at"].append(rec["steps"])
    got["at"].sort()
    return got


def test_done_truncated_and_failed_are_counted_per_run(tmp_path: Any) -> None:
    from statelab.analysis.report import build_report

    eps = ended_episodes()
    main = build_report(eps, None, tmp_path, "ends", axes=["env", "grounding"])
    cut, want = _row(main.summary, "cut"), _ends_by_loop(eps, "cut")
    assert (want["done"], want["truncated"], want["failed"], want["at"]) == (1, 2, 1, [4, 8])
    got = (cut["episodes_done"], cut["episodes_truncated"], cut["episodes_failed"])
    assert got == (want["done"], want["truncated"], want["failed"])
    # truncated episodes are scored as they stand at the cut: three seeds with a score
    assert (cut["n"], cut["episodes"]) == (3, 3)
    assert cut["mean"] == pytest.approx((1.0 + THIRD + 0.0) / 3)
    full = _row(main.summary, "full")
    assert (full["episodes_done"], full["episodes_truncated"], full["episodes_failed"]) == (4, 0, 0)
    # report.json: the counts on each run, and how each run's episodes ended
    runs = {r["run"]: r for r in main.payload["runs"]}
    assert (runs["cut"]["episodes_truncated"], runs["cut"]["episodes_done"]) == (2, 1)
    ends = {e["run"]: e for e in main.payload["ends"]}
    assert ends["cut"] == {
        "run": "cut", "done": 1, "truncated": 2, "failed": 1, "done_by": {"terminated": 1},
        "truncated_by": {"wall_s": 2}, "failed_by": {"model": 1}, "truncated_at": [4, 8],
    }  # fmt: skip
    assert ends["full"]["done_by"] == {"terminated": 3, "max_steps": 1}
    assert "episodes cut by a per-episode limit" in main.payload["units"]["episodes_truncated"]
    # report.md: the head, the Episodes cell and a line per run
    md = "\n\n".join(main.blocks)
    assert "7 scored episodes (2 truncated by a limit, scored as they stand at the cut;" in md
    printed = {r["Grounding"]: r for r in _table(main.blocks[1])}
    assert printed["none"]["Episodes"] == "3 (2 truncated; +1 failed)"
    assert printed["image"]["Episodes"] == "4"
    assert "- cut: 1 done (terminated 1), 2 truncated (wall_s 2; cut after 4, 8 steps)," in md
    assert "1 failed (model 1)" in md and "- full: 4 done (terminated 3, max_steps 1)" in md
    assert "scored as it stands at the cut: the env's score at its last step" in md


def test_episodes_of_a_store_without_reasons_are_unrecorded(tmp_path: Any) -> None:
    from statelab.analysis.report import build_report

    old = ended_episodes().drop(columns=["reason"]).assign(status="done")
    main = build_report(old, None, tmp_path, "old")
    ends = {e["run"]: e for e in main.payload["ends"]}
    assert ends["cut"]["done_by"] == {"unrecorded": 4} and ends["cut"]["truncated"] == 0
