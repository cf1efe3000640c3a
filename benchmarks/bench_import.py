"""bench_import: the cost of ``import tapejax`` against ``import jax`` (its floor).

Each import runs in a fresh interpreter; two figures are taken, interpreter start-up excluded:
the CPU time of the import statement (``time.process_time``: user + system, which other jobs
on a busy machine hardly disturb) and ``python -X importtime``'s cumulative wall time of the
top-level module. Bytecode is cached (in a temporary ``PYTHONPYCACHEPREFIX``, warmed first) as
in an installed package, even where the environment sets ``PYTHONDONTWRITEBYTECODE``. The two
imports are interleaved, round after round; the medians are reported with the median of the
per-round differences (the goal: ``import tapejax`` within ``import jax`` + 0.2 s). Each
tapejax run also records which optional heavy packages it loaded (``flax``, ``flax.linen``,
``optax``, ``orbax``, ``tensorboard``): none should load until used.

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
    """(CPU seconds, wall seconds of ``import module``, the HEAVY packages loaded) in a fresh process."""
    code = (f"import sys, time; t = time.process_time(); import {module}; t = time.process_time() - t; "
            f"print(t); print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONPYCACHEPREFIX=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                         env=env, cwd=ROOT, check=True)  # -c puts the working directory first on sys.path
    for line in out.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip() == module:
            cpu, heavy = out.stdout.split("\n", 1)
            return float(cpu), int(parts[1]) / 1e6, heavy.strip()
    raise RuntimeError(f"no importtime line for {module}:\n{out.stderr[-2000:]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    runs = {"jax": [], "tapejax": []}  # (cpu, wall) per round
    loaded = set()
    with tempfile.TemporaryDirectory() as cache:
        import_time("tapejax", cache)  # writes the .pyc files
        for _ in range(args.repeats):
            for module in runs:
                cpu, wall, heavy = import_time(module, cache)
                runs[module].append((cpu, wall))
                if module == "tapejax":
                    loaded.update(filter(None, heavy.split(",")))
    import jax
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}, "
          f"jax {jax.__version__}; {args.repeats} fresh processes each, interleaved; medians (min)")
    for i, what in ((0, "CPU time"), (1, "wall time")):
        j = [r[i] for r in runs["jax"]]
        t = [r[i] for r in runs["tapejax"]]
        diff = statistics.median(b - a for a, b in zip(j, t))
        print(f"{what:9}: import jax {statistics.median(j):.3f} s ({min(j):.3f}), import tapejax "
              f"{statistics.median(t):.3f} s ({min(t):.3f}); tapejax - jax {diff:+.3f} s "
              f"(median of the per-round differences; goal <= +0.200 s)")
    print(f"heavy packages loaded by import tapejax: {sorted(loaded) or 'none'}")


if __name__ == "__main__":
    main()
