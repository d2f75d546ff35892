"""TextWorld cooking games with the lag protocol of seed 003 (Appendix A), on ``textworld``.

The games are TextWorld's own ``tw-cooking`` games (:mod:`statelab.envs._cooking_games`:
generated once, cached on disk, one game per env seed; rooms 1, 6, 9 or 12; recipes of 1 to 3
ingredients). An episode has two phases:

**Phase A (scripted, played by the env during ``reset``).** The env explores: it opens with
``look`` (the reset text, which names what the starting room holds, reaches no memory, so
without it a one-room game's knife on the counter is never shown to the writer), then walks to the
nearest unvisited room (opening closed doors on the way) and opens every closed container in
each room it enters, until every recipe ingredient and every tool or appliance the recipe
needs (knife, stove, oven, BBQ) has been named in an observation; it then walks to the kitchen
and reads the cookbook (``examine cookbook``: the *reveal*); then it takes exactly F' = ``lag``
filler steps, a random walk seeded from the episode seed (the walk of a smaller lag is a
prefix of a larger lag's walk): each step a uniformly drawn admissible ``go ...`` command (or
``look`` / ``inventory`` in a one-room game). Phase A never takes, cooks or cuts anything, so
it cannot make a game unwinnable.

Phase A is given to the run as **history steps**: ``info["prelude"]`` holds its steps as
``(action, Observation)`` pairs, and the episode loop writes them into the memory one by one,
with the run's writer, before the reader's first decision (so a bounded writer rewrites its
state F' times after the reveal, as in the seed; the ``full`` history holds them verbatim).
The first observation is the one after the last Phase-A step.

**Phase B.** The reader acts until the meal is eaten (win), the game is lost (e.g. a burned
ingredient), the game becomes unwinnable (TextWorld's solver finds no plan), or 50 actions.

Observations: ``text`` is the game's feedback cleaned of the status bar ("-= Kitchen =-3/12"),
the prompt and the end-of-game menu, then the inventory; ``admissible`` is TextWorld's
admissible commands (sorted); ``goal`` the game's objective (which does not hold the recipe:
the cookbook does); ``feedback`` the cleaned feedback alone. ``facts`` is ``TextFacts(inventory
text, None, inventory items)``: a run's observation renderer shows the feedback, then it.

Privileged (``info["privileged"]`` only): ``a_star`` (the optimal next command: the first
command of TextWorld's own solver's policy from the current state, recomputed every step),
``policy`` (that whole plan), ``walkthrough`` (the game's walkthrough from its start),
``recipe`` (the cookbook's text), ``ingredients`` ((name, cooking, cutting) triples),
``where`` (where each needed ingredient and tool is now), ``phase_a`` (steps explored,
the reveal's index in the prelude, F', whether every ingredient and tool was observed
before the reveal), ``game`` (the cache key) and ``facts`` (the truth rendered compactly, so
that it fits small budgets: ``Recipe: carrot (slice, fry); prepare meal. Where: carrot in the
fridge (kitchen); knife on the table (kitchen). You are in the corridor.``). The expert
plays ``a_star``.

Splits: ``train`` seeds 0-239, ``validation`` 1000-1044, ``test`` 2000-2089, each on its own
tw-make ``--split`` (validation and test hold foods and preparations no train game has).
"""

from __future__ import annotations

import random
import re
import warnings
from pathlib import Path
from typing import Any, ClassVar

from statelab.core import Env, Observation, choice, count
from statelab.envs import _cooking_games as games
from statelab.envs._cooking_world import Facts
from statelab.envs._options import Option, option_parser
from statelab.envs._registry import Needs, register_env
from statelab.facts import TextFacts

