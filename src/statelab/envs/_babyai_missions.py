"""The five BabyAI tasks of :mod:`statelab.envs.babyai` as one minigrid level
(:class:`LocalLevel`): its rooms (one 8x8 room; two side by side for ``open``), the objects the
mission needs plus ``num_dists`` distractors, and the mission, drawn again until it is valid,
every object is reachable and it names nothing BALROG's train split leaves out."""

from __future__ import annotations

from typing import Any

from minigrid.core.roomgrid import RoomGrid
from minigrid.envs.babyai.core.roomgrid_level import RejectSampling, RoomGridLevel
from minigrid.envs.babyai.core.verifier import (
    AfterInstr,
    BeforeInstr,
    GoToInstr,
    Instr,
    ObjDesc,
    OpenInstr,
    PickupInstr,
    PutNextInstr,
)

from statelab.envs._babyai_levels import balrog_open

#: BALROG's train split leaves these out of missions
EXCLUDED = ("yellow box", "red key", "red door", "green ball", "grey door")
#: BALROG's ``num_dists``: no distractors (``babyai/<task>:dists=N`` adds N)
DEFAULT_DISTRACTORS = 0


class LocalLevel(RoomGridLevel):
    """One BALROG BabyAI task as a minigrid level (8x8 rooms; two of them for ``open``) with
    ``num_dists`` distractors besides the objects the mission needs."""

    instrs: Instr

    def __init__(
        self,
        task: str,
        max_steps: int,
        render_mode: str | None = None,
        num_dists: int = DEFAULT_DISTRACTORS,
        levels: str = "statelab",
    ) -> None:
        self.task = task
        self.num_dists = num_dists
        self.levels = levels
        super().__init__(
            room_size=8,
            num_rows=1,
            num_cols=2 if task == "open" else 1,
            max_steps=max_steps,
            render_mode=render_mode,
        )

    # RoomGridLevel's own loop prints "Sampling rejected: ..." on every redraw; this one is quiet
    def _gen_grid(self, width: int, height: int) -> None:
        while True:
            try:
                RoomGrid._gen_grid(self, width, height)
                self.gen_mission()
                self.validate_instrs(self.instrs)
                if any(s in self.instrs.surface(self) for s in EXCLUDED):
                    raise RejectSampling("excluded mission")
            except (RecursionError, RejectSampling):
                continue
            break
        self.surface = self.instrs.surface(self)
        self.mission = self.surface

    def gen_mission(self) -> None:
        if self.task == "open" and self.levels == "balrog":
            balrog_open(self, EXCLUDED)
            return
        _MISSIONS[self.task](self)

    # -- the five missions ------------------------------------------------------------------
    def _objects(self, n: int) -> list[Any]:
        self.place_agent()
        objs = self.add_distractors(num_distractors=n, all_unique=False)
        if not self.check_objs_reachable(raise_exc=False):
            raise RejectSampling("unreachable object")
        return list(objs)

    def _other(self, objs: list[Any], first: Any) -> Any:
        """A random object; not one described like ``first`` when ``first`` is unique."""
        twins = [o for o in objs if (o.type, o.color) == (first.type, first.color)]
        while True:
            other = self._rand_elem(objs)
            if len(twins) > 1 or (other.type, other.color) != (first.type, first.color):
                return other

    def _goto(self) -> None:
        obj = self._rand_elem(self._objects(self.num_dists + 1))
        self.instrs = GoToInstr(ObjDesc(obj.type, obj.color))

    def _pickup(self) -> None:
        obj = self._rand_elem(self._objects(self.num_dists + 1))
        self.instrs = PickupInstr(ObjDesc(obj.type, obj.color))

    def _putnext(self) -> None:
        objs = self._objects(self.num_dists + 2)
        move = self._rand_elem(objs)
        fixed = self._other(objs, move)
        self.instrs = PutNextInstr(ObjDesc(move.type, move.color), ObjDesc(fixed.type, fixed.color))

    def _pickup_seq_goto(self) -> None:
        objs = self._objects(self.num_dists + 2)
        a = self._rand_elem(objs)
        b = self._other(objs, a)
        pick, go = PickupInstr(ObjDesc(a.type, a.color)), GoToInstr(ObjDesc(b.type, b.color))
        self.instrs = BeforeInstr(pick, go) if self._rand_bool() else AfterInstr(go, pick)

    def _open(self) -> None:
        locked_i = self._rand_int(0, 2)
        colour = self._rand_elem(["yellow", "green", "blue", "purple"])
        # room 0's door 0 is its right wall, room 1's door 2 its left: the same wall
        self.add_door(locked_i, 0, 0 if locked_i == 0 else 2, color=colour, locked=True)
        self.add_object(1 - locked_i, 0, "key", colour)
        self.add_distractors(1 - locked_i, 0, num_distractors=self.num_dists, all_unique=False)
        self.place_agent(1 - locked_i, 0)
        if not self.check_objs_reachable(raise_exc=False):
            raise RejectSampling("unreachable object")
        self.instrs = OpenInstr(ObjDesc("door", self._rand_elem([None, colour])))


_MISSIONS = {
    "goto": LocalLevel._goto,
    "open": LocalLevel._open,
    "pickup": LocalLevel._pickup,
    "pickup-seq-goto": LocalLevel._pickup_seq_goto,
    "putnext": LocalLevel._putnext,
}
