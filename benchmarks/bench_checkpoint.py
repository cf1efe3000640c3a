"""bench_checkpoint: saving a 256 MiB checkpoint, blocking time of a sync and an async save.

The state is four float32 Variables of 64 MiB each in a ``tf.train.Checkpoint`` saved by a
``tf.train.CheckpointManager`` (max_to_keep=2), against plain orbax saving the same jax
Arrays as a PyTree (``ocp.CheckpointManager`` with ``StandardSave``), in the same run,
interleaved:

* sync: ``manager.save()`` — the time until the checkpoint is complete on disk;
* async: ``manager.save(options=CheckpointOptions(experimental_enable_async_checkpoint=True))``
  — the time until ``save`` returns (training may go on), then the wait in ``sync()``;
* restore: ``checkpoint.restore(latest)`` into the existing Variables, each value checked
  against its checksum, against orbax's ``restore`` of the same tree.

tapejax's save also computes a checksum per value (about 0.1 s for 256 MiB on one core);
the figures are the best and the median of ``--repeats`` rounds.
Run: ``python benchmarks/bench_checkpoint.py [--mib 256] [--repeats 5] [--dir /tmp]``.
"""
import argparse
import os
import platform
import shutil
import statistics
import tempfile
import time

import jax
import numpy as np

import tapejax as tf


def _time(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mib", type=int, default=256)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--dir", default=None)
    a = p.parse_args()
    import orbax.checkpoint as ocp
    n = a.mib * (1 << 20) // 4 // 4
    rng = np.random.default_rng(0)
    variables = {f"w{i}": tf.Variable(rng.standard_normal(n, dtype=np.float32)) for i in range(4)}
    tree = {k: v._value for k, v in variables.items()}
    root = tempfile.mkdtemp(dir=a.dir)
    try:
        ckpt = tf.train.Checkpoint(**variables)
        manager = tf.train.CheckpointManager(ckpt, os.path.join(root, "tapejax"), max_to_keep=2)
        async_options = tf.train.CheckpointOptions(experimental_enable_async_checkpoint=True)
        plain = ocp.CheckpointManager(os.path.join(root, "orbax"),
                                      options=ocp.CheckpointManagerOptions(max_to_keep=2))
        step = [0]

        def orbax_save(wait):
            step[0] += 1
            plain.save(step[0], args=ocp.args.StandardSave(tree))
            if wait:
                plain.wait_until_finished()

        rows = {k: [] for k in ("sync", "async", "async_wait", "orbax_sync", "orbax_async", "orbax_async_wait",
                                "restore", "orbax_restore")}
        manager.save()
        orbax_save(True)   # warm up both
        for _ in range(a.repeats):
            rows["sync"].append(_time(manager.save))
            rows["orbax_sync"].append(_time(lambda: orbax_save(True)))
            rows["async"].append(_time(lambda: manager.save(options=async_options)))
            rows["async_wait"].append(_time(ckpt.sync))
            rows["orbax_async"].append(_time(lambda: orbax_save(False)))
            rows["orbax_async_wait"].append(_time(plain.wait_until_finished))
            latest = manager.latest_checkpoint
            rows["restore"].append(_time(lambda: ckpt.restore(latest)))
            target = jax.tree_util.tree_map(ocp.utils.to_shape_dtype_struct, tree)
            rows["orbax_restore"].append(_time(
                lambda: jax.block_until_ready(plain.restore(plain.latest_step(),
                                                            args=ocp.args.StandardRestore(target)))))
        plain.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"{a.mib} MiB checkpoint (4 float32 Variables), {a.repeats} rounds; "
          f"{platform.machine()}, {os.cpu_count()} CPU cores, jax {jax.__version__}, orbax {ocp.__version__}")
    print("| operation | tapejax best (median) | plain orbax best (median) | ratio (best) |")
    print("|---|---:|---:|---:|")
    for name, mine, theirs in [("sync save (complete on disk)", "sync", "orbax_sync"),
                               ("async save: blocking time", "async", "orbax_async"),
                               ("async save: wait in sync()", "async_wait", "orbax_async_wait"),
                               ("restore", "restore", "orbax_restore")]:
        m, t = rows[mine], rows[theirs]
        print(f"| {name} | {min(m):.3f} ({statistics.median(m):.3f}) s | {min(t):.3f} ({statistics.median(t):.3f}) s "
              f"| {min(m) / min(t):.2f} |")


if __name__ == "__main__":
    main()