MANUAL = (
    "You are in a house and must cook a meal: find the recipe in the cookbook in the kitchen, "
    "gather its ingredients, prepare them as it says (cut with a knife: slice, dice, chop; "
    "cook: fry on the stove, roast in the oven, grill on the BBQ), then 'prepare meal' in the "
    "kitchen and 'eat meal'. Cooking or cutting something the recipe does not ask for can "
    "make the game unwinnable. Choose one of the admissible commands each turn."
)
#: how a recipe's cooking and cutting map to the tool or appliance it needs
TOOLS = {"fried": "stove", "roasted": "oven", "grilled": "BBQ"}
CUTS = ("sliced", "diced", "chopped")
#: Phase-A exploration gives up after this many steps (never reached on the games tried)
MAX_EXPLORE = 200
LAGS_HELP = "lag=F' (filler steps, e.g. 0, 10, 20, 40)"
FILLER_HELP = "filler=post|pre (after the reveal: F', the default; before it: the original F)"


def clean(feedback: str) -> str:
    """The game's feedback without the prompt, the status bar and the end-of-game menu."""
    out: list[str] = []
    for line in feedback.split("\n"):
        if line.lstrip().startswith(">"):  # the prompt, then the status bar on its line
            break
        if line.strip().startswith("Would you like to RESTART"):
            break
        out.append(line.rstrip())
    text = "\n".join(out)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text


def inventory_items(inventory: str) -> tuple[str, ...]:
    """('a carrot', ...) from TextWorld's inventory text ('You are carrying:\n  a carrot')."""
    _, sep, listed = inventory.partition(":")
    if not sep:  # "You are carrying nothing."
        return ()
    parts = re.split(r"\n|,\s*(?:and\s+)?|\s+and\s+", listed.strip().rstrip("."))
    return tuple(p.strip() for p in parts if p.strip())


def compact_recipe(recipe: str) -> str:
    """The cookbook's directions grouped by ingredient, in their order: ``"carrot (slice,
    fry); red potato (dice, roast); prepare meal"`` (the oracle state's first part)."""
    lines = [ln.strip() for ln in recipe.split("Directions:")[-1].split("\n") if ln.strip()]
    grouped: dict[str, list[str]] = {}
    tail: list[str] = []
    for line in lines:
        verb, sep, thing = line.partition(" the ")
        if sep:
            grouped.setdefault(thing, []).append(verb)
        else:
            tail.append(line)
    parts = [f"{thing} ({', '.join(verbs)})" for thing, verbs in grouped.items()]
    return "; ".join(parts + tail)


class CookingExpert:
    """Plays a*: the first command of TextWorld's own solver's plan (privileged)."""

    def act(self, obs: Observation, info: dict[str, Any]) -> str:
        return info["privileged"].get("a_star") or "look"


