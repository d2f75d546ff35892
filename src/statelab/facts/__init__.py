"""Facts: the structured state kinds that envs emit, each with its renderers (formats).

One module per facts kind (:mod:`~statelab.facts.pegs`, :mod:`~statelab.facts.messenger`,
:mod:`~statelab.facts.egoview`, :mod:`~statelab.facts.traffic`, :mod:`~statelab.facts.text`)
holds the dataclass, its renderers for the formats of the structure axis and its close-up, if
any. Envs and the representation meet here: an env says what kind of facts it has (and shows
its default format's rendering as its own text), a format says which kinds it renders. This
layer imports only :mod:`statelab.core`.
"""

from statelab.facts._closeup import close_up
from statelab.facts._formats import (
    FORMATS,
    Formatter,
    check,
    coordinates,
    dict_list,
    formats_for,
    formatter,
    matrix,
    natural,
    natural_pos,
    render,
    supports,
    symbolic,
    tagged_list,
)

# facts kinds (one line each; importing a module registers its renderers)
from statelab.facts.egoview import EgoViewFacts
from statelab.facts.messenger import MessengerFacts
from statelab.facts.pegs import PegFacts
from statelab.facts.text import TextFacts
from statelab.facts.traffic import TrafficFacts

__all__ = [
    "FORMATS",
    "EgoViewFacts",
    "Formatter",
    "MessengerFacts",
    "PegFacts",
    "TextFacts",
    "TrafficFacts",
    "check",
    "close_up",
    "coordinates",
    "dict_list",
    "formats_for",
    "formatter",
    "matrix",
    "natural",
    "natural_pos",
    "render",
    "supports",
    "symbolic",
    "tagged_list",
]
