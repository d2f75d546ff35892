"""A trained writer served by name, as vLLM serves LoRA adapters (``--enable-lora
--lora-modules name=dir``), against a stand-in on 127.0.0.1 that checks the model name is the
adapter's and answers many requests at once; the vLLM command and what the adapter folder must
hold; DSSR's candidates and roll-forwards through the server, many points in flight, with the
same scores as one point at a time."""

from __future__ import annotations

import asyncio
import json
import shlex
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from seeds.seed003.tests.train.test_dssr_scores import Reader, trajectory
from tests.llm._standins import StandIn

from statelab.core import BuildContext, Observation, Transition
from statelab.llm import _constrain as constrain
from statelab.llm import make_llm
from statelab.state import HISTORIES
from statelab.state.bounded import DSSRWriter, WrittenState
from statelab_seed003.train.serving import (
    adapter_name,
    load_adapter,
    round_writer,
    served_spec,
    vllm_command,
    vllm_info,
    vllm_problems,
)

BASE = "Qwen/Qwen3-4B"


class LoRAServer(StandIn):
    """vLLM's view of models: the base, the adapters it was started with and those loaded at
    run time (``/v1/load_lora_adapter``); any other model name is a 404. Each chat request
    takes ``delay`` seconds, and the most requests in flight at once is kept."""

    def __init__(self, adapters: dict[str, str] | None = None, delay: float = 0.05) -> None:
        self.served = {BASE: "", **(adapters or {})}
        self.loads: list[dict[str, Any]] = []
        self.now, self.peak = 0, 0
        self.lock = threading.Lock()
        super().__init__(None, delay=delay)  # the stand-in keeps the delay (it sets its own)

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        if path.endswith("/load_lora_adapter"):
            self.loads.append(body)
            self.served[body["lora_name"]] = body["lora_path"]
            return 200, f"Success: LoRA adapter '{body['lora_name']}' added successfully."
        if body.get("model") not in self.served:
            self.bodies.append(body)
            return 404, {"error": {"message": f"The model `{body.get('model')}` does not exist."}}
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            time.sleep(self.delay)
            self.bodies.append(body)
            # the fake writer of test_dssr_scores (seeds/seed003/tests/train): even seeds keep it
            keep = (body.get("seed") or 0) % 2 == 0
            text = f"Recipe: carrot ({body['model']})" if keep else "nothing kept"
            usage = {"prompt_tokens": 10, "completion_tokens": 3}
            message = {"role": "assistant", "content": text}
            return 200, {"choices": [{"index": 0, "message": message}], "usage": usage}
        finally:
            with self.lock:
                self.now -= 1


@pytest.fixture(autouse=True)
def _fresh():
    constrain.forget()
    yield
    constrain.forget()


def _transition(i: int) -> Transition:
    seen = Observation(text=f"Room {i}. A carrot.", facts=None, admissible=("take carrot",),
                       goal="Cook.")  # fmt: skip
    return Transition(i, "look", "look", 0.0, seen, False, False)


def test_a_served_adapter_is_a_writer_many_writes_in_flight():
    srv = LoRAServer({"seed003-writer-round1": "/adapters/round1"})
    try:
        spelling = f"bounded:dssr={srv.url}#seed003-writer-round1?thinking=off:64"
        spelling = spelling.replace("dssr=", "dssr=openai-compat:")
        w = HISTORIES.build(spelling, BuildContext())
        assert isinstance(w, DSSRWriter) and w.budget == 64
        assert w.model_spec == f"openai-compat:{srv.url}#seed003-writer-round1?thinking=off"

        async def eight() -> list[WrittenState]:
            model = w.own_model()
            got = await asyncio.gather(
                *(w.write(WrittenState("Cook."), _transition(i), None) for i in range(8))
            )
            await model.aclose()
            return [s for s, _ in got]

        states = asyncio.run(eight())
    finally:
        srv.close()
    assert [b["model"] for b in srv.bodies] == ["seed003-writer-round1"] * 8
    assert all(b["chat_template_kwargs"] == {"enable_thinking": False} for b in srv.bodies)
    assert srv.peak > 1  # the writes were in flight together
    # the same write seed for the same write index: every state the same, from the server
    assert {s.text for s in states} <= {"Recipe: carrot (seed003-writer-round1)", "nothing kept"}
    assert all(s.t == 1 for s in states)


