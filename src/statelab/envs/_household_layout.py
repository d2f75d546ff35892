"""A scene's receptacles and where the agent stands at each, from the ``alfworld`` wheel's
layouts (``alfworld/gen/layouts``): ``FloorPlanN-objects.json`` (the object types of a scene),
``FloorPlanN-openable.json`` (a receptacle's Unity id, which spells its position, and the
floor point the agent stands on to reach it) and ``FloorPlanN-layout.npy`` (the reachable
floor points).

**Places.** ALFWorld's generator (``TaskGameStateFullKnowledge.update_receptacle_nearest_points``
and ``get_obj_coords``) reads only the point's x and z from ``-openable.json``; the agent's
heading there (towards the receptacle's position) and its camera angle (towards the
receptacle's bottom, from the camera height, in 15-degree steps clipped to -30..60, with
``FORCED_HORIZON_OBJS``; pulled back one step when closer than 0.5 m) it computes.
:func:`alfworld_place` does the same from the id's position, so two receptacles share a
place exactly where ALFWorld's games give them one (two drawers one above the other seen from
one point at one angle; shelves of one stack). ``places="layout"`` (games version 4 and
earlier) took the heading and angle stored in ``-openable.json`` as they are, which gives
receptacles at one point one place more often than ALFWorld does. Checked on two ALFRED
problem files: every receptacle in both with the wheel's id (36 of 37) gets ALFWorld's place;
the one miss is a sink basin, whose own position (below the sink's, which its id spells) the
layouts do not hold.
"""

from __future__ import annotations

import json
import math
import random
from functools import cache
from importlib import resources
from types import SimpleNamespace
from typing import Any

#: where the agent stands at a receptacle: ALFWorld's computed place, or the layout's stored
#: heading and angle (games version 4 and earlier)
PLACES = ("alfworld", "layout")
#: the agent's height in AI2-THOR's scenes (its ``metadata['agent']['position']['y']``)
AGENT_HEIGHT = 0.9009995
#: receptacle instances ALFWorld's unseen games list in these scenes that the wheel's layouts
#: lack. The wheel's ``FloorPlanN-openable.json`` holds one interaction pose per receptacle
#: *that has one*, and ``FloorPlanN-objects.json`` only the object types (no counts), so
#: instances without a stored pose are missing. Counted from ALFWorld's opening room text:
#: scene 10 lists cabinet 1-6 (the layout 3), 308 drawer 1-6 and shelf 1-6 (3 and 5), 424
#: handtowelholder 1-2 (1); 219 matches (27).
EXTRA_RECEPTACLES: dict[int, dict[str, int]] = {
    10: {"Cabinet": 3},
    308: {"Drawer": 3, "Shelf": 1},
    424: {"HandTowelHolder": 1},
}
LAMP = "DeskLamp"
LAMP_RECEPTACLES = ("Desk", "SideTable", "Dresser")
FLOOR_LAMP = "FloorLamp"


@cache
def constants() -> Any:
    """``alfworld.gen.constants`` (imported on first use)."""
    import alfworld.gen.constants as c

    return c


@cache
def logic() -> tuple[str, str]:
    """ALFWorld's PDDL domain and text grammar."""
    data = resources.files("alfworld") / "data"
    return (data / "alfred.pddl").read_text(), (data / "alfred.twl2").read_text()


@cache
def scene_data(scene: int) -> tuple[list[str], dict[str, list[float]]]:
    """A scene's object types and its ``-openable.json`` (id -> [x, z, heading, angle])."""
    layouts = resources.files("alfworld") / "gen" / "layouts"
    objects = json.loads((layouts / f"FloorPlan{scene}-objects.json").read_text())
    openable = json.loads((layouts / f"FloorPlan{scene}-openable.json").read_text())
    return objects, openable


@cache
def floor_points(scene: int) -> tuple[tuple[int, int], ...]:
    """The scene's reachable floor points in grid units (ALFWorld's ``Graph.points``)."""
    import numpy as np

    layouts = resources.files("alfworld") / "gen" / "layouts"
    with (layouts / f"FloorPlan{scene}-layout.npy").open("rb") as f:
        pts = np.round(np.load(f) / constants().AGENT_STEP_SIZE).astype(np.int32)
    return tuple((int(x), int(z)) for x, z in pts)


_MANGLE = (("-", "_minus_"), ("|", "_bar_"), ("+", "_plus_"), (".", "_dot_"), (",", "_comma_"))


def mangle(uid: str) -> str:
    """A Unity id as ALFWorld writes it in PDDL (``PlannedGameState.fix_pddl_str_chars``)."""
    for a, b in _MANGLE:
        uid = uid.replace(a, b)
    return uid


def layout_place(x: float, z: float, rot: float, horizon: float) -> str:
    """A location id from a stored layout pose as it is (``places="layout"``)."""
    return f"loc|{round(x * 4)}|{round(z * 4)}|{int(rot) // 90}|{int(horizon)}"


def _heading(dx: float, dz: float) -> int:
    if abs(dx) > abs(dz):
        return 1 if dx > 0 else 3
    return 0 if dz > 0 else 2


def _pull_back(scene: int, point: tuple[float, float], heading: int) -> tuple[int, int] | None:
    """The floor point one step back from ``point`` (away from the heading), if reachable."""
    dx, dz = ((0, -1), (-1, 0), (0, 1), (1, 0))[heading]
    back = (int(point[0] + dx), int(point[1] + dz))
    return back if back in set(floor_points(scene)) else None


