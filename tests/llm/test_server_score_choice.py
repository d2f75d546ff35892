"""``constrain=score``: an acting call's admissible choices scored by echo log-probabilities on
the chat template rendered here, the likeliest taken as the reply; one ``/completions`` request
with every prompt where the server takes a list, one echo a choice where it does not; a
server without echo log-probabilities refuses the option at the first call. Against real HTTP
stand-ins on 127.0.0.1."""

from __future__ import annotations

import asyncio

import pytest
from tests.llm._standins import StandIn

from statelab.core import ConfigError, GenParams
from statelab.llm import _constrain as constrain
from statelab.llm import make_llm
from statelab.llm.openai_compat import OpenAICompatLLM

MSGS = [{"role": "system", "content": "Sys"}, {"role": "user", "content": "Go"}]
ACTS = ("look", "eat bread", "go north")
PARAMS = GenParams(temperature=0.0, choices=ACTS, choice_prefix="Action: ", stop=("\n",))


class CharTemplate:
    """A template whose tokens are characters: every score is known in advance."""

    raw = False
    source = ""

    def render(self, messages):
        return "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>"

    def tokens(self, text):
        return [ord(c) for c in text]

    def piece(self, token):
        return chr(token)

    def count(self, text):
        return len(text)


def char_lp(ch: str) -> float:
    """A character's log-probability: ``e`` is likely, ``o`` unlikely, the rest in between."""
    return {"e": -0.1, "o": -2.0}.get(ch, -0.5)


def echo(prompt: str, lp=char_lp) -> dict:
    values = [None] + [lp(c) for c in prompt[1:]] + [-0.5]
    logprobs = {"token_logprobs": values, "tokens": [*prompt, "!"],
                "text_offset": list(range(len(prompt) + 1))}  # fmt: skip
    return {"text": prompt + "!", "logprobs": logprobs, "finish_reason": "length"}


def expected(act: str, lp=char_lp) -> float:
    return sum(lp(c) for c in "Action: " + act)


def takes_lists(body, lp=char_lp):
    prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
    choices = [{"index": i, **echo(p, lp)} for i, p in enumerate(prompts)]
    usage = {"prompt_tokens": sum(len(p) for p in prompts), "completion_tokens": len(prompts)}
    return 200, {"choices": choices, "usage": usage}


def one_at_a_time(body):  # llama-cpp-python's server: ``assert len(body.prompt) <= 1``
    if isinstance(body["prompt"], list) and len(body["prompt"]) > 1:
        return 500, {"error": {"message": "AssertionError"}}
    return takes_lists(body)


@pytest.fixture(autouse=True)
def _fresh():
    constrain.forget()
    yield
    constrain.forget()


@pytest.fixture
def server():
    srv = StandIn("grammar")
    yield srv
    srv.close()


def _llm(srv: StandIn, **kw) -> OpenAICompatLLM:
    llm = OpenAICompatLLM(srv.url, "m", constrain="score", template="chars", **kw)
    llm.scorer._loaded = CharTemplate()
    return llm


def _prompt() -> str:
    return CharTemplate().render(MSGS)


def test_a_server_that_takes_lists_is_sent_one_request_with_every_choice(server):
    server.completion_reply = takes_lists
    got = asyncio.run(_llm(server).complete(MSGS, PARAMS))
    scores = [expected(a) for a in ACTS]
    best = max(range(3), key=lambda i: scores[i])
    assert ACTS[best] == "eat bread"  # two e's, no o: the likeliest, not the first
    assert got.text == "Action: eat bread" and got.decoding == "score"
    assert got.logprobs == pytest.approx(scores)
    assert server.bodies == []  # no chat request, no probe
    (body,) = server.completions
    assert body["prompt"] == [_prompt() + "Action: " + a for a in ACTS]
    assert body["echo"] is True and body["logprobs"] == 1 and body["max_tokens"] == 1
    # usage: what the server says the one request took
    assert got.usage.input_tokens == sum(len(p) for p in body["prompt"])
    assert got.usage.output_tokens == 3


