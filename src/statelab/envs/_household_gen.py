"""Offline generation of ALFWorld-style games (``.tw-pddl``) for the ``household`` env.

Everything comes from the ``alfworld`` wheel (no download): the PDDL domain and the text
grammar (``alfworld/data``), the scene layouts (``alfworld/gen/layouts``: the object types of
each FloorPlan and its receptacle instances with the pose the agent takes in front of each),
the placement rules (``alfworld.gen.constants``) and the goals (``alfworld.gen.goal_library``:
the PDDL goal and the two text templates of each task type).

A game, from ``(seed, task_type)`` alone (:func:`generate`, pure and deterministic):

- Scene (``rooms``, default ``alfworld``): test seeds (``seed >= TEST_START``) draw from the
  four scenes of ALFWorld's 134 unseen games (``eval_out_of_distribution``, ALFRED's
  valid_unseen: 10, 219, 308, 424; :data:`UNSEEN_SCENES`), with ALFWorld's task-type mix
  (:func:`test_types`); other seeds from ``TRAIN_SCENE_NUMBERS`` without those four. With
  ``rooms="alfred"`` (games version 2, as before): test seeds from ALFRED's
  ``TEST_SCENE_NUMBERS``, train seeds from all of ``TRAIN_SCENE_NUMBERS``, types by seed % 6.
  Only scenes where the task is feasible are drawn.
- Receptacles (:func:`statelab.envs._household_layout.receptacles`): the layouts' instances
  and one of each type they lack, each where ALFWorld's generator puts the agent to reach it
  (``places``, default ``alfworld``: two share a place only where ALFWorld's games give them
  one); the agent starts at a place of its own ("the middle of a room").
- Objects: 1-3 instances of each pickupable type of the scene, each in a receptacle whose type
  may hold it (``VAL_RECEPTACLE_OBJECTS``); a desk lamp, which that table does not cover, on a
  desk, side table or dresser (:data:`LAMP_RECEPTACLES`); in an unseen scene with a floor lamp
  and no desk lamp (219, ``alfworld`` rooms), a floor lamp (look-at tasks "... under the
  floorlamp", as ALFWorld's), listed in/on a receptacle standing on the floor.
- Task, with ALFWorld's sampling rules (``TaskGameState.get_filter_crit``): an object type and
  a receptacle type that may hold it (not the appliance of a clean / heat / cool task); the
  object starts where ALFWorld's sampler lets it (:func:`_start_forbidden`), so no game is won
  before its last action; pick-two games have 2-3 instances; look-at games a lamp. The goal
  text is one of the task type's two templates.

Names follow ALFWorld: PDDL ids are mangled Unity ids (``Cabinet|+00.68|+00.50|-02.20`` ->
``Cabinet_bar__plus_00_dot_68...``) and the game shows them as ALFWorld's ``Demangler`` does
("cabinet 3"); :func:`generate` computes the same names so that the game's metadata (the extra
``statelab`` key, which TextWorld ignores) speaks the words the game prints.
"""

from __future__ import annotations

import json
import os
import random
from functools import cache
from pathlib import Path
from typing import Any

from statelab.envs import _household_apart as apart
from statelab.envs import _household_prior as prior
from statelab.envs._household_layout import (
    FLOOR_LAMP,
    LAMP,
    LAMP_RECEPTACLES,
    PLACES,
    display_names,
    logic,
    made_up_uid,
    pickupable_types,
    receptacles,
    scene_data,
)
from statelab.envs._household_layout import constants as _constants
from statelab.envs._household_pddl import problem

__all__ = []

