"""Per-episode and per-run behaviour aggregates of the ``steps`` table, computed in SQLite.

What reports print beside the scores (issue 22): how often the env refused the action, how
many distinct actions an episode played and its longest run of one repeated action, the
world-model queries and rejected proposals, and how often the memory state came out of a
write unchanged. Everything is aggregated in SQL over a few ``steps`` columns: no message,
reply or observation text leaves the database, so a report over thousands of episodes reads
kilobytes, not the whole table; memory states are compared by a fingerprint computed inside
the query (:func:`fingerprint`), in one pass over the table.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections import OrderedDict

import pandas as pd

from statelab.run._texts import TextReader
from statelab.run.records import FINISHED

#: the statuses of a finished episode, as an SQL list
_FINISHED_SQL = "(" + ", ".join(f"'{s}'" for s in FINISHED) + ")"

#: one compact row per step (a fingerprint of the memory text, never the text): the one pass
#: over ``steps`` that every figure below is aggregated from
STEPS_SQL = """
CREATE TEMP TABLE statelab_behaviour AS
SELECT st.run, st.seed, st.rollout, st.t, st.action, st.valid,
       CASE WHEN instr(st.meta, '"rejected"') > 0 AND json_valid(st.meta)
            THEN COALESCE(json_array_length(st.meta, '$.rejected'), 0) ELSE 0 END AS rejections,
       {memory} AS memory, {memory_key} AS memory_key, {env_state} AS env_state,
       {start_state} AS start_state, COALESCE(e.success, 0) AS won
FROM steps st LEFT JOIN episodes e
  ON e.run = st.run AND e.seed = st.seed AND e.rollout = st.rollout
"""

#: one row per episode that has steps
EPISODE_SQL = """
WITH s AS (
  SELECT run, seed, rollout, t, action, valid, rejections, memory, memory_key, env_state,
         start_state, won,
         LAG(action) OVER w AS prev_action,
         LAG(memory) OVER w AS prev_memory,
         ROW_NUMBER() OVER w AS k,
         ROW_NUMBER() OVER (PARTITION BY run, seed, rollout, env_state ORDER BY t) AS visit
  FROM temp.statelab_behaviour WINDOW w AS (PARTITION BY run, seed, rollout ORDER BY t)
),
g AS (
  SELECT run, seed, rollout,
         SUM(CASE WHEN k > 1 AND prev_action IS action THEN 0 ELSE 1 END)
           OVER (PARTITION BY run, seed, rollout ORDER BY t) AS streak
  FROM s
),
longest AS (
  SELECT run, seed, rollout, MAX(n) AS longest_repeat
  FROM (SELECT run, seed, rollout, streak, COUNT(*) AS n FROM g GROUP BY run, seed, rollout, streak)
  GROUP BY run, seed, rollout
),
per AS (
  SELECT run, seed, rollout,
         COUNT(*) AS n_steps,
         SUM(CASE WHEN valid = 0 THEN 1 ELSE 0 END) AS invalid,
         COUNT(DISTINCT action) AS distinct_actions,
         SUM(rejections) AS rejections,
         SUM(CASE WHEN k > 1 THEN 1 ELSE 0 END) AS memory_writes,
         SUM(CASE WHEN k > 1 AND memory IS prev_memory THEN 1 ELSE 0 END) AS memory_same,
         MAX(CASE WHEN memory != 0 THEN 1 ELSE 0 END) AS has_memory,
         COUNT(DISTINCT memory_key) AS memory_kinds,
         SUM(CASE WHEN env_state IS NOT NULL THEN 1 ELSE 0 END) AS fingerprinted,
         SUM(CASE WHEN env_state IS NOT NULL AND (visit > 1 OR env_state IS start_state)
                  THEN 1 ELSE 0 END) AS revisits,
         MAX(won) AS won
  FROM s GROUP BY run, seed, rollout
),
q AS (SELECT run, seed, rollout, COUNT(*) AS wm_queries FROM queries GROUP BY run, seed, rollout)
SELECT per.*, longest.longest_repeat, COALESCE(q.wm_queries, 0) AS wm_queries
FROM per JOIN longest USING (run, seed, rollout)
LEFT JOIN q USING (run, seed, rollout)
ORDER BY per.run, per.seed, per.rollout
"""

#: one row per run: its finished episodes' memory states and first views (the first step's
#: view is read for each episode's first step only, through the primary key)
RUN_SQL = """
WITH done AS (
  SELECT run, seed, rollout, COALESCE(env_seed, seed) AS env_seed, {start_state} AS start_state
  FROM episodes WHERE status IN {finished}
),
firsts AS (
  SELECT run, seed, rollout, MIN(t) AS t FROM temp.statelab_behaviour GROUP BY run, seed, rollout
),
starts AS (
  SELECT d.run, COUNT(DISTINCT d.env_seed) AS env_seeds,
         COUNT(DISTINCT {view}) AS first_views,
         COUNT(DISTINCT d.start_state) AS start_states,
         SUM(CASE WHEN d.start_state IS NULL THEN 1 ELSE 0 END) AS unfingerprinted_starts
  FROM done d JOIN firsts f USING (run, seed, rollout)
  JOIN steps st ON st.run = f.run AND st.seed = f.seed AND st.rollout = f.rollout AND st.t = f.t
  GROUP BY d.run
),
mem AS (
  SELECT d.run, COUNT(*) AS memory_states, COUNT(DISTINCT b.memory) AS distinct_memories,
         MAX(CASE WHEN b.memory != 0 THEN 1 ELSE 0 END) AS has_memory,
         COUNT(DISTINCT b.memory_key) AS memory_contents,
         COUNT(DISTINCT d.seed || '/' || d.rollout) AS memory_episodes
  FROM done d JOIN temp.statelab_behaviour b USING (run, seed, rollout) GROUP BY d.run
),
dec AS ({decoding}),
pairs AS (
  SELECT e.run, {pair} AS pair, COUNT(*) AS n
  FROM episodes e JOIN runs r USING (run) WHERE e.status IN {finished} GROUP BY e.run, pair
),
coll AS (SELECT run, SUM(CASE WHEN n > 1 THEN n ELSE 0 END) AS colliding FROM pairs GROUP BY run)
SELECT starts.run, env_seeds, first_views, start_states, unfingerprinted_starts,
       memory_states, distinct_memories, has_memory, memory_contents, memory_episodes,
       dec.decoding, dec.violated, dec.choice_calls, coll.colliding
