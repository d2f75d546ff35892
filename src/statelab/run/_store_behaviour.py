"""Per-episode and per-run behaviour aggregates of the ``steps`` table, computed in SQLite.

What reports print beside the scores (issue 22): how often the env refused the action, how
many distinct actions an episode played and its longest run of one repeated action, the
world-model queries and rejected proposals, and how often the memory state came out of a
write unchanged. Everything is aggregated in SQL over a few ``steps`` columns: no message,
reply or observation text leaves the database, so a report over thousands of episodes reads
kilobytes, not the whole table.
"""

from __future__ import annotations

import sqlite3

import pandas as pd

#: one row per episode that has steps
EPISODE_SQL = """
WITH s AS (
  SELECT run, seed, rollout, t, action, valid, meta, memory,
         LAG(action) OVER w AS prev_action,
         LAG(memory) OVER w AS prev_memory,
         ROW_NUMBER() OVER w AS k
  FROM steps WINDOW w AS (PARTITION BY run, seed, rollout ORDER BY t)
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
         SUM(CASE WHEN json_valid(meta) THEN COALESCE(json_array_length(meta, '$.rejected'), 0)
             ELSE 0 END) AS rejections,
         SUM(CASE WHEN k > 1 THEN 1 ELSE 0 END) AS memory_writes,
         SUM(CASE WHEN k > 1 AND memory IS prev_memory THEN 1 ELSE 0 END) AS memory_same,
         MAX(COALESCE(length(memory), 0)) AS memory_chars
  FROM s GROUP BY run, seed, rollout
),
q AS (SELECT run, seed, rollout, COUNT(*) AS wm_queries FROM queries GROUP BY run, seed, rollout)
SELECT per.*, longest.longest_repeat, COALESCE(q.wm_queries, 0) AS wm_queries
FROM per JOIN longest USING (run, seed, rollout)
LEFT JOIN q USING (run, seed, rollout)
ORDER BY per.run, per.seed, per.rollout
"""

#: one row per run: its finished episodes' memory states and first views
RUN_SQL = """
WITH done AS (
  SELECT run, seed, rollout, COALESCE(env_seed, seed) AS env_seed FROM episodes
  WHERE status = 'done'
),
first AS (
  SELECT s.run, s.seed, s.rollout, s.view FROM steps s
  WHERE s.t = (SELECT MIN(x.t) FROM steps x
               WHERE x.run = s.run AND x.seed = s.seed AND x.rollout = s.rollout)
),
starts AS (
  SELECT d.run, COUNT(DISTINCT d.env_seed) AS env_seeds, COUNT(DISTINCT f.view) AS first_views
  FROM done d JOIN first f USING (run, seed, rollout) GROUP BY d.run
),
mem AS (
  SELECT d.run, COUNT(*) AS memory_states, COUNT(DISTINCT s.memory) AS distinct_memories,
         MAX(COALESCE(length(s.memory), 0)) AS memory_chars
  FROM done d JOIN steps s USING (run, seed, rollout) GROUP BY d.run
)
SELECT starts.run, env_seeds, first_views, memory_states, distinct_memories, memory_chars
FROM starts JOIN mem USING (run)
"""


def episode_behaviour(db: sqlite3.Connection) -> pd.DataFrame:
    """One row per episode with steps: ``run, seed, rollout, n_steps, invalid,
    distinct_actions, rejections, memory_writes, memory_same, memory_chars, longest_repeat,
    wm_queries`` (counts; ``memory_writes`` are the steps after the first, ``memory_same``
    those whose memory state equals the step before's)."""
    return pd.read_sql_query(EPISODE_SQL, db)


def run_behaviour(db: sqlite3.Connection) -> pd.DataFrame:
    """One row per run over its finished episodes: ``env_seeds`` (distinct env seeds),
    ``first_views`` (distinct views shown at each episode's first step), ``memory_states``
    (stored steps), ``distinct_memories`` (distinct memory texts) and ``memory_chars`` (the
    longest memory text)."""
    return pd.read_sql_query(RUN_SQL, db)
