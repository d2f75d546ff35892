"""The registry refuses an argument to a component that takes none, once for every axis."""

from __future__ import annotations

import pytest

from statelab.core import ConfigError, Registry


def test_an_argument_to_a_component_whose_help_names_none_is_refused_before_its_factory():
    reg: Registry[object] = Registry("thing")
    called: list[object] = []
    reg.register("plain", "plain")(lambda arg, ctx: called.append(arg) or object())
    reg.register("sized", "sized:<k>")(lambda arg, ctx: called.append(arg) or object())
    with pytest.raises(ConfigError) as e:
        reg.build("plain:3")
    assert str(e.value) == "thing 'plain' takes no argument, got 'plain:3'"
    assert called == []  # the factory never ran
    reg.build("plain")
    reg.build("sized:4")
    assert called == [None, "4"]


@pytest.mark.parametrize(
    ("axis", "spelling"),
    [("history", "full:3"), ("grounding", "vot:x"), ("format", "matrix:1"), ("agent", "expert:1"),
     ("writer", "acting:x"), ("env", "textcraft:2")],
)  # fmt: skip
def test_every_axis_refuses_it_in_one_line(axis, spelling):
    from statelab.run.axes import BY_NAME

    with pytest.raises(ConfigError, match="takes no argument") as e:
        BY_NAME[axis].registry.check(spelling)
    assert "\n" not in str(e.value)
