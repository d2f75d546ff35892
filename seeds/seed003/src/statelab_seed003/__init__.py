"""statelab's reproduction of seed 003, Decision-sufficient state, a plugin package: the lab
(``src/statelab``) never imports it; it registers what it adds through the
``statelab.plugins`` entry point (:func:`statelab_seed003.plugin.register`)."""
