"""Seed 003 training: reader behaviour cloning and DSSR (the writer trained from the frozen
reader's loss). Needs the ``train`` extra."""
