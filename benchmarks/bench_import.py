"""bench_import: the cost of ``import tapejax`` against ``import jax`` (its floor).

Each import runs in a fresh interpreter with ``python -X importtime``; the figure is the
cumulative time of the top-level module (interpreter start-up excluded). Bytecode is cached
(in a temporary ``PYTHONPYCACHEPREFIX``, warmed first) as in an installed package, even where
the environment sets ``PYTHONDONTWRITEBYTECODE``. The two are interleaved, round after round;
the median of each is reported, with the median of the per-round differences and the
difference of the minima (the goal: ``import tapejax`` within ``import jax`` + 0.2 s). Each tapejax run also records
which optional heavy packages it loaded (``flax``, ``flax.linen``, ``optax``, ``orbax``,
``tensorboard``): none should load until used.

Run: ``python benchmarks/bench_import.py [--repeats 9]`` (from the repository root, or with
tapejax installed).
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEAVY = ("flax", "flax.linen", "optax", "orbax.checkpoint", "tensorboard")


def import_time(module, cache):
    """(cumulative seconds of ``import module``, the HEAVY packages loaded) in a fresh process."""
    code = f"import sys, {module}; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONPYCACHEPREFIX=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                         env=env, cwd=ROOT, check=True)  # -c puts the working directory first on sys.path
    for line in out.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip() == module:
            return int(parts[1]) / 1e6, out.stdout.strip()
    raise RuntimeError(f"no importtime line for {module}:\n{out.stderr[-2000:]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    jax_s, tj_s, loaded = [], [], set()
    with tempfile.TemporaryDirectory() as cache:
        import_time("tapejax", cache)  # writes the .pyc files
        for _ in range(args.repeats):
            jax_s.append(import_time("jax", cache)[0])
            t, heavy = import_time("tapejax", cache)
            tj_s.append(t)
            loaded.update(filter(None, heavy.split(",")))
    import jax
    j, t = statistics.median(jax_s), statistics.median(tj_s)
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}, "
          f"jax {jax.__version__}; {args.repeats} fresh processes each, interleaved; medians")
    print(f"import jax      {j:.3f} s  (min {min(jax_s):.3f})")
    print(f"import tapejax  {t:.3f} s  (min {min(tj_s):.3f})")
    paired = statistics.median(b - a for a, b in zip(jax_s, tj_s))
    print(f"tapejax - jax   {paired:+.3f} s  median of the per-round differences (goal: <= +0.200 s); "
          f"difference of the minima {min(tj_s) - min(jax_s):+.3f} s")
    print(f"heavy packages loaded by import tapejax: {sorted(loaded) or 'none'}")


if __name__ == "__main__":
    main()
