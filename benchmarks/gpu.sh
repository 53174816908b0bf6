#!/usr/bin/env bash
# The GPU checks and figures of the JAX backend, on a machine where JAX has a GPU:
# the GPU tests, then the suite's GPU sizes against JAX on the same GPU.
# Usage: bash benchmarks/gpu.sh [OUTPUT_DIR]   (from the repository root)
set -uo pipefail
out=${1:-gpu-results}
mkdir -p "$out"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
{ nvidia-smi -L; $py -c "import jax, numpy; print('jax', jax.__version__, 'numpy', numpy.__version__, jax.devices())"; } 2>&1 | tee "$out/env.txt"
timeout 240 $py -m pytest -q -p no:cacheprovider tests/test_backend_jax_gpu.py 2>&1 | tail -30 | tee "$out/tests.txt"
for w in mlp_step_small,mlp_step_large rnn; do
  timeout 300 $py -m benchmarks --device gpu --only "$w" --no-memory --budget 1 --threads 8 \
    --markdown "$out/${w%%,*}.md" 2>&1 | grep -v "^- "
done
