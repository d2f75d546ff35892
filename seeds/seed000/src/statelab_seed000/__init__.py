"""statelab's reproduction of seed 000, State Design Matters, a plugin package: the lab
(``src/statelab``) never imports it; it registers what it adds through the
``statelab.plugins`` entry point (:func:`statelab_seed000.plugin.register`)."""
