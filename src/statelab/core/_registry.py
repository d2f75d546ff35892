"""Named-component registries: one per axis. A run is one choice per axis."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class ConfigError(ValueError):
    """A configuration value is wrong; the message is one line naming it."""


class Registry(Generic[T]):
    """Maps config spellings to factories.

    A spelling may carry an argument after a colon (``window:5``, ``llamacpp:/m.gguf``):
    the part before the first colon selects the component, the rest is passed to it.
    """

    def __init__(self, axis: str) -> None:
        self.axis = axis
        self._items: dict[str, Callable[..., T]] = {}
        self._help: dict[str, str] = {}

    def register(self, name: str, help: str = "") -> Callable[[Callable[..., T]], Callable[..., T]]:
        def deco(factory: Callable[..., T]) -> Callable[..., T]:
            if name in self._items:
                raise ValueError(f"{self.axis} {name!r} registered twice")
            self._items[name] = factory
            self._help[name] = help or name
            return factory

        return deco

    def split(self, spelling: str) -> tuple[str, str | None]:
        head, sep, arg = spelling.partition(":")
        if head not in self._items:
            raise ConfigError(f"unknown {self.axis} {spelling!r}; allowed: {self.allowed()}")
        return head, (arg if sep else None)

    def get(self, spelling: str) -> Callable[..., T]:
        return self._items[self.split(spelling)[0]]

    def allowed(self) -> str:
        return ", ".join(self._help[n] for n in self._items)

    def names(self) -> list[str]:
        return list(self._items)

    def __contains__(self, spelling: object) -> bool:
        return isinstance(spelling, str) and spelling.partition(":")[0] in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)
