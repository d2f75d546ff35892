"""``statelab export --to inspect``: one inspect_ai eval log per statelab run, in inspect's
public log schema (``EvalLog``, log format version 2, JSON), so ``inspect view --log-dir
<out>/inspect`` lists the runs and opens their episodes.

A log is the run: its task is ``<experiment>-<short name>``, its model the run's model axis
(``none/none`` where no model acts: the expert, the random floor), ``task_args`` and
``tags`` its axes, ``revision`` the statelab commit (where known), ``packages`` the statelab
version, ``stats`` when its episodes ran (from the store, not the export) and the acting
tokens, ``results`` the report's public figures of the run as the metrics of one score,
``statelab``. A sample is an episode: ``id`` its seed, ``epoch`` its rollout + 1,
``input`` the first acting prompt, ``messages`` the acting calls as the agent saw them
(each call's prompt, only what it adds when it extends the conversation so far, then the
model's reply; a summary run's memory is in those prompts), ``output`` the last reply,
``scores["statelab"]`` the env's normalised score (``answer``: the last action;
``explanation``: how the episode ended; ``metadata``: success, steps, reward), ``metadata``
the run, axes and the episode's figures, ``total_time`` its wall time; an episode an error
ended carries it as the sample's ``error`` and no score. An episode without model calls
takes each step's prompt state as a user turn and its action as the reply.

Where inspect_ai is installed (``pip install 'statelab[inspect]'``) each log is checked
against its ``EvalLog`` type and written with ``inspect_ai.log.write_eval_log``; without it
the same JSON is written directly. Exporting again replaces each run's log (its file name
ends with the run's stable eval id), never adds a copy.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

from statelab.analysis._export_runs import Exported, ExportRun, julian_ms, provenance
from statelab.run.store import Store

SCORER = "statelab"
#: the report figures that become the ``statelab`` score's metrics
METRICS = ("mean", "sd", "success_rate", "n", "episodes", "in_per_step", "out_per_step")


def eval_id(experiment: str, run_id: str) -> str:
    """The log's eval id: the same on every export of the run (22 characters, as inspect's)."""
    return hashlib.sha256(f"inspect\0{experiment}\0{run_id}".encode()).hexdigest()[:22]


def _iso(ms: int | None, timespec: str = "seconds") -> str:
    import datetime as dt

    at = dt.datetime.fromtimestamp((ms or 0) / 1000, dt.UTC)
    return at.isoformat(timespec=timespec)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "run"


def _plain(value: Any) -> Any:
    if value is None:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _message(role: str, content: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": role, "content": str(content if content is not None else "")}
    if role == "assistant":
        msg["source"] = "generate"
    return msg


def acting_messages(
    calls: list[dict[str, Any]], steps: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The sample's messages (see the module's text)."""
    acting = [c for c in calls if c.get("kind") == "act"]
    out: list[dict[str, Any]] = []
    if not acting:
        for step in steps:
            out += [_message("user", step.get("view")), _message("assistant", step.get("action"))]
        return out
    said: list[tuple[str, str]] = []  # the transcript so far, as (role, content)
    for call in acting:
        prompt = [(str(m["role"]), str(m["content"])) for m in json.loads(call["messages"] or "[]")]
        if said and prompt[: len(said)] == said:
            new = prompt[len(said) :]
        else:  # a fresh prompt: each of its messages, but a system message once
            new = [m for m in prompt if not (m[0] == "system" and m in said)]
        reply = ("assistant", str(call.get("text") or ""))
        said += [*new, reply]
        out += [_message(r, c) for r, c in [*new, reply]]
    return out


def _usage(model: str, tokens_in: Any, tokens_out: Any) -> dict[str, Any]:
    """inspect's ``model_usage``: the acting tokens, under the model (none without one)."""
    if model == "none/none":
        return {}
    a, b = int(tokens_in or 0), int(tokens_out or 0)
    return {model: {"input_tokens": a, "output_tokens": b, "total_tokens": a + b}}


def _sample(ep: dict[str, Any], run: ExportRun, st: Store, model: str) -> dict[str, Any]:
    seed, rollout = int(ep["seed"]), int(ep["rollout"])
    calls = st.episode_calls(run.run_id, seed, rollout, ["t", "i", "kind", "messages", "text"])
    steps = st.episode_steps(run.run_id, seed, rollout, ["t", "view", "action", "reward"])
    messages = acting_messages(calls, steps)
    first_user = next((m["content"] for m in messages if m["role"] == "user"), "")
    last = next((m["content"] for m in reversed(messages) if m["role"] == "assistant"), "")
    figures = (
        "env_seed", "status", "reason", "score", "success", "steps", "reward", "agent_calls",
        "agent_in", "agent_out", "model_calls", "cached_calls", "wall_s", "cost",
    )  # fmt: skip
    meta = {k: _plain(ep.get(k)) for k in figures if k in ep}
    meta["success"] = None if meta.get("success") is None else bool(meta["success"])
    finished = julian_ms(ep.get("finished"))
    meta.update(run=run.label, run_id=run.run_id, seed=seed, rollout=rollout, **run.axes)
    meta["finished"] = _iso(finished) if finished is not None else None
    key = f"{run.run_id}\0{seed}\0{rollout}"
    sample: dict[str, Any] = {
        "id": seed,
        "epoch": rollout + 1,
        "input": first_user,
        "target": "",
        "messages": messages,
        "output": {
            "model": model,
            "choices": [{"message": _message("assistant", last), "stop_reason": "stop"}],
            "completion": last,
        },
        "metadata": meta,
        "store": {},
        "events": [],
        "model_usage": _usage(model, meta.get("agent_in"), meta.get("agent_out")),
        "uuid": hashlib.sha256(key.encode()).hexdigest()[:22],
    }
    if _plain(ep.get("wall_s")) is not None:
        sample["total_time"] = sample["working_time"] = float(ep["wall_s"])
    score = _plain(ep.get("score"))
    if ep.get("status") in ("done", "truncated") and score is not None:
        actions = [s.get("action") for s in steps if s.get("action") is not None]
        sample["scores"] = {
            SCORER: {
                "value": float(score),
                "answer": str(actions[-1]) if actions else None,
                "explanation": f"{ep.get('status')}: {ep.get('reason') or 'ended'}",
                "metadata": {k: meta.get(k) for k in ("success", "steps", "reward")},
            }
        }
    elif ep.get("status") not in ("done", "truncated"):
        error = str(ep.get("error") or ep.get("status"))
        sample["error"] = {"message": error, "traceback": "", "traceback_ansi": ""}
    return sample


