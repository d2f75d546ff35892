"""statelab's reproduction of seed 002, StateAct, a plugin package: the lab
(``src/statelab``) never imports it; it registers what it adds through the
``statelab.plugins`` entry point (:func:`statelab_seed002.plugin.register`)."""
