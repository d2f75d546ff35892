"""Issue 32 items 3 and 5, issue 36 item 2: an option a spelling accepts is honoured or
refused when it is read (the check generated from each backend's ``honours``); ``litellm:``
forwards the constraint (as openai-compat sends it) to the server ``api_base`` names, and the
form is stored as the call's ``decoding``; a dollar limit is accepted only over priced models,
and every backend whose model LiteLLM prices gets a cost. Against the stand-in servers of
``tests/llm/_standins.py`` (real HTTP on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.llm._standins import StandIn

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch at import
pytest.importorskip("litellm", reason="needs the litellm extra")

from statelab.core import ConfigError, GenParams
from statelab.llm import _constrain, check_spec, make_llm, prices_calls
from statelab.llm._pricing import call_cost
from statelab.run.config import parse_experiment

MSGS = [{"role": "user", "content": "pick"}]
CHOICES = ("Move the top disk of rod A to the top of rod B", "look")
ASK = GenParams(choices=CHOICES, choice_prefix="Action: ", max_tokens=8)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    _constrain.forget()
    yield
    _constrain.forget()


@pytest.fixture
def servers() -> Iterator[dict[str, StandIn]]:
    made = {form: StandIn(form) for form in ("grammar", "json_schema")}
    yield made
    for s in made.values():
        s.close()


@pytest.mark.parametrize("option", ["slots=2", "template=x.gguf", "thinking=off"])
def test_an_option_litellm_cannot_honour_is_refused_in_one_line(option: str) -> None:
    """Before: accepted, and dropped (only timeout and concurrency reached the backend)."""
    with pytest.raises(ConfigError) as e:
        check_spec(f"litellm:openai/gpt-4o-mini?{option}")
    text = str(e.value)
    assert "\n" not in text and option.split("=")[0] in text and "honours: timeout" in text


def test_every_backend_refuses_an_option_it_does_not_declare() -> None:
    check_spec("openai-compat:http://127.0.0.1:1/v1#m?slots=2&thinking=off")  # honoured
    check_spec("litellm:openai/m?api_base=http://127.0.0.1:1/v1&constrain=grammar")
    with pytest.raises(ConfigError, match="cannot honour option api_base"):
        check_spec("openai-compat:http://127.0.0.1:1/v1#m?api_base=http://127.0.0.1:2/v1")
    with pytest.raises(ConfigError, match="cannot honour option api_base"):
        check_spec("openai:gpt-4o-mini?api_base=http://127.0.0.1:2/v1")
    with pytest.raises(ConfigError, match="model URL"):
        check_spec("litellm:openai/m?api_base=ftp://x")


@pytest.mark.parametrize("form", ["grammar", "json_schema"])
def test_litellm_sends_the_constraint_and_stores_its_form(
    form: str, servers: dict[str, StandIn]
) -> None:
    """Before: the constraint was never sent (41/61 steps parsed against llama.cpp's server,
    every call ``decoding=free``)."""
    s = servers[form]
    llm = make_llm(f"litellm:openai/m?api_base={s.url}&constrain={form}")
    c = asyncio.run(llm.complete(MSGS, ASK))
    assert c.text == "Action: look" and c.decoding == form
    (body,) = s.bodies
    if form == "grammar":  # through extra_body, as openai-compat sends it
        assert body["grammar"] == _constrain.grammar("Action: ", CHOICES)
    else:
        assert body["response_format"]["json_schema"]["schema"] == _constrain.schema(CHOICES)


def test_auto_probes_each_api_base_once_and_one_grid_reaches_two_servers(
    servers: dict[str, StandIn],
) -> None:
    a, b = servers["grammar"], servers["json_schema"]
    la, lb = (make_llm(f"litellm:openai/m?api_base={s.url}") for s in (a, b))
    assert la.model_id != lb.model_id  # two servers, two identities (and cache keys)
    for _ in range(2):
        assert asyncio.run(la.complete(MSGS, ASK)).decoding == "grammar"
        assert asyncio.run(lb.complete(MSGS, ASK)).decoding == "json_schema"
    assert a.probes() == 1 and b.probes() >= 1  # found once per server
    free = asyncio.run(la.complete(MSGS, GenParams()))  # no choices: nothing asked
    assert free.decoding == "" and "grammar" not in a.bodies[-1]


def test_a_run_through_litellm_stores_the_servers_form(
    servers: dict[str, StandIn], tmp_path: Path
) -> None:
    from statelab.run.runner import run_sync
    from statelab.run.store import Store

    s = servers["grammar"]
    exp = parse_experiment({
        "name": "lite", "random": False, "expert": False, "seeds": [0], "max_steps": 2,
        "model": f"litellm:openai/m?api_base={s.url}&constrain=grammar",
        "grid": {"env": ["hanoi"], "agent": ["act"]}, "out": str(tmp_path), "cache": None,
    })  # fmt: skip
    assert run_sync(exp, progress=None).done == 1
    calls = Store(exp.out_dir / "store.sqlite", readonly=True).table("calls")
    assert len(calls) == 2 and set(calls["decoding"]) == {"grammar"}


# -- pricing: every backend LiteLLM's table prices; a dollar limit only where it can fire --


def test_openai_calls_are_priced_from_litellms_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: only litellm: priced; ``openai:gpt-4o-mini`` calls cost None."""
    s = StandIn(None)
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", s.url)
        c = asyncio.run(make_llm("openai:gpt-4o-mini").complete(MSGS, GenParams()))
    finally:
        s.close()
    assert c.cost is not None and c.cost == pytest.approx(call_cost("gpt-4o-mini", 10, 5))
    assert prices_calls("openai:gpt-4o-mini") and prices_calls("litellm:openai/gpt-4o-mini")
    assert not prices_calls("openai-compat:http://127.0.0.1:1/v1#gpt-4o-mini")
    assert not prices_calls("scripted:x.json") and not prices_calls("litellm:openai/nope-xyz")


