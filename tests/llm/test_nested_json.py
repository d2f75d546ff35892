"""Issue 36 item 3: JSON that a server, a model or a file wrote, nested past Python's
recursion limit (or endless), is malformed input like any other: never a RecursionError or
MemoryError that fails the episode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from statelab.agents._turn import parse_json_turn
from statelab.agents.react import json_action
from statelab.core import loads_json
from statelab.llm import _constrain

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"action": ' * 100_000 + '"x"' + "}" * 100_000


def test_loads_json_reads_deep_nesting_as_a_decode_error() -> None:
    with pytest.raises(json.JSONDecodeError, match="nested too deeply"):
        loads_json(DEEP)
    assert loads_json('{"a": [1]}') == {"a": [1]}


@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT])
def test_a_constrained_reply_nested_deep_inside_a_valid_body_is_returned_as_it_came(
    body: str,
) -> None:
    assert _constrain.decode("json_schema", body, "Action: ", ("a",)) == body
    assert not _constrain.held(body, "Action: ", ("a",))


def test_agents_read_a_deeply_nested_reply_as_text() -> None:
    assert json_action(DEEP) == DEEP
    parse_json_turn(DEEP_OBJECT)  # no RecursionError


def test_a_probes_file_nested_deeply_or_endless_reads_as_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / "probes.json"
    deep.write_text(DEEP)
    assert _constrain._read_file(deep) == {}
    assert _constrain._read_file(Path("/dev/full")) == {}  # reads zeros forever
    assert _constrain._read_file(Path("/dev/zero")) == {}
    big = tmp_path / "big.json"
    big.write_text('{"k": "' + "x" * (_constrain.MAX_PROBES_FILE + 10) + '"}')
    assert _constrain._read_file(big) == {}
    monkeypatch.setenv(_constrain.ENV_FILE, "/dev/full")
    assert _constrain.remembered("http://127.0.0.1:1/v1", "m") is None
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps({"http://127.0.0.1:1/v1#m": "grammar"}))
    monkeypatch.setenv(_constrain.ENV_FILE, str(ok))
    _constrain.forget()
    assert _constrain.remembered("http://127.0.0.1:1/v1", "m") == "grammar"
