"""The world-model contract (seed 004): a component that answers questions during *decide*,
may reject an action in *validate*, and updates in *update* (``after_step``).

A world model reads observations only, never the privileged view (unless tagged
``reads-privileged``, which no belief model is).
"""

from __future__ import annotations

from statelab.core._component import Component


class WorldModel(Component):
    """Base of the ``worldmodel`` axis; every hook is optional (``none`` overrides none)."""

    name: str = "worldmodel"
    #: seed 004's derail rule: the episode ends after this many no-ops (:meth:`Env.outcome`),
    #: format errors or queries in a row (``None``: no such rule)
    derail_limit: int | None = None
    #: how many proposals in a row it may reject at one decision before the next goes to the
    #: env unchecked (``None``: the episode's default, 3); WALL-E's is 5
    max_rejections: int | None = None
