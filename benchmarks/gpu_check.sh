#!/usr/bin/env bash
# A prepared GPU check (fused kernel vs XLA on hardware, both benchmarks, the library's tests):
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
python3 benchmarks/kernel_check.py 2>&1 | tee "$OUT/kernel_check.txt"

echo "== 2. benchmark, XLA path and with the kernel (65536 x 1024) =="
python3 benchmarks/bench_entmax.py --out "$OUT/gpu.json" --note "H200, XLA path" 2>&1 | tail -12
python3 benchmarks/bench_entmax.py --pallas --out "$OUT/gpu_pallas.json" --note "H200, Pallas kernel" 2>&1 | tail -12

echo "== 3. the library's unit tests and doctests on the GPU (conftest's CPU compile flags switched off) =="
# addopts="": no nbval here; the doctests are asked for by name (the repository's addopts do that).
XLA_FLAGS="" timeout 300 python3 -m pytest -q -x -o addopts="" -p no:cacheprovider --doctest-modules \
    -m "not slow" tests/entmax_lib entmax_lib 2>&1 | tail -15