#: bump when a change alters any generated game (the cache is keyed by it); version 5 puts
#: every receptacle where ALFWorld's generator puts the agent to reach it
#: (:func:`statelab.envs._household_layout.alfworld_place`); ``places=layout`` writes version 4
#: (the task's object by ALFWorld's start rules and the seed-004 Zipf law,
#: :mod:`statelab.envs._household_prior`, the layout's stored poses); ``starts=apart`` the
#: earlier games unchanged: version 3 (``alfworld`` rooms) and 2 (``rooms=alfred``)
GEN_VERSION = 5
LAYOUT_VERSION = 4
APART_VERSION = 3
ALFRED_VERSION = 2
#: the draws of a game (version 2 only fixed a name: "sinkbasinbasin" -> "sinkbasin")
RNG_VERSION = 1
#: ALFWorld's task types (its ``TASK_TYPES`` order); a seed's type is ``TASK_TYPES[seed % 6]``
TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
)
#: seed 002's short names (Appendix A.1) and other spellings accepted for a task type
SHORT = {"put": 0, "examine": 1, "look": 1, "clean": 2, "heat": 3, "cool": 4, "puttwo": 5,
         "pick_two": 5, "pick_and_place": 0, "look_at_obj": 1, "pick_clean_then_place": 2,
         "pick_heat_then_place": 3, "pick_cool_then_place": 4}  # fmt: skip
#: the appliance a task needs, by task type
APPLIANCE = {2: "SinkBasin", 3: "Microwave", 4: "Fridge"}
PROPERTY = {2: "Cleanable", 3: "Heatable", 4: "Coolable"}
#: where a floor lamp is listed: ALFWorld's text puts an object that stands on the floor in/on
#: a receptacle at its place ("On the sinkbasin 1, you see a floorlamp 1"); we do not have the
#: lamp's position, so it is drawn among the scene's receptacles that stand on the floor
FLOOR_LAMP_RECEPTACLES = (
    "ArmChair", "Sofa", "SideTable", "Dresser", "Desk", "Bed", "CoffeeTable", "DiningTable",
    "TVStand", "Ottoman", "GarbageCan",
)  # fmt: skip
TEST_START = 100_000
#: the rooms of the test split: ``alfworld`` ALFWorld's unseen games' (valid_unseen: ALFRED
#: scenes 10, 219, 308, 424, held out of training, with ALFWorld's receptacle instances, its
#: floor-lamp look-at tasks and its task-type mix); ``alfred`` ALFRED's test scenes as before
#: (seed % 6 task types, games version 2, byte-identical to earlier runs)
ROOMS = ("alfworld", "alfred")
UNSEEN_SCENES = (10, 219, 308, 424)
#: ALFWorld's 134 unseen games by task type, in :data:`TASK_TYPES` order (pick 24, look 18,
#: clean 31, heat 23, cool 21, pick-two 17)
TEST_MIX = (24, 18, 31, 23, 21, 17)


def task_index(task_type: str) -> int:
    """Index into :data:`TASK_TYPES` of a task type's name or one of its short names."""
    if task_type in TASK_TYPES:
        return TASK_TYPES.index(task_type)
    if task_type in SHORT:
        return SHORT[task_type]
    raise ValueError(f"unknown task type {task_type!r}; one of {TASK_TYPES} or {sorted(SHORT)}")


def cache_root() -> Path:
    """``$STATELAB_CACHE/household`` (default ``~/.cache/statelab/household``)."""
    base = os.environ.get("STATELAB_CACHE")
    return (Path(base) if base else Path.home() / ".cache" / "statelab") / "household"


#: how the task's object is placed: uniformly over the receptacles that may hold it
#: (ALFWorld's), or by a Zipf law over them (seed 004, section 5.3)
PLACEMENTS = ("uniform", "zipf")
ZIPF_ALPHA = 1.25
#: where the task's object may start: ``alfworld`` ALFWorld's sampler's rules and, for
#: ``zipf``, the seed-004 authors' law (:mod:`statelab.envs._household_prior`); ``apart`` the
#: earlier games (never in the goal's type nor the appliance; Zipf over
#: :func:`statelab.envs._household_apart.zipf_order`)
STARTS = ("alfworld", "apart")
#: the act (:func:`statelab.envs._household_prior.never_starts_in`) of each task type
ACTS = ("pick_and_place", "look", "clean", "heat", "cool", "picktwo")


