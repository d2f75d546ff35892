"""statelab's reproduction of seed 004, Belief-based world models, a plugin package: the lab
(``src/statelab``) never imports it; it registers what it adds through the
``statelab.plugins`` entry point (:func:`statelab_seed004.plugin.register`)."""
