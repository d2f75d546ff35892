"""Components added from outside ``src/``.

Two are **installed plugin packages** (issue 19, "What must show"): ``statelab-echo`` (an env)
and ``statelab-last-action`` (a history), each one module plus a ``pyproject.toml`` declaring a
``statelab.plugins`` entry point, with no edit inside ``src/statelab``. :func:`installed` builds
and installs them for real (``pip install --no-deps --no-build-isolation --target``, offline,
from a copy of their sources) into a directory kept between test sessions while the sources
are unchanged, and :func:`activate` puts that directory on ``sys.path`` and lets the
registries load the entry points as any user's would. :func:`deactivate` takes the plugins
out again (the registries return to what they held before), so tests outside the
conformance suite see the registries as ``src/`` leaves them.

Two more are **imported modules** (issue 8): ``asking_agent`` and ``oracle_world``, each one file
registering on import; :func:`install` (re)imports them and :func:`uninstall` removes them.
"""

from __future__ import annotations

import hashlib
import importlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).parent
#: the plugin packages (directories here), by the names they register
PACKAGES = {"statelab-echo": ("env", "echo"), "statelab-last-action": ("history", "last-action")}
MODULES = ("asking_agent", "oracle_world")


def _digest() -> str:
    h = hashlib.sha256(sys.version.encode())
    for pkg in sorted(PACKAGES):
        for f in sorted((HERE / pkg).iterdir()):
            if f.is_file():
                h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()[:16]


def installed() -> Path:
    """The directory the plugin packages are installed in (installed now if need be)."""
    dest = Path(tempfile.gettempdir()) / f"statelab-test-plugins-{_digest()}"
    if (dest / ".complete").is_file():
        return dest
    work = Path(tempfile.mkdtemp(prefix="statelab-plugin-src-"))
    tmp_dest = Path(tempfile.mkdtemp(prefix="statelab-plugin-site-"))
    try:
        for pkg in PACKAGES:  # build from a copy: setuptools writes build/ into the source
            shutil.copytree(HERE / pkg, work / pkg)
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             "--no-deps", "--no-build-isolation", "--no-index", "--target", str(tmp_dest),
             *(str(work / pkg) for pkg in PACKAGES)],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        (tmp_dest / ".complete").write_text("ok\n")
        try:
            tmp_dest.rename(dest)
        except OSError:  # another session installed it meanwhile
            assert (dest / ".complete").is_file(), dest
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(tmp_dest, ignore_errors=True)
    return dest


def _tables() -> list[dict[Any, Any]]:
    """Every table a plugin may add to: each registry's dicts, the env tables, Gymnasium's."""
    import gymnasium as gym

    from statelab.envs import _registry as env_registry
    from statelab.run.axes import AXES

    out: list[dict[Any, Any]] = [env_registry.ENV_CLASSES, env_registry.GYM_IDS, gym.registry]
    for a in AXES:
        out += [v for v in vars(a.registry).values() if isinstance(v, dict)]
    return out


class _Scope:
    dest: Path | None = None
    #: table index -> what the plugins added to it (recorded when first loaded)
    added: dict[int, dict[Any, Any]] | None = None
    before: list[set[Any]] | None = None


def activate() -> Path:
    """Make the installed plugins visible: on ``sys.path``, in the registries."""
    from statelab.core._plugins import load_plugins

    if _Scope.before is not None:
        return _Scope.dest  # type: ignore[return-value]
    dest = _Scope.dest = _Scope.dest or installed()
    tables = _tables()
    _Scope.before = [set(t) for t in tables]
    sys.path.insert(0, str(dest))
    importlib.invalidate_caches()  # importlib.metadata's path caches too
    if _Scope.added is None:
        loaded = load_plugins(refresh=True)
        assert set(loaded) >= {name for _, name in PACKAGES.values()}, loaded
        _Scope.added = {
            i: {k: t[k] for k in t if k not in _Scope.before[i]} for i, t in enumerate(tables)
        }
    else:
        for i, extra in _Scope.added.items():
            tables[i].update(extra)
    return dest


def deactivate() -> None:
    """Remove the plugins (and anything registered while they were active)."""
    if _Scope.before is None:
        return
    for t, keys in zip(_tables(), _Scope.before, strict=True):
        for k in [k for k in t if k not in keys]:
            del t[k]
    _Scope.before = None
    if str(_Scope.dest) in sys.path:
        sys.path.remove(str(_Scope.dest))
    importlib.invalidate_caches()


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
