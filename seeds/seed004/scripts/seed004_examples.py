"""Write seed 004's household in-context examples, one per task type: with a query (the
world model's answer with and without probabilities) and without one (the plain example, in
``plain/``), beside :mod:`statelab_seed004.examples.household`.

    python seeds/seed004/scripts/seed004_examples.py          # (re)write the stored texts
    python seeds/seed004/scripts/seed004_examples.py --check  # exit 1 if a byte changes
"""

from __future__ import annotations

import sys

from statelab_seed004.examples import household


def main(check: bool = False) -> int:
    changed = []
    for task_type in household.TASK_TYPES:
        for mode in (*household.MODES, household.PLAIN):
            text = household.build(task_type, mode)
            path = household.HERE / household.file_name(task_type, mode)
            if not path.is_file() or path.read_text() != text:
                changed.append(path.name)
                if not check:
                    path.write_text(text)
    print("changed:" if changed else "unchanged", *changed)
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main(check="--check" in sys.argv[1:]))