FROM starts JOIN mem USING (run) LEFT JOIN dec USING (run) LEFT JOIN coll USING (run)
"""
#: an episode's (env seed, sampling seed) as one text: recorded (seeding scheme 2), or as
#: scheme 1 derived it (the env seed, or for a replayed rollout one of its own); an episode
#: stored before env seeds were recorded shares its pair with none
SCHEME1_PAIR_SQL = (
    "CASE WHEN e.env_seed IS NULL THEN 'unknown:' || e.seed || '/' || e.rollout"
    " WHEN e.rollout > 0 AND json_valid(r.spec) AND json_extract(r.spec, '$.replay')"
    " THEN e.env_seed || ':replay/' || e.rollout ELSE e.env_seed || ':' || e.env_seed END"
)
PAIR_SQL = (
    "CASE WHEN e.sampling_seed IS NOT NULL THEN e.env_seed || ':' || e.sampling_seed"
    f" ELSE {SCHEME1_PAIR_SQL} END"
)
#: how a run's calls to choose an action were decoded (issue 25): the distinct modes other
#: than free generation, comma-separated; how many of those calls there were
#: (``choice_calls``) and how many came back outside their constraint (``violated``); a
#: store from before calls said so has none
DECODING_SQL = (
    "SELECT run, GROUP_CONCAT(DISTINCT decoding) AS decoding,"
    " SUM(decoding = 'violated') AS violated, COUNT(*) AS choice_calls FROM calls"
    " WHERE decoding IS NOT NULL AND decoding != 'free' GROUP BY run"
)
NO_DECODING_SQL = (
    "SELECT NULL AS run, NULL AS decoding, NULL AS violated, NULL AS choice_calls WHERE 0"
)


def fingerprint(text: str | None) -> int | None:
    """A 63-bit BLAKE2b fingerprint of a text (0 for the empty text, None for NULL): equal
    texts, equal fingerprints; two different memory states share one with probability
    2^-63, so comparisons and distinct counts need not move the texts out of SQLite."""
    if text is None:
        return None
    if text == "":
        return 0
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return (int.from_bytes(digest, "big") >> 1) | 1


#: the key of the empty text in a text-table store (``statelab.run._texts.text_hash("")``)
_EMPTY_REF = hashlib.sha256(b"").hexdigest()[:32]


def ref_fingerprint(ref: str | None) -> int | None:
    """The fingerprint of a text-table reference (a store of schema 2 keeps each text once,
    keyed by its hash: equal texts, equal keys): 0 for the empty text, None for NULL."""
    if ref is None:
        return None
    if ref == _EMPTY_REF:
        return 0
    return (int(ref[:16], 16) >> 1) | 1


_DIGITS = re.compile(r"\d+")


def memory_content(text: str | None) -> str | None:
    """What a memory text says beyond counting: its digit runs as ``#`` and its whitespace
    collapsed ("Step 3." and "Step 4." say the same; a step counter is not content)."""
    if text is None:
        return None
    return " ".join(_DIGITS.sub("#", text).split())


def _content_key(text: str | None) -> int | None:
    return fingerprint(memory_content(text))


#: the fingerprints :class:`_RefContent` keeps (the last ones: a memory text recurs over the
#: steps of its episode, rarely beyond, so a store of any size keeps no more)
CONTENT_KEPT = 4096


class _RefContent:
    """:func:`memory_content`'s fingerprint of a text-table reference, each text read from
    ``texts`` once while it recurs (the last :data:`CONTENT_KEPT` are kept)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.reader, self.seen = TextReader(db), OrderedDict[str, int | None]()

    def __call__(self, ref: str | None) -> int | None:
        if ref is None:
            return None
        if ref in self.seen:
            self.seen.move_to_end(ref)
            return self.seen[ref]
        got = self.seen[ref] = _content_key(self.reader.get(ref))
        if len(self.seen) > CONTENT_KEPT:
            self.seen.popitem(last=False)
        return got


