"""Thinking models told not to think (statelab.llm._thinking), on both backends, and a leaked
``<think>`` block stripped from a bounded state and counted. The tokenizer is built here from a
word-level vocabulary with a tiny chat template that takes ``enable_thinking`` (no hub)."""

from __future__ import annotations

import asyncio

import pytest
from tests.llm._standins import StandIn

from statelab.core import LLM, Completion, GenParams, Message, Observation, Transition, Usage
from statelab.llm import _constrain as constrain
from statelab.llm._thinking import name_thinks, strip_thinking, template_kwargs
from statelab.llm.openai_compat import OpenAICompatLLM
from statelab.state.bounded import BoundedWriter, WrittenState

#: Qwen3's switch, reduced: the generation prompt ends in an empty think block when told not to
TEMPLATE = (
    "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    "{% if add_generation_prompt %}<assistant>"
    "{% if enable_thinking is defined and enable_thinking is false %}<think></think>{% endif %}"
    "{% endif %}"
)
MSGS = [{"role": "system", "content": "Sys"}, {"role": "user", "content": "Go"}]
PLAIN = "<system>Sys<user>Go<assistant>"


def tokenizer_folder(tmp_path, template: str = TEMPLATE):
    """A transformers tokenizer saved to a folder (tokenizer_config.json): words and tags."""
    pytest.importorskip("transformers")
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<unk>", "<eos>", "Sys", "Go", "<", ">", "system", "user", "assistant", "think",
             "/", "Action", ":", "up", "down", " "]  # fmt: skip
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[<>/:]| "), behavior="isolated")
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="<eos>")
    fast.chat_template = template
    folder = tmp_path / "tok"
    fast.save_pretrained(folder)
    return folder, fast


# -- the pure parts -------------------------------------------------------------------------


def test_a_leaked_think_block_is_stripped_and_said():
    assert strip_thinking("<think>the recipe?</think>\nRecipe: carrot") == ("Recipe: carrot", True)
    assert strip_thinking("<THINK>a</THINK>x <think>b</think>y") == ("x y", True)
    assert strip_thinking("opened by the prompt</think> State.") == ("State.", True)
    assert strip_thinking("<think>ran out of tokens here") == ("", True)
    assert strip_thinking("Recipe: carrot (slice).") == ("Recipe: carrot (slice).", False)


def test_names_that_think_by_default():
    assert name_thinks("Qwen/Qwen3-4B") and name_thinks("qwen3-8b")
    assert not name_thinks("Qwen/Qwen3-4B-Instruct-2507")  # never thinks
    assert not name_thinks("Qwen/Qwen3-4B-Thinking-2507")  # always thinks: no switch
    assert not name_thinks("microsoft/Phi-4-mini-instruct")
    assert not name_thinks("seed003-writer-round1")  # an adapter's name says nothing


def test_a_template_without_the_switch_is_rendered_as_before():
    assert template_kwargs("{{ messages }}") == {} and template_kwargs(None) == {}
    assert template_kwargs(TEMPLATE) == {"enable_thinking": False}
    assert template_kwargs(TEMPLATE, reasoning=True) == {"enable_thinking": True}


# -- the local backends -----------------------------------------------------------------------


def test_the_hf_backend_renders_with_thinking_off_unless_reasoning_is_asked(tmp_path):
    from statelab.llm.transformers_backend import TransformersLLM

    _, tok = tokenizer_folder(tmp_path)
    llm = object.__new__(TransformersLLM)  # the renderer alone: no weights needed
    llm.tok, llm.model_id = tok, "hf:tiny"
    assert llm.render(MSGS) == PLAIN + "<think></think>"
    assert llm.render(MSGS, reasoning=True) == PLAIN
    tok.chat_template = TEMPLATE.replace("enable_thinking", "flag")  # no switch: untouched
    assert llm.render(MSGS) == PLAIN


def test_the_llamacpp_backend_renders_with_thinking_off():
    pytest.importorskip("llama_cpp")
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    from statelab.llm.llamacpp import LlamaCppLLM

    llm = object.__new__(LlamaCppLLM)
    llm.model_id = "llamacpp:tiny"
    llm._formatter = Jinja2ChatFormatter(template=TEMPLATE, eos_token="<eos>", bos_token="")
    assert llm.render(MSGS) == PLAIN + "<think></think>"
    assert llm.render(MSGS, reasoning=True) == PLAIN


# -- servers ----------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _fresh():
    constrain.forget()
    yield
    constrain.forget()


