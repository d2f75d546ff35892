"""Components added from outside ``src/``, each in one file that registers it on import
(issue 8, "What must show": an experiment runs them and the report shows them without any
change to ``run/`` or ``analysis/``). :func:`install` (re)registers them; :func:`uninstall`
removes every trace, so other tests see the registries as ``src/`` leaves them."""

from __future__ import annotations

import importlib
from types import ModuleType

MODULES = ("echo_env", "last_action_history", "asking_agent", "oracle_world")


def install() -> list[ModuleType]:
    """Import each plugin module (which registers it); reload one whose registration an
    earlier :func:`uninstall` removed."""
    out = []
    for name in MODULES:
        full = f"{__name__}.{name}"
        mod = importlib.import_module(full)
        if not mod.registered():
            mod = importlib.reload(mod)
        out.append(mod)
    return out


def uninstall() -> None:
    for name in MODULES:
        importlib.import_module(f"{__name__}.{name}").unregister()
