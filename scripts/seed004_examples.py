"""Write seed 004's household in-context examples, one per task type: with a query (the
world model's answer with and without probabilities) into ``src/statelab/worldmodels/
examples/``, and without one (the plain example) into ``src/statelab/agents/seed004_examples/``.

    python scripts/seed004_examples.py          # (re)write the stored texts
    python scripts/seed004_examples.py --check  # exit 1 if regenerating changes a byte
"""

from __future__ import annotations

import sys
from pathlib import Path

from statelab.worldmodels.examples import household

HERE = Path(household.__file__).parent
#: the plain examples (no query) live with the agents, which show them without a world model
PLAIN_HERE = HERE.parents[1] / "agents" / "seed004_examples"


def main(check: bool = False) -> int:
    changed = []
    for task_type in household.TASK_TYPES:
        for mode in (*household.MODES, household.PLAIN):
            text = household.build(task_type, mode)
            folder = PLAIN_HERE if mode == household.PLAIN else HERE
            path = folder / household.file_name(task_type, "belief")
            if mode != household.PLAIN:
                path = folder / household.file_name(task_type, mode)
            if not path.is_file() or path.read_text() != text:
                changed.append(path.name)
                if not check:
                    path.write_text(text)
    print("changed:" if changed else "unchanged", *changed)
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main(check="--check" in sys.argv[1:]))