def _sent(model: str, params: GenParams | None = None, **kw) -> list[dict]:
    srv = StandIn(None)
    try:
        llm = OpenAICompatLLM(srv.url, model, **kw)
        asyncio.run(llm.complete(MSGS, params or GenParams(max_tokens=8)))
        asyncio.run(llm.aclose())
    finally:
        srv.close()
    return srv.bodies


OFF = {"enable_thinking": False}


def test_a_server_is_told_not_to_think_only_where_the_spelling_says_it_thinks(tmp_path):
    assert _sent("Qwen/Qwen3-4B")[0]["chat_template_kwargs"] == OFF
    assert "chat_template_kwargs" not in _sent("m")[0]  # probe-free: nothing said about "m"
    assert _sent("m", thinking="off")[0]["chat_template_kwargs"] == OFF
    assert "chat_template_kwargs" not in _sent("Qwen/Qwen3-4B", thinking="on")[0]
    # a call that asks for the model's reasoning asks for it, as before
    asked = _sent("Qwen/Qwen3-4B", GenParams(max_tokens=8, reasoning=True))[0]
    assert asked["chat_template_kwargs"] == {"enable_thinking": True}
    # the scoring template (?template=) says it: its text takes the switch
    folder, _ = tokenizer_folder(tmp_path)
    assert _sent("adapter-1", template=str(folder))[0]["chat_template_kwargs"] == OFF
    plain, _ = tokenizer_folder(tmp_path / "plain", "{{ messages }}")
    assert "chat_template_kwargs" not in _sent("adapter-1", template=str(plain))[0]


def test_the_option_is_in_the_spelling_and_the_model_id():
    from statelab.core import ConfigError
    from statelab.llm import make_llm, spec_options

    assert spec_options("openai-compat:http://h:1/v1#m?thinking=off").thinking == "off"
    with pytest.raises(ConfigError, match=r"thinking must be one of off\|on\|auto"):
        spec_options("openai-compat:http://h:1/v1#m?thinking=maybe")
    llm = make_llm("openai-compat:http://127.0.0.1:9/v1#m?thinking=off")
    assert llm.model_id == "openai-compat:http://127.0.0.1:9/v1#m?thinking=off"
    auto = make_llm("openai-compat:http://127.0.0.1:9/v1#Qwen/Qwen3-4B")
    assert auto.model_id == "openai-compat:http://127.0.0.1:9/v1#Qwen/Qwen3-4B"


def test_served_scoring_renders_the_template_with_thinking_off(tmp_path):
    folder, _ = tokenizer_folder(tmp_path)
    seen: list[str] = []

    def reply(body):  # 40 echoed tokens at -0.25 each, then one generated (no token texts)
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        seen.extend(prompts)
        lp = {"token_logprobs": [None] + [-0.25] * 39}
        choices = [{"index": i, "finish_reason": "length", "logprobs": lp}
                   for i in range(len(prompts))]  # fmt: skip
        return 200, {"choices": choices}

    for thinking, tail in (("auto", "<think></think>Action: up"), ("on", "Action: up")):
        srv = StandIn(None)
        srv.completion_reply = reply
        seen.clear()
        try:
            llm = OpenAICompatLLM(srv.url, "m", template=str(folder), thinking=thinking)
            got = asyncio.run(llm.score(MSGS, ["Action: up", "Action: down"]))
        finally:
            srv.close()
        assert seen[0] == PLAIN + tail, thinking
        assert got == [-1.0, -1.0]  # "Action", ":", " ", "up" (and "down"): four tokens each


# -- a leaked block in a written state ----------------------------------------------------------


class Leaky(LLM):
    """A writer model that thinks out loud on odd writes."""

    model_id = "fake:leaky"

    def __init__(self) -> None:
        self.n = 0

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        self.n += 1
        text = f"Recipe: carrot ({self.n})"
        return Completion(f"<think>what to keep? {self.n}</think>\n{text}" if self.n % 2 else text,
                          Usage(1, 1))  # fmt: skip

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def test_a_bounded_state_never_holds_the_reasoning_and_counts_the_writes_that_leaked():
    seen = Observation(text="You see a carrot.", facts=None, admissible=("take carrot",),
                       goal="Cook.")  # fmt: skip
    tr = Transition(1, "look", "look", 0.0, seen, False, False)
    writer = BoundedWriter(lambda o: o.text, "summary", 4)
    state, model = WrittenState("Cook."), Leaky()
    texts = []
    for _ in range(3):
        state, _calls = asyncio.run(writer.write(state, tr, model))
        texts.append(state.text)
    assert texts == ["Recipe: carrot (1)", "Recipe: carrot (2)", "Recipe: carrot (3)"]
    assert state.thoughts == 2 and state.overflows == 0  # the block did not count against B