def behaviour(db: sqlite3.Connection) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-episode and per-run frames of :func:`episode_behaviour` and
    :func:`run_behaviour`, from one pass over ``steps`` (a temporary table of compact rows,
    dropped before returning). Texts are compared by their fingerprint in a store that
    keeps them inline, and by their key in one that keeps them in the ``texts`` table."""
    db.create_function("statelab_fingerprint", 1, fingerprint, deterministic=True)
    db.create_function("statelab_ref_fingerprint", 1, ref_fingerprint, deterministic=True)
    db.create_function("statelab_content", 1, _content_key, deterministic=True)
    db.create_function("statelab_ref_content", 1, _RefContent(db))
    cols = {row[1] for row in db.execute("PRAGMA table_info(steps)")}
    ref = "memory_ref" in cols
    memory = "statelab_ref_fingerprint(st.memory_ref)" if ref else "statelab_fingerprint(st.memory)"
    key = "statelab_ref_content(st.memory_ref)" if ref else "statelab_content(st.memory)"
    view = "statelab_ref_fingerprint(st.view_ref)" if ref else "statelab_fingerprint(st.view)"
    calls = {row[1] for row in db.execute("PRAGMA table_info(calls)")}
    decoding = DECODING_SQL if "decoding" in calls else NO_DECODING_SQL
    episodes = {row[1] for row in db.execute("PRAGMA table_info(episodes)")}
    pair = PAIR_SQL if "sampling_seed" in episodes else SCHEME1_PAIR_SQL
    # a store written before the env's fingerprints were recorded has no such columns
    env_state = "st.env_state" if "env_state" in cols else "NULL"
    start = "start_state" if "start_state" in episodes else "NULL"
    db.execute("DROP TABLE IF EXISTS temp.statelab_behaviour")
    db.execute(
        STEPS_SQL.format(
            memory=memory, memory_key=key, env_state=env_state, start_state=f"e.{start}"
            if start != "NULL" else "NULL",
        )
    )  # fmt: skip
    try:
        return (
            pd.read_sql_query(EPISODE_SQL, db),
            pd.read_sql_query(
                RUN_SQL.format(
                    view=view, decoding=decoding, finished=_FINISHED_SQL, pair=pair,
                    start_state=start,
                ),
                db,
            ),
        )
    finally:
        db.execute("DROP TABLE IF EXISTS temp.statelab_behaviour")


def episode_behaviour(db: sqlite3.Connection) -> pd.DataFrame:
    """One row per episode with steps: ``run, seed, rollout, n_steps, invalid,
    distinct_actions, rejections, memory_writes, memory_same, has_memory, longest_repeat,
    wm_queries`` (counts; ``memory_writes`` are the steps after the first, ``memory_same``
    those whose memory state equals the step before's; ``has_memory`` 0 when every memory
    state of the episode is empty), ``memory_kinds`` (distinct :func:`memory_content` of its
    memory texts), ``fingerprinted`` (steps with the env's state fingerprint; 0 in a store
    from before them), ``revisits`` (steps that left the env in a state the episode had been
    in: at reset or after an earlier step) and ``won`` (the episode's success)."""
    return behaviour(db)[0]


def run_behaviour(db: sqlite3.Connection) -> pd.DataFrame:
    """One row per run over its finished episodes: ``env_seeds`` (distinct env seeds),
    ``first_views`` (distinct views shown at each episode's first step), ``memory_states``
    (stored steps), ``distinct_memories`` (distinct memory texts), ``has_memory`` (0 when
    every memory state is empty), ``memory_contents`` (distinct :func:`memory_content` of
    them), ``memory_episodes`` (its finished episodes with steps), ``start_states`` (distinct
    env state fingerprints at reset), ``unfingerprinted_starts`` (finished episodes without
    one: a store from before them), ``decoding`` (the modes its choices were decoded by,
    comma-separated: ``trie``, ``grammar``, ``json_schema`` ..., ``unenforced``, ``logprob``,
    ``violated``; None when every call was free generation, or the store predates the
    column), with ``choice_calls`` (its calls to a choice) and ``violated`` (those whose
    reply came back outside the constraint), and ``colliding`` (finished episodes whose (env
    seed, sampling seed) another of the run's shares: one episode played twice; 0 from
    seeding scheme 2 on)."""
    return behaviour(db)[1]
