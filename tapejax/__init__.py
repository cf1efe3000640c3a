"""tapejax: TensorFlow's tape autodiff API on JAX. ``import tapejax as tf``."""
from ._core.tensor import Tensor as Tensor, TensorShape as TensorShape
from ._core.dtypes import (
    DType as DType, as_dtype as as_dtype, float16 as float16, half as half, bfloat16 as bfloat16,
    float32 as float32, float64 as float64, double as double, int8 as int8, int16 as int16,
    int32 as int32, int64 as int64, uint8 as uint8, uint16 as uint16, uint32 as uint32,
    uint64 as uint64, bool as bool, complex64 as complex64, complex128 as complex128, string as string,
)
from ._core.variable import Variable as Variable, name_scope as name_scope
from ._core.variable import VariableAggregationV2 as VariableAggregation, VariableSynchronization as VariableSynchronization
from ._core.module import Module as Module
from ._core.tape import GradientTape as GradientTape, UnconnectedGradients as UnconnectedGradients
from ._core.tape import AggregationMethod as AggregationMethod
from ._core.custom_gradient import custom_gradient as custom_gradient, recompute_grad as recompute_grad
from ._staging.printing import print_ as print  # noqa: A001
from ._staging.function import (
    function as function, TensorSpec as TensorSpec, executing_eagerly as executing_eagerly,
    inside_function as inside_function, control_dependencies as control_dependencies,
)
from ._core.state import init_scope as init_scope
from ._staging.function import gradients as gradients, hessians as hessians
from ._staging.control_flow import cond as cond, while_loop as while_loop, switch_case as switch_case
from .ops.tensor_array import TensorArray as TensorArray
from ._staging.py_function import py_function as py_function, numpy_function as numpy_function
from ._core.devices import device as device
from ._core.logs import get_logger as get_logger
from . import config as config  # noqa: F401
from . import version as version  # noqa: F401
from . import autograph as autograph  # noqa: F401
from .ops import exports as _exports
from ._core.indexed_slices import IndexedSlices as IndexedSlices
globals().update(_exports(""))   # tf.X of the op table: tf.reduce_sum, tf.matmul...
from .ops.functional_ops import foldl as foldl, foldr as foldr, scan as scan, map_fn as map_fn
from .ops.functional_ops import vectorized_map as vectorized_map
from . import (
    dtypes as dtypes, math as math, nn as nn, linalg as linalg, random as random,
    debugging as debugging, errors as errors, autodiff as autodiff, experimental as experimental,
    extend as extend, types as types,
)
from . import numpy as numpy  # noqa: F401
from . import ragged as ragged, sparse as sparse, strings as strings  # noqa: F401
from .ragged import RaggedTensor as RaggedTensor, RaggedTensorSpec as RaggedTensorSpec
from .sparse import SparseTensor as SparseTensor, SparseTensorSpec as SparseTensorSpec
from .experimental.extension_type import TypeSpec as TypeSpec, type_spec_from_value as type_spec_from_value
from . import io as io  # noqa: F401
from . import keras as keras  # noqa: F401
# TensorFlow's top-level aliases of Keras namespaces (tf.losses is tf.keras.losses, ...)
from .keras import (  # noqa: F401
    initializers as initializers, losses as losses, metrics as metrics, optimizers as optimizers,
)
from .keras.initializers import TruncatedNormal as truncated_normal_initializer  # noqa: F401
from ._init_ops import (  # noqa: F401  (TensorFlow's own initializers, not Keras's)
    RandomNormal as random_normal_initializer, RandomUniform as random_uniform_initializer,
    Zeros as zeros_initializer, Ones as ones_initializer, Constant as constant_initializer,
)
from . import data as data  # noqa: F401
from .data import OptionalSpec as OptionalSpec
experimental.Optional = data.Optional   # tf.experimental.Optional is tf.data.experimental.Optional
from . import train as train, saved_model as saved_model  # noqa: F401
from . import distribute as distribute  # noqa: F401
from . import nest as nest  # noqa: F401
from . import test as test  # noqa: F401
from . import compat as compat  # noqa: F401
from .debugging import (  # noqa: F401  (TensorFlow's top-level aliases of tf.debugging)
    assert_equal as assert_equal, assert_greater as assert_greater, assert_less as assert_less,
    assert_rank as assert_rank, Assert as Assert,
)
from . import summary as summary  # noqa: F401
from . import image as image, io as io  # noqa: F401
from . import signal as signal  # noqa: F401
from . import lookup as lookup  # noqa: F401
from . import audio as audio  # noqa: F401
from . import sets as sets  # noqa: F401
from . import queue as queue  # noqa: F401

newaxis = None
__version__ = version.VERSION   # what TensorFlow code checks; the package's: version.TAPEJAX_VERSION

from ._missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("tapejax")