def version(rooms: str, starts: str = "alfworld", places: str = "alfworld") -> int:
    """The games' version of a choice of rooms (:data:`ROOMS`), starts (:data:`STARTS`) and
    places (:data:`PLACES`; ``starts=apart`` games predate the choice: their receptacles stand
    at the layout's poses, whatever ``places`` says)."""
    if rooms not in ROOMS:
        raise ValueError(f"rooms {rooms!r}; one of {ROOMS}")
    if starts not in STARTS:
        raise ValueError(f"starts {starts!r}; one of {STARTS}")
    if places not in PLACES:
        raise ValueError(f"places {places!r}; one of {PLACES}")
    if starts == "alfworld":
        return GEN_VERSION if places == "alfworld" else LAYOUT_VERSION
    return ALFRED_VERSION if rooms == "alfred" else APART_VERSION


def places_of(version: int) -> str:
    """Where a version's receptacles stand (:data:`PLACES`)."""
    return "alfworld" if version >= GEN_VERSION else "layout"


def game_path(
    seed: int,
    task_type: str,
    placement: str = "uniform",
    rooms: str = "alfworld",
    starts: str = "alfworld",
    places: str = "alfworld",
) -> Path:
    tail = "" if placement == "uniform" else f"-{placement}"
    v = version(rooms, starts, places)
    folder = f"v{v}-{rooms}" if v >= LAYOUT_VERSION and rooms != "alfworld" else f"v{v}"
    return cache_root() / folder / f"{seed}-{task_type}{tail}.tw-pddl"


def ensure_game(
    seed: int,
    task_type: str,
    placement: str = "uniform",
    rooms: str = "alfworld",
    starts: str = "alfworld",
    places: str = "alfworld",
) -> Path:
    """The game's file, generated and written (atomically) on first use."""
    path = game_path(seed, task_type, placement, rooms, starts, places)
    if not path.is_file():
        data = generate(seed, task_type, placement, rooms, starts, places)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(path)
    return path


@cache
def test_types() -> tuple[str, ...]:
    """The task type of each of the 134 test games with ``alfworld`` rooms: ALFWorld's mix
    (:data:`TEST_MIX`), dealt round-robin in :data:`TASK_TYPES` order (a type leaves the
    round once its count is dealt), so any prefix of the split is as mixed as it can be."""
    left, out = list(TEST_MIX), []
    while any(left):
        for k, n in enumerate(left):
            if n:
                out.append(TASK_TYPES[k])
                left[k] -= 1
    return tuple(out)


def task_type_of(seed: int, rooms: str = "alfworld") -> str:
    """A seed's task type: ``TASK_TYPES[seed % 6]``, except the test games of ``alfworld``
    rooms, which follow :func:`test_types`."""
    if rooms == "alfworld" and 0 <= seed - TEST_START < len(test_types()):
        return test_types()[seed - TEST_START]
    return TASK_TYPES[seed % len(TASK_TYPES)]


def lamp_type(scene: int, floor: bool = False) -> str | None:
    """The lamp of a look-at task in ``scene``: a desk lamp where the scene has one and a desk,
    side table or dresser to stand on; else, when ``floor``, a floor lamp where it has one;
    else None."""
    objects, _ = scene_data(scene)
    rtypes = {t for _, t, _ in receptacles(scene)}
    if LAMP in objects and rtypes & set(LAMP_RECEPTACLES):
        return LAMP
    if floor and FLOOR_LAMP in objects and rtypes & set(FLOOR_LAMP_RECEPTACLES):
        return FLOOR_LAMP
    return None


