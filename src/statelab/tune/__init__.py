"""``statelab tune``: successive halving over representations with paired seeds."""
