"""Reading the tools and plan agents' replies: a free reply's tool or plan, and seed 001's
JSON decision (its schema, instruction, reading, and the safe fallback)."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from typing import Any

from statelab.agents._parse import split_reasoning
from statelab.core import loads_json
from statelab.envs.traffic_world import TOOL_LEN

WAIT = "W" * TOOL_LEN
_WORDS = {"wait": "W", "stay": "W", "hold": "W", "up": "U", "down": "D", "left": "L", "right": "R"}
_LABEL = re.compile(
    r"^(?:[^\S\n]|[>*_#-])*(?:final\s+)?(tool|plan|action|answer|choice)\s*[:：]\s*(.*)$",
    re.I | re.M,
)


# -- parsing free replies --------------------------------------------------------------------
def labelled(reply: str) -> str | None:
    found = _LABEL.findall(reply)
    return found[-1][1].strip() if found else None


def parse_tool(reply: str, names: Sequence[str]) -> str | None:
    """The tool a free reply names: the last ``Tool:`` (or ``Action:``/``Answer:``) line's
    name, or its 1-based index, or the only tool name written in that line or, failing that,
    anywhere in the reply; None when no single tool is named."""
    wanted = {n.upper(): n for n in names}
    line = labelled(reply)
    if line is not None:
        word = re.sub(r"[\"'`*.,;!()\[\]]", " ", line).split()
        if word and word[0].upper() in wanted:
            return wanted[word[0].upper()]
        if word and word[0].isdigit() and 1 <= int(word[0]) <= len(names):
            return names[int(word[0]) - 1]
        tokens = re.findall(r"\b[WUDLR]{5}\b", line, re.I)
        found = {wanted[t.upper()] for t in tokens if t.upper() in wanted}
        if len(found) == 1:
            return found.pop()
    everywhere = {wanted[t] for t in re.findall(r"\b[WUDLR]{5}\b", reply) if t in wanted}
    return everywhere.pop() if len(everywhere) == 1 else None


def _letters(text: str, k: int) -> str | None:
    text = re.sub(r"[\"'`*.!]", " ", text).strip()
    squeezed = re.sub(r"[\s,;\-]+", "", text)
    if re.fullmatch(rf"[WUDLRwudlr]{{{k}}}", squeezed) and len(text.split()) in (1, k):
        return squeezed.upper()
    words = [w for w in re.split(r"[\s,;]+", text.lower()) if w]
    if len(words) == k and all(w in _WORDS for w in words):
        return "".join(_WORDS[w] for w in words)
    return None


def parse_plan(reply: str, k: int = TOOL_LEN) -> str | None:
    """``k`` primitive actions from a free reply: the last ``Plan:``/``Action:`` line as
    ``k`` letters over W,U,D,L,R (``DRDRD``, ``D R D R D``) or ``k`` words (``down right
    ...``); else the first non-empty line so written; else the only such letter group in the
    reply. None when the reply holds no plan (missing or malformed)."""
    line = labelled(reply)
    first = next((ln.strip() for ln in reply.splitlines() if ln.strip()), "")
    for text in (line, first):
        if text:
            got = _letters(text, k)
            if got:
                return got
    groups = set(re.findall(rf"\b[WUDLR]{{{k}}}\b", reply))
    return groups.pop() if len(groups) == 1 else None


# -- the anchor's JSON decision ----------------------------------------------------------------
#: the fields written before ``chosen_tool`` (seed 001's code asks for these four)
JSON_FIELDS = (
    "target_relative_to_agent_from_observation",
    "target_relative_to_agent_from_closeup",
    "target_relative_to_agent_summary",
    "justification",
)
JSON_MIN_TOKENS = 512


def decision_schema(offered: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of a decision, ``chosen_tool`` limited to ``offered``."""
    props: dict[str, Any] = {f: {"type": "string"} for f in JSON_FIELDS}
    props["chosen_tool"] = {"type": "string", "enum": list(offered)}
    return {"type": "object", "properties": props, "required": [*JSON_FIELDS, "chosen_tool"]}


def json_instruction(offered: Sequence[str]) -> str:
    return (
        "Pick the single tool that best advances you toward the target. Answer with one JSON "
        "object and nothing else, with these keys in this order:\n"
        '"target_relative_to_agent_from_observation": where the target is from you, as seen '
        "in the observation window (one sentence);\n"
        '"target_relative_to_agent_from_closeup": the same from the close-up, or "not visible '
        'in close-up";\n'
        '"target_relative_to_agent_summary": both reconciled (one sentence);\n'
        '"justification": which tool brings you closest to the target (one sentence);\n'
        f'"chosen_tool": one of {", ".join(offered)}.'
    )


def parse_json_choice(reply: str, offered: Sequence[str]) -> str | None:
    """``chosen_tool`` of a JSON reply when it is one of ``offered``, else None."""
    _, text = split_reasoning(reply)
    valid = {n.upper(): n for n in offered}
    m = re.search(r"\{.*\}", text, re.DOTALL)
    for blob in ([m.group(0)] if m else []) + [text]:
        try:
            data = loads_json(blob)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            value = str(data.get("chosen_tool", "")).strip().upper()
            if value in valid:
                return valid[value]
    m2 = re.search(r'"chosen_tool"\s*:\s*"?([UDLRWudlrw]+)"?', text)
    if m2 and m2.group(1).upper() in valid:
        return valid[m2.group(1).upper()]
    return None


def safe_fallback(offered: Sequence[str], seed: int) -> str:
    """A random offered tool (seeded by the decision: replayable); WAIT when none is offered."""
    return random.Random(seed).choice(list(offered)) if offered else WAIT