def feasible_pairs(
    scene: int, k: int, rooms: str = "alfred", starts: str = "apart"
) -> list[tuple[str, str]]:
    """``(object type, receptacle type)`` pairs of task type ``k`` feasible in ``scene``
    (``receptacle type`` is the lamp for look-at tasks; floor lamps only in ``alfworld``
    rooms' unseen scenes): some receptacle the object may start in (:func:`_start_forbidden`)
    can hold it."""
    c = _constants()
    objects, _ = scene_data(scene)
    rtypes = {t for _, t, _ in receptacles(scene, rooms)}
    otypes = sorted(t for t in set(objects) & pickupable_types())
    val = c.VAL_RECEPTACLE_OBJECTS
    if k in APPLIANCE:
        if APPLIANCE[k] not in rtypes:
            return []
        otypes = [o for o in otypes if o in c.VAL_ACTION_OBJECTS[PROPERTY[k]]]
    if k == 1:
        lamp = lamp_type(scene, floor=rooms == "alfworld" and scene in UNSEEN_SCENES)
        if lamp is None:
            return []
        return [(o, lamp) for o in otypes if any(o in val.get(r, ()) for r in rtypes)]
    pairs = []
    for o in otypes:
        for r in sorted(rtypes):
            if o not in val.get(r, ()) or r == APPLIANCE.get(k):
                continue
            # some receptacle must be able to hold the object at the start
            rest = {t for t in rtypes if o in val.get(t, ())} - _start_forbidden(k, r, starts)
            if rest:
                pairs.append((o, r))
    return pairs


def _start_forbidden(k: int, rtype: str, starts: str) -> set[str | None]:
    """The receptacle types (ALFWorld's spelling) the object of task type ``k`` with goal
    receptacle type ``rtype`` never starts in: ALFWorld's rules
    (:func:`statelab.envs._household_prior.never_starts_in`), or, with ``starts="apart"``,
    the goal's type and the appliance."""
    if starts == "apart":
        return {rtype, APPLIANCE.get(k)}
    low = prior.never_starts_in(ACTS[k], rtype)
    return {t for t in _constants().RECEPTACLES if t.lower() in low}


# -- the game --------------------------------------------------------------------------------
def _draw_scene(rng: random.Random, seed: int, k: int, rooms: str, starts: str) -> int:
    """The game's scene. ``alfred``: one of ALFRED's test scenes for test seeds, its train
    scenes otherwise. ``alfworld``: one of ALFWorld's four unseen scenes for test seeds; for
    train seeds the same draw as ``alfred``, drawn again while it falls on an unseen scene
    (so every other train game is the same as with ``alfred``)."""
    c = _constants()
    test = seed >= TEST_START
    if rooms == "alfworld" and test:
        return rng.choice([s for s in UNSEEN_SCENES if feasible_pairs(s, k, rooms, starts)])
    pool = c.TEST_SCENE_NUMBERS if test else c.TRAIN_SCENE_NUMBERS
    scenes = [s for s in pool if feasible_pairs(s, k, starts=starts)]
    scene = rng.choice(scenes)
    while rooms == "alfworld" and scene in UNSEEN_SCENES:
        scene = rng.choice(scenes)
    return scene


