"""The structure axis (seed 000, Table 1 and section 3.2): how facts become text.

The formats, their registry and each facts kind's renderers live in the facts layer
(:mod:`statelab.facts`); the representation reads them from here.
"""


__all__ = []
