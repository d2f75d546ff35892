"""Re-record the golden episodes: ``python -m tests.golden.record [case-substring ...]``.

With arguments, only the cases whose id contains one of them are re-recorded (the others
are kept): a commit that changes behaviour on purpose re-records exactly what it changed.
"""

from __future__ import annotations

import sys

from tests.golden._golden import FIXTURE, all_cases, case_id, load, save
from tests.golden._play import play


def main(argv: list[str]) -> None:
    data = load() if FIXTURE.exists() and argv else {}
    changed = 0
    for case, seed in all_cases():
        cid = case_id(case, seed)
        if argv and not any(a in cid for a in argv):
            continue
        rec = play(case, seed)
        differs = data.get(cid) != rec
        changed += differs
        data[cid] = rec
        print(f"{'changed' if differs else 'same'} {cid}", file=sys.stderr)
    save(data)
    print(f"{len(data)} golden episodes in {FIXTURE} ({changed} new or changed)", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