def eval_log(exp: Exported, run: ExportRun, st: Store) -> dict[str, Any]:
    """The run's eval log as inspect's JSON (``EvalLog``'s fields)."""
    prov = provenance()
    model = run.axes.get("model") or "-"
    model = "none/none" if model == "-" else model
    eid = eval_id(exp.name, run.run_id)
    episodes = run.episodes.sort_values(["seed", "rollout"]).to_dict("records")
    samples = [_sample(ep, run, st, model) for ep in episodes]
    task = f"{_slug(exp.name)}-{_slug(run.name)}"
    inp = int(pd.to_numeric(run.episodes.get("agent_in"), errors="coerce").fillna(0).sum())
    outp = int(pd.to_numeric(run.episodes.get("agent_out"), errors="coerce").fillna(0).sum())
    spec: dict[str, Any] = {
        "eval_id": eid,
        "run_id": hashlib.sha256(f"inspect-run\0{exp.name}".encode()).hexdigest()[:22],
        "created": _iso(run.started),
        "task": task,
        "task_id": eid,
        "task_version": 0,
        "task_attribs": {},
        "task_args": dict(run.axes),
        "tags": [f"{k}={v}" for k, v in run.axes.items()],
        "dataset": {
            "name": exp.name,
            "samples": len(samples),
            "sample_ids": sorted({s["id"] for s in samples}),
            "shuffled": False,
        },
        "model": model,
        "model_args": {},
        "config": {"epochs": max((s["epoch"] for s in samples), default=1)},
        "packages": {"statelab": prov["version"]},
        "metadata": {
            "experiment": exp.name,
            "label": run.label,
            "run_id": run.run_id,
            "role": run.role,
            "components": run.components,
            "config": json.loads(json.dumps(exp.config, default=str)),
        },
    }
    if "commit" in prov:
        spec["revision"] = {"type": "git", "origin": "", "commit": prov["commit"]}
    metrics = {
        k: {"name": k, "value": run.figures[k], "params": {}} for k in METRICS if k in run.figures
    }
    scored = sum(1 for s in samples if "scores" in s)
    log: dict[str, Any] = {
        "version": 2,
        "status": "success",
        "eval": spec,
        "plan": {
            "name": "statelab",
            "steps": [{"solver": str(run.axes.get("agent", "agent")), "params": dict(run.axes)}],
            "config": {},
        },
        "results": {
            "total_samples": len(samples),
            "completed_samples": scored,
            "scores": [{"name": SCORER, "scorer": SCORER, "params": {}, "metrics": metrics}],
            "metadata": {"figures": run.figures},
        },
        "stats": {
            "started_at": _iso(run.started, "milliseconds"),
            "completed_at": _iso(run.finished, "milliseconds"),
            "model_usage": _usage(model, inp, outp),
        },
        "samples": samples,
    }
    return log


def write_inspect_logs(exp: Exported, out: Path) -> list[Path]:
    """Write each run's log under ``out``; returns the files (``<created>_<task>_<eval id>
    .json``, inspect's own naming), an earlier export's log of the same run replaced."""
    out.mkdir(parents=True, exist_ok=True)
    st = Store(exp.store, readonly=True)
    written = []
    try:
        for run in exp.runs:
            log = eval_log(exp, run, st)
            eid = log["eval"]["eval_id"]
            for old in [*out.glob(f"*_{eid}.json"), *out.glob(f"*_{eid}.eval")]:
                old.unlink()
            stamp = log["eval"]["created"].replace(":", "-")
            path = out / f"{stamp}_{log['eval']['task']}_{eid}.json"
            _write(log, path)
            written.append(path)
    finally:
        st.close()
    return written


def _write(log: dict[str, Any], path: Path) -> None:
    part = path.with_name(f".{path.name}.part")
    try:
        from inspect_ai.log import EvalLog, write_eval_log
    except ImportError:
        part.write_text(json.dumps(log, indent=1, ensure_ascii=False, allow_nan=False))
        os.replace(part, path)
        return
    checked = EvalLog.model_validate(log)
    write_eval_log(checked, str(part), format="json")
    os.replace(part, path)