def alfworld_place(scene: int, uid: str, stored: list[float], rtype: str) -> str:
    """The location ALFWorld's generator gives receptacle ``uid`` (its ``get_obj_coords``):
    the stored point's x and z, the heading towards the receptacle, the camera angle towards
    its bottom (the position ``uid`` spells)."""
    c = constants()
    step = c.AGENT_STEP_SIZE
    x, y, z = (float(v) for v in uid.split("|")[1:4])
    cx, cz = x / step, z / step
    px, pz = stored[0] / step, stored[1] / step
    camera = AGENT_HEIGHT + c.CAMERA_HEIGHT_OFFSET
    dx, dz = cx - px, cz - pz
    heading = _heading(dx, dz)
    if math.sqrt(dx * dx + dz * dz + (camera / step - y / step) ** 2) * step < 0.5:
        back = _pull_back(scene, (px, pz), heading)
        if back is not None:
            px, pz = back
            dx, dz = cx - px, cz - pz
    flat = max(abs(dx), abs(dz)) * step
    steps = round(math.degrees(math.atan2(camera - y, flat)) / c.HORIZON_GRANULARITY)
    angle = int(min(max(steps * c.HORIZON_GRANULARITY, -30), 60))
    forced = c.FORCED_HORIZON_OBJS
    angle = forced.get((rtype, scene), forced.get((rtype, None), angle))
    return f"loc|{int(px)}|{int(pz)}|{heading}|{angle}"


def receptacles(
    scene: int, rooms: str = "alfred", places: str = "layout"
) -> list[tuple[str, str, str]]:
    """``(unity id, type, location id)`` of every receptacle instance of a scene.

    The scene's ``-openable.json`` instances (``Sink``/``Bathtub`` become the
    ``SinkBasin``/``BathtubBasin`` receptacles, as ALFWorld names them) at their place
    (:data:`PLACES`), plus one instance (four stove burners) of each receptacle type of
    ``-objects.json`` with none there (garbage can, toaster, ...), each at a place of its own;
    with ``alfworld`` rooms, also the instances ALFWorld lists that the layouts lack
    (:data:`EXTRA_RECEPTACLES`), each at a place of its own."""
    if places not in PLACES:
        raise ValueError(f"places {places!r}; one of {PLACES}")
    c = constants()
    objects, openable = scene_data(scene)
    movable = set(c.MOVABLE_RECEPTACLES)
    out: list[tuple[str, str, str]] = []
    for uid, pose in sorted(openable.items()):
        rtype = uid.split("|")[0]
        if rtype in ("Sink", "Bathtub"):
            rtype += "Basin"
            uid = f"{uid}|{rtype}"
        if rtype in c.RECEPTACLES and rtype not in movable:
            where = (
                alfworld_place(scene, uid, pose, rtype)
                if places == "alfworld"
                else layout_place(*pose)
            )
            out.append((uid, rtype, where))
    have = {t for _, t, _ in out}
    extra = sorted(t for t in set(objects) if t in c.RECEPTACLES and t not in movable | have)
    for i, rtype in enumerate(extra):
        for k in range(4 if rtype == "StoveBurner" else 1):
            uid = f"{rtype}|+0{k}.00|+00.{i:02d}|+00.00"
            if rtype.endswith("Basin"):  # as the scene's own basins are named ("Sink|...|
                # SinkBasin"): ALFWorld's demangler appends "basin" to any basin's first part
                uid = f"{rtype[: -len('Basin')]}|+0{k}.00|+00.{i:02d}|+00.00|{rtype}"
            out.append((uid, rtype, f"loc|{50 + i}|{50 + k}|0|30"))
    extra_instances = EXTRA_RECEPTACLES.get(scene, {}) if rooms == "alfworld" else {}
    for i, (rtype, n) in enumerate(sorted(extra_instances.items())):
        for k in range(n):  # made-up ids and places (only the names are seen)
            uid = f"{rtype}|+09.{k:02d}|+00.{i:02d}|+09.00"
            out.append((uid, rtype, f"loc|{80 + i}|{80 + k}|0|30"))
    return out


def shared_places(recs: list[tuple[str, str, str]]) -> list[list[str]]:
    """The groups (two or more unity ids, sorted) of ``recs`` that share one location."""
    by: dict[str, list[str]] = {}
    for uid, _, loc in recs:
        by.setdefault(loc, []).append(uid)
    return sorted(sorted(g) for g in by.values() if len(g) > 1)


def made_up_uid(rng: random.Random, otype: str) -> str:
    """A Unity-like id for a placed object (the position is made up; only names derive from
    it)."""
    x, y, z = rng.uniform(-3, 3), rng.uniform(0, 2), rng.uniform(-3, 3)
    return f"{otype}|{x:+06.2f}|{y:+06.2f}|{z:+06.2f}"


def display_names(uids: list[str]) -> dict[str, str]:
    """Unity id -> the name the game shows, computed by ALFWorld's own ``Demangler`` on the
    lower-cased ids (Fast Downward lower-cases every PDDL name)."""
    from alfworld.agents.utils.misc import Demangler

    low = {mangle(u).lower(): u for u in uids}
    dm = Demangler(game_infos={k: SimpleNamespace(id=k) for k in low})
    return {u: dm.demangle_alfred_name(k) for k, u in low.items()}


def pickupable_types() -> set[str]:
    """Object types ALFWorld places in receptacles (``VAL_RECEPTACLE_OBJECTS``), unsliced."""
    c = constants()
    every = set().union(*c.VAL_RECEPTACLE_OBJECTS.values())
    return {t for t in every if not t.endswith("Sliced") and t in c.OBJECTS}
