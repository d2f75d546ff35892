"""Declared component parameters, and the one parser of the part of a spelling after the colon.

A component declares its parameters as :class:`Param` values (name, type, default, help) in a
:class:`Params`; its registry parses every spelling into an :class:`Args` (typed values, by
name) before the factory runs, and stamps the built component with them. Two grammars cover
every spelling:

- **tokens** joined by ``sep`` (``hanoi:4+feedback=off``, ``tools:cc+think=256``,
  ``stateact:goal+state/json/anchor``): a token is a *word* a parameter declares
  (``cc`` sets ``collision_check``), or ``name=value``, or the next *positional* parameter's
  value (positional values come first, before any word or ``name=value``); each parameter at
  most once;
- a **pattern**: a regular expression whose named groups are the parameters
  (``bounded:dssr=<dir>:64``, ``adapt:<base>@2,40``), for spellings whose parts are not
  tokens of one separator.

A parameter's ``type`` reads its text (``int``, :func:`count`, :func:`choice`, :func:`on_off`,
any callable raising ``ValueError`` with a short reason, or another :class:`Params`: a nested
list, e.g. ``?timeout=30&retries=2``). A parameter without a default is required.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

_WORD = re.compile(r"[A-Za-z_][\w-]*")


class ArgumentError(ValueError):
    """A spelling's argument does not fit the declared parameters (the registry turns it
    into a one-line :class:`~statelab.core.ConfigError` naming axis and spelling)."""


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: the default of a parameter the spelling must give
REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Param:
    """One declared parameter of a component."""

    name: str
    #: reads the parameter's text into its value (raises ValueError with a short reason)
    type: Callable[[str], Any] | Params = str
    default: Any = REQUIRED
    help: str = ""
    #: may be written by position (``window:5``), before any word or ``name=value``
    positional: bool = False
    #: bare words that set this parameter to a value (``{"cc": True}``, ``{"short": "short"}``)
    words: Mapping[str, Any] = field(default_factory=dict)
    #: may be written ``name=value``
    named: bool = True

    @property
    def type_name(self) -> str:
        """The type as ``statelab list --long`` prints it."""
        t = self.type
        if self.words and not self.named:  # only words: they are its type
            return "|".join(self.words)
        if isinstance(t, Params):
            return "options"
        return str(getattr(t, "spelled", getattr(t, "__name__", "value")))

    def line(self) -> str:
        """``name: type = default  help`` (one line of ``statelab list --long``)."""
        default = "" if self.default is REQUIRED else f" = {self.default!r}"
        words = f" (or {', '.join(self.words)})" if self.words and self.named else ""
        return f"{self.name}: {self.type_name}{default}{words}  {self.help}".rstrip()


class Args(Mapping[str, Any]):
    """A spelling's parsed arguments: every declared parameter's value (``args.k`` or
    ``args["k"]``), and :attr:`given`, the names the spelling set itself."""

    def __init__(
        self,
        values: Mapping[str, Any] | None = None,
        given: frozenset[str] = frozenset(),
        spans: Mapping[str, tuple[int, int]] | None = None,
    ) -> None:
        self._values = dict(values or {})
        self.given = given
        #: where in the argument text each given parameter was written (start, end)
        self.spans = dict(spans or {})

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Args({self._values!r})"

    def record(self) -> dict[str, Any]:
        """The values as JSON-able data (what the store keeps with the run)."""
        return {k: _plain(v) for k, v in self._values.items()}


def _plain(v: Any) -> Any:
    if isinstance(v, Args):
        return v.record()
    if isinstance(v, tuple | list | frozenset | set):
        return [_plain(x) for x in v]
    return v


@dataclass(frozen=True)
class Params:
    """A component's declared parameters, and how its spelling writes them."""

    params: tuple[Param, ...] = ()
    #: the separator of the tokens grammar
    sep: str = "+"
    #: a regular expression whose named groups are the parameters (instead of tokens)
    pattern: str | None = None
    #: how error messages spell what is allowed (default: generated from the parameters)
    spelled: str | None = None

    def __post_init__(self) -> None:
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"parameters declared twice: {names}")

    def __bool__(self) -> bool:
        return bool(self.params)

    def defaults(self) -> Args:
        return Args({p.name: p.default for p in self.params if p.default is not REQUIRED})

    def parse(self, arg: str | None) -> Args:
        """The typed values ``arg`` (the text after the first colon; None: none) gives.
        Raises :class:`ArgumentError` with a short reason."""
        if not self.params:
            if arg is not None:
                raise ArgumentError("takes no argument")
            return Args()
        values: dict[str, Any] = {p.name: p.default for p in self.params}
        spans: dict[str, tuple[int, int]] = {}
        if arg is not None:
            for param, value, span in self._assign(arg):
                if param.name in spans:
                    token = arg[span[0] : span[1]].strip()
                    raise ArgumentError(f"repeated option {token!r}; allowed: {self.usage()}")
                spans[param.name] = span
                values[param.name] = value
        missing = [p for p in self.params if values[p.name] is REQUIRED]
        if missing:
            raise ArgumentError(
                "needs " + "; ".join(f"<{p.name}> ({p.help or p.type_name})" for p in missing)
            )
        return Args(values, frozenset(spans), spans)

    def _assign(self, arg: str) -> Iterator[tuple[Param, Any, tuple[int, int]]]:
        if self.pattern is not None:
            m = re.fullmatch(self.pattern, arg)
            if m is None:
                raise ArgumentError(f"{arg!r} does not read as {self.usage()}")
            for p in self.params:
                if m.group(p.name) is not None:
                    yield p, _read(p, m.group(p.name)), m.span(p.name)
            return
        words = {w: (p, v) for p in self.params for w, v in p.words.items()}
        named = {p.name: p for p in self.params if p.named}
        positional = [p for p in self.params if p.positional]
        start = 0
        for raw in arg.split(self.sep):
            span, start = (start, start + len(raw)), start + len(raw) + len(self.sep)
            token = raw.strip()
            key, eq, text = token.partition("=")
            if token in words:
                positional = []
                yield (*words[token], span)
            elif eq and key in named:
                positional = []
                yield named[key], _read(named[key], text.strip()), span
            elif eq and _WORD.fullmatch(key):  # ``name=value`` with a name not declared
                raise ArgumentError(f"unknown option {token!r}; allowed: {self.usage()}")
            elif positional:
                p = positional.pop(0)
                yield p, _read(p, token), span
            elif token:
                raise ArgumentError(f"unknown option {token!r}; allowed: {self.usage()}")

    def spell(self, args: Args, arg: str | None = None) -> str | None:
        """The canonical text of ``args`` (the argument part of one canonical spelling), or
        None when the grammar cannot write it. ``arg`` is the text they were parsed from
        (a value no reader can write back keeps its text as written there).

        Tokens: the non-default values only, positional ones first (by position, while every
        earlier positional one is written too), then the others in declared order, each as
        its word when one sets that value, else ``name=value``: ``hanoi:disks=4+feedback=on``
        is ``4``. A pattern keeps its shape (defaults are not dropped); only the values'
        texts are normalised (``064`` is ``64``)."""
        if not self.params:
            return ""
        if self.pattern is not None:
            return self._spell_pattern(args, arg)
        todo = [p for p in self.params if not _is_default(p, args[p.name])]
        parts: list[str] = []
        for p in self.params:
            if not p.positional:
                continue
            if p not in todo:
                break
            text = _value_text(p, args[p.name], _raw(self, p, args, arg))
            if text is None or text in {w for q in self.params for w in q.words}:
                break
            parts.append(text)
            todo.remove(p)
        for p in todo:
            value = args[p.name]
            word = next((w for w, v in p.words.items() if _same(v, value)), None)
            if word is not None:
                parts.append(word)
                continue
            text = _value_text(p, value, _raw(self, p, args, arg)) if p.named else None
            if text is None:
                return None
            parts.append(f"{p.name}={text}")
        return self.sep.join(parts)

    def _spell_pattern(self, args: Args, arg: str | None) -> str | None:
        if arg is None:
            return None if args.given else ""
        out = arg
        for name, (a, b) in sorted(args.spans.items(), key=lambda kv: -kv[1][0]):
            p = next(q for q in self.params if q.name == name)
            text = _value_text(p, args[name], arg[a:b])
            if text is None:
                return None
            out = out[:a] + text + out[b:]
        return out

    def from_mapping(self, values: Mapping[str, Any], where: str) -> Args:
        """The arguments a YAML mapping gives (``{disks: 4, feedback: off}``): each key a
        declared parameter, each value its text or a YAML scalar that reads as it.
        Raises :class:`ArgumentError` naming the key (``where`` spells the mapping)."""
        by_name = {p.name: p for p in self.params}
        out: dict[str, Any] = {p.name: p.default for p in self.params}
        for key, raw in values.items():
            p = by_name.get(str(key))
            if p is None:
                names = ", ".join(by_name) or "none"
                raise ArgumentError(f"{where}: unknown argument {key!r}; arguments: {names}")
            out[p.name] = _from_yaml(p, raw)
        missing = [p.name for p in self.params if out[p.name] is REQUIRED]
        if missing:
            raise ArgumentError(f"{where}: needs {', '.join(missing)}")
        return Args(out, frozenset(str(k) for k in values))

    def without(self, arg: str, names: tuple[str, ...]) -> str:
        """``arg`` with the parameters ``names`` cut out (each with one separator next to
        it): ``summary:64`` without ``budget`` is ``summary``."""
        spans = sorted(s for n, s in self.parse(arg).spans.items() if n in names)
        for a, b in reversed(spans):
            a, b = (a - 1, b) if a > 0 else (a, min(b + 1, len(arg)))
            arg = arg[:a] + arg[b:]
        return arg

    def usage(self) -> str:
        """The parameters as a spelling writes them (for error messages)."""
        if self.spelled is not None:
            return self.spelled
        if self.pattern is not None:
            return " ".join(f"<{p.name}>" for p in self.params)
        parts = []
        for p in self.params:
            forms = [*p.words] + ([f"{p.name}={p.type_name}"] if p.named else [])
            forms = forms or [f"<{p.name}>"]
            parts.append(f"<{p.name}>|" + "|".join(forms) if p.positional else "|".join(forms))
        return self.sep.join(f"[{x}]" for x in parts)


