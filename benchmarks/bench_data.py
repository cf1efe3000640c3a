"""tf.data throughput: parallel map, prefetch overlap, and the in-memory fast path.

    python benchmarks/bench_data.py                      # this tree
    python benchmarks/bench_data.py --compare /work/main  # also time the fast path of another tree

1. A Python-heavy map (``tf.numpy_function`` that sleeps 2 ms per element, i.e. waits
   with the GIL released, like I/O or a C extension): serial vs ``num_parallel_calls``.
2. Prefetch: a 2 ms producer and a 2 ms consumer, with and without ``prefetch(1)``.
3. The in-memory fast path ``from_tensor_slices((x, y)).shuffle(n).batch(128)`` (index
   gathering), with and without ``.prefetch(AUTOTUNE)``, one epoch over 60000 x 784
   float32; with ``--compare`` the same pipeline is timed in a subprocess that imports
   tapejax from the other tree, alternating runs.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np


def timed(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)


def consume(ds):
    n = 0
    for _ in ds:
        n += 1
    return n


def python_map(tf, n=800):
    def slow(x):
        time.sleep(0.002)
        return x * 2
    f = lambda x: tf.numpy_function(slow, [x], tf.int64)  # noqa: E731
    out = {}
    for calls in (None, 2, 4, 8, tf.data.AUTOTUNE):
        ds = tf.data.Dataset.range(n).map(f, num_parallel_calls=calls)
        out[str(calls if calls != tf.data.AUTOTUNE else "AUTOTUNE")] = timed(lambda: consume(ds), 2)
    return out


def prefetch_overlap(tf, n=300):
    def gen():
        for i in range(n):
            time.sleep(0.002)
            yield i

    def run(ds):
        for _ in ds:
            time.sleep(0.002)
    base = tf.data.Dataset.from_generator(gen)
    return {"no prefetch": timed(lambda: run(base), 2), "prefetch(1)": timed(lambda: run(base.prefetch(1)), 2)}


FAST_PATH = r"""
import json, sys, time, numpy as np, tapejax as tf
rng = np.random.default_rng(0)
x = rng.random((60000, 784), dtype=np.float32)
y = rng.integers(0, 10, 60000)
base = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(60000, seed=1).batch(128)
pipelines = {"shuffle.batch": base, "shuffle.batch.prefetch": base.prefetch(tf.data.AUTOTUNE)}
times = {name: [] for name in pipelines}
for _ in range(6):                      # the two pipelines alternate; the first round warms up
    for name, ds in pipelines.items():
        t = time.perf_counter()
        for xb, yb in ds:
            pass
        times[name].append(time.perf_counter() - t)
print(json.dumps({name: min(t[1:]) for name, t in times.items()}))
"""


def fast_path(tree):
    env = dict(os.environ, PYTHONPATH=tree)
    res = subprocess.run([sys.executable, "-c", FAST_PATH], env=env, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def others(tf):
    print("\n1. map of tf.numpy_function(sleep 2 ms), 800 elements: best (median) seconds")
    res = python_map(tf)
    serial = res["None"][0]
    for k, (best, med) in res.items():
        print(f"   num_parallel_calls={k:9s} {best:6.3f} ({med:6.3f})  speed-up {serial / best:4.1f}x")
    print("\n2. 2 ms producer (from_generator) + 2 ms consumer, 300 elements")
    for k, (best, med) in prefetch_overlap(tf).items():
        print(f"   {k:12s} {best:6.3f} ({med:6.3f})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--compare", help="another tapejax tree (its root) to time the fast path against")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--fast-path-only", action="store_true")
    args = parser.parse_args()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, here)
    import tapejax as tf

    print(f"machine: {os.cpu_count()} CPU cores, load average {os.getloadavg()[0]:.1f}")
    if not args.fast_path_only:
        others(tf)
    print("\n3. in-memory fast path, one epoch of 60000 x 784 float32 in batches of 128 (seconds, best of 5 epochs per run)")
    trees = [("this tree", here)] + ([("compare", args.compare)] if args.compare else [])
    results = {name: [] for name, _ in trees}
    for _ in range(args.rounds):
        for name, tree in trees:
            results[name].append(fast_path(tree))
    for name, runs in results.items():
        for key in runs[0]:
            vals = [r[key] for r in runs]
            print(f"   {name:10s} {key:24s} best {min(vals):.3f}  median {statistics.median(vals):.3f}")


if __name__ == "__main__":
    main()
