"""Tree structures of batches and of their elements.

A JAX tree's static data may describe a batch: a ``tf.experimental.BatchableExtensionType``
keeps its batch shape in ``tf.TensorShape`` fields. ``tf.map_fn`` slices the leaves of its
input into elements and stacks the results' leaves into a batch; the structure that goes with
them is this module's: the static data of every node with ``__tf_batch_static__`` with the
batch dimension removed or added.
"""
import jax

UNBATCH = "unbatch"   # the ``batch`` argument that removes the batch dimension


class _Mark:
    __slots__ = ()


def _is_batchable(x):
    return hasattr(type(x), "__tf_batch_static__")


def rebatched_tree(tree, batch):
    """``tree`` with ``batch`` (a batch size, or UNBATCH) applied to its batchable nodes."""
    marks = [_Mark() for _ in range(tree.num_leaves)]
    obj = jax.tree_util.tree_unflatten(tree, marks)
    if not any(_is_batchable(x) for x in jax.tree_util.tree_leaves(obj, is_leaf=_is_batchable)):
        return tree
    obj = jax.tree_util.tree_map(lambda x: x.__tf_batch_static__(batch) if _is_batchable(x) else x, obj,
                                 is_leaf=_is_batchable)
    return jax.tree_util.tree_structure(obj, is_leaf=lambda x: isinstance(x, _Mark))
