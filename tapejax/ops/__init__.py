"""The op table: TensorFlow's ops, one row each, over JAX.

A row is a pure JAX function made a tape op with ``defop`` (the op author's API,
``tapejax.extend``), TensorFlow's signature where its arguments need normalising
(``normalize``), and ``export``: where TensorFlow publishes the name (``tf.X``,
``tf.math.X``, ``tf.nn.X``...). The namespace modules are generated from the rows
(``namespaces.exports``), so adding an op is adding its row.

    namespaces.py   export / exports: the rows' namespaces
    normalize.py    TensorFlow's argument conventions (axis, shape, windows, index dtype)
    math_ops.py     elementwise math, comparisons, reductions, clipping, casts
    array_ops.py    shapes and structure, indexing and gathers, constructors
    linalg_ops.py   products, contractions, decompositions, norms
    nn_ops.py       activations, losses on logits, convolution, pooling, embeddings
    more_math_ops.py, more_nn_ops.py, more_array_ops.py   the rest of tf / tf.math / tf.nn: top-level
                    aliases, segment reductions, special functions, convolutions of every rank,
                    transposed convolutions, unique, dynamic_partition/stitch...
    signal_ops.py   tf.signal: FFTs, frame/overlap_and_add, windows, stft, mel matrix, DCT, MFCCs
    host.py         the ops on NumPy (string tensors, shape folding while tracing)
    messages.py     TensorFlow's kernel messages for bad arguments
    operators.py    Python's operators on Tensor and Variable
    variable_ops.py a Variable's sparse reads and scatter updates
    bounds.py       indices checked as TensorFlow's CPU kernels check them (now, or when a program runs)
    tensor_array.py, functional_ops.py   tf.TensorArray; scan, map_fn, foldl, foldr

``tapejax.ops`` itself offers every row under its TensorFlow name (the public function:
``ops.reshape`` is ``tf.reshape``); an op whose TensorFlow signature normalises arguments
is the module-private ``_name`` next to it.
"""
from .math_ops import *  # noqa: F401,F403
from .array_ops import *  # noqa: F401,F403
from .linalg_ops import *  # noqa: F401,F403
from .nn_ops import *  # noqa: F401,F403
from .more_math_ops import *  # noqa: F401,F403
from .more_nn_ops import *  # noqa: F401,F403
from .more_array_ops import *  # noqa: F401,F403
from .signal_ops import *  # noqa: F401,F403
from . import host, messages, operators, variable_ops  # noqa: F401  (NumPy fallbacks, TF's messages, Tensor operators, Variable's sparse methods)
from .namespaces import exports  # noqa: F401
