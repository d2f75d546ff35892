"""BALROG's ``open`` level (``babyai/open:levels=balrog``), drawn in the order its sampler draws
it (BartekCupial/Minigrid's ``BabyAI-MixedTrainLocal-v0``, as seed 004's authors play it), so a
seed gives BALROG's level: mission, grid and start.

Each try lays the two rooms out afresh (the room grid's own layout: the door position between
them), draws the door's colour (yellow, green, blue or purple), a room and a side until the
side has a neighbour (the locked door there), a room other than the locked one for the key, then
the distractors of the rooms other than the locked one, the agent in a random room until it is
not the locked one, and whether the mission names the colour; a try whose objects are not all
reachable, or whose mission is excluded, is drawn again.
"""

from __future__ import annotations

from typing import Any

from minigrid.core.roomgrid import RoomGrid
from minigrid.envs.babyai.core.verifier import ObjDesc, OpenInstr

COLOURS = ["yellow", "green", "blue", "purple"]


def _locked_door(level: Any, colour: str) -> Any:
    """Lock a door of a random room on a side that has a neighbour; the locked room."""
    while True:
        i = level._rand_int(0, level.num_cols)
        j = level._rand_int(0, level.num_rows)
        side = level._rand_int(0, 4)
        room = level.get_room(i, j)
        if room.neighbors[side] is not None:
            level.add_door(i, j, side, color=colour, locked=True)
            return room


def _key_elsewhere(level: Any, locked: Any, colour: str) -> None:
    while True:
        i = level._rand_int(0, level.num_cols)
        j = level._rand_int(0, level.num_rows)
        if level.get_room(i, j) is not locked:
            level.add_object(i, j, "key", colour)
            return


def balrog_open(level: Any, excluded: tuple[str, ...]) -> None:
    """Make ``level`` (a two-room minigrid RoomGridLevel) BALROG's open level."""
    while True:
        RoomGrid._gen_grid(level, level.width, level.height)
        colour = level._rand_elem(COLOURS)
        locked = _locked_door(level, colour)
        _key_elsewhere(level, locked, colour)
        level.connect_all()
        for j in range(level.num_rows):
            for i in range(level.num_cols):
                if level.get_room(i, j) is not locked:
                    level.add_distractors(i, j, num_distractors=level.num_dists, all_unique=False)
        while True:
            level.place_agent()
            if level.room_from_pos(*level.agent_pos) is not locked:
                break
        reachable = level.check_objs_reachable(raise_exc=False)
        level.instrs = OpenInstr(ObjDesc("door", level._rand_elem([None, colour])))
        if reachable and not any(x in level.instrs.surface(level) for x in excluded):
            return


__all__ = ["balrog_open"]