def _read(p: Param, text: str) -> Any:
    try:
        return p.type.parse(text) if isinstance(p.type, Params) else p.type(text)
    except ArgumentError as e:
        raise ArgumentError(f"{p.name}: {e}") from None
    except ValueError as e:
        raise ArgumentError(f"{p.name}: {e}") from None


def _same(a: Any, b: Any) -> bool:
    """Whether two parsed values are the same value (``True`` is not ``1``)."""
    return a is b or (type(a) is type(b) and _plain(a) == _plain(b))


def _is_default(p: Param, value: Any) -> bool:
    return p.default is not REQUIRED and _same(value, p.default)


def _raw(params: Params, p: Param, args: Args, arg: str | None) -> str | None:
    """The text ``arg`` wrote ``p``'s value as (None: not written there)."""
    if arg is None or p.name not in args.spans:
        return None
    a, b = args.spans[p.name]
    token = arg[a:b].strip()
    key, eq, text = token.partition("=")
    return text.strip() if eq and key.strip() == p.name else token


def _texts(value: Any) -> list[str]:
    """Texts a reader may read back as ``value`` (tried in this order)."""
    if isinstance(value, bool):
        return ["on", "true", "True", "1"] if value else ["off", "false", "False", "0"]
    if isinstance(value, int | float):
        return [str(value), repr(value)]
    return [value] if isinstance(value, str) else []


