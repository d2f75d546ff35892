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
                    raise ArgumentError(f"{param.name} given twice")
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
            elif positional:
                p = positional.pop(0)
                yield p, _read(p, token), span
            elif token:
                raise ArgumentError(f"unknown option {token!r}; allowed: {self.usage()}")

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
