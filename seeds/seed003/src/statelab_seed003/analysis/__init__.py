"""Seed 003's diagnostics: decision loss, budget loss β and write-time regret κ, relevance lag,
paired game bootstraps, the prompt leak check, and the report section (Tables 1 and 5, Fig. 6).
The measures are the lab's (:mod:`statelab.analysis.audit.measures`,
:mod:`statelab.analysis.stats`); this package applies them to seed 003's cooking runs.

Definitions (section 3, Appendix D; choices where the seed is silent are in docs/seed003.md):

- **decision loss** δ = the reader's negative log-likelihood (nats) of the optimal command a*
  (the cooking env's ``privileged["a_star"]``) among the labelled admissible commands,
  log-softmax normalised over them. For a run whose agent is ``reader`` it is read off the
  step's stored ``meta["logprobs"]``; otherwise the reader prompt is rescored.
- At one decision point of a writer's episode, with the same a*:
  δ_full (the reader given the full history), δ_oracle (given the read-time oracle's best of
  8 hindsight compressions within B, ``oracle-readtime``) and δ_W (given the writer's state).
  **β = δ_oracle − δ_full** (budget loss: what a B-token state loses even in hindsight) and
  **κ = δ_W − δ_oracle** (write-time regret); δ_W − δ_full = β + κ. β may be negative: the
  oracle is a reference, not a bound.
- **relevance lag**: leave-one-chunk-out rescoring of the full history (a chunk is one step:
  its action and observation, the scripted prelude included): Δ_i = δ(history without chunk
  i) − δ(history). Undefined when max Δ_i < 0.5 nats; else the chunk of largest Δ (ties: the
  earliest) at lag n − 1 − i steps before the decision (0: the step that produced the
  current observation).
- **paired percentile bootstrap over games**: 10,000 resamples of games with replacement
  (seeded); every condition sees the same resampled games; each game weighs the same; the
  95% interval is the 2.5-97.5 percentiles. For write-point (decision-point) statistics the
  resampling is **game-clustered**: a drawn game brings all its points.
- **leak check**: no prompt (every stored model call's messages) contains a privileged string
  (a recipe direction, where a needed item is, a command of the optimal plan) that neither
  the env's manual nor any observation (its text, its admissible commands) has shown by that
  step. The agent's calls of a step may use what was observed
  up to the step's observation; the writer calls after it also the next observation.
"""
