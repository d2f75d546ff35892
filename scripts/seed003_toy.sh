#!/usr/bin/env bash
# Seed 003's whole line once, end to end, at toy scale on the embedded model (SmolLM2-135M):
# collect -> reader (BC + two DAgger iterations, the acceptance bar) -> writer rounds 0 and 1
# (DSSR, and OUTCOME beside it, whose score files give Figure 2's rho) -> the candidates on
# validation -> the gates and the selection -> the test split opened once -> Tables 2 and 14.
# Every stage goes through the CLI; each one's output goes to results/seed003-toy/logs/<stage>.log
# and its wall time to results/seed003-toy/logs/times.tsv. Run from the repository root:
#   bash scripts/seed003_toy.sh            # every stage, in order (a finished run stage resumes)
#   bash scripts/seed003_toy.sh gates      # from that stage on
# Stages: collect reader dssr outcome validation gates open-test tables. docs/seed003.md ("The
# toy line") has the measured times and what the numbers can and cannot say.
set -euo pipefail
PY=${PYTHON:-python}
C=configs/seed003/toy
LOGS=results/seed003-toy/logs
mkdir -p "$LOGS"
STAGES=(collect reader dssr outcome validation gates open-test tables)
cmd_for() {
  case "$1" in
    collect) echo "run $C/collect.yaml" ;;
    reader) echo "seed003 train reader $C/reader.yaml" ;;
    dssr) echo "seed003 train writer $C/writer_dssr.yaml" ;;
    outcome) echo "seed003 train writer $C/writer_outcome.yaml" ;;
    validation) echo "run $C/validation.yaml" ;;
    gates) echo "seed003 gates $C/analysis.yaml" ;;
    open-test) echo "open-test $C/test.yaml" ;;
    tables) echo "seed003 tables $C/analysis.yaml" ;;
  esac
}
start=${1:-collect}
on=0
for s in "${STAGES[@]}"; do
  [[ $s == "$start" ]] && on=1
  [[ $on == 1 ]] || continue
  read -r -a args <<<"$(cmd_for "$s")"
  echo "== $s: statelab ${args[*]}"
  t0=$(date +%s)
  nice -n 10 "$PY" -m statelab "${args[@]}" 2>&1 | tee "$LOGS/$s.log"
  t1=$(date +%s)
  printf '%s\t%s\t%s\n' "$s" "$((t1 - t0))" "statelab ${args[*]}" | tee -a "$LOGS/times.tsv"
done