def test_an_adapter_the_server_lacks_fails_with_the_servers_words():
    from statelab.core import ModelError

    srv = LoRAServer()
    try:
        llm = make_llm(f"openai-compat:{srv.url}#seed003-writer-round9?retries=0")
        with pytest.raises(ModelError, match="seed003-writer-round9` does not exist"):
            asyncio.run(llm.complete([{"role": "user", "content": "x"}], _params()))
    finally:
        srv.close()


def _params():
    from statelab.core import GenParams

    return GenParams(max_tokens=8)


# -- the vLLM command, the adapter folder -------------------------------------------------------


def _adapter(where: Path, **cfg: Any) -> Path:
    where.mkdir(parents=True)
    conf = {"peft_type": "LORA", "r": 8, "lora_alpha": 16, "target_modules": ["q_proj"], **cfg}
    (where / "adapter_config.json").write_text(json.dumps(conf))
    (where / "adapter_model.safetensors").write_bytes(b"")
    (where / "statelab.json").write_text(json.dumps({"base": BASE}))
    return where


def test_the_vllm_command_serves_the_adapter_by_its_name(tmp_path):
    ad = _adapter(tmp_path / "seed003-writer" / "round1")
    cmd = vllm_command(ad, "seed003-writer-round1", BASE, runtime=True)
    assert cmd == (
        "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True vllm serve Qwen/Qwen3-4B --port 8000 "
        f"--enable-lora --max-lora-rank 8 --lora-modules seed003-writer-round1={ad.resolve()}"
    )
    assert shlex.split(cmd)[-1] == f"seed003-writer-round1={ad.resolve()}"
    folder = vllm_command(ad, "w", "/models/qwen3 4b", served_as=BASE)
    assert shlex.split(folder)[2:5] == ["/models/qwen3 4b", "--served-model-name", BASE]
    wide = _adapter(tmp_path / "r24", r=24)
    assert "--max-lora-rank 32" in vllm_command(wide, "w", BASE)  # the next size vLLM takes
    assert vllm_problems(ad) == []


def test_what_vllm_would_refuse_is_said(tmp_path):
    bad = _adapter(tmp_path / "bad", use_dora=True, modules_to_save=["lm_head"], r=1024)
    (bad / "adapter_model.safetensors").unlink()
    got = vllm_problems(bad)
    assert len(got) == 4
    assert "no adapter_model.safetensors" in got[0] and "DoRA" in got[1]
    assert "modules_to_save" in got[2] and "rank 1024" in got[3]


def test_a_peft_saved_adapter_holds_what_vllm_needs(tmp_path):
    """PEFT's save_pretrained (what statelab seed003 train calls) on a tiny model built here."""
    pytest.importorskip("peft")
    import peft
    import transformers

    cfg = transformers.LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32,
                                   num_hidden_layers=1, num_attention_heads=2,
                                   num_key_value_heads=1)  # fmt: skip
    model = transformers.AutoModelForCausalLM.from_config(cfg)
    lora = peft.LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"],
                           task_type="CAUSAL_LM")  # fmt: skip
    peft.get_peft_model(model, lora).save_pretrained(str(tmp_path / "ad"))
    assert (tmp_path / "ad" / "adapter_model.safetensors").stat().st_size > 0
    conf = json.loads((tmp_path / "ad" / "adapter_config.json").read_text())
    assert conf["r"] == 8 and sorted(conf["target_modules"]) == ["q_proj", "v_proj"]
    assert vllm_problems(tmp_path / "ad") == []


# -- DSSR through the server ---------------------------------------------------------------------


def _cfg(srv: LoRAServer, concurrency: int, **kw: Any):
    from statelab_seed003.train._config import WriterConfig

    return WriterConfig(name="seed003-writer", store="unused", base=f"hf:{BASE}", reader="fake",
                        budget=64, candidates=3, k=2, points=2, phases=["b"],
                        concurrency=concurrency, serve={"url": srv.url}, **kw)  # fmt: skip