def test_cached_prompt_tokens_are_priced_at_the_cached_rate() -> None:
    import litellm

    p = litellm.model_cost["gpt-4o-mini"]
    full, part = call_cost("gpt-4o-mini", 1000, 0), call_cost("gpt-4o-mini", 1000, 0, 600)
    assert full == pytest.approx(1000 * p["input_cost_per_token"])
    cached = p.get("cache_read_input_token_cost", p["input_cost_per_token"])
    assert part == pytest.approx(400 * p["input_cost_per_token"] + 600 * cached)


def _limited(tmp: Path, model: str, limits: dict) -> object:
    return parse_experiment({
        "name": "lim", "random": False, "expert": False, "seeds": [0], "model": model,
        "grid": {"env": ["hanoi"]}, "out": str(tmp), "cache": None, "limits": limits,
    })  # fmt: skip


def test_a_dollar_limit_over_an_unpriced_model_is_refused_at_read(tmp_path: Path) -> None:
    """Before: accepted, and never reached."""
    _limited(tmp_path, "openai:gpt-4o-mini", {"dollars": 0.1})  # priced: it can fire
    for model in ("openai-compat:http://127.0.0.1:1/v1#m", "litellm:openai/nope-xyz"):
        with pytest.raises(ConfigError) as e:
            _limited(tmp_path, model, {"dollars": 0.1})
        assert "limits.dollars" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("limits", [{"wall_s": True}, {"tokens": True}, {"dollars": False}])
def test_a_boolean_limit_is_refused_not_read_as_one(tmp_path: Path, limits: dict) -> None:
    """Before: ``{wall_s: true}`` was a 1-second limit."""
    with pytest.raises(ConfigError) as e:
        _limited(tmp_path, "openai:gpt-4o-mini", limits)
    assert "limits" in str(e.value) and "not " in str(e.value) and "\n" not in str(e.value)


def test_the_stored_form_is_the_one_sent(servers: dict[str, StandIn]) -> None:
    s = servers["json_schema"]
    llm = make_llm(f"litellm:openai/m?api_base={s.url}&constrain=json_schema")
    c = asyncio.run(llm.complete(MSGS, ASK))
    assert json.loads(json.dumps(c.to_dict()))["decoding"] == "json_schema"
