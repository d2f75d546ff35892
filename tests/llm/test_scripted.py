"""``scripted:<file>``: the model id (and so the response cache) is keyed by the script."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from statelab.core import GenParams
from statelab.llm import ScriptedLLM
from statelab.llm.cache import CachedLLM, ResponseCache

PROMPT = [{"role": "user", "content": "Move?"}]


def _script(path: Path, replies: list[str]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(replies))
    return str(path)


def _reply(llm: CachedLLM) -> tuple[str, bool]:
    out = asyncio.run(llm.complete(PROMPT, GenParams()))  # type: ignore[arg-type]
    return out.text, out.cached


def test_same_basename_different_content_never_shares_the_cache(tmp_path: Path) -> None:
    a = ScriptedLLM.from_file(_script(tmp_path / "a" / "replies.json", ["Action: left"]))
    b = ScriptedLLM.from_file(_script(tmp_path / "b" / "replies.json", ["Action: right"]))
    assert a.model_id != b.model_id
    assert a.model_id.startswith("scripted:replies.json#")
    cache = ResponseCache(tmp_path / "cache.sqlite")
    try:
        assert _reply(CachedLLM(a, cache)) == ("Action: left", False)
        assert _reply(CachedLLM(b, cache)) == ("Action: right", False)  # was a's cached reply
        assert _reply(CachedLLM(a, cache)) == ("Action: left", True)
    finally:
        cache.close()


def test_same_content_same_id_and_text_scripts_too(tmp_path: Path) -> None:
    one = ScriptedLLM.from_file(_script(tmp_path / "x" / "r.json", ["a", "b"]))
    two = ScriptedLLM.from_file(_script(tmp_path / "y" / "r.json", ["a", "b"]))
    assert one.model_id == two.model_id  # content decides, not the directory
    text = tmp_path / "r.txt"
    text.write_text("a\n\nb\n")
    lines = ScriptedLLM.from_file(str(text))
    assert lines.replies == ["a", "b"]
    assert lines.model_id.split("#")[1] == one.model_id.split("#")[1]
    assert ScriptedLLM(["a"], name="x").model_id == "scripted:x"  # inline: named by the caller
