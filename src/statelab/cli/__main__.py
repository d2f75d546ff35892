"""``python -m statelab.cli``: the command line (:mod:`statelab.cli`)."""

from statelab.cli import main

if __name__ == "__main__":  # pragma: no cover
    main()
