#!/usr/bin/env bash
# A prepared GPU check (fused kernel vs XLA on hardware, both benchmarks, the unit tests):
#   device run:  bash benchmarks/gpu_check.sh        (from the repository root; writes to $OUT)
# It uses the machine's own python3 (jax with CUDA, flax, optax, sacrebleu, sentencepiece,
# pytest, hypothesis are installed there; nbval is not, so notebooks are not run here).
# Written without a GPU to try it on: expect to fix small things on its first run.
set -uo pipefail
OUT=${OUT:-/tmp/gpu_out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD XLA_PYTHON_CLIENT_PREALLOCATE=false
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"
python3 -c "import jax; print('jax', jax.__version__, jax.devices())" | tee -a "$OUT/gpu.txt"

echo "== 1. the fused Pallas kernel against the XLA path, compiled on the GPU =="
python3 - <<'PY' 2>&1 | tee "$OUT/kernel_check.txt"
import jax, jax.numpy as jnp, numpy as np
from entmax_lib import entmax as E, pallas_kernel as K
rng = np.random.default_rng(0)
for rows, d in ((4096, 64), (4096, 1024), (256, 4096)):
    z = jnp.asarray(rng.standard_normal((rows, d)), jnp.float32)
    alpha = jnp.asarray(1 + rng.uniform(0.01, 1, (rows, 1)), jnp.float32)
    for name, beta in (("alpha=1.5", 0.5), ("alpha=2", 1.0), ("learned", alpha - 1)):
        got = jax.jit(lambda z, b: K.entmax_rows(z, b, 25))(z, beta) if not isinstance(beta, float) \
            else jax.jit(lambda z: K.entmax_rows(z, beta, 25))(z)
        want = E._bisect_forward(z, beta, 25)
        print(f"{rows}x{d} {name:9s} max |kernel - XLA| = {float(jnp.max(jnp.abs(got - want))):.1e}")
PY

echo "== 2. benchmark, XLA path and with the kernel (65536 x 1024) =="
python3 benchmarks/bench_entmax.py --out "$OUT/gpu.json" --note "H200, XLA path" 2>&1 | tail -12
python3 benchmarks/bench_entmax.py --pallas --out "$OUT/gpu_pallas.json" --note "H200, Pallas kernel" 2>&1 | tail -12

echo "== 3. unit tests on the GPU (conftest's CPU compile flags switched off) =="
XLA_FLAGS="" timeout 300 python3 -m pytest -q -x -o addopts="" -p no:cacheprovider tests 2>&1 | tail -15
