"""The PDDL problem of a ``household`` game, laid out as ALFWorld writes it."""

from __future__ import annotations

from statelab.envs._household_layout import constants, mangle

#: where the agent starts: a place of its own ("the middle of a room")
AGENT_START = "loc|-99|-99|0|30"


def problem(
    seed: int,
    recs: list[tuple[str, str, str]],
    placed: dict[str, str],
    types: dict[str, str],
    pddl_goal: str,
) -> str:
    """The PDDL problem, laid out as ALFWorld's ``PlannedGameState.state_to_pddl`` does."""
    c = constants()
    m = mangle
    loc_of = {u: loc for u, _, loc in recs}
    rtypes = sorted({rt for _, rt, _ in recs})
    otypes = sorted(set(types.values()))
    locs = sorted({loc for _, _, loc in recs} | {AGENT_START})
    declared = (
        ["agent1 - agent"]
        + [f"{t}Type - otype" for t in otypes]
        + [f"{t}Type - rtype" for t in rtypes]
        + [f"{m(u)} - object" for u in sorted(placed)]
        + [f"{m(u)} - receptacle" for u, _, _ in recs]
        + [f"{m(loc)} - location" for loc in locs]
    )
    init = [f"(atLocation agent1 {m(AGENT_START)})"]
    for u, rt, loc in recs:
        init.append(f"(receptacleType {m(u)} {rt}Type)")
        init.append(f"(receptacleAtLocation {m(u)} {m(loc)})")
        if rt in c.OPENABLE_CLASS_LIST:
            init.append(f"(openable {m(u)})")
    for rt in rtypes:
        held = c.VAL_RECEPTACLE_OBJECTS.get(rt, ())
        init += [f"(canContain {rt}Type {ot}Type)" for ot in otypes if ot in held]
    for u in sorted(placed):
        t = types[u]
        init.append(f"(objectType {m(u)} {t}Type)")
        init.append(f"(inReceptacle {m(u)} {m(placed[u])})")
        init.append(f"(objectAtLocation {m(u)} {m(loc_of[placed[u]])})")
        if t in c.VAL_ACTION_OBJECTS["Toggleable"]:
            init.append(f"(toggleable {m(u)})")
            continue
        init.append(f"(pickupable {m(u)})")
        for prop in ("Cleanable", "Heatable", "Coolable"):
            if t in c.VAL_ACTION_OBJECTS[prop]:
                init.append(f"({prop.lower()} {m(u)})")
    body = "\n        ".join(declared)
    facts = "\n        ".join(init)
    return (
        f"\n(define (problem plan_statelab_{seed})\n(:domain alfred)\n"
        f"(:objects\n        {body}\n        )\n\n(:init\n        {facts}\n        )\n{pddl_goal}"
    )