def _reads_as(p: Param, text: str, value: Any) -> bool:
    try:
        return _same(_read(p, text), value)
    except ArgumentError:
        return False


def _value_text(p: Param, value: Any, raw: str | None) -> str | None:
    """The canonical text of ``p``'s ``value``: the first that reads back as it (a nested
    option list spelled canonically), else ``raw`` when it does."""
    if isinstance(p.type, Params) and isinstance(value, Args):
        text = p.type.spell(value, raw)
        if text is not None and _reads_as(p, text, value):
            return text
    for text in [*_texts(value), raw]:
        if text is not None and _reads_as(p, text, value):
            return text
    return None


def _from_yaml(p: Param, raw: Any) -> Any:
    """``p``'s value from a YAML scalar: a word, or text (a number or bool: its texts)."""
    if isinstance(raw, str) and raw in p.words:
        return p.words[raw]
    for value in p.words.values():
        if _same(value, raw):
            return value
    texts = [raw] if isinstance(raw, str) else _texts(raw)
    if not texts:
        raise ArgumentError(f"{p.name}: expected a value ({p.type_name}), got {raw!r}")
    for text in texts:
        try:
            return _read(p, text)
        except ArgumentError:
            continue
    return _read(p, texts[0])  # raises, naming the parameter


# -- readers ------------------------------------------------------------------------------
def _named(fn: Callable[[str], Any], spelled: str) -> Callable[[str], Any]:
    fn.spelled = spelled  # type: ignore[attr-defined]
    return fn


def count(lo: int = 1, hi: int | None = None) -> Callable[[str], int]:
    """A whole number from ``lo`` to ``hi`` (no bound: ``None``)."""

    def read(value: str) -> int:
        if not value.isdigit() or int(value) < lo or (hi is not None and int(value) > hi):
            bound = f"from {lo} to {hi}" if hi is not None else f"of at least {lo}"
            raise ValueError(f"expected a whole number {bound}")
        return int(value)

    return _named(read, f"int {lo}..{hi}" if hi is not None else f"int >= {lo}")


def choice(*values: str) -> Callable[[str], str]:
    """One of ``values``, as written."""

    def read(value: str) -> str:
        if value not in values:
            raise ValueError(f"expected one of {', '.join(values)}")
        return value

    return _named(read, "|".join(values))


def _on_off(value: str) -> bool:
    """``on`` or ``off``, as a bool."""
    if value not in ("on", "off"):
        raise ValueError("expected on or off")
    return value == "on"


on_off: Callable[[str], bool] = _named(_on_off, "on|off")

__all__ = [
    "REQUIRED",
    "Args",
    "ArgumentError",
    "Param",
    "Params",
    "choice",
    "count",
    "on_off",
]
