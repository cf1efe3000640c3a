"""New input shapes on every call: time per call and resident memory, against a baseline tree.

Four workloads, each in a fresh process (so compiles and memory are its own):

- ``eager``: an MLP (16-32-1, relu, mean squared error) eager gradient step, a new batch
  size every call (1..N): ms per call (wall and process CPU time) and resident-set growth
  over the N shapes; then the same step at one batch size, many times (the steady state:
  as fast as before?);
- ``rnn``: a tanh RNN cell (batch 8, 16 units) unrolled over a sequence whose length
  changes every call (5, 6, ...): every length is a new tape structure of the same ops;
- ``function``: a ``tf.function`` step with a new batch size every call, and how many
  retracing warnings were logged.

Usage:
    python benchmarks/bench_shapes.py [--shapes 200] [--baseline /path/to/previous/tree]

With ``--baseline``, every workload runs under both trees (PYTHONPATH), alternating.
"""
import argparse
import gc
import json
import logging
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.dirname(HERE)


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def workload(name, shapes):
    import numpy as np
    import tapejax as tf

    rng = np.random.default_rng(0)
    w1 = tf.Variable(rng.normal(size=(16, 32)).astype(np.float32) * 0.3)
    b1 = tf.Variable(np.zeros(32, np.float32))
    w2 = tf.Variable(rng.normal(size=(32, 1)).astype(np.float32) * 0.3)
    params = [w1, b1, w2]

    def data(n):
        return (tf.constant(rng.normal(size=(n, 16)).astype(np.float32)),
                tf.constant(rng.normal(size=(n, 1)).astype(np.float32)))

    def mlp_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.nn.relu(x @ w1 + b1) @ w2 - y) ** 2)
        grads = tape.gradient(loss, params)
        return float(grads[0][0, 0])          # wait for the result

    wx = tf.Variable(rng.normal(size=(16, 16)).astype(np.float32) * 0.3)
    wh = tf.Variable(rng.normal(size=(16, 16)).astype(np.float32) * 0.3)

    def rnn_step(t):
        # The steps of a sequence arrive as tensors (a generator's output).
        xs = [tf.constant(a) for a in rng.normal(size=(t, 8, 16)).astype(np.float32)]
        with tf.GradientTape() as tape:
            h = tf.zeros([8, 16])
            for i in range(t):
                h = tf.tanh(xs[i] @ wx + h @ wh)
            loss = tf.reduce_mean(h ** 2)
        grads = tape.gradient(loss, [wx, wh])
        return float(grads[0][0, 0])

    warnings = []

    class Count(logging.Handler):
        def emit(self, record):
            if "retracing" in record.getMessage():
                warnings.append(record)

    logging.getLogger("tapejax").addHandler(Count())
    fn_step = tf.function(lambda x, y: tf.reduce_mean((tf.nn.relu(x @ w1 + b1) @ w2 - y) ** 2))

    if name == "eager":
        run, sizes = (lambda n: mlp_step(*data(n))), range(1, shapes + 1)
    elif name == "rnn":
        run, sizes = rnn_step, range(5, 5 + shapes)
    else:
        run, sizes = (lambda n: float(fn_step(*data(n)))), range(1, shapes + 1)
    for n in (1000, 1001):                 # warm up: imports, the first compiles
        run(n) if name != "rnn" else run(3 + n - 1000)
    gc.collect()
    start = rss_mb()
    times = []
    cpu = []
    for n in sizes:
        t0, c0 = time.perf_counter(), time.process_time()
        run(n)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    gc.collect()
    out = {"workload": name, "shapes": shapes, "ms_per_call_median": 1e3 * sorted(times)[len(times) // 2],
           "ms_per_call_mean": 1e3 * sum(times) / len(times),
           # CPU time of the process (all its threads): less sensitive to other jobs' load
           "cpu_ms_per_call_median": 1e3 * sorted(cpu)[len(cpu) // 2], "rss_growth_mb": rss_mb() - start}
    if name == "eager":
        x, y = data(24)
        for _ in range(20):
            mlp_step(x, y)
        t = []
        for _ in range(200):
            t0 = time.perf_counter()
            mlp_step(x, y)
            t.append(time.perf_counter() - t0)
        out["same_shape_ms_median"] = 1e3 * sorted(t)[len(t) // 2]
    if name == "function":
        out["retracing_warnings"] = len(warnings)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", type=int, default=200)
    ap.add_argument("--baseline", help="another tapejax tree (e.g. the previous commit), run alike")
    ap.add_argument("--workloads", default="eager,rnn,function")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(workload(a.one, a.shapes)))
        return
    trees = [("this tree", TREE)] + ([("baseline", os.path.abspath(a.baseline))] if a.baseline else [])
    for name in a.workloads.split(","):
        for label, tree in trees:
            env = dict(os.environ, PYTHONPATH=tree)
            res = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", name,
                                  "--shapes", str(a.shapes)], env=env, capture_output=True, text=True)
            line = res.stdout.strip().splitlines()[-1] if res.stdout.strip() else res.stderr[-2000:]
            print(f"{label:10s} {line}", flush=True)


if __name__ == "__main__":
    main()