def test_dssr_candidates_go_to_the_served_adapter_many_in_flight_same_scores(tmp_path, capsys):
    from statelab_seed003.train._writer_scores import _score_points

    ad = _adapter(tmp_path / "seed003-writer" / "round0")
    srv = LoRAServer()
    try:
        spec0 = round_writer(_cfg(srv, 1), None, 0)
        assert spec0 == f"openai-compat:{srv.url}#{BASE}?thinking=off"  # the served base
        spec = round_writer(_cfg(srv, 1), ad, 1)  # round 1 writes with round 0's adapter
        assert srv.loads == [{"lora_name": "seed003-writer-round0", "lora_path": str(ad.resolve())}]
        assert spec == served_spec(srv.url, adapter_name("seed003-writer", 0))
        trajs = [trajectory(6), trajectory(6)]
        got = {}
        for n in (1, 4):
            srv.peak = 0
            srv.bodies.clear()
            llm = make_llm(spec)
            points = asyncio.run(_score_points(_cfg(srv, n), trajs, llm, Reader(), 1))
            got[n] = ([(p.j, [(c.text, c.recursive, c.window) for c in p.candidates])
                       for p in points], srv.peak, len(srv.bodies))  # fmt: skip
            assert {b["model"] for b in srv.bodies} == {"seed003-writer-round0"}
    finally:
        srv.close()
    # one point at a time still sends its 3 candidates' writes together (one batch, gathered
    # in flight by the model wrapper); 4 points at once put more than one point's in flight
    assert got[1][1] == 3 and got[4][1] > 3
    assert got[1][0] == got[4][0] and got[1][2] == got[4][2]  # the same points, texts, scores
    assert len(got[1][0]) == 4 and all(len(c) == 3 for _, c in got[1][0])
    texts = {t for _, cs in got[4][0] for t, _, _ in cs}
    assert texts <= {"Recipe: carrot (seed003-writer-round0)", "nothing kept"}


def test_a_refused_runtime_load_says_how_to_start_the_server():
    from statelab.core import ModelError

    class NoRuntime(LoRAServer):
        def answer(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
            if path.endswith("/load_lora_adapter"):
                return 404, {"detail": "Not Found"}
            return super().answer(path, body)

    srv = NoRuntime()
    try:
        with pytest.raises(ModelError, match="VLLM_ALLOW_RUNTIME_LORA_UPDATING=True"):
            asyncio.run(load_adapter(srv.url, "w-round0", "results/w/round0"))
    finally:
        srv.close()


def test_the_writer_job_prints_the_command_and_the_served_writer(tmp_path, capsys):
    from statelab_seed003.train._config import WriterConfig

    ad = _adapter(tmp_path / "seed003-writer" / "round1")
    cfg = WriterConfig(name="seed003-writer", store="unused", base=f"hf:{BASE}", reader="fake",
                       budget=128)  # fmt: skip
    info = vllm_info(cfg, ad, 1)
    err = capsys.readouterr().err
    assert info["name"] == "seed003-writer-round1" and info["problems"] == []
    assert info["command"] in err and info["writer"] in err
    assert info["writer"] == ("bounded:dssr=openai-compat:http://127.0.0.1:8000/v1"
                              "#seed003-writer-round1?thinking=off:128")  # fmt: skip
    assert f"--lora-modules seed003-writer-round1={ad.resolve()}" in info["command"]
    assert "--port 8000 --gpu-memory-utilization 0.45 --enable-lora" in info["command"]


def test_the_base_vllm_loads_is_named_without_loading_anything(tmp_path):
    from statelab_seed003.train.serving import vllm_base

    assert vllm_base("Qwen/Qwen3-4B") == "Qwen/Qwen3-4B"  # a hub id: as it is
    (tmp_path / "m").mkdir()
    assert vllm_base(str(tmp_path / "m")) == str((tmp_path / "m").resolve())
    empty = tmp_path / "round0"
    empty.mkdir()
    assert vllm_problems(empty)[0].startswith("no readable adapter_config.json")