def generate(
    seed: int,
    task_type: str,
    placement: str = "uniform",
    rooms: str = "alfworld",
    starts: str = "alfworld",
    places: str = "alfworld",
) -> dict[str, Any]:
    """The ``.tw-pddl`` game of ``(seed, task_type)``: ``pddl_domain``, ``grammar`` (the goal
    text substituted), ``pddl_problem``, ``solvable`` and our ``statelab`` metadata.

    The task's object starts where ALFWorld's sampler lets it (:func:`_start_forbidden`).
    ``placement="zipf"`` draws each of its instances by the seed-004 law
    (:func:`_zipf_start`, from a generator of its own); everything else is the uniform
    game's. ``rooms`` (:data:`ROOMS`) chooses the scenes (:func:`_draw_scene`);
    ``starts="apart"`` writes the earlier games (:data:`STARTS`), ``places="layout"`` the
    games of version 4 (:data:`PLACES`)."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement {placement!r}; one of {PLACEMENTS}")
    gen_version = version(rooms, starts, places)
    c = _constants()
    k = task_index(task_type)
    rng = random.Random(f"statelab-household-v{RNG_VERSION}-{seed}-{k}")
    scene = _draw_scene(rng, seed, k, rooms, starts)
    otype, rtype = rng.choice(feasible_pairs(scene, k, rooms, starts))
    objects, _ = scene_data(scene)
    recs = receptacles(scene, rooms, places_of(gen_version))
    val = c.VAL_RECEPTACLE_OBJECTS
    forbidden = _start_forbidden(k, rtype, starts)
    zrng = random.Random(f"statelab-household-zipf-{seed}-{k}")
    placed: dict[str, str] = {}  # object uid -> receptacle uid
    types: dict[str, str] = {}
    for t in sorted(set(objects) & pickupable_types()):
        allowed = [u for u, rt, _ in recs if t in val.get(rt, ())]
        if t == otype:
            allowed = [u for u, rt, _ in recs if t in val.get(rt, ()) and rt not in forbidden]
        if not allowed:
            continue
        n = rng.choice((2, 2, 3)) if t == otype and k == 5 else rng.choice((1, 1, 1, 2, 2, 3))
        for _ in range(n):
            uid = made_up_uid(rng, t)
            if t == otype and placement == "zipf" and starts == "apart":
                placed[uid] = apart.zipf_choice(rng, t, allowed, recs)
            elif t == otype and placement == "zipf":  # its own generator: every other
                uniform = rng.choice(allowed)  # object is where the uniform game has it
                placed[uid] = _zipf_start(zrng, k, rtype, t, recs) or uniform
            else:
                placed[uid] = rng.choice(allowed)
            types[uid] = t
    lamp, toggle = None, rtype if k == 1 else LAMP
    if k == 1:
        lamp = made_up_uid(rng, toggle)
        holders = LAMP_RECEPTACLES if toggle == LAMP else FLOOR_LAMP_RECEPTACLES
        placed[lamp] = rng.choice([u for u, rt, _ in recs if rt in holders])
        types[lamp] = toggle
    from alfworld.gen import goal_library

    spec = goal_library.gdict[TASK_TYPES[k]]
    words = {"obj": otype.lower(), "recep": rtype.lower(), "toggle": toggle.lower()}
    goal = rng.choice(spec["templates"]).format(**words)
    pddl_goal = spec["pddl"].format(obj=otype, recep=rtype, toggle=toggle).replace("#", "-")
    domain, grammar = logic()
    names = display_names([u for u, _, _ in recs] + list(placed))
    meta = {
        "version": gen_version, "seed": seed, "task_type": TASK_TYPES[k], "scene": scene,
        "goal": goal, "object_type": otype, "receptacle_type": rtype,
        "lamp": names[lamp] if lamp else None,
        "receptacles": {names[u]: rt for u, rt, _ in recs},
        "objects": {names[u]: types[u] for u in placed},
        "placements": {names[u]: names[r] for u, r in placed.items()},
        "can_contain": {rt: sorted(val.get(rt, ())) for rt in sorted({rt for _, rt, _ in recs})},
    }  # fmt: skip
    return {
        "pddl_domain": domain,
        "grammar": grammar.replace("UNKNOWN GOAL", goal),
        "pddl_problem": problem(seed, recs, placed, types, pddl_goal),
        "solvable": True,
        "statelab": meta,
    }


def _zipf_start(
    rng: random.Random, k: int, rtype: str, otype: str, recs: list[tuple[str, str, str]]
) -> str | None:
    """A receptacle uid for one instance of the task's object by the seed-004 authors' law
    (:func:`statelab.envs._household_prior.draw`: a receptacle type by its Zipf weight, the
    goal's type dropped except for look-at tasks, then one of its instances uniformly); None
    when no ranked type is in the scene (the caller then draws uniformly, as the authors keep
    ALFWorld's game). The goal's type being dropped, a put game is never won at the start."""
    names = display_names([u for u, _, _ in recs])
    uid_of = {names[u]: u for u, _, _ in recs}
    by_type = prior.instances_by_type(sorted(uid_of))
    weights = prior.zipf_type_weights(
        otype, by_type, prior.zipf_exclusions(ACTS[k], rtype if k != 1 else "")
    )
    return uid_of[prior.draw(rng, weights, by_type)] if weights else None
