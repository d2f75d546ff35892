"""Every name is imported from its one home: no module but a package's ``__init__`` re-exports
a name it imports (a shim left by a split), and no private name crosses modules."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = [ROOT / "src" / "statelab", *sorted(ROOT.glob("seeds/*/src/statelab_seed*"))]


def _modules() -> dict[str, Path]:
    mods = {}
    for pkg in PACKAGES:
        for f in pkg.rglob("*.py"):
            name = ".".join(f.relative_to(pkg.parent).with_suffix("").parts)
            mods[name.removesuffix(".__init__")] = f
    return mods


MODS = _modules()


def _resolve(mod: str | None, node: ast.ImportFrom) -> str:
    if node.level == 0 or mod is None:
        return node.module or ""
    parts = mod.split(".")
    base = parts if MODS[mod].name == "__init__.py" else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _defined(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for n in tree.body:
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(n.name)
        elif isinstance(n, ast.Assign | ast.AnnAssign):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            names |= {x.id for t in targets for x in ast.walk(t) if isinstance(x, ast.Name)}
        elif isinstance(n, ast.If | ast.Try):  # TYPE_CHECKING / optional-import blocks
            names |= _defined(ast.Module(body=list(ast.iter_child_nodes(n)), type_ignores=[]))
    return names


TREES = {m: ast.parse(f.read_text()) for m, f in MODS.items()}
DEFINED = {m: _defined(t) for m, t in TREES.items()}


def _importers() -> list[tuple[str | None, Path, ast.Module]]:
    out: list[tuple[str | None, Path, ast.Module]] = [(m, MODS[m], t) for m, t in TREES.items()]
    for d in ("tests", "benchmarks"):
        out += [(None, f, ast.parse(f.read_text())) for f in sorted((ROOT / d).rglob("*.py"))]
    out += [(None, f, ast.parse(f.read_text())) for f in sorted(ROOT.glob("seeds/*/tests/**/*.py"))]
    return out


def _foreign(src: str, name: str) -> bool:
    """``name`` is imported from ``src`` although ``src`` is no package and does not define it."""
    return (
        src in MODS
        and MODS[src].name != "__init__.py"
        and f"{src}.{name}" not in MODS
        and name not in DEFINED[src]
    )


def test_no_name_is_imported_from_a_module_that_only_re_exports_it():
    found = []
    for mod, path, tree in _importers():
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom):
                src = _resolve(mod, n)
                found += [f"{path.relative_to(ROOT)}:{n.lineno}: {a.name} from {src}"
                          for a in n.names if _foreign(src, a.name)]  # fmt: skip
    assert not found, "import these from their home:\n" + "\n".join(found)


def test_no_module_but_a_package_init_lists_a_name_it_does_not_define_in_all():
    found = []
    for mod, tree in TREES.items():
        if MODS[mod].name == "__init__.py":
            continue
        for n in tree.body:
            if isinstance(n, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets
            ):
                elts = getattr(n.value, "elts", [])
                names = [e.value for e in elts if isinstance(e, ast.Constant)]
                found += [f"{mod}: {x}" for x in names if x not in DEFINED[mod]]
    assert not found, "re-exported in __all__:\n" + "\n".join(found)


def test_no_private_name_is_imported_across_modules_of_the_packages():
    found = []
    for mod, tree in TREES.items():
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom):
                src = _resolve(mod, n)
                found += [
                    f"{mod}:{n.lineno}: {a.name} from {src}"
                    for a in n.names
                    if src in MODS and src != mod and a.name.startswith("_")
                    and not a.name.startswith("__") and f"{src}.{a.name}" not in MODS
                ]  # fmt: skip
    why = "a private name used by another module is that module's API"
    assert not found, why + ":\n" + "\n".join(found)
