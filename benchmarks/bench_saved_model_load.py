"""tf.saved_model.load time: this tree against another (the checks of untrusted files cost).

Saves a small Keras MLP (its call exported) and a tf.Module with three traced functions with
the tapejax on PYTHONPATH, then times ``load`` (median of 20) in a fresh process per tree.

    python benchmarks/bench_saved_model_load.py /path/to/other/tree
"""
import os
import subprocess
import sys
import textwrap

CODE = textwrap.dedent("""
    import statistics, tempfile, time
    import numpy as np
    import tapejax as tf

    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(np.ones((64, 64), np.float32))

        @tf.function
        def f(self, x, k=2.0):
            return tf.nn.relu(x @ self.w) * k

    m = M()
    for n in (1, 8, 32):
        m.f(tf.ones([n, 64]))
    model = tf.keras.Sequential([tf.keras.layers.Dense(256, activation="relu", input_shape=(784,)),
                                 tf.keras.layers.Dense(10)])
    for obj in (m, model):
        path = tempfile.mkdtemp() + "/sm"
        tf.saved_model.save(obj, path)
        tf.saved_model.load(path)
        times = []
        for _ in range(20):
            start = time.perf_counter()
            tf.saved_model.load(path)
            times.append(time.perf_counter() - start)
        print(statistics.median(times))
""")


def run(tree):
    env = dict(os.environ, PYTHONPATH=tree, JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True)
    return [float(x) for x in out.stdout.split()]


if __name__ == "__main__":
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    other = sys.argv[1]
    new, old = run(here), run(other)
    for name, n, o in zip(["tf.Module, 3 traces", "Keras MLP"], new, old):
        print(f"{name:22s} this tree {1e3 * n:7.1f} ms   other {1e3 * o:7.1f} ms   ratio {n / o:.2f}x")