class CookingEnv(Env):
    name: ClassVar[str] = "cooking"
    #: the expert answers from any state, off its own path too:
    #: TextWorld's solver plans from the current state (None once lost)
    expert_any_state: ClassVar[bool] = True
    max_steps: ClassVar[int] = 50  # Phase B actions
    history_len: ClassVar[int] = 400  # `full` keeps every step, Phase A included
    facts_type: ClassVar[type] = TextFacts
    default_format: ClassVar[str] = "natural"
    static_actions: ClassVar[bool] = False
    splits: ClassVar[dict[str, range]] = dict(games.SPLITS)
    #: only ``statelab open-test`` runs these (seed 003: the test split is opened once)
    sealed_splits: ClassVar[tuple[str, ...]] = ("test",)
    optimal_action: ClassVar[bool] = True
    scripted_prelude: ClassVar[bool] = True
    #: TextWorld loads a game's logic with one module-level grammar parser
    #: (``textworld.logic._PARSER``, a TatSu parser keeping its parse state on itself): two
    #: loads at once corrupt each other
    thread_safe: ClassVar[bool] = False
    manual = MANUAL

    def __init__(self, lag: int = 0, max_steps: int | None = None, filler: str = "post") -> None:
        super().__init__(max_steps=max_steps)
        self.lag = lag
        self.filler = filler
        self._tw: Any = None
        self._path: Path | None = None
        self._gs: Any = None
        self._text = ""
        self._won = False
        self._lost = False
        self._admissible: tuple[str, ...] = ()
        self._phase_a: dict[str, Any] = {}
        self._walkthrough: tuple[str, ...] = ()
        self._spec: games.GameSpec | None = None

    # -- TextWorld ------------------------------------------------------------------------
    def _open(self, path: Path) -> None:
        import textworld

        if self._path == path and self._tw is not None:
            return
        if self._tw is not None:
            self._tw.close()
        infos = textworld.EnvInfos(
            admissible_commands=True,
            inventory=True,
            facts=True,
            policy_commands=True,
            score=True,
            max_score=True,
            won=True,
            lost=True,
            objective=True,
            extras=["recipe", "walkthrough", "ingredients"],
        )
        with warnings.catch_warnings():  # jericho: "not fully supported" (TextWorld scores)
            warnings.simplefilter("ignore")
            self._tw = textworld.start(str(path), request_infos=infos)
        self._path = path

    def _tw_step(self, action: str) -> str:
        self._gs, _, _ = self._tw.step(action)
        self._won, self._lost = bool(self._gs.won), bool(self._gs.lost)
        return clean(self._gs.feedback)

    def _observe(self, feedback: str) -> Observation:
        gs = self._gs
        inventory = clean(gs.inventory)
        items = inventory_items(inventory)
        text = f"{feedback}\n\n{inventory}".strip() if feedback else inventory
        self._admissible = tuple(sorted(gs.admissible_commands or ()))
        self._text = text
        facts = TextFacts(inventory, None, items)  # the renderer puts the feedback first
        return Observation(text, facts, self._admissible, self.goal, feedback=feedback)

    @property
    def goal(self) -> str:
        return clean(str(self._gs.objective)) if self._gs is not None else ""

    # -- Phase A --------------------------------------------------------------------------
    def needed(self) -> tuple[list[str], list[str]]:
        """The recipe's ingredients and the tools/appliances it needs."""
        ingredients = [str(i[0]) for i in self._gs["extra.ingredients"]]
        tools: list[str] = []
        for _name, cook, cut in self._gs["extra.ingredients"]:
            if cook in TOOLS and TOOLS[cook] not in tools:
                tools.append(TOOLS[cook])
            if cut in CUTS and "knife" not in tools:
                tools.append("knife")
        return ingredients, tools

    def _phase_a_steps(self, seed: int) -> list[tuple[str, Observation]]:
        """The scripted Phase A of this game (see the module): exploration, the walk to the
        kitchen, then the reveal and F' filler steps (``filler=post``, F'), or F filler steps,
        the walk back to the kitchen and the reveal (``filler=pre``, the original F)."""
        steps: list[tuple[str, Observation]] = []
        seen_text: list[str] = []  # what the writer is shown: the prelude's observations
        ingredients, tools = self.needed()
        targets = [*ingredients, *tools]

        def do(action: str) -> None:
            feedback = self._tw_step(action)
            obs = self._observe(feedback)
            steps.append((action, obs))
            seen_text.append(obs.text.lower())

        def observed() -> bool:
            blob = "\n".join(seen_text)
            return all(t.lower() in blob for t in targets)

        def walk_to(room: str) -> None:
            facts = Facts(self._gs.facts)
            for d, door in facts.path(facts.player_room, room):
                if door is not None and door in Facts(self._gs.facts).closed:
                    do(f"open {door}")
                do(f"go {d}")

        def open_containers() -> None:
            facts = Facts(self._gs.facts)
            for c in facts.containers_in(facts.player_room):
                if c in facts.closed and f"open {c}" in self._gs.admissible_commands:
                    do(f"open {c}")

        def filler() -> None:
            rng = random.Random(f"cooking-walk:{seed}")
            for _ in range(self.lag):
                moves = sorted(a for a in self._gs.admissible_commands if a.startswith("go "))
                do(rng.choice(moves or ["look", "inventory"]))

        do("look")  # the starting room: the reset text reaches no memory (see the module)
        visited: set[str] = set()
        while len(steps) < MAX_EXPLORE:
            facts = Facts(self._gs.facts)
            visited.add(facts.player_room)
            open_containers()
            if observed():
                break
            todo = [r for r in facts.distance_order(facts.player_room) if r not in visited]
            if not todo:
                break
            walk_to(todo[0])
            visited.add(todo[0])  # even when unreachable: never aim at it twice
        explored = len(steps)
        walk_to("kitchen")
        all_observed = observed()  # the check: every target shown to the writer by now
        if self.filler == "pre":
            filler()
            walk_to("kitchen")
        do("examine cookbook")
        reveal = len(steps) - 1
        if self.filler == "post":
            filler()
        self._phase_a = {
            "explore_steps": explored,
            "reveal": reveal,
            "filler": len(steps) - 1 - reveal,  # after the reveal (F')
            "pre_filler": self.lag if self.filler == "pre" else 0,  # before it (F)
            "protocol": self.filler,
            "all_observed": all_observed,
            "targets": tuple(targets),
            "draw": self._spec.draw if self._spec else 0,
        }
        return steps

    # -- the env contract -----------------------------------------------------------------
    def _privileged(self, valid: bool = True) -> dict[str, Any]:
        gs = self._gs
        policy = tuple(gs.policy_commands or ())
        facts = Facts(gs.facts)
        ingredients, tools = self.needed()
        where = {t: facts.where(t) for t in [*ingredients, *tools]}
        recipe = clean(str(gs["extra.recipe"]))
        truth = (
            f"Recipe: {compact_recipe(recipe)}. Where: "
            + "; ".join(f"{t} {w}" for t, w in where.items())
            + f". You are in the {facts.player_room}."
        )
        return {
            "valid": valid,
            "privileged": {
                "a_star": policy[0] if policy else None,
                "policy": policy,
                "walkthrough": self._walkthrough,
                "recipe": recipe,
                "ingredients": tuple(tuple(map(str, i)) for i in gs["extra.ingredients"]),
                "where": where,
                "room": facts.player_room,
                "phase_a": dict(self._phase_a),
                "game": self._spec.key if self._spec else "",
                "facts": TextFacts(truth, facts.player_room),
            },
        }

    def _reset(self, rng_seed: int | None, options: dict[str, Any]) -> tuple[Observation, dict]:
        seed = 0 if rng_seed is None else int(rng_seed)
        for draw in range(games.MAX_DRAWS):  # a game failing the Phase-A check is redrawn
            self._spec = games.spec_for(seed, draw)
            if games.rejected(self._spec) and draw + 1 < games.MAX_DRAWS:
                continue
            self._open(games.ensure_game(self._spec))
            self._gs = self._tw.reset()
            self._won = self._lost = False
            self._walkthrough = tuple(self._gs["extra.walkthrough"])
            prelude = self._phase_a_steps(seed)
            if self._phase_a["all_observed"]:
                break
            games.reject(self._spec)
        obs = prelude[-1][1]
        info = self._privileged()
        info["prelude"] = tuple(prelude)
        return obs, info

    def _step(self, action: str) -> tuple[Observation, float, bool, dict[str, Any]]:
        valid = action in self._admissible
        before = float(self._gs.score)
        feedback = self._tw_step(action)
        obs = self._observe(feedback)
        info = self._privileged(valid)
        unwinnable = not self._won and not info["privileged"]["policy"]
        info["unwinnable"] = unwinnable
        terminated = self._won or self._lost or unwinnable
        return obs, float(self._gs.score) - before, terminated, info

    def score(self) -> float:
        if self._gs is None:
            return 0.0
        return 1.0 if self._won else min(float(self._gs.score) / float(self._gs.max_score), 0.99)

    def success(self) -> bool:
        return self._won

    def expert(self) -> CookingExpert:
        return CookingExpert()

    def close(self) -> None:
        if self._tw is not None:
            self._tw.close()
            self._tw = None
            self._path = None


OPTIONS = {
    "lag": Option("lag", count(0, 200), LAGS_HELP),
    "filler": Option("filler", choice("post", "pre"), FILLER_HELP),
}
register_env(
    "cooking",
    CookingEnv,
    "statelab/Cooking-v0",
    "cooking[:lag=F'][+filler=post|pre]",
    option_parser("cooking", OPTIONS, positional="lag"),
    needs=Needs("pip install 'statelab[games]' (or textworld==1.7.0)", ("textworld",)),
)
