"""``litellm:<provider>/<model>``: closed models through LiteLLM, against the stand-in HTTP
server on 127.0.0.1 (``tests/llm/_standins.py``) reached through LiteLLM's OpenAI route: the
request it sends, token counts, each call's cost from LiteLLM's price table (none for an
unpriced model), statelab's retries (LiteLLM's and the OpenAI SDK's own are off), masked
keys, and a run whose report sums the cost (a cache hit costs nothing)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.llm._standins import StandIn

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch at import
pytest.importorskip("litellm", reason="needs the litellm extra")

from statelab.core import ConfigError, GenParams, ModelError
from statelab.llm import check_spec, make_llm
from statelab.llm._pricing import call_cost

MSGS = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
KEY = "sk-test-0123456789abcdef"
USAGE = (11, 3)


class Stub(StandIn):
    """The stand-in server of ``_standins`` (real HTTP on 127.0.0.1, every request body kept
    in ``seen``), answering as OpenAI does: ``reply`` with :data:`USAGE` tokens, after
    ``fail`` HTTP 429s."""

    def __init__(self) -> None:
        super().__init__(None)
        self.seen = self.bodies
        self.reply = "Action: Move the top disk of rod A to the top of rod C"
        self.fail = 0

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        if self.fail > 0:
            self.fail -= 1
            self.bodies.append(body)
            return 429, {"error": {"message": "slow down", "type": "rate_limit"}}
        status, payload = super().answer(path, body)  # records the body
        payload["choices"][0]["message"]["content"] = self.reply
        payload["choices"][0]["finish_reason"] = "stop"
        payload.update(id="chatcmpl-1", object="chat.completion", created=1,
                       model=body.get("model"))  # fmt: skip
        payload["usage"] = {"prompt_tokens": USAGE[0], "completion_tokens": USAGE[1],
                            "total_tokens": sum(USAGE)}  # fmt: skip
        return status, payload


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stub]:
    s = Stub()
    monkeypatch.setenv("OPENAI_API_BASE", s.url)
    monkeypatch.setenv("OPENAI_BASE_URL", s.url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    yield s
    s.close()


def _price(model: str) -> float:
    import litellm

    p = litellm.model_cost[model]
    return USAGE[0] * p["input_cost_per_token"] + USAGE[1] * p["output_cost_per_token"]


def test_a_call_goes_through_litellm_with_its_tokens_and_its_cost(stub: Stub) -> None:
    llm = make_llm("litellm:openai/gpt-4o-mini")
    params = GenParams(temperature=0.0, max_tokens=20, stop=("\n",), seed=3)
    c = asyncio.run(llm.complete(MSGS, params))
    assert c.text == stub.reply
    assert (c.usage.input_tokens, c.usage.output_tokens) == USAGE
    assert c.cost == pytest.approx(_price("gpt-4o-mini")) and c.cost > 0  # the price table's
    (body,) = stub.seen
    assert body["model"] == "gpt-4o-mini" and body["messages"] == MSGS
    assert body["temperature"] == 0.0 and body["max_tokens"] == 20 and body["seed"] == 3
    assert body["stop"] == ["\n"]


def test_a_model_without_a_price_costs_none_not_a_guess(stub: Stub) -> None:
    c = asyncio.run(make_llm("litellm:openai/statelab-stub-model").complete(MSGS, GenParams()))
    assert c.text == stub.reply and c.cost is None
    assert call_cost("openai/statelab-stub-model", 10, 10) is None


def test_statelabs_wrapper_retries_and_litellm_does_not(stub: Stub) -> None:
    stub.fail = 1
    c = asyncio.run(make_llm("litellm:openai/gpt-4o-mini?retries=2").complete(MSGS, GenParams()))
    assert c.text == stub.reply and len(stub.seen) == 2  # one 429, one retry by statelab
    stub.fail = 5
    stub.seen.clear()
    with pytest.raises(ModelError, match="rate limited"):
        asyncio.run(make_llm("litellm:openai/gpt-4o-mini?retries=1").complete(MSGS, GenParams()))
    assert len(stub.seen) == 2  # retries=1: two requests, none added by LiteLLM or the SDK


def test_an_echoed_key_is_masked(stub: Stub) -> None:
    stub.reply = f"your key is {KEY}"
    c = asyncio.run(make_llm("litellm:openai/gpt-4o-mini").complete(MSGS, GenParams()))
    assert KEY not in c.text and "redacted" in c.flags


def test_spellings_are_checked_in_one_line() -> None:
    check_spec("litellm:anthropic/claude-3-5-haiku-latest?timeout=30")
    for bad in ("litellm:", "litellm:gpt-4o", "litellm:/x", "litellm:openai/x?bogus=1"):
        with pytest.raises(ConfigError) as e:
            check_spec(bad)
        assert "\n" not in str(e.value)


def test_a_run_stores_each_calls_cost_and_the_report_sums_it(stub: Stub, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from statelab.cli import app
    from statelab.run.config import parse_experiment
    from statelab.run.runner import run_sync
    from statelab.run.store import Store

    def run(out: str) -> Path:
        exp = parse_experiment({
            "name": "priced", "random": False, "model": "litellm:openai/gpt-4o-mini",
            "seeds": [0, 1], "grid": {"env": ["hanoi"], "agent": ["act"]},
            "out": str(tmp_path / out), "cache": str(tmp_path / "cache.sqlite"),
            "max_steps": 2, "expert": False,
        })  # fmt: skip
        assert run_sync(exp, progress=None).done == 2
        return exp.out_dir / "store.sqlite"

    first = run("a")
    st = Store(first, readonly=True)
    calls, eps = st.table("calls"), st.table("episodes")
    assert len(calls) == 4 and calls["cost"].tolist() == pytest.approx([_price("gpt-4o-mini")] * 4)
    assert eps["cost"].tolist() == pytest.approx([2 * _price("gpt-4o-mini")] * 2)
    res = CliRunner().invoke(app, ["report", str(first.parent), "--json"])
    (row,) = [r for r in json.loads(res.stdout)["runs"] if r["agent"] == "act"]
    assert row["cost"] == pytest.approx(4 * _price("gpt-4o-mini"))
    md = CliRunner().invoke(app, ["report", str(first.parent)]).stdout
    assert "Cost $" in md and f"{4 * _price('gpt-4o-mini'):,.4f}" in md
    # the same episodes again from the cache: stored with their price, paid nothing
    again = Store(run("b"), readonly=True)
    assert again.table("calls")["cached"].tolist() == [1] * 4
    assert again.table("episodes")["cost"].tolist() == [0.0, 0.0]
    # no request the second time (the first run's probe of the server's form aside)
    assert len([b for b in stub.seen if "qzvex" not in json.dumps(b)]) == 4
