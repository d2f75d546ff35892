"""Constrained choice on OpenAI-compatible servers: one probe per server finds the form it
enforces (grammar, choice, regex, json_schema, json_object), falls back in one line where none
works, and every call says which mode ran. Against real HTTP stand-ins on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import logging
import re

import pytest
from tests.llm._standins import FREE, StandIn

from statelab.core import GenParams
from statelab.llm import _constrain as constrain
from statelab.llm import make_llm

ACTIONS = ("move disk 1 from A to C", 'say "hi" \\ (twice)?', "look")
MSGS = [{"role": "system", "content": "Play."}, {"role": "user", "content": "Your move."}]
PARAMS = GenParams(temperature=0.0, choices=ACTIONS, choice_prefix="Action: ", stop=("\n",))


@pytest.fixture(autouse=True)
def _fresh(monkeypatch, tmp_path):
    monkeypatch.delenv(constrain.ENV_FILE, raising=False)
    constrain.forget()
    yield
    constrain.forget()


def _run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize(
    ("form", "strict", "probes"),
    [
        ("grammar", False, 1),
        ("choice", False, 2),  # grammar ignored: a free reply
        ("regex", False, 3),
        ("json_schema", True, 4),  # the earlier forms refused with HTTP 400
        ("json_object", False, 5),
    ],
)
def test_the_probe_finds_the_form_each_server_enforces_and_every_reply_is_admissible(
    form, strict, probes
):
    srv = StandIn(form, strict=strict)
    try:
        llm = make_llm(f"openai-compat:{srv.url}#m")
        assert llm.constrained

        async def calls():
            return await asyncio.gather(*(llm.complete(MSGS, PARAMS) for _ in range(4)))

        done = _run(calls())
    finally:
        srv.close()
    # the stand-ins answer the last admissible action: the reply is it, as the agent reads it
    assert [c.text for c in done] == ["Action: " + ACTIONS[-1]] * 4
    assert {c.decoding for c in done} == {form}
    assert srv.probes() == probes  # once, however many calls start together
    real = [b for b in srv.bodies if "qzvex" not in json.dumps(b)]
    assert len(real) == 4 and all("stop" not in b for b in real)


def test_the_regex_and_grammar_escape_every_special_character():
    g = constrain.grammar("Action: ", ACTIONS)
    alts = '("move disk 1 from A to C" | "say \\"hi\\" \\\\ (twice)?" | "look")'
    assert g == 'root ::= "Action: " ' + alts
    rx = constrain.regex("Action: ", ACTIONS)
    assert [bool(re.fullmatch(rx, "Action: " + a)) for a in ACTIONS] == [True] * 3
    assert not re.fullmatch(rx, "Action: say hi") and not re.fullmatch(rx, "Action: lookx")
    # '-' and '/' stay bare: literal everywhere outside brackets, and an escaped '-' is what
    # an older xgrammar regex converter misreads
    slash = constrain.regex("", ("put mug 1 in/on shelf-2",))
    assert slash == "(put mug 1 in/on shelf-2)" and re.fullmatch(slash, "put mug 1 in/on shelf-2")


def test_a_server_that_enforces_nothing_falls_back_in_one_line(caplog):
    srv = StandIn(None)
    try:
        llm = make_llm(f"openai-compat:{srv.url}#m")
        with caplog.at_level(logging.WARNING, logger="statelab.llm._constrain"):
            first = _run(llm.complete(MSGS, PARAMS))
            second = _run(llm.complete(MSGS, PARAMS))
    finally:
        srv.close()
    assert first.text == second.text == FREE and first.decoding == "unenforced"
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "enforces none of grammar, choice, regex" in lines[0]
    assert srv.probes() == 5  # each form once, then never again
    assert "grammar" not in srv.bodies[-1] and "response_format" not in srv.bodies[-1]


def test_constrain_off_or_a_named_form_sends_no_probe():
    srv = StandIn("choice")
    try:
        off = make_llm(f"openai-compat:{srv.url}#m?constrain=off")
        named = make_llm(f"openai-compat:{srv.url}#m?constrain=choice")
        assert not off.constrained and named.constrained
        assert named.model_id.endswith("#m?constrain=choice") and off.model_id.endswith("=off")
        free = _run(off.complete(MSGS, GenParams(temperature=0.0)))
        held = _run(named.complete(MSGS, PARAMS))
    finally:
        srv.close()
    assert free.text == FREE and free.decoding == ""
    assert held.text == "Action: look" and held.decoding == "choice"
    assert srv.probes() == 0


def test_the_probe_is_remembered_per_server_in_memory_and_in_the_probes_file(monkeypatch, tmp_path):
    path = tmp_path / "probes.json"
    monkeypatch.setenv(constrain.ENV_FILE, str(path))
    srv = StandIn("regex")
    try:
        _run(make_llm(f"openai-compat:{srv.url}#m").complete(MSGS, PARAMS))
        _run(make_llm(f"openai-compat:{srv.url}#m").complete(MSGS, PARAMS))  # memory
        constrain.forget()  # a new process: the file answers
        again = _run(make_llm(f"openai-compat:{srv.url}#m").complete(MSGS, PARAMS))
        _run(make_llm(f"openai-compat:{srv.url}#other").complete(MSGS, PARAMS))  # a new model
    finally:
        srv.close()
    assert again.decoding == "regex"
    assert json.loads(path.read_text()) == {f"{srv.url}#m": "regex", f"{srv.url}#other": "regex"}
    assert srv.probes() == 2 * 3  # two servers (base URL and model), three forms each


def test_a_server_that_is_down_fails_the_call_and_is_not_remembered_as_unconstrained():
    srv = StandIn("grammar")
    url = srv.url
    srv.close()
    llm = make_llm(f"openai-compat:{url}#m?retries=0")
    with pytest.raises(Exception, match="cannot connect"):
        _run(llm.complete(MSGS, PARAMS))
    assert constrain.remembered(url, "m") is None
