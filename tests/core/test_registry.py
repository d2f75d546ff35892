"""The registry: it refuses an argument to a component that takes none, once for every axis;
it parses every spelling into the component's declared parameters (and only there); a bug in
a factory keeps its traceback."""

from __future__ import annotations

import pytest

from statelab.core import Args, ConfigError, Param, Params, Registry, choice, count


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
    assert called == [None, "4"]  # registered without params: the raw text (None: none)


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


def _things() -> Registry[object]:
    reg: Registry[object] = Registry("thing")

    class Thing:
        def __init__(self, args: Args) -> None:
            self.got = args

    size = Param("size", count(1, 9), 3, "how big", positional=True)
    reg.register("box", "box[:<size>][+lid][+colour=red|blue]", params=(
        size,
        Param("lid", str, False, "a lid", words={"lid": True}, named=False),
        Param("colour", choice("red", "blue"), "red", "its colour"),
    ))(lambda args, ctx: Thing(args))  # fmt: skip
    reg.register("pair", "pair:<a>:<b>", params=Params(
        (Param("a", count(0)), Param("b", count(0), 1)), pattern=r"(?P<a>[^:]*)(?::(?P<b>.*))?"
    ))(lambda args, ctx: Thing(args))  # fmt: skip
    return reg


def test_a_spelling_is_parsed_into_typed_declared_parameters_and_stamped():
    reg = _things()
    box = reg.build("box:4+lid")
    assert box.got == {"size": 4, "lid": True, "colour": "red"}  # typed, defaults filled
    assert box.got.given == {"size", "lid"} and box.got.size == 4
    assert box.args == {"size": 4, "lid": True, "colour": "red"}  # stamped on the component
    assert reg.build("box:colour=blue+size=2").args == {"size": 2, "lid": False, "colour": "blue"}
    assert reg.build("box").args == {"size": 3, "lid": False, "colour": "red"}
    assert reg.parse("pair:5:7") == {"a": 5, "b": 7} and reg.parse("pair:5") == {"a": 5, "b": 1}
    assert reg.without("pair:5:7", "b") == "pair:5"
    assert reg.without("box:4+lid", "size") == "box:lid"


@pytest.mark.parametrize(
    ("spelling", "message"),
    [
        ("box:10", "thing 'box:10': size: expected a whole number from 1 to 9"),
        ("box:lid+4", "thing 'box:lid+4': unknown option '4'; allowed: "
                      "[<size>|size=int 1..9]+[lid]+[colour=red|blue]"),
        ("box:lid+lid", "thing 'box:lid+lid': lid given twice"),
        ("box:colour=green", "thing 'box:colour=green': colour: expected one of red, blue"),
        ("pair", "thing 'pair': needs <a> (int >= 0)"),
        ("pair:x:1", "thing 'pair:x:1': a: expected a whole number of at least 0"),
    ],
)  # fmt: skip
def test_a_bad_argument_is_one_line_naming_axis_spelling_and_parameter(spelling, message):
    with pytest.raises(ConfigError) as e:
        _things().build(spelling)
    assert str(e.value) == message


def test_a_bug_in_a_factory_keeps_its_traceback():
    reg: Registry[object] = Registry("thing")

    def broken(args: Args, ctx: object) -> object:
        return {}["missing"]  # a KeyError inside the factory: a bug, not a config error

    reg.register("broken", "broken")(broken)
    with pytest.raises(KeyError) as e:
        reg.build("broken")
    assert not isinstance(e.value, ConfigError)
    assert any(t.name == "broken" for t in e.traceback)


def test_list_long_prints_every_parameter_with_its_help():
    reg = _things()
    assert reg.parameters("box") == [
        "size: int 1..9 = 3  how big",
        "lid: lid = False  a lid",
        "colour: red|blue = 'red'  its colour",
    ]
    assert reg.parameters("pair") == ["a: int >= 0", "b: int >= 0 = 1"]


def test_a_nested_parameter_list_reads_a_query_string():
    # how a model spec (``<base_url>#<model>[?timeout=s&retries=n]``) declares itself
    options = Params(
        (Param("timeout", float, None, "seconds"), Param("retries", count(0), None, "retries")),
        sep="&",
    )
    spec = Params(
        (Param("base_url"), Param("model"), Param("options", options, None, "HTTP options")),
        pattern=r"(?P<base_url>[^#]+)#(?P<model>[^?]*)(?:\?(?P<options>.*))?",
    )
    args = spec.parse("http://h:8000/v1#m?timeout=2.5&retries=3")
    assert (args.base_url, args.model, args.options.timeout, args.options.retries) == (
        "http://h:8000/v1", "m", 2.5, 3
    )  # fmt: skip
    assert args.record()["options"] == {"timeout": 2.5, "retries": 3}
    assert spec.parse("http://h/v1#m").options is None
    with pytest.raises(ValueError, match="options: retries: expected a whole number"):
        spec.parse("http://h/v1#m?retries=x")
