#!/bin/bash
# One call on a lent GPU (the device tool): versions, bench_tape, bench_train_step, then the
# test suite on the GPU. Everything goes to $OUT as it runs, so a run stopped at its limit
# still brings back what it did. Usage (repository root): bash benchmarks/gpu_check.sh
# Seen on an H200 (2026-11-26): versions 20 s, bench_tape 90 s, bench_train_step 140 s, the suite
# more than 270 s on 14 workers: the whole needs a 10-minute call (set TAPE_S/TRAIN_S/TESTS_S=1
# to skip a part).
OUT=${OUT:-/tmp/gpu_check}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
py=python3
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv
  $py -m pip install -q --no-deps --no-build-isolation --no-index -e . 2>&1 | tail -2
  $py -c "import sys, jax, flax, optax, orbax.checkpoint; print(sys.version.split()[0], 'jax', jax.__version__,
    jax.devices(), 'flax', flax.__version__, 'optax', optax.__version__)"
  $py -c "import tapejax as tf; print(tf.reduce_sum(tf.constant([1., 2.]) * 2))"
} 2>&1 | tee "$OUT/env.txt"
$py -c "import tapejax" || exit 1
timeout "${TAPE_S:-110}" $py benchmarks/bench_tape.py --repeats 15 2>&1 | tee "$OUT/bench_tape.txt" | tail -28
timeout "${TRAIN_S:-150}" $py benchmarks/bench_train_step.py --rounds 7 --first-call-runs 1 2>&1 \
  | tee "$OUT/bench_train_step.txt" | tail -30
# The suite, eager only (the lazy twins are the CPU's check), spread over the cores; -v lists
# each failure as it happens, so a run stopped at its limit still says which tests failed.
# test_guide_random_numbers runs its cells in a CPU-only subprocess (nothing for the GPU; slow).
timeout "${TESTS_S:-300}" $py -m pytest -p no:cacheprovider -p xdist -n 14 -m "not lazy" -v -rfE \
  --timeout 280 --ignore=tests/test_guide_random_numbers.py tests > "$OUT/pytest.txt" 2>&1
echo "pytest rc $?"
grep -E "(FAILED|ERROR) |[0-9]+ (passed|failed)" "$OUT/pytest.txt" | cut -c1-200 | tail -40
