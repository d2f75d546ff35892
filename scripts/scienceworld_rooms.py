"""Derive ScienceWorld's object -> starting-room table from the ``scienceworld`` package.

For every task of :data:`statelab.envs.scienceworld.TASKS` and every one of its variations
(train, dev and test), the script loads the variation as the env plays it (its default
simplifications), reads the simulator's object tree (``getObjectTree``: the world the task's
builder made, before any move) and records, for each object under each of the ten rooms (at
any depth: on a table, in a cupboard, in a pot), every name the parser knows it by
(``getAllObjectIdsTypesReferentsLUTJSON``: 'apple seed', 'plant', 'living thing' for a seed;
names that start with a device part left out; an object that is no 'living thing' is also a
'non-living thing', the find task's category that no object is called) and the room it starts
in. The table written is
``{form: {name: [rooms]}}``: per task form (the family of tasks a description's opening
names: boil, melt, freeze and change-state are "state") and over every task (``"*"``), the
union over the variations, rooms in the adapter's order; the seed-004 world model reads it as
its room prior.

    PYTHONPATH=src python scripts/scienceworld_rooms.py            # every variation, 2 JVMs
    PYTHONPATH=src python scripts/scienceworld_rooms.py --check 3  # compare 3 per task
    PYTHONPATH=src python scripts/scienceworld_rooms.py --from-worlds W.jsonl  # from --worlds W

It starts at most two simulators (JVMs, about 300 MB each) and takes about 15 minutes.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from statelab.envs import _scienceworld_server as server
from statelab.envs.scienceworld import DEFAULT_SIMPLIFY, TASKS, simplifications
from statelab.worldmodels.adapters._scienceworld_rooms import ALL, ROOM_TABLE, ROOMS
from statelab.worldmodels.adapters._scienceworld_text import parse_goal

#: the category every organism answers to, and the one the package names no object by
LIVING, NON_LIVING = "living thing", "non-living thing"
#: parts of devices (wires' ends, a battery's poles), not things an agent looks for
_PARTS = re.compile(r"\b(?:terminal|anode|cathode)\b|\bcontaining\b")


def uuids_in(node: dict[str, Any]) -> set[str]:
    """The ids of every object under ``node`` (its contents, recursively), the agent and
    what it carries left out."""
    out: set[str] = set()
    for child in node.get("contents", {}).values():
        if child.get("name") == "agent":
            continue
        out.add(str(child["uuid"]))
        out |= uuids_in(child)
    return out


def referents(lut: dict[str, Any], uuid: str) -> set[str]:
    """The names the parser knows an object by ('adult bee', 'bee', 'living thing', ...),
    numbered instances ('bee 0', 'flower pot 3') under their type's name; names that start
    with a device part (a wire's 'terminal 1') or 'containing' left out."""
    out: set[str] = set()
    for r in lut.get(uuid, {}).get("referents", []):
        name = re.sub(r" \d+$", "", " ".join(str(r).lower().split()))
        if name and not name.startswith("error") and not _PARTS.match(name):
            out.add(name)
    return out


def starting_rooms(sim: server.Simulator, task: str, var: int, tmp: str) -> dict[str, Any]:
    """{room: sorted names of the objects in it} of one variation's starting world (under
    ``"rooms"``), its task form (``"form"``) and task description (``"desc"``)."""
    flags = simplifications(task, DEFAULT_SIMPLIFY.get(task, "anchor"))
    sim.load(task, var, flags, gold=False)
    desc = sim.task_description().strip()
    form = parse_goal(desc).form
    msg = sim.server.getObjectTree(tmp)
    if msg:
        raise RuntimeError(str(msg))
    tree = json.loads((Path(tmp) / "objectTree.json").read_text())
    lut = json.loads(str(sim.server.getAllObjectIdsTypesReferentsLUTJSON()))
    rooms = {}
    for child in tree["contents"].values():
        if child.get("name") in ROOMS:
            names: set[str] = set()
            for uuid in uuids_in(child):
                known = referents(lut, uuid)
                if known and LIVING not in known:
                    known.add(NON_LIVING)  # the find task's category, a name no object has
                names |= known
            rooms[child["name"]] = sorted(names)
    return {"form": form, "desc": desc, "rooms": rooms}


def _work(jobs: list[tuple[str, int]]) -> list[tuple[str, int, dict[str, list[str]]]]:
    os.nice(10)
    server.JAVA_OPTS.append("-Xmx1g")  # many loads: keep each JVM's heap small
    sw = server.acquire()
    sim = server.Simulator(sw)
    out = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for task, var in jobs:
                out.append((task, var, starting_rooms(sim, task, var, tmp)))
    finally:
        server._discard(sw)
    return out


def derive(workers: int = 2, per_task: int | None = None) -> list[tuple[str, int, Any]]:
    """Every (task, variation, rooms) of the package (the first ``per_task`` only, if set)."""
    jobs = [(t, v) for t, (*_, n) in TASKS.items() for v in range(n)]
    if per_task is not None:
        jobs = [(t, v) for t, v in jobs if v < per_task]
    chunks = [jobs[i::workers] for i in range(workers)]
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        parts = pool.map(_work, chunks)
    return sorted(x for part in parts for x in part)


def table(worlds: list[tuple[str, int, dict[str, Any]]]) -> dict[str, dict[str, list[str]]]:
    """{task form, and :data:`ALL`: {name: rooms it starts in, in :data:`ROOMS` order}}."""
    found: dict[str, dict[str, set[str]]] = {}
    for _, _, world in worlds:
        for form in (world["form"], ALL):
            got = found.setdefault(form, {})
            for room, names in world["rooms"].items():
                for n in names:
                    got.setdefault(n, set()).add(room)
    return {
        form: {n: [r for r in ROOMS if r in got[n]] for n in sorted(got)}
        for form, got in sorted(found.items())
    }


def main(argv: list[str] | None = None) -> int:
    """Write the table (or, with ``--check N``, compare N variations per task against it)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=2, choices=(1, 2))
    ap.add_argument("--check", type=int, default=None, metavar="N")
    ap.add_argument(
        "--worlds", type=Path, default=None, help="also write every world and its task (jsonl)"
    )
    ap.add_argument("--out", type=Path, default=ROOM_TABLE)
    ap.add_argument(
        "--from-worlds", type=Path, default=None, help="rebuild from a --worlds file (no loads)"
    )
    args = ap.parse_args(argv)
    if args.from_worlds:  # the forms re-read from each task description
        worlds = []
        for line in args.from_worlds.read_text().splitlines():
            w = json.loads(line)
            w["form"] = parse_goal(w["desc"]).form
            worlds.append((w.pop("task"), w.pop("variation"), w))
    else:
        worlds = derive(args.workers, args.check)
    if args.worlds:
        with args.worlds.open("w") as f:
            for t, v, world in worlds:
                f.write(json.dumps({"task": t, "variation": v, **world}) + "\n")
    got = table(worlds)
    if args.check is not None:
        stored = json.loads(ROOM_TABLE.read_text())
        bad = [
            (f, n)
            for f, t in got.items()
            for n, rs in t.items()
            if not set(rs) <= set(stored.get(f, {}).get(n, []))
        ]
        print(f"{len(got[ALL])} names in {len(worlds)} worlds; not in the stored table: {bad}")
        return 1 if bad else 0
    args.out.write_text(json.dumps(got, sort_keys=True, separators=(",", ":")) + "\n")
    print(f"{len(got[ALL])} names, {len(got) - 1} forms, from {len(worlds)} worlds -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
