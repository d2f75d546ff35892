"""The few axis values that mean something other than a component, named once.

- :data:`MODEL_FREE` (``"-"``): the value of every model axis (and of the axes that do not
  apply) in a run without a model, the expert row;
- :data:`ACTING` (``"acting"``): the writer axis's default, the acting model writes the memory;
- :data:`MODEL_AXES`: the axes whose values are model specs (stored without credentials).
"""

from __future__ import annotations

MODEL_FREE = "-"
ACTING = "acting"
MODEL_AXES: tuple[str, ...] = ("model", "writer", "compressor", "scorer")

__all__ = ["ACTING", "MODEL_AXES", "MODEL_FREE"]
