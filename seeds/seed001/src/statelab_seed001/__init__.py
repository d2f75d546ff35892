"""statelab's reproduction of seed 001, Vector-quantized geodesics, a plugin package: the lab
(``src/statelab``) never imports it; it registers what it adds through the
``statelab.plugins`` entry point (:func:`statelab_seed001.plugin.register`)."""