def test_a_server_that_takes_one_prompt_is_sent_one_echo_a_choice(server):
    server.completion_reply = one_at_a_time
    llm = _llm(server)
    first = asyncio.run(llm.complete(MSGS, PARAMS))
    assert len(server.completions) == 1 + 3  # the list it refused, then one a choice
    second = asyncio.run(llm.complete(MSGS, PARAMS))
    assert len(server.completions) == 4 + 3  # from then on one a choice, no list
    assert sorted(b["prompt"] for b in server.completions[4:]) == sorted(
        _prompt() + "Action: " + a for a in ACTS
    )
    assert first.text == second.text == "Action: eat bread"
    assert second.usage.input_tokens == sum(len(_prompt() + "Action: " + a) for a in ACTS)
    assert second.usage.output_tokens == 3


def test_ties_go_to_the_first_choice_in_the_admissible_order(server):
    server.completion_reply = lambda body: takes_lists(body, lp=lambda c: -0.25)
    acts = ("take knife", "open doors", "eat apples")  # the same length: the same score
    llm = _llm(server)
    for order in (acts, acts[::-1], (acts[1], acts[0], acts[2])):
        params = GenParams(temperature=0.0, choices=order, choice_prefix="Action: ")
        got = asyncio.run(llm.complete(MSGS, params))
        assert got.text == "Action: " + order[0]
        assert len(set(got.logprobs)) == 1


def test_temperature_draws_a_choice_replayably_by_the_seed(server):
    server.completion_reply = lambda body: takes_lists(body, lp=lambda c: -0.25)
    llm = _llm(server)
    acts = tuple(f"take item {i}" for i in range(8))  # equally likely

    def pick(seed: int) -> str:
        params = GenParams(temperature=1.0, top_p=1.0, seed=seed, choices=acts)
        return asyncio.run(llm.complete(MSGS, params)).text

    picks = [pick(s) for s in range(12)]
    assert picks == [pick(s) for s in range(12)]
    assert set(picks) <= set(acts) and len(set(picks)) > 1


def test_a_server_without_echo_logprobs_refuses_at_the_first_call(server):
    def no_echo(body):
        return 200, {"choices": [{"index": 0, "text": "!", "logprobs": None}]}

    server.completion_reply = no_echo
    llm = _llm(server)
    with pytest.raises(ConfigError) as e:
        asyncio.run(llm.complete(MSGS, PARAMS))
    message = str(e.value)
    assert "\n" not in message and "constrain=score" in message and "constrain=auto" in message
    sent = len(server.completions)
    with pytest.raises(ConfigError):  # refused again, nothing sent
        asyncio.run(llm.complete(MSGS, PARAMS))
    assert len(server.completions) == sent


def test_a_server_without_completions_refuses_at_the_first_call(server):
    server.completion_reply = lambda body: (404, {"error": {"message": "Not Found"}})
    llm = make_llm(f"openai-compat:{server.url}#m?constrain=score&template=chars&retries=0")
    llm.inner.scorer._loaded = CharTemplate()
    with pytest.raises(ConfigError, match="constrain=auto"):
        asyncio.run(llm.complete(MSGS, PARAMS))


def test_through_the_model_wrapper_the_reply_is_checked_and_kept_as_scored(server):
    server.completion_reply = takes_lists
    llm = make_llm(f"openai-compat:{server.url}#m?constrain=score&template=chars")
    llm.inner.scorer._loaded = CharTemplate()
    got = asyncio.run(llm.complete(MSGS, PARAMS))
    assert got.text == "Action: eat bread" and got.decoding == "score"
    assert "constrain=score" in llm.model_id


def test_free_generation_goes_to_the_chat_endpoint_as_before(server):
    server.completion_reply = takes_lists
    llm = _llm(server)
    got = asyncio.run(llm.complete(MSGS, GenParams(temperature=0.0)))
    assert got.decoding == "" and len(server.bodies) == 1 and server.completions == []
    assert "grammar" not in server.bodies[0]


def test_score_needs_a_template():
    with pytest.raises(ConfigError, match="template="):
        OpenAICompatLLM("http://127.0.0.1:9/v1", "m", constrain="score")
